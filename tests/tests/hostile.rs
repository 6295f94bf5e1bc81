//! Hostile content and broken stores: one bad file never takes down more than itself, and a
//! broken store is reported, by health and by every hub route, naming the cause.

use std::path::Path;
use std::time::{Duration, Instant};

use dochub_tests::hostile::{at_the_limits, over_the_limits, write_tree};
use dochub_tests::{PgDb, TestApp, skip_on_edge};
use serde_json::Value;

/// What every route answers with one of each hostile file in the tree, live or prebuilt.
async fn every_route_answers(app: &TestApp, mode: &str) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut paths: Vec<String> = Vec::new();
    for file in over_the_limits().iter().chain(&at_the_limits()) {
        if let Some(page) = file.path.strip_suffix(".md") {
            paths.push(format!("/docs/{page}"));
            paths.push(format!("/docs/{page}?format=raw"));
            paths.push(format!("/api/raw/{page}"));
        }
    }
    for path in [
        "/docs/",
        "/docs/bomb/",
        "/docs/hostile/bad/",
        "/docs/hostile/bad/fine",
        "/docs/good/docs/intro",
        "/api/manifest",
        "/api/manifest/bomb",
        "/api/manifest/hostile/bad",
        "/api/search?q=quokka",
        "/docs/search?q=quokka",
        "/llms.txt",
        "/llms-full.txt",
        "/sitemap.xml",
    ] {
        paths.push(path.to_owned());
    }
    for path in &paths {
        let started = Instant::now();
        let res = client.get(app.url(path)).send().await.unwrap();
        let status = res.status().as_u16();
        let body = res.text().await.unwrap();
        assert_eq!(
            status,
            200,
            "{mode} {path}: {}",
            &body[..body.len().min(300)]
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{mode} {path} took {:?}",
            started.elapsed()
        );
    }
    let text = |path: &'static str| {
        let client = client.clone();
        let url = app.url(path);
        async move { client.get(url).send().await.unwrap().text().await.unwrap() }
    };
    // The page over the size limit says so, in place of its text.
    let huge = text("/docs/hostile/bad/huge").await;
    assert!(huge.contains("over the limit of 256 KiB"), "{mode}: {huge}");
    assert!(!huge.contains("All work and no play"), "{mode}");
    // Search still finds the good pages, and never the text of the one over the limit.
    let hits: Value = serde_json::from_str(&text("/api/search?q=quokka").await).unwrap();
    assert_eq!(
        hits["results"][0]["path"], "good/docs/intro",
        "{mode}: {hits}"
    );
    let hits: Value = serde_json::from_str(&text("/api/search?q=play").await).unwrap();
    assert_eq!(
        hits["results"].as_array().map(Vec::len),
        Some(0),
        "{mode}: {hits}"
    );
    // The YAML over the limits falls back as invalid YAML does: named by its id or heading.
    let manifest: Value = serde_json::from_str(&text("/api/manifest/bomb").await).unwrap();
    assert_eq!(manifest["project"]["name"], "bomb", "{mode}: {manifest}");
    let deep = text("/docs/hostile/bad/deep").await;
    assert!(deep.contains(">Deep</h1>"), "{mode}: {deep}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_hostile_file_takes_down_only_itself_live_and_prebuilt() {
    let content = tempfile::tempdir().unwrap();
    let files: Vec<_> = over_the_limits()
        .into_iter()
        .chain(at_the_limits())
        .collect();
    write_tree(content.path(), &files).unwrap();

    let live = TestApp::builder()
        .content(content.path())
        .env("SERVE_PREBUILT", "0")
        .start()
        .await
        .unwrap();
    every_route_answers(&live, "live").await;
    live.stop().await;

    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(content.path()).unwrap();
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .unwrap();
    let prebuilt = TestApp::builder()
        .content(content.path())
        .mount(build.path(), "/prebuilt")
        .env("BUILD_DIR", "/prebuilt")
        .env("SERVE_PREBUILT", "1")
        .start()
        .await
        .unwrap();
    every_route_answers(&prebuilt, "prebuilt").await;
    prebuilt.stop().await;
}

