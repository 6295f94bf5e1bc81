//! The subset of Spin's application manifest (v2) that the host runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// A parsed `spin.toml`, with paths resolved against the manifest's folder.
#[derive(Debug, Clone)]
pub struct AppManifest {
    /// The folder holding the manifest; relative paths resolve against it.
    pub base_dir: PathBuf,
    /// `[application] name`.
    pub name: String,
    /// `[variables]`: application variables and their declarations.
    pub variables: BTreeMap<String, VariableDecl>,
    /// `[[trigger.http]]` entries, in file order.
    pub http_triggers: Vec<HttpTrigger>,
    /// `[component.<id>]` tables, by id.
    pub components: BTreeMap<String, Component>,
}

/// One `[variables]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariableDecl {
    /// Value used when no provider sets one.
    #[serde(default)]
    pub default: Option<String>,
    /// Start-up fails when a required variable has no value.
    #[serde(default)]
    pub required: bool,
    /// Marks a secret (not printed).
    #[serde(default)]
    pub secret: bool,
}

/// One `[[trigger.http]]` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct HttpTrigger {
    /// The route pattern: an exact path or a prefix ending in `/...`.
    pub route: String,
    /// The id of the component serving the route.
    pub component: String,
}

/// One `[component.<id>]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Path of the `.wasm` file.
    pub source: PathBuf,
    /// Files mounted read-only into the guest.
    #[serde(default)]
    pub files: Vec<FileMount>,
    /// Environment variables of the guest.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// Key-value store labels the component may open.
    #[serde(default)]
    pub key_value_stores: Vec<String>,
    /// SQLite database labels the component may open.
    #[serde(default)]
    pub sqlite_databases: Vec<String>,
    /// Outbound hosts the component may connect to.
    #[serde(default)]
    pub allowed_outbound_hosts: Vec<String>,
    /// Component variables: templates over application variables.
    #[serde(default)]
    pub variables: BTreeMap<String, String>,
    /// How `spin build` builds the component.
    #[serde(default)]
    pub build: Option<BuildConfig>,
    /// Human-readable description.
    #[serde(default)]
    pub description: Option<String>,
}

/// A `files` entry: a bare glob/path, or a `{ source, destination }` mapping.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum FileMount {
    /// A glob or path relative to the manifest folder, mounted at the same path under `/`.
    Pattern(String),
    /// A directory (or file) mounted at `destination`.
    Placement {
        /// Host path, relative to the manifest folder.
        source: PathBuf,
        /// Absolute guest path.
        destination: String,
    },
}

/// A `[component.<id>.build]` table.
#[derive(Debug, Clone, Deserialize)]
pub struct BuildConfig {
    /// The shell command that builds the component.
    pub command: String,
    /// Folder to run it in, relative to the manifest folder.
    #[serde(default)]
    pub workdir: Option<PathBuf>,
    /// Globs that trigger a rebuild under `spin watch` (unused here).
    #[serde(default)]
    pub watch: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    spin_manifest_version: u32,
    application: RawApplication,
    #[serde(default)]
    variables: BTreeMap<String, VariableDecl>,
    #[serde(default)]
    trigger: RawTriggers,
    #[serde(default)]
    component: BTreeMap<String, Component>,
}

#[derive(Deserialize)]
struct RawApplication {
    name: String,
}

#[derive(Default, Deserialize)]
struct RawTriggers {
    #[serde(default)]
    http: Vec<HttpTrigger>,
}

