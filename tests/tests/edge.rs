//! The host's `--emulate akamai-functions` (the published limits of Akamai Functions): the
//! default build is refused there naming what it imports that the platform lacks, the edge
//! build (`spin-edge.toml`) starts, and bodies, app size and answers are held to the limits.
//! `dochub check --target akamai-functions` says the same before a deploy.

use std::io::Write;
use std::path::Path;

use dochub_host::emulate::Platform;
use dochub_tests::{PgDb, TestApp, repo_root, skip_under_spin};

const EDGE: Option<Platform> = Some(Platform::AkamaiFunctions);

/// A manifest in a scratch folder: the repository's `name`, every relative path made absolute
/// except the mounts, which point at `content` (the tree) and `build` (its build) through
/// links beside it.
fn manifest(scratch: &Path, name: &str, content: &Path, build: &Path) -> std::path::PathBuf {
    let root = repo_root();
    let mut doc: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join(name)).unwrap()).unwrap();
    for (_, component) in doc["component"].as_table_mut().unwrap().iter_mut() {
        let component = component.as_table_mut().unwrap();
        let source = root.join(component["source"].as_str().unwrap());
        component.insert(
            "source".into(),
            source.to_string_lossy().into_owned().into(),
        );
        component.remove("build");
    }
    std::os::unix::fs::symlink(content, scratch.join("content")).unwrap();
    std::os::unix::fs::symlink(build, scratch.join("build")).unwrap();
    let path = scratch.join("spin.toml");
    std::fs::write(&path, toml::to_string(&doc).unwrap()).unwrap();
    path
}

async fn start(
    manifest: &Path,
    variables: &[(&str, &str)],
) -> anyhow::Result<dochub_host::RunningHost> {
    dochub_tests::ensure_components_built()?;
    dochub_host::start(dochub_host::HostOptions {
        manifest: manifest.to_path_buf(),
        listen: "127.0.0.1:0".parse()?,
        state_dir: Some(manifest.parent().unwrap().join(".spin")),
        variables: variables
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        emulate: EDGE,
        ..Default::default()
    })
    .await
}