#[test]
fn check_names_every_hostile_file_in_seconds() {
    let content = tempfile::tempdir().unwrap();
    let files: Vec<_> = over_the_limits()
        .into_iter()
        .chain(at_the_limits())
        .collect();
    write_tree(content.path(), &files).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "not content\n").unwrap();
    let root_dir = content.path();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        root_dir.join("good/docs/leak.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../..", root_dir.join("good/docs/up")).unwrap();
    std::os::unix::fs::symlink("nowhere", root_dir.join("good/docs/dangling.md")).unwrap();
    std::fs::write(root_dir.join("good/_project.yaml"), b"name: Caf\xe9\n").unwrap();

    let started = Instant::now();
    let findings = dochub_content::ContentRoot::open(root_dir)
        .unwrap()
        .check()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let errors: Vec<String> = findings
        .iter()
        .filter(|d| d.severity == dochub_content::Severity::Error)
        .map(ToString::to_string)
        .collect();
    let secret = std::fs::canonicalize(outside.path().join("secret")).unwrap();
    for expected in [
        "hostile/bad/deep.md:3: error: invalid YAML in frontmatter: the YAML nests deeper than the limit of 32 levels".to_owned(),
        "hostile/bad/aliases.md:4: error: invalid YAML in frontmatter: the YAML holds more than 10000 values with its aliases expanded".to_owned(),
        "bomb/_project.yaml:3: error: invalid YAML: the YAML holds more than 10000 values".to_owned(),
        "hostile/bad/huge.md: error: page is 22000034 bytes (21.0 MiB), over the limit of 256 KiB".to_owned(),
        format!("good/docs/leak.md: error: link to `{}`, outside the content tree", secret.display()),
        "good/docs/up: error: link to `../..`, a folder holding the link itself".to_owned(),
        "good/docs/dangling.md: error: link to `nowhere` cannot be followed".to_owned(),
        "good/_project.yaml:1: error: not valid UTF-8".to_owned(),
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(&expected)),
            "{expected}\nin\n{}",
            errors.join("\n")
        );
    }
    // The files at the limits pass.
    assert!(
        !errors.iter().any(|e| e.starts_with("limits/")),
        "{}",
        errors.join("\n")
    );
}

/// A state folder whose SQLite database `default` is `damage`d before the app starts.
async fn app_on_broken_store(damage: impl FnOnce(&Path)) -> (TestApp, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    damage(&state.path().join("sqlite_db.db"));
    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    (app, state)
}

/// `/api/health`'s answer.
async fn health(client: &reqwest::Client, app: &TestApp) -> Value {
    let res = client.get(app.url("/api/health")).send().await.unwrap();
    res.json().await.unwrap()
}

