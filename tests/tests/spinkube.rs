//! The SpinKube deploy example (`deploy/spinkube/`): valid against the SpinApp CRD's schema
//! (strictly: an unknown field is an error), its runtime config the one beside it and one the
//! host loads, and every variable it sets one the app declares.

use std::path::Path;
use std::process::Command;

use dochub_tests::clients::python_with;
use dochub_tests::repo_root;

/// Runs the validator on `manifest`: its exit status and what it printed.
fn validate(python: &Path, manifest: &Path) -> (bool, String) {
    let root = repo_root();
    let out = Command::new(python)
        .arg(root.join("tests/spinkube/validate.py"))
        .arg(root.join("deploy/spinkube/spinapp-crd.yaml"))
        .arg(manifest)
        .output()
        .expect("run the validator");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_spinapp_example_is_valid_and_broken_copies_are_not() {
    let Some(python) = python_with(&["jsonschema", "yaml"]) else {
        return;
    };
    let example = repo_root().join("deploy/spinkube/dochub.yaml");
    let (ok, text) = validate(&python, &example);
    assert!(ok, "{text}");
    assert!(
        text.contains("1 SpinApp document(s), 0 problem(s)"),
        "{text}"
    );

    let original = std::fs::read_to_string(&example).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    for (from, to, complaint) in [
        (
            "  replicas: 3\n",
            "  replica: 3\n",
            "'replica' was unexpected",
        ),
        (
            "  executor: containerd-shim-spin\n",
            "",
            "'executor' is a required property",
        ),
        (
            "    loadFromSecret:",
            "    loadFromSecrets:",
            "'loadFromSecrets' was unexpected",
        ),
        (
            "        key: url\n",
            "        keys: url\n",
            "'keys' was unexpected",
        ),
        (
            "  replicas: 3\n",
            "  replicas: 0\n",
            "spec.replicas: must be > 0",
        ),
        (
            "  replicas: 3\n",
            "  replicas: three\n",
            "'three' is not of type 'integer'",
        ),
    ] {
        assert!(
            original.contains(from),
            "the example no longer has {from:?}"
        );
        let broken = scratch.path().join("broken.yaml");
        std::fs::write(&broken, original.replacen(from, to, 1)).unwrap();
        let (ok, text) = validate(&python, &broken);
        assert!(!ok, "{from:?} -> {to:?} passed:\n{text}");
        assert!(text.contains(complaint), "{from:?} -> {to:?}: {text}");
    }
}

#[test]
fn the_runtime_config_secret_is_the_file_beside_it_and_loads() {
    let dir = repo_root().join("deploy/spinkube");
    let example = std::fs::read_to_string(dir.join("dochub.yaml")).unwrap();
    let encoded = example
        .lines()
        .find_map(|l| l.trim().strip_prefix("runtime-config.toml: "))
        .expect("the Secret holds runtime-config.toml");
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .unwrap();
    let file = std::fs::read(dir.join("runtime-config.toml")).unwrap();
    assert!(
        decoded == file,
        "the Secret's runtime-config.toml differs from deploy/spinkube/runtime-config.toml: \
         encode it again with `base64 -w0 runtime-config.toml`"
    );
    let config = dochub_host::runtime_config::load(&dir.join("runtime-config.toml")).unwrap();
    assert_eq!(
        config.key_value.get("default"),
        Some(&dochub_host::kv::StoreConfig::Redis {
            url: "redis://dochub-redis:6379".into()
        })
    );
}

#[test]
fn every_variable_the_example_sets_is_declared_by_the_app() {
    let root = repo_root();
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("spin.toml")).unwrap()).unwrap();
    let declared = manifest["variables"].as_table().unwrap();
    let example = std::fs::read_to_string(root.join("deploy/spinkube/dochub.yaml")).unwrap();
    let names: Vec<&str> = example
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- name: "))
        .collect();
    assert!(names.contains(&"hub_database_url"), "{names:?}");
    for name in names {
        assert!(
            declared.contains_key(name),
            "the SpinKube example sets `{name}`, which spin.toml does not declare"
        );
    }
}