/// Both builds' components, whichever manifest the tests run.
fn build_both() {
    for name in ["spin.toml", "spin-edge.toml"] {
        dochub_host::build_components(&repo_root().join(name)).expect("components build");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_default_build_is_refused_naming_the_imports_the_platform_lacks() {
    if skip_under_spin("--emulate is the host's") {
        return;
    }
    build_both();
    let scratch = tempfile::tempdir().unwrap();
    let content = repo_root().join("content");
    let build = repo_root().join("build");
    let path = manifest(scratch.path(), "spin.toml", &content, &build);
    let err = format!("{:#}", start(&path, &[]).await.err().expect("refused"));
    // The manifest is refused before any component is compiled: both ask for SQLite.
    assert!(
        err.contains("component `health` declares sqlite_databases"),
        "{err}"
    );
    assert!(
        err.contains("component `hub` declares sqlite_databases"),
        "{err}"
    );

    // Built without the edge feature, the api imports key-value atomics and the hub SQLite,
    // even when nothing declares SQLite.
    let mut doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for id in ["hub", "health"] {
        doc["component"][id]
            .as_table_mut()
            .unwrap()
            .remove("sqlite_databases");
    }
    std::fs::write(&path, toml::to_string(&doc).unwrap()).unwrap();
    let err = format!("{:#}", start(&path, &[]).await.err().expect("refused"));
    assert!(
        err.contains("component `api` imports what Akamai Functions does not offer"),
        "{err}"
    );
    assert!(err.contains("wasi:keyvalue/atomics@"), "{err}");
    let edge: toml::Table =
        toml::from_str(&std::fs::read_to_string(repo_root().join("spin-edge.toml")).unwrap())
            .unwrap();
    let api_edge = repo_root().join(edge["component"]["api"]["source"].as_str().unwrap());
    doc["component"]["api"].as_table_mut().unwrap().insert(
        "source".into(),
        api_edge.to_string_lossy().into_owned().into(),
    );
    std::fs::write(&path, toml::to_string(&doc).unwrap()).unwrap();
    let err = format!("{:#}", start(&path, &[]).await.err().expect("refused"));
    assert!(
        err.contains("component `hub` imports what Akamai Functions does not offer"),
        "{err}"
    );
    assert!(err.contains("spin:sqlite/sqlite@"), "{err}");
    assert!(!err.contains("`api`"), "{err}");

    // The edge build starts, and its hub says what it needs.
    let edge_scratch = tempfile::tempdir().unwrap();
    let path = manifest(edge_scratch.path(), "spin-edge.toml", &content, &build);
    let host = start(&path, &[]).await.expect("the edge build starts");
    let res = reqwest::get(format!("http://{}/machines", host.addr()))
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    let body = res.text().await.unwrap();
    assert!(
        body.contains("set the variable `hub_database_url`"),
        "{body}"
    );
    let health = reqwest::get(format!("http://{}/api/health", host.addr()))
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    host.shutdown().await;
}

/// `dochub check --target akamai-functions <content>`: its exit status and what it printed.
fn check_target(content: &Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["run", "--quiet", "-p", "dochub-cli", "--"])
        .args(["check", "--target", "akamai-functions"])
        .arg(content)
        .current_dir(repo_root())
        .output()
        .expect("run dochub check");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A tree with one page and one report of `bytes` bytes each.
fn tree_with_page(bytes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("big").join("pages");
    std::fs::create_dir_all(&sub).unwrap();
    let mut file = std::fs::File::create(sub.join("huge.md")).unwrap();
    writeln!(file, "---\ntitle: Huge\n---").unwrap();
    let line = "a line of a very large page, over and over.\n";
    for _ in 0..bytes / line.len() {
        file.write_all(line.as_bytes()).unwrap();
    }
    std::fs::write(sub.join("small.md"), "# Small\n\nFits.\n").unwrap();
    // A report is served whole, whatever its size (a page over 256 KiB is served as a notice).
    let reports = dir.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let padding = "x".repeat(bytes);
    std::fs::write(
        reports.join("2026-01-01.json"),
        format!("{{\"padding\": \"{padding}\"}}"),
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_over_10_mib_are_refused_and_cut_off() {
    if skip_under_spin("--emulate is the host's") {
        return;
    }
    build_both();
    let Some(db) = PgDb::create().await else {
        return;
    };
    let content = tree_with_page(11 << 20);
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(content.path()).unwrap();
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let path = manifest(
        scratch.path(),
        "spin-edge.toml",
        content.path(),
        build.path(),
    );
    let host = start(&path, &[("hub_database_url", &db.url)])
        .await
        .unwrap();
    let base = format!("http://{}", host.addr());

    // A request body over 10 MiB never reaches the component, with its length declared or
    // chunked.
    assert_eq!(raw_send(host.addr(), true, 11).await, 413);
    assert_eq!(raw_send(host.addr(), false, 11).await, 413);
    assert_eq!(raw_send(host.addr(), false, 0).await, 400);

    // An answer over 10 MiB never arrives whole: a 500 when its length says so up front, else
    // cut off, so that the client sees an error rather than a short text that looks whole.
    for path in ["/api/report/latest"] {
        let res = reqwest::get(format!("{base}{path}")).await.unwrap();
        let status = res.status();
        let read = res.bytes().await;
        assert!(
            status == 500 || read.is_err(),
            "{path}: {status}, {:?} bytes",
            read.map(|b| b.len())
        );
    }
    let res = reqwest::get(format!("{base}/api/raw/big/pages/small"))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = reqwest::get(format!("{base}/llms-full.txt")).await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.text()
            .await
            .unwrap()
            .contains("# big/pages/small: Small")
    );
    host.shutdown().await;

    // `dochub check --target` says so first, naming the page.
    let (status, text) = check_target(content.path());
    assert_eq!(status, Some(1), "{text}");
    assert!(
        text.contains("big/pages/huge.md: error: is 11.0 MiB"),
        "{text}"
    );
}

/// Sends `/api/send` `mib` MiB of spaces (none: an empty JSON body), with a `Content-Length`
/// or chunked, over a plain socket (the host may answer and close before taking it all, which
/// an HTTP client reports as a failed request); returns the answer's status.
async fn raw_send(addr: std::net::SocketAddr, declared: bool, mib: usize) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let framing = if declared {
        format!("Content-Length: {}", mib << 20)
    } else {
        "Transfer-Encoding: chunked".to_owned()
    };
    let head = format!(
        "POST /api/send HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         {framing}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..mib {
        let sent = if declared {
            stream.write_all(&chunk).await
        } else {
            let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
            framed.extend_from_slice(&chunk);
            framed.extend_from_slice(b"\r\n");
            stream.write_all(&framed).await
        };
        if sent.is_err() {
            break;
        }
    }
    if !declared {
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_over_50_mib_is_refused_naming_its_largest_files() {
    if skip_under_spin("--emulate is the host's") {
        return;
    }
    build_both();
    let content = tempfile::tempdir().unwrap();
    let sub = content.path().join("assets").join("files");
    std::fs::create_dir_all(&sub).unwrap();
    // Six distinct 9 MiB files (a copy counts once, so each differs).
    for n in 0..6u8 {
        let bytes: Vec<u8> = (0..9u32 << 20).map(|i| (i % 251) as u8 ^ n).collect();
        std::fs::write(sub.join(format!("blob{n}.bin")), &bytes).unwrap();
    }
    std::fs::write(sub.join("page.md"), "# Page\n").unwrap();
    let build = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let path = manifest(
        scratch.path(),
        "spin-edge.toml",
        content.path(),
        build.path(),
    );
    let err = format!("{:#}", start(&path, &[]).await.err().expect("refused"));
    assert!(
        err.contains("but Akamai Functions takes at most 50.0 MiB"),
        "{err}"
    );
    assert!(err.contains("blob"), "{err}");
    let (status, text) = check_target(content.path());
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("error: the app would be"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_edge_build_and_the_default_build_differ_only_where_documented() {
    let read = |name: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(repo_root().join(name)).unwrap()).unwrap()
    };
    let (mut default, mut edge) = (read("spin.toml"), read("spin-edge.toml"));
    for doc in [&mut default, &mut edge] {
        for id in ["api", "hub", "mcp", "overview"] {
            let component = doc["component"][id].as_table_mut().unwrap();
            component.remove("source");
            component.remove("build");
        }
    }
    // The hub keeps its messages in SQLite `default`, health probes it, and mcp's hub tools
    // reach it.
    for id in ["hub", "health", "mcp"] {
        let component = default["component"][id].as_table_mut().unwrap();
        assert_eq!(
            component
                .remove("sqlite_databases")
                .and_then(|v| v.as_array().cloned()),
            Some(vec!["default".into()]),
            "{id}"
        );
    }
    // The default build answers `/api/health` with a WASIp2 component of its own, and the edge
    // build, whose api is WASIp2 already, with the api: that api takes health's grants and
    // variables.
    let triggers = default["trigger"]["http"].as_array_mut().unwrap();
    let health_routes: Vec<_> = triggers
        .iter()
        .filter(|t| t["component"].as_str() == Some("health"))
        .map(|t| t["route"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(health_routes, ["/api/health"]);
    triggers.retain(|t| t["component"].as_str() != Some("health"));
    let mut health = default["component"]
        .as_table_mut()
        .unwrap()
        .remove("health")
        .unwrap();
    let health = health.as_table_mut().unwrap();
    health.remove("source");
    health.remove("build");
    let api = default["component"]["api"].as_table_mut().unwrap();
    assert_eq!(api.get("allowed_outbound_hosts"), None);
    api.insert(
        "allowed_outbound_hosts".into(),
        health.remove("allowed_outbound_hosts").unwrap(),
    );
    assert_eq!(
        health.remove("key_value_stores"),
        api.get("key_value_stores").cloned()
    );
    let api_variables = api["variables"].as_table_mut().unwrap();
    for (name, value) in health.remove("variables").unwrap().as_table().unwrap() {
        let shared = api_variables.insert(name.clone(), value.clone());
        assert!(shared.is_none() || shared.as_ref() == Some(value), "{name}");
    }
    assert!(health.is_empty(), "{health:?}");
    assert_eq!(default, edge);
    let edge = read("spin-edge.toml");
    for id in ["api", "hub", "mcp", "overview"] {
        let command = edge["component"][id]["build"]["command"].as_str().unwrap();
        assert!(
            command.contains("--profile edge") && command.contains("--features edge"),
            "{command}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bundled_docs_fit_the_edge_host() {
    let (status, text) = check_target(&repo_root().join("content"));
    assert_eq!(status, Some(0), "{text}");
    assert!(
        text.contains("app: ") && text.contains("of at most 50.0 MiB"),
        "{text}"
    );
    assert!(text.contains("largest answer served whole: "), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_suite_runs_the_edge_build_when_asked() {
    // Under DOCHUB_EMULATE the harness's apps are the edge build: its hub is on PostgreSQL.
    if dochub_tests::emulated().is_none() {
        return;
    }
    let app = TestApp::builder().start().await.unwrap();
    let res = reqwest::Client::new()
        .post(app.url("/api/send"))
        .json(&serde_json::json!({"from": "a", "to": "b", "body": "on the edge"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    app.stop().await;
}