/// Health asks for the hub's write lock without queueing for it: a writer holding it (a send
/// in progress, here another process) shows that the store takes writes. Before the first send
/// the file keeps SQLite's rollback journal, where a committing writer's lock keeps even
/// readers out; the first send turns on WAL, where it does not.
#[tokio::test(flavor = "multi_thread")]
async fn health_does_not_wait_behind_a_writer_of_the_hub_store() {
    if skip_on_edge("the edge build keeps the hub in PostgreSQL, not SQLite") {
        return;
    }
    let (app, state) = app_on_broken_store(|_| {}).await;
    let client = reqwest::Client::new();
    let writer = rusqlite::Connection::open(state.path().join("sqlite_db.db")).unwrap();
    let held_while = |lock: &'static str, stage: &'static str| {
        let writer = &writer;
        let client = &client;
        let app = &app;
        async move {
            writer.execute_batch(lock).unwrap();
            let started = Instant::now();
            let health = health(client, app).await;
            let took = started.elapsed();
            writer.execute_batch("ROLLBACK").unwrap();
            assert_eq!(
                health["stores"]["hub"]["status"], "ok",
                "{stage}, {lock}: {health}"
            );
            // SQLite's busy timeout, which a waiting probe would sit out, is 5 s.
            assert!(
                took < Duration::from_secs(2),
                "{stage}, {lock}: health took {took:?}"
            );
        }
    };
    held_while("BEGIN EXCLUSIVE", "before the first send").await;
    held_while("BEGIN IMMEDIATE", "before the first send").await;
    let res = client
        .post(app.url("/api/send"))
        .json(&serde_json::json!({"from": "a", "to": "b", "body": "m"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    held_while("BEGIN EXCLUSIVE", "after a send").await;
    held_while("BEGIN IMMEDIATE", "after a send").await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_hub_store_degrades_health_and_answers_503_naming_it() {
    if skip_on_edge("the edge build keeps the hub in PostgreSQL, not SQLite") {
        return;
    }
    let client = reqwest::Client::new();
    let garbage = |path: &Path| std::fs::write(path, vec![b'x'; 8192]).unwrap();
    let directory = |path: &Path| std::fs::create_dir(path).unwrap();
    type Damage<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Damage, &str); 2] = [
        (
            "overwritten with garbage",
            &garbage,
            "file is not a database",
        ),
        (
            "replaced by a folder",
            &directory,
            "unable to open database file",
        ),
    ];
    for (case, damage, cause) in cases {
        let (app, _state) = app_on_broken_store(damage).await;
        let health = health(&client, &app).await;
        assert_eq!(health["status"], "degraded", "{case}: {health}");
        assert_eq!(
            health["stores"]["hub"]["kind"], "sqlite",
            "{case}: {health}"
        );
        assert_eq!(
            health["stores"]["hub"]["status"], "failed",
            "{case}: {health}"
        );
        let error = health["stores"]["hub"]["error"].as_str().unwrap();
        assert!(error.contains(cause), "{case}: {health}");
        assert_eq!(
            health["stores"]["key_value"]["status"], "ok",
            "{case}: {health}"
        );

        let res = client
            .post(app.url("/api/send"))
            .json(&serde_json::json!({"from": "a", "to": "b", "body": "m"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 503, "{case}");
        assert_eq!(res.headers()["retry-after"], "1", "{case}");
        let body: Value = res.json().await.unwrap();
        let message = body["error"].as_str().unwrap();
        assert!(
            message.starts_with("the hub's store is unreadable: ") && message.contains(cause),
            "{case}: {body}"
        );
        let res = client.get(app.url("/api/inbox/b")).send().await.unwrap();
        assert_eq!(res.status(), 503, "{case}");
        // The docs do not depend on the hub's store.
        let res = client.get(app.url("/api/manifest")).send().await.unwrap();
        assert_eq!(res.status(), 200, "{case}");
        app.stop().await;
    }
}

/// Health keeps its SQLite connection on a reused instance for a second at most: a store
/// replaced while the app runs shows within that, though the instance serves on.
#[tokio::test(flavor = "multi_thread")]
async fn a_hub_store_replaced_while_the_app_runs_shows_in_health_within_seconds() {
    if skip_on_edge("the edge build keeps the hub in PostgreSQL, not SQLite") {
        return;
    }
    let (app, state) = app_on_broken_store(|_| {}).await;
    let client = reqwest::Client::new();
    assert_eq!(health(&client, &app).await["stores"]["hub"]["status"], "ok");
    let file = state.path().join("sqlite_db.db");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    // Asked every 50 ms: fewer requests than an instance serves (128) before it is replaced.
    let started = Instant::now();
    let failed_after = loop {
        let health = health(&client, &app).await;
        if health["stores"]["hub"]["status"] == "failed" {
            assert_eq!(health["status"], "degraded", "{health}");
            break started.elapsed();
        }
        assert_eq!(health["stores"]["hub"]["status"], "ok", "{health}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "health still reports the replaced store as ok: {health}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(failed_after < Duration::from_secs(3), "{failed_after:?}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_cut_mid_statement_is_a_503_saying_a_keyed_retry_is_safe() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let app = TestApp::builder()
        .variable("hub_database_url", &db.url)
        .start()
        .await
        .unwrap();
    let client = reqwest::Client::new();
    let send = |key: &'static str| {
        client
            .post(app.url("/api/send"))
            .header("idempotency-key", key)
            .json(&serde_json::json!({"from": "a", "to": "b", "body": "once"}))
            .send()
    };
    // The hub's tables exist, and the next send is held by a lock on them.
    assert_eq!(send("first").await.unwrap().status(), 201);
    let admin_url = db.url.replace("?sslmode=disable", "");
    let (locker, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    locker
        .batch_execute("BEGIN; LOCK TABLE hub_messages IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let held = tokio::spawn(send("cut"));
    // Its statement waits on the lock: end that connection under it.
    let started = Instant::now();
    loop {
        let cut = locker
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap();
        if !cut.is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no send waited on the lock"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let res = held.await.unwrap().unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "1");
    let body: Value = res.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains("whether it took effect is unknown")
            && message.contains("retrying with the same Idempotency-Key is safe"),
        "{body}"
    );
    locker.batch_execute("ROLLBACK").await.unwrap();
    // The retry the message invites stores the message once.
    let mut stored = None;
    for _ in 0..5 {
        let res = send("cut").await.unwrap();
        if res.status() == 201 {
            stored = Some(res);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(stored.is_some(), "the keyed retry was stored");
    let inbox: Value = client
        .get(app.url("/api/inbox/b?limit=10"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 2, "{inbox}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn health_reports_an_unreachable_hub_postgres() {
    let app = TestApp::builder()
        .variable(
            "hub_database_url",
            "postgres://postgres@127.0.0.1:1/test?sslmode=disable",
        )
        .start()
        .await
        .unwrap();
    let health = health(&reqwest::Client::new(), &app).await;
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["stores"]["hub"]["kind"], "postgres", "{health}");
    assert_eq!(health["stores"]["hub"]["status"], "failed", "{health}");
    let error = health["stores"]["hub"]["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot connect to the hub's PostgreSQL"),
        "{health}"
    );
    // The address may hold a password: the reading names the failure, not the address.
    assert!(!error.contains("127.0.0.1:1"), "{health}");
    app.stop().await;
}