impl AppManifest {
    /// Reads and validates a manifest file; a relative path is taken from the working directory.
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        Self::from_file_in(path, &cwd)
    }

    /// [`AppManifest::from_file`] with `cwd` standing for the working directory.
    ///
    /// The app folder is the manifest's parent made absolute and free of `.` and `..` without
    /// touching the disk, as Spin v4.0.2's loader makes it (`parent_dir`, then
    /// `safe_canonicalize` through `path-absolutize`, in `crates/loader`): the paths the mounts'
    /// globs return then start with it, however the manifest was named (`spin.toml`,
    /// `./spin.toml`, `../app/spin.toml`, a folder with spaces).
    pub fn from_file_in(path: &Path, cwd: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(cwd.join(path))
            .with_context(|| format!("cannot read manifest `{}`", path.display()))?;
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let base_dir = app_folder(parent, cwd)?;
        Self::from_toml(&text, &base_dir)
            .with_context(|| format!("invalid manifest `{}`", path.display()))
    }

    /// Parses manifest text; relative paths resolve against `base_dir`, which must be absolute
    /// and free of `.` and `..` (as [`AppManifest::from_file`] makes it).
    pub fn from_toml(text: &str, base_dir: &Path) -> anyhow::Result<Self> {
        let raw: RawManifest = toml::from_str(text)?;
        if raw.spin_manifest_version != 2 {
            bail!(
                "spin_manifest_version {} is not supported: this host reads version 2",
                raw.spin_manifest_version
            );
        }
        for trigger in &raw.trigger.http {
            if !raw.component.contains_key(&trigger.component) {
                bail!(
                    "trigger route `{}` names component `{}`, which is not defined",
                    trigger.route,
                    trigger.component
                );
            }
        }
        for (id, component) in &raw.component {
            for name in component.variables.keys() {
                validate_name(name).with_context(|| format!("component `{id}`"))?;
            }
            for mount in &component.files {
                if let FileMount::Placement { destination, .. } = mount
                    && !destination.starts_with('/')
                {
                    bail!(
                        "component `{id}`: files destination `{destination}` must be an absolute path"
                    );
                }
            }
        }
        for name in raw.variables.keys() {
            validate_name(name)?;
        }
        Ok(AppManifest {
            base_dir: base_dir.to_path_buf(),
            name: raw.application.name,
            variables: raw.variables,
            http_triggers: raw.trigger.http,
            components: raw.component,
        })
    }

    /// Resolves a manifest-relative path.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        }
    }
}

/// `folder` (relative to `cwd`) as an absolute path without `.` or `..`, computed as Spin does.
fn app_folder(folder: &Path, cwd: &Path) -> anyhow::Result<PathBuf> {
    use path_absolutize::Absolutize;
    let absolute = folder
        .absolutize_from(cwd)
        .with_context(|| format!("invalid manifest folder `{}`", folder.display()))?;
    Ok(absolute.into_owned())
}

/// Checks a variable name the way Spin does: lowercase ASCII letters, digits and underscores,
/// starting with a letter.
pub fn validate_name(name: &str) -> anyhow::Result<()> {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.ends_with('_')
        && !name.contains("__");
    if !valid {
        bail!(
            "invalid variable name `{name}`: use lowercase letters, digits and single underscores, starting with a letter"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_spin_rules() {
        assert!(validate_name("database_url").is_ok());
        assert!(validate_name("a1").is_ok());
        for bad in ["", "Upper", "1a", "a-b", "a__b", "a_"] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }

    const MANIFEST: &str = r#"
spin_manifest_version = 2
[application]
name = "demo"
[variables]
environment = { default = "development" }
token = { required = true, secret = true }
[[trigger.http]]
route = "/api/..."
component = "api"
[component.api]
source = "target/api.wasm"
files = [{ source = "content", destination = "/content" }, "static/*.css"]
environment = { CONTENT_DIR = "/content" }
key_value_stores = ["default"]
[component.api.variables]
environment = "{{ environment }}"
[component.api.build]
command = "cargo build"
"#;

    #[test]
    fn parses_components_triggers_and_variables() {
        let m = AppManifest::from_toml(MANIFEST, Path::new("/app")).unwrap();
        assert_eq!(m.name, "demo");
        assert_eq!(m.http_triggers[0].route, "/api/...");
        let api = &m.components["api"];
        assert_eq!(m.resolve(&api.source), Path::new("/app/target/api.wasm"));
        assert_eq!(api.environment["CONTENT_DIR"], "/content");
        assert!(matches!(&api.files[1], FileMount::Pattern(p) if p == "static/*.css"));
        assert!(m.variables["token"].required);
        assert_eq!(api.build.as_ref().unwrap().command, "cargo build");
    }

    #[test]
    fn rejects_trigger_for_unknown_component() {
        let text = MANIFEST.replace("component = \"api\"", "component = \"nope\"");
        let err = AppManifest::from_toml(&text, Path::new("/app")).unwrap_err();
        assert!(err.to_string().contains("`nope`"), "{err}");
    }

    #[test]
    fn rejects_other_manifest_versions() {
        let text = MANIFEST.replace("spin_manifest_version = 2", "spin_manifest_version = 1");
        let err = AppManifest::from_toml(&text, Path::new("/app")).unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
    }

    #[test]
    fn rejects_relative_destination() {
        let text = MANIFEST.replace("destination = \"/content\"", "destination = \"content\"");
        assert!(AppManifest::from_toml(&text, Path::new("/app")).is_err());
    }
}
