//! The README's run command, typed as a new user types it: from the repository root, with the
//! default (relative) `spin.toml`, serving the bundled `content/`.
//!
//! Every other end-to-end test names its manifest by absolute path, which once hid a first run
//! that served an empty site (the mounts were copied one folder too deep).

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use dochub_tests::{SpinUp, ensure_components_built, free_loopback_addr, repo_root, spin_bin};
use serde_json::Value;

/// The first build of the host binary compiles wasmtime for it: minutes on 2 cores.
const FIRST_RUN_TIMEOUT: Duration = Duration::from_secs(40 * 60);

/// The README's command, `cargo run -p dochub-host -- --build`, in the repository root; or,
/// with `SPIN_BIN`, `spin up` there (after the same build). Only the port and the state folder
/// differ from what a user types, so that the test neither collides with a running app nor
/// writes into the checkout's `.spin/`.
fn start_as_the_readme_says(state_dir: &Path) -> anyhow::Result<SpinUp> {
    let addr = free_loopback_addr()?;
    let mut cmd = match spin_bin() {
        Some(spin) => {
            ensure_components_built()?;
            let mut cmd = std::process::Command::new(spin);
            cmd.arg("up");
            cmd
        }
        None => {
            let mut cmd = std::process::Command::new(env!("CARGO"));
            cmd.args(["run", "-p", "dochub-host", "--", "--build"]);
            cmd
        }
    };
    cmd.current_dir(repo_root())
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--state-dir")
        .arg(state_dir);
    SpinUp::spawn(cmd, addr, Some(state_dir.join("logs")), FIRST_RUN_TIMEOUT)
}

/// The pages of the bundled tree, `<project>/<subproject>/<page>`, read straight from disk by
/// the rule the docs state: a project is a folder not starting with `_` or `.`, other than
/// `reports`; its subprojects are its folders; their pages are their `.md` files.
fn bundled_pages() -> BTreeSet<String> {
    let visible = |name: &str| !name.starts_with('_') && !name.starts_with('.');
    let folders = |dir: &Path| -> Vec<(String, std::path::PathBuf)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() && visible(&name) {
                found.push((name, entry.path()));
            }
        }
        found
    };
    let mut pages = BTreeSet::new();
    for (project, project_dir) in folders(&repo_root().join("content")) {
        if project == "reports" {
            continue;
        }
        for (subproject, dir) in folders(&project_dir) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(page) = name.strip_suffix(".md") {
                    pages.insert(format!("{project}/{subproject}/{page}"));
                }
            }
        }
    }
    pages
}

async fn get(base: &str, path: &str) -> (u16, String) {
    let res = reqwest::get(format!("{base}{path}")).await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_run_command_serves_the_bundled_docs() {
    let state = tempfile::tempdir().unwrap();
    let server = tokio::task::spawn_blocking({
        let state = state.path().to_path_buf();
        move || start_as_the_readme_says(&state)
    })
    .await
    .unwrap()
    .unwrap();
    let base = format!("http://{}", server.addr());

    let pages = bundled_pages();
    assert!(pages.len() >= 10, "the bundled tree has pages: {pages:?}");

    // The manifests count and list exactly the pages on disk.
    let (status, body) = get(&base, "/api/manifest").await;
    assert_eq!(status, 200, "{body}");
    let manifest: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(manifest["total_documents"], pages.len(), "{manifest}");
    let mut served = BTreeSet::new();
    for project in manifest["projects"].as_array().unwrap() {
        let project = project["id"].as_str().unwrap();
        let (_, body) = get(&base, &format!("/api/manifest/{project}")).await;
        let listing: Value = serde_json::from_str(&body).unwrap();
        for subproject in listing["subprojects"].as_array().unwrap() {
            let subproject = subproject["id"].as_str().unwrap();
            let (_, body) = get(&base, &format!("/api/manifest/{project}/{subproject}")).await;
            let documents: Value = serde_json::from_str(&body).unwrap();
            for doc in documents["documents"].as_array().unwrap() {
                served.insert(format!(
                    "{project}/{subproject}/{}",
                    doc["id"].as_str().unwrap()
                ));
            }
        }
    }
    assert_eq!(served, pages);

    // One page, byte for byte as raw, rendered under its title, and found by search.
    let page = "dochub/hub/messages";
    let on_disk = std::fs::read_to_string(repo_root().join(format!("content/{page}.md"))).unwrap();
    let (status, raw) = get(&base, &format!("/api/raw/{page}")).await;
    assert_eq!((status, raw.as_str()), (200, on_disk.as_str()));
    let title = on_disk
        .lines()
        .find_map(|line| line.strip_prefix("title:"))
        .map(|t| t.trim().trim_matches('"').to_owned())
        .expect("the page has a title");
    let (status, html) = get(&base, &format!("/docs/{page}")).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("<h1") && html.contains(&title), "{html}");
    let (status, docs_index) = get(&base, "/docs/").await;
    assert_eq!(status, 200);
    assert!(docs_index.contains("/docs/dochub/"), "{docs_index}");

    let query = url::form_urlencoded::byte_serialize(title.as_bytes()).collect::<String>();
    let (status, body) = get(&base, &format!("/api/search?q={query}")).await;
    assert_eq!(status, 200, "{body}");
    let found: Value = serde_json::from_str(&body).unwrap();
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&page),
        "search for {title:?} found {paths:?}"
    );

    // Answers over kept-alive connections, each whole, and none logged as a client that
    // left: the host lets go of a body of known length once it holds every byte, which a
    // flush racing it once took for a hang-up (hundreds of these answers under `spin up`,
    // a few under `dochub-host`).
    let client = reqwest::Client::new();
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let (client, url) = (client.clone(), format!("{base}/api/raw/{page}"));
            let on_disk = on_disk.clone();
            tokio::spawn(async move {
                for _ in 0..READS_EACH {
                    let res = client.get(&url).send().await.unwrap();
                    let status = res.status().as_u16();
                    let body = res.text().await.unwrap();
                    assert_eq!((status, body.as_str()), (200, on_disk.as_str()));
                }
            })
        })
        .collect();
    for reader in readers {
        reader.await.unwrap();
    }
    let logged = server.logs();
    assert!(
        !logged.contains("closed the connection"),
        "a complete answer was logged as cut short:\n{logged}"
    );

    drop(server);
}

/// Concurrent readers, and the reads of each: enough answers that the race the test guards
/// against shows on most runs of the code before its fix.
const READERS: usize = 8;
const READS_EACH: usize = 2_000;
