//! The local host itself, driven over HTTP with a probe component that reports what it was given.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dochub_host::{HostOptions, RunningHost};
use dochub_tests::fixture;
use serde_json::Value;

fn probe_manifest() -> PathBuf {
    fixture("probe-app").join("spin.toml")
}

fn build_probe() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| dochub_host::build_components(&probe_manifest()).expect("probe builds"));
}

async fn start_probe(state_dir: &Path, runtime_config: Option<PathBuf>) -> RunningHost {
    build_probe();
    dochub_host::start(HostOptions {
        manifest: probe_manifest(),
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(state_dir.to_path_buf()),
        runtime_config,
        variables: HashMap::from([("secret_word".to_string(), "swordfish".to_string())]),
        env: Vec::new(),
    })
    .await
    .expect("host starts")
}

async fn get_json(host: &RunningHost, path: &str) -> Value {
    let res = reqwest::get(format!("http://{}{path}", host.addr()))
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "GET {path}");
    res.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn sets_spin_headers_like_spin() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let addr = host.addr();
    let v = get_json(&host, "/probe/headers?x=1&y=%20").await;
    let h = &v["headers"];
    assert_eq!(h["spin-path-info"], "/headers");
    assert_eq!(
        h["spin-full-url"],
        format!("http://{addr}/probe/headers?x=1&y=%20")
    );
    assert_eq!(h["spin-matched-route"], "/probe/...");
    assert_eq!(h["spin-raw-component-route"], "/probe/...");
    assert_eq!(h["spin-component-route"], "/probe");
    assert_eq!(h["spin-base-path"], "/");
    assert!(
        h["spin-client-addr"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:")
    );
    assert!(
        h.get("host").is_none(),
        "host header reaches the guest: {h}"
    );
    assert_eq!(v["uri"], format!("http://{addr}/probe/headers?x=1&y=%20"));

    let exact = get_json(&host, "/exact").await;
    assert_eq!(exact["headers"]["spin-path-info"], "");
    assert_eq!(exact["headers"]["spin-matched-route"], "/exact");

    let missing = reqwest::get(format!("http://{addr}/nowhere"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn environment_variables_and_files_are_the_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");
    let greeting = get_json(&host, "/probe/variable?name=greeting").await;
    assert_eq!(greeting["ok"], "hello, swordfish!");
    let undefined = get_json(&host, "/probe/variable?name=secret_word").await;
    assert!(
        undefined["err"].as_str().unwrap().contains("secret_word"),
        "{undefined}"
    );

    let page = get_json(&host, "/probe/file?path=/docs/one.md").await;
    assert_eq!(page["ok"], "page one\n");
    let globbed = get_json(&host, "/probe/file?path=/files/note.txt").await;
    assert_eq!(globbed["ok"], "top level\n");
    for outside in ["/etc/passwd", "/docs/../../spin.toml", "/docs/../spin.toml"] {
        let v = get_json(&host, &format!("/probe/file?path={outside}")).await;
        assert!(v.get("err").is_some(), "{outside} was readable: {v}");
    }
    let write = get_json(&host, "/probe/write?path=/docs/new.md").await;
    assert!(write.get("err").is_some(), "mount is writable: {write}");
    assert!(!fixture("probe-app/files/docs/new.md").exists());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn env_options_add_to_and_override_the_manifests_environment() {
    build_probe();
    let dir = tempfile::tempdir().unwrap();
    let host = dochub_host::start(HostOptions {
        manifest: probe_manifest(),
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(dir.path().to_path_buf()),
        variables: HashMap::from([("secret_word".to_string(), "s".to_string())]),
        env: vec![
            ("PROBE_MODE".to_string(), "override".to_string()),
            ("SERVE_PREBUILT".to_string(), "1".to_string()),
        ],
        ..Default::default()
    })
    .await
    .unwrap();
    let env = get_json(&host, "/probe/env").await;
    assert_eq!(env["PROBE_MODE"], "override");
    assert_eq!(env["SERVE_PREBUILT"], "1");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn required_variable_without_value_is_refused_by_name() {
    build_probe();
    let dir = tempfile::tempdir().unwrap();
    let err = dochub_host::start(HostOptions {
        manifest: probe_manifest(),
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .await
    .err()
    .expect("start fails");
    assert!(format!("{err:#}").contains("secret_word"), "{err:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn key_value_atomics_hold_under_concurrency_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let base = format!("http://{}", host.addr());
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (client, base) = (client.clone(), base.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                let res = client
                    .get(format!("{base}/probe/kv/incr?key=n"))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 200);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(
        get_json(&host, "/probe/kv/incr?key=n&delta=0").await["ok"],
        100
    );
    // Counters read back as decimal text on every backend.
    assert_eq!(get_json(&host, "/probe/kv/get?key=n").await["ok"], "100");

    let first = get_json(&host, "/probe/kv/cas?key=c&value=one").await;
    assert_eq!(first["ok"], "swapped");
    assert_eq!(first["seen"], Value::Null);
    let second = get_json(&host, "/probe/kv/cas?key=c&value=two").await;
    assert_eq!(second["seen"], "one");
    assert_eq!(get_json(&host, "/probe/kv/get?key=c").await["ok"], "two");

    let denied = get_json(&host, "/probe/kv/open?label=other").await;
    assert!(
        denied["err"].as_str().unwrap().contains("AccessDenied"),
        "{denied}"
    );
    let spin_api = get_json(&host, "/probe/kv/set?key=z&value=1").await;
    assert_eq!(spin_api["ok"], serde_json::json!(["c", "n", "z"]));
    host.shutdown().await;

    // The SQLite file outlives the host.
    assert!(dir.path().join("sqlite_key_value.db").exists());
    let host = start_probe(dir.path(), None).await;
    assert_eq!(get_json(&host, "/probe/kv/incr?key=n").await["ok"], 101);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hosts_share_a_redis_store() {
    if !dochub_tests::service_available("127.0.0.1:6379", "Redis") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("runtime-config.toml");
    std::fs::write(
        &config,
        "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n",
    )
    .unwrap();
    let a = start_probe(dir.path(), Some(config.clone())).await;
    let b = start_probe(dir.path(), Some(config)).await;
    let key = format!(
        "host-test-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for host in [a.addr(), b.addr(), a.addr(), b.addr()] {
        let (client, key) = (client.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                let url = format!("http://{host}/probe/kv/incr?key={key}");
                assert_eq!(client.get(url).send().await.unwrap().status(), 200);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(
        get_json(&b, &format!("/probe/kv/incr?key={key}&delta=0")).await["ok"],
        100
    );
    assert!(!dir.path().join("sqlite_key_value.db").exists());
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_is_reachable_only_where_allowed() {
    if !dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let ok = get_json(
        &host,
        "/probe/pg?url=postgres://postgres@127.0.0.1:5432/test",
    )
    .await;
    let rows = ok["ok"].as_str().unwrap_or_else(|| panic!("{ok}"));
    assert!(
        rows.contains("Int32(2)") && rows.contains("Str(\"hi\")"),
        "{rows}"
    );
    let refused = get_json(
        &host,
        "/probe/pg?url=postgres://postgres@127.0.0.1:5433/test",
    )
    .await;
    assert!(
        refused["err"]
            .as_str()
            .unwrap()
            .contains("allowed_outbound_hosts"),
        "{refused}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trapping_guest_is_a_500_and_the_host_serves_on() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let res = reqwest::get(format!("http://{}/probe/trap", host.addr()))
        .await
        .unwrap();
    assert_eq!(res.status(), 500);
    assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_without_authority_is_a_400() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let mut stream = tokio::net::TcpStream::connect(host.addr()).await.unwrap();
    stream
        .write_all(b"GET /probe/headers HTTP/1.0\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.0 400"), "{response}");
    host.shutdown().await;
}

fn write_app(dir: &Path, wat: &str) -> PathBuf {
    std::fs::write(dir.join("guest.wasm"), wat::parse_str(wat).unwrap()).unwrap();
    let manifest = dir.join("spin.toml");
    std::fs::write(
        &manifest,
        r#"spin_manifest_version = 2
[application]
name = "refused"
[[trigger.http]]
route = "/..."
component = "guest"
[component.guest]
source = "guest.wasm"
"#,
    )
    .unwrap();
    manifest
}

async fn start_error(manifest: PathBuf) -> String {
    let err = dochub_host::start(HostOptions {
        manifest,
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .await
    .err()
    .expect("start is refused");
    format!("{err:#}")
}

#[tokio::test]
async fn a_component_importing_what_the_host_lacks_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(
        dir.path(),
        r#"(component (import "fermyon:spin/llm@2.0.0" (instance (export "infer" (func)))))"#,
    );
    let err = start_error(manifest).await;
    assert!(err.contains("component `guest`"), "{err}");
    assert!(err.contains("fermyon:spin/llm@2.0.0"), "{err}");
}

#[tokio::test]
async fn a_component_without_the_http_export_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(dir.path(), "(component)");
    let err = start_error(manifest).await;
    assert!(err.contains("wasi:http/incoming-handler"), "{err}");
}

#[tokio::test]
async fn a_missing_wasm_file_says_to_build_first() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(dir.path(), "(component)");
    std::fs::remove_file(dir.path().join("guest.wasm")).unwrap();
    let err = start_error(manifest).await;
    assert!(err.contains("--build"), "{err}");
}
