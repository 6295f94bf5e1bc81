//! The local host itself, driven over HTTP with a probe component that reports what it was given.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dochub_host::{HostOptions, Limits};
use dochub_tests::{Server, TestApp, fixture, serve, skip_under_spin};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn probe_manifest() -> PathBuf {
    fixture("probe-app").join("spin.toml")
}

fn build_probe() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| dochub_host::build_components(&probe_manifest()).expect("probe builds"));
}

async fn start_probe(state_dir: &Path, runtime_config: Option<PathBuf>) -> Server {
    start_probe_with(state_dir, runtime_config, Limits::default()).await
}

async fn start_probe_with(
    state_dir: &Path,
    runtime_config: Option<PathBuf>,
    limits: Limits,
) -> Server {
    build_probe();
    let variables = HashMap::from([("secret_word".to_string(), "swordfish".to_string())]);
    serve_app(
        probe_manifest(),
        state_dir,
        runtime_config,
        variables,
        limits,
    )
    .await
}

/// Serves the app of `manifest`, on a free port, keeping its state in `state_dir`.
async fn serve_app(
    manifest: PathBuf,
    state_dir: &Path,
    runtime_config: Option<PathBuf>,
    variables: HashMap<String, String>,
    limits: Limits,
) -> Server {
    serve(HostOptions {
        manifest,
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(state_dir.to_path_buf()),
        runtime_config,
        variables,
        env: Vec::new(),
        limits,
        direct_mounts: false,
        emulate: None,
    })
    .await
    .expect("host starts")
}

async fn get_json(host: &Server, path: &str) -> Value {
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
    let host = serve(HostOptions {
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
    if skip_under_spin("checks the in-process host's start-up error") {
        return;
    }
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
async fn key_value_behaves_as_spins_sqlite_store_across_restarts() {
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
                let v: Value = res.json().await.unwrap();
                assert!(v["ok"].is_i64(), "{v}");
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
    // Spin's counter format: 8 bytes, little-endian.
    assert_eq!(
        get_json(&host, "/probe/kv/get?key=n").await["bytes"],
        serde_json::json!(100i64.to_le_bytes())
    );

    let first = get_json(&host, "/probe/kv/cas?key=c&value=one").await;
    assert_eq!(first["ok"], "swapped");
    assert_eq!(first["seen"], Value::Null);
    let second = get_json(&host, "/probe/kv/cas?key=c&value=two").await;
    assert_eq!(second["seen"], "one");
    assert_eq!(get_json(&host, "/probe/kv/get?key=c").await["ok"], "two");

    // Two first swaps of an absent key both succeed: an upsert, the last write wins.
    let both = get_json(&host, "/probe/kv/cas2?key=fresh&a=A&b=B").await;
    assert_eq!(both["a"], "swapped", "{both}");
    assert_eq!(both["b"], "swapped", "{both}");
    assert_eq!(get_json(&host, "/probe/kv/get?key=fresh").await["ok"], "B");
    // Over a value that was read, only the first swap lands; the loser sees the winner.
    let raced = get_json(&host, "/probe/kv/cas2?key=fresh&a=C&b=D").await;
    assert_eq!(raced["a"], "swapped", "{raced}");
    assert_eq!(raced["b"], "cas-failed: C", "{raced}");
    // A handle that never read the key swaps unconditionally.
    let unread = get_json(&host, "/probe/kv/swap-unread?key=fresh&value=E").await;
    assert_eq!(unread["outcome"], "swapped");
    assert_eq!(get_json(&host, "/probe/kv/get?key=fresh").await["ok"], "E");

    let denied = get_json(&host, "/probe/kv/open?label=other").await;
    assert!(
        denied["err"].as_str().unwrap().contains("AccessDenied"),
        "{denied}"
    );
    let spin_api = get_json(&host, "/probe/kv/set?key=z&value=1").await;
    let mut keys: Vec<String> = serde_json::from_value(spin_api["ok"].clone()).unwrap();
    keys.sort();
    assert_eq!(keys, ["c", "fresh", "n", "z"]);
    host.shutdown().await;

    // The SQLite file outlives the host.
    assert!(dir.path().join("sqlite_key_value.db").exists());
    let host = start_probe(dir.path(), None).await;
    assert_eq!(get_json(&host, "/probe/kv/incr?key=n").await["ok"], 101);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decimal_counter_is_refused_as_spin_refuses_it() {
    if skip_under_spin("Spin panics on it and poisons its store; the host answers an error") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    get_json(&host, "/probe/kv/set?key=old&value=42").await;
    let refused = get_json(&host, "/probe/kv/incr?key=old").await;
    assert!(
        refused["err"]
            .as_str()
            .unwrap()
            .contains("incorrect length"),
        "{refused}"
    );
    // The store still serves.
    assert_eq!(get_json(&host, "/probe/kv/incr?key=new").await["ok"], 1);
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
    // Spin's Redis swap reports failure after its write lands.
    let swapped = get_json(
        &a,
        &format!("/probe/kv/swap-unread?key={key}:cas&value=one"),
    )
    .await;
    assert_eq!(swapped["outcome"], "cas-failed: one", "{swapped}");
    let raced = get_json(&b, &format!("/probe/kv/cas2?key={key}:cas&a=A&b=B")).await;
    assert_eq!(raced["a"], "cas-failed: A", "{raced}");
    assert_eq!(raced["b"], "cas-failed: A", "{raced}");
    assert_eq!(
        get_json(&a, &format!("/probe/kv/get?key={key}:cas")).await["ok"],
        "A"
    );
    // Counters on Redis are its own INCRBY decimals.
    assert_eq!(
        get_json(&a, &format!("/probe/kv/get?key={key}")).await["ok"],
        "100"
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
        "/probe/pg?url=postgres://postgres@127.0.0.1:5432/test%3Fsslmode%3Ddisable",
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
            .contains("address postgres://127.0.0.1:5433 is not permitted"),
        "{refused}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_uses_verified_tls_unless_the_url_disables_it() {
    if !dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    // The local server's certificate is self-signed: TLS (the default, and `require`) refuses it.
    for url in [
        "postgres://postgres@127.0.0.1:5432/test",
        "postgres://postgres@127.0.0.1:5432/test%3Fsslmode%3Drequire",
    ] {
        let refused = get_json(&host, &format!("/probe/pg?url={url}")).await;
        let err = refused["err"]
            .as_str()
            .unwrap_or_else(|| panic!("{refused}"));
        assert!(
            err.to_lowercase().contains("tls") || err.contains("certificate"),
            "{url}: {err}"
        );
    }
    host.shutdown().await;
}

async fn pg_session(host: SocketAddr, url: &str, statements: Value) -> Vec<Value> {
    let res = reqwest::Client::new()
        .post(format!("http://{host}/probe/pg/session?url={url}"))
        .body(statements.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_keeps_one_connection_per_handle_for_transactions() {
    use serde_json::json;
    if !dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let url = "postgres://postgres@127.0.0.1:5432/test%3Fsslmode%3Ddisable";
    let table = format!(
        "host_pg_{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let create =
        format!("CREATE TABLE {table} (id BIGSERIAL PRIMARY KEY, n BIGINT, t TEXT, b BYTEA)");
    let insert = format!("INSERT INTO {table} (n, t, b) VALUES ($1, $2, $3) RETURNING id, n, t, b");
    let results = pg_session(
        host.addr(),
        url,
        json!([
            { "sql": create },
            { "sql": "BEGIN" },
            { "sql": insert, "params": [7, "é", { "blob": [0, 255] }], "query": true },
            { "sql": format!("INSERT INTO {table} (n, t, b) VALUES ($1, $2, $3)"), "params": [8, null, null] },
            { "sql": "COMMIT" },
            { "sql": "BEGIN" },
            { "sql": format!("DELETE FROM {table}") },
            { "sql": "ROLLBACK" },
            { "sql": format!("SELECT count(*) FROM {table}"), "query": true },
        ]),
    )
    .await;
    assert_eq!(
        results[2]["rows"],
        json!([[1, 7, "é", { "blob": [0, 255] }]]),
        "{results:?}"
    );
    assert_eq!(results[3]["affected"], 1, "{results:?}");
    assert_eq!(results[6]["affected"], 2, "{results:?}");
    assert_eq!(results[8]["rows"], json!([[2]]), "{results:?}");
    // Another request (another handle) sees what was committed.
    let seen = pg_session(
        host.addr(),
        url,
        json!([
            { "sql": format!("SELECT n FROM {table} ORDER BY id"), "query": true },
            { "sql": format!("DROP TABLE {table}") },
        ]),
    )
    .await;
    assert_eq!(seen[0]["rows"], json!([[7], [8]]), "{seen:?}");
    host.shutdown().await;
}

/// Spin v4.0.2 waits for ever on a PostgreSQL query that returns no rows (its `query` awaits a
/// column list that only the first row sends); the host must hold such a request the same way,
/// so that a component relying on an empty answer fails here as it does under `spin up`.
#[tokio::test(flavor = "multi_thread")]
async fn postgres_query_without_rows_never_answers_as_on_spin() {
    use serde_json::json;
    if !dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A deadline past the client's patience, so that the held request ends soon after.
    let limits = Limits {
        request_timeout: Some(Duration::from_secs(5)),
        ..Limits::default()
    };
    let host = start_probe_with(dir.path(), None, limits).await;
    let url = "postgres://postgres@127.0.0.1:5432/test%3Fsslmode%3Ddisable";
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let session = |sql: &str| {
        client
            .post(format!("http://{}/probe/pg/session?url={url}", host.addr()))
            .body(json!([{ "sql": sql, "query": true }]).to_string())
            .send()
    };
    let one = session("SELECT 1 WHERE 1 = 1").await.unwrap();
    assert_eq!(one.status(), 200);
    let one: Value = one.json().await.unwrap();
    assert_eq!(one["results"][0]["rows"], json!([[1]]), "{one}");
    // `execute` answers whatever it affects.
    let none = pg_session(host.addr(), url, json!([{ "sql": "SELECT 1 WHERE 1 = 0" }])).await;
    assert_eq!(none[0]["affected"], 0, "{none:?}");
    match session("SELECT 1 WHERE 1 = 0").await {
        Err(e) => assert!(e.is_timeout(), "{e}"),
        Ok(res) => panic!("a zero-row query answered {}", res.status()),
    }
    host.shutdown().await;
}

/// Spin's pool holds 64 connections per address and a request that finds them all taken
/// waits for one, however long: the 65th of 65 requests that each hold a connection for
/// 1.5 s is served once a connection comes free, past the 1 s connect timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_waits_for_a_free_pooled_connection_as_on_spin() {
    use serde_json::json;
    if !dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let url = "postgres://postgres@127.0.0.1:5432/test%3Fsslmode%3Ddisable";
    let started = Instant::now();
    let sessions: Vec<_> = (0..65)
        .map(|_| {
            let statements = json!([{ "sql": "SELECT 1 FROM pg_sleep(1.5)", "query": true }]);
            tokio::spawn(pg_session(host.addr(), url, statements))
        })
        .collect();
    for session in sessions {
        let results = session.await.unwrap();
        assert_eq!(results[0]["rows"], json!([[1]]), "{results:?}");
    }
    // The last one had to wait for a connection: two turns of the pool.
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    host.shutdown().await;
}

async fn sql(host: &Server, query: &str, statements: Value) -> Vec<Value> {
    let res = reqwest::Client::new()
        .post(format!("http://{}/probe/sql?{query}", host.addr()))
        .body(statements.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let v: Value = res.json().await.unwrap();
    match v["results"].as_array() {
        Some(results) => results.clone(),
        None => vec![v],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_databases_behave_as_spins() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let r = sql(
        &host,
        "",
        json!([
            { "sql": "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, b BLOB, r REAL, n)" },
            { "sql": "INSERT INTO t (v, b, r, n) VALUES (?, ?, ?, ?) RETURNING id, v, b, r, n",
              "params": ["é✓", { "blob": [0, 255] }, 0.5, null] },
            { "sql": "INSERT INTO t (v) VALUES (?)", "params": [i64::MAX] },
            { "sql": "SELECT v FROM t WHERE id = 2" },
            { "sql": "SELEC nonsense" },
        ]),
    )
    .await;
    assert_eq!(r[1]["columns"], json!(["id", "v", "b", "r", "n"]));
    assert_eq!(
        r[1]["rows"],
        json!([[1, "é✓", { "blob": [0, 255] }, { "real": 0.5 }, null]])
    );
    assert_eq!(r[2]["changes"], 1);
    assert_eq!(r[2]["last_insert_rowid"], 2);
    // Column `v` has TEXT affinity: SQLite stored the integer as text, and text comes back.
    assert_eq!(r[3]["rows"], json!([[i64::MAX.to_string()]]));
    assert!(r[4]["err"].as_str().unwrap().contains("Io("), "{r:?}");

    // A transaction across statements of one connection; a rollback undoes it.
    let r = sql(
        &host,
        "",
        json!([
            { "sql": "BEGIN IMMEDIATE" },
            { "sql": "DELETE FROM t" },
            { "sql": "ROLLBACK" },
            { "sql": "SELECT count(*) FROM t" },
        ]),
    )
    .await;
    assert_eq!(r[3]["rows"], json!([[2]]), "{r:?}");
    // A request that ends inside a transaction: its connection closes, the work is undone.
    let r = sql(
        &host,
        "",
        json!([{ "sql": "BEGIN" }, { "sql": "DELETE FROM t" }]),
    )
    .await;
    assert_eq!(r[1]["changes"], 2);
    // The v2 interface reads the same database.
    let r = sql(&host, "api=2", json!([{ "sql": "SELECT count(*) FROM t" }])).await;
    assert_eq!(r[0]["rows"], json!([[2]]), "{r:?}");
    // Labels the component did not declare are refused.
    let r = sql(&host, "db=other", json!([])).await;
    assert_eq!(r[0]["err"], "Error::AccessDenied", "{r:?}");

    // Concurrent single statements from many requests wait on the file lock: none is lost.
    sql(
        &host,
        "",
        json!([{ "sql": "CREATE TABLE c (id INTEGER PRIMARY KEY, w INTEGER)" }]),
    )
    .await;
    let mut tasks = Vec::new();
    for w in 0..4 {
        let addr = host.addr();
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            for _ in 0..25 {
                let body =
                    json!([{ "sql": "INSERT INTO c (w) VALUES (?) RETURNING id", "params": [w] }]);
                let v: Value = client
                    .post(format!("http://{addr}/probe/sql"))
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                assert!(v["results"][0]["rows"][0][0].is_i64(), "{v}");
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let r = sql(
        &host,
        "",
        json!([{ "sql": "SELECT count(DISTINCT id) FROM c" }]),
    )
    .await;
    assert_eq!(r[0]["rows"], json!([[100]]));
    host.shutdown().await;

    // Spin's file, and it outlives the host.
    assert!(dir.path().join("sqlite_db.db").exists());
    let host = start_probe(dir.path(), None).await;
    let r = sql(&host, "", json!([{ "sql": "SELECT count(*) FROM t" }])).await;
    assert_eq!(r[0]["rows"], json!([[2]]));
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

/// Spin answers nothing to a request whose authority it cannot tell (no `Host` and none in the
/// target, or the two disagree): its handler fails and hyper closes the connection.
#[tokio::test(flavor = "multi_thread")]
async fn a_request_without_a_clear_authority_gets_no_response() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    for head in [
        "GET /probe/headers HTTP/1.0\r\n\r\n".to_string(),
        format!(
            "GET http://{}/probe/headers HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n",
            host.addr()
        ),
    ] {
        let mut stream = tokio::net::TcpStream::connect(host.addr()).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        // Closed at once, or reset: either way not a byte of a response.
        let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response))
            .await
            .expect("the connection is closed");
        assert!(
            response.is_empty(),
            "{head}: {}",
            String::from_utf8_lossy(&response)
        );
    }
    // The same request with its authority is answered.
    let mut stream = tokio::net::TcpStream::connect(host.addr()).await.unwrap();
    stream
        .write_all(b"GET /probe/headers HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
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

async fn start_error(manifest: PathBuf) -> Option<String> {
    if skip_under_spin("checks the in-process host's start-up error") {
        return None;
    }
    let err = dochub_host::start(HostOptions {
        manifest,
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .await
    .err()
    .expect("start is refused");
    Some(format!("{err:#}"))
}

#[tokio::test]
async fn a_component_importing_what_the_host_lacks_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(
        dir.path(),
        r#"(component (import "fermyon:spin/llm@2.0.0" (instance (export "infer" (func)))))"#,
    );
    let Some(err) = start_error(manifest).await else {
        return;
    };
    assert!(err.contains("component `guest`"), "{err}");
    assert!(err.contains("fermyon:spin/llm@2.0.0"), "{err}");
}

#[tokio::test]
async fn a_component_without_the_http_export_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(dir.path(), "(component)");
    let Some(err) = start_error(manifest).await else {
        return;
    };
    assert!(err.contains("wasi:http/incoming-handler"), "{err}");
}

#[tokio::test]
async fn a_missing_wasm_file_says_to_build_first() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = write_app(dir.path(), "(component)");
    std::fs::remove_file(dir.path().join("guest.wasm")).unwrap();
    let Some(err) = start_error(manifest).await else {
        return;
    };
    assert!(err.contains("--build"), "{err}");
}

/// Opens a connection and sends part of a request head, never its end.
async fn half_sent_request(addr: std::net::SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /probe/headers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .unwrap();
    stream
}

/// Whether the server closes `stream` within `limit`: what it sent first (a 408 or nothing).
async fn closed_by_server(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut seen = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut seen)).await {
        // A reset is a close too.
        Ok(_) => Some(String::from_utf8_lossy(&seen).into_owned()),
        Err(_) => None,
    }
}

/// Reads one whole response (head, then a `content-length` or chunked body) from a kept-alive
/// connection.
async fn read_one_response(stream: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before a whole response");
        seen.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&seen).into_owned();
        let Some(head_end) = text.find("\r\n\r\n") else {
            continue;
        };
        let head = text[..head_end].to_ascii_lowercase();
        let complete = match head.lines().find_map(|l| l.strip_prefix("content-length:")) {
            Some(length) => seen.len() >= head_end + 4 + length.trim().parse::<usize>().unwrap(),
            None => {
                assert!(head.contains("transfer-encoding: chunked"), "{head}");
                text.ends_with("\r\n0\r\n\r\n")
            }
        };
        if complete {
            return text;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_headers_and_idle_connections_are_closed_after_the_header_timeout() {
    if skip_under_spin("Spin has no header-read timeout: half-sent heads stay open for ever") {
        return;
    }
    let timeout = Duration::from_millis(500);
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_with(
        dir.path(),
        None,
        Limits {
            header_read_timeout: Some(timeout),
            ..Limits::default()
        },
    )
    .await;
    let mut attackers = Vec::new();
    for _ in 0..200 {
        attackers.push(half_sent_request(host.addr()).await);
    }
    // Open until the timeout…
    assert_eq!(
        closed_by_server(&mut attackers[199], Duration::from_millis(100)).await,
        None
    );
    // …then every one is closed by the server.
    for (i, attacker) in attackers.iter_mut().enumerate() {
        let said = closed_by_server(attacker, Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("half-sent request {i} is still open after 10 s"));
        assert!(
            said.is_empty() || said.starts_with("HTTP/1.1 408"),
            "{said}"
        );
    }
    // The host serves on.
    assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");

    // A kept-alive connection gets its response, then is closed once idle for the timeout.
    let mut idle = TcpStream::connect(host.addr()).await.unwrap();
    idle.write_all(b"GET /probe/env HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let response = read_one_response(&mut idle).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let answered = Instant::now();
    let said = closed_by_server(&mut idle, Duration::from_secs(10))
        .await
        .expect("an idle kept-alive connection is closed");
    assert_eq!(said, "");
    assert!(answered.elapsed() >= timeout - Duration::from_millis(50));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_over_the_cap_wait_for_a_free_slot() {
    if skip_under_spin("Spin does not cap connections") {
        return;
    }
    let hold = Duration::from_millis(1500);
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_with(
        dir.path(),
        None,
        Limits {
            max_connections: 4,
            header_read_timeout: Some(hold),
            ..Limits::default()
        },
    )
    .await;
    let opened = Instant::now();
    let mut holders = Vec::new();
    for _ in 0..4 {
        holders.push(half_sent_request(host.addr()).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // With every slot held, a fifth client is served only once the holders time out.
    let res = reqwest::get(format!("http://{}/probe/env", host.addr()))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let waited = opened.elapsed();
    assert!(
        waited >= hold - Duration::from_millis(100),
        "served after {waited:?}, while every slot was held"
    );
    for holder in &mut holders {
        assert!(
            closed_by_server(holder, Duration::from_secs(5))
                .await
                .is_some()
        );
    }
    // Slots free again: requests are served at once.
    assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_component_past_the_request_deadline_gets_504_and_the_host_serves_on() {
    if skip_under_spin("Spin sets no request deadline: the loop would run for ever") {
        return;
    }
    let deadline = Duration::from_secs(1);
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_with(
        dir.path(),
        None,
        Limits {
            request_timeout: Some(deadline),
            ..Limits::default()
        },
    )
    .await;
    let addr = host.addr();
    // A guest spinning in wasm (stopped by epoch interruption), and one waiting in a host call.
    for path in ["/probe/loop", "/probe/sleep?ms=60000"] {
        let started = Instant::now();
        let stuck = tokio::spawn(reqwest::get(format!("http://{addr}{path}")));
        // Others are served meanwhile.
        assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");
        let res = tokio::time::timeout(Duration::from_secs(20), stuck)
            .await
            .unwrap_or_else(|_| panic!("{path} was not cut off"))
            .unwrap()
            .unwrap();
        assert_eq!(res.status(), 504, "{path}");
        assert_eq!(res.text().await.unwrap(), "Gateway Timeout\n");
        assert!(started.elapsed() >= deadline, "{path}");
    }
    // A request within the deadline is untouched.
    assert_eq!(
        get_json(&host, "/probe/sleep?ms=100").await["slept_ms"],
        100
    );
    host.shutdown().await;
}

/// After its head is out, a component that stops sending (spinning in wasm, or blocked in a
/// host call) is stopped once the deadline passes; the client sees an unfinished body.
#[tokio::test(flavor = "multi_thread")]
async fn a_component_stuck_after_its_response_head_is_stopped_by_the_deadline() {
    if skip_under_spin("Spin sets no request deadline: the component would run for ever") {
        return;
    }
    let deadline = Duration::from_secs(1);
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_with(
        dir.path(),
        None,
        Limits {
            request_timeout: Some(deadline),
            ..Limits::default()
        },
    )
    .await;
    let addr = host.addr();
    for path in ["/probe/head-then-loop", "/probe/head-then-sleep"] {
        let started = Instant::now();
        let mut res = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(
            res.chunk().await.unwrap().as_deref(),
            Some(&b"started\n"[..]),
            "{path}"
        );
        // Others are served meanwhile.
        assert_eq!(get_json(&host, "/probe/env").await["PROBE_MODE"], "test");
        let end = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                match res.chunk().await {
                    Ok(Some(_)) => {}
                    Ok(None) => return Ok(()),
                    Err(e) => return Err(e),
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{path} was not cut off"));
        assert!(
            end.is_err(),
            "{path}: the body must end unfinished, not complete"
        );
        assert!(started.elapsed() >= deadline, "{path}");
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn health_answers_within_two_seconds_when_the_database_never_answers() {
    if skip_under_spin("Spin waits for ever on a database that accepts and never answers") {
        return;
    }
    // Accepts connections and holds them, never saying a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let app = TestApp::builder()
        .content(fixture("basic"))
        .variable(
            "database_url",
            &format!("postgres://dochub@127.0.0.1:{port}/dochub?sslmode=disable"),
        )
        .start()
        .await
        .unwrap();
    // Twice: a new pool, then the same pool again.
    for _ in 0..2 {
        let started = Instant::now();
        let res = reqwest::get(app.url("/api/health")).await.unwrap();
        let took = started.elapsed();
        assert_eq!(res.status(), 200);
        let health: Value = res.json().await.unwrap();
        assert_eq!(health["database"], "disconnected", "{health}");
        assert_eq!(health["status"], "degraded", "{health}");
        assert!(took < Duration::from_secs(2), "health took {took:?}");
    }
    holder.abort();
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_finishes_the_request_in_flight_and_closes_idle_connections() {
    if skip_under_spin("Spin drops requests in flight when it is stopped") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe(dir.path(), None).await;
    let addr = host.addr();
    let in_flight = tokio::spawn(reqwest::get(format!("http://{addr}/probe/sleep?ms=1500")));
    let mut idle = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let stopping = Instant::now();
    let shutdown = tokio::spawn(host.shutdown());
    let said = closed_by_server(&mut idle, Duration::from_secs(2))
        .await
        .expect("an idle connection is closed at once");
    assert_eq!(said, "");
    let res = in_flight.await.unwrap().unwrap();
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["slept_ms"], 1500);
    shutdown.await.unwrap();
    assert!(
        stopping.elapsed() >= Duration::from_millis(800),
        "shutdown did not wait for the request"
    );
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "still accepting after shutdown"
    );
}

/// A link in the content tree back to a folder above it (`ln -s ../.. content/p/s/up`): the
/// start is refused at once, naming the link, with nothing copied. Before, the copy followed
/// it at every level (44 GB of staging in 70 s when the link led to the app folder). The link
/// here leads to the content root, so that a regression copies a small tree a thousand times,
/// not the disk full, and a watchdog bounds how long it may try.
#[tokio::test(flavor = "multi_thread")]
async fn a_link_back_up_the_content_tree_is_refused_at_start_naming_it() {
    if skip_under_spin(
        "spin up copies the loop until its path is too long; the refusal is the host's",
    ) {
        return;
    }
    let content = tempfile::tempdir().unwrap();
    copy_dir(&fixture("basic"), content.path());
    let sub = content.path().join("alpha/guide");
    std::fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink("../..", sub.join("up")).unwrap();
    dochub_tests::ensure_components_built().unwrap();
    let started = Instant::now();
    let start = TestApp::builder().content(content.path()).start();
    let err = match tokio::time::timeout(Duration::from_secs(60), start).await {
        Ok(Ok(_)) => panic!("an app with a link loop started"),
        Ok(Err(e)) => format!("{e:#}"),
        Err(_) => panic!("still copying after 60 s"),
    };
    assert!(
        err.contains("alpha/guide/up is a link to ../.., a folder that contains it"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn probe_p3_manifest() -> PathBuf {
    fixture("probe-p3-app").join("spin.toml")
}

fn build_probe_p3() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        dochub_host::build_components(&probe_p3_manifest()).expect("the WASIp3 probe builds")
    });
}

/// The WASIp3 probe (`wasi:http/handler@0.3`, spin-sdk 6), served with `limits`.
async fn start_probe_p3(state_dir: &Path, limits: Limits) -> Server {
    build_probe_p3();
    serve_app(probe_p3_manifest(), state_dir, None, HashMap::new(), limits).await
}

/// What `/count` answers on `n` requests one after the other: how many requests the answering
/// instance had served. The pause lets an instance that finished a request take the next, as
/// it would for any client that does not hurry.
async fn served_counts(host: &Server, path: &str, n: usize) -> Vec<u64> {
    let mut counts = Vec::new();
    for _ in 0..n {
        counts.push(get_json(host, path).await["served"].as_u64().unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    counts
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasip3_component_gets_its_request_as_under_spin() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_p3(dir.path(), Limits::default()).await;
    let addr = host.addr();
    let client = reqwest::Client::new();
    let res = client
        .post(format!("http://{addr}/p3/echo?x=1"))
        .body("hello, p3 & <you>")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    let echo: Value = res.json().await.unwrap();
    assert_eq!(echo["method"], "POST");
    assert_eq!(echo["uri"], format!("http://{addr}/p3/echo?x=1"));
    assert_eq!(echo["body"], "hello, p3 & <you>");

    let big = "x".repeat(3 << 20);
    let echo: Value = client
        .post(format!("http://{addr}/p3/echo"))
        .body(big.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(echo["body"].as_str().map(str::len), Some(big.len()));

    let missing = reqwest::get(format!("http://{addr}/p3/nowhere"))
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasip3_component_reads_its_variables_through_spin_variables_3() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_p3(dir.path(), Limits::default()).await;
    let greeting = get_json(&host, "/p3/variable?name=greeting").await;
    assert_eq!(greeting["ok"], "hello, p3", "{greeting}");
    let undefined = get_json(&host, "/p3/variable?name=farewell").await;
    let err = undefined["err"].as_str().unwrap();
    assert!(
        err.contains("Undefined(") && err.contains("farewell"),
        "{undefined}"
    );
    let invalid = get_json(&host, "/p3/variable?name=Not-A-Name").await;
    assert!(
        invalid["err"].as_str().unwrap().contains("InvalidName("),
        "{invalid}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasip3_instance_serves_many_requests_and_a_wasip2_instance_one() {
    let dir = tempfile::tempdir().unwrap();
    let reused = start_probe_p3(dir.path(), Limits::default()).await;
    assert_eq!(served_counts(&reused, "/p3/count", 3).await, [1, 2, 3]);
    reused.shutdown().await;

    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        instance_reuse: dochub_host::limits::InstanceReuse {
            max_requests: 2,
            ..Default::default()
        },
        ..Limits::default()
    };
    let twice = start_probe_p3(dir.path(), limits).await;
    assert_eq!(served_counts(&twice, "/p3/count", 4).await, [1, 2, 1, 2]);
    twice.shutdown().await;

    let dir = tempfile::tempdir().unwrap();
    let fresh = start_probe(dir.path(), None).await;
    assert_eq!(served_counts(&fresh, "/probe/count", 3).await, [1, 1, 1]);
    fresh.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasip3_guest_that_traps_gets_a_500_and_its_instance_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let host = start_probe_p3(dir.path(), Limits::default()).await;
    assert_eq!(served_counts(&host, "/p3/count", 2).await, [1, 2]);
    let trapped = reqwest::get(format!("http://{}/p3/trap", host.addr()))
        .await
        .unwrap();
    assert_eq!(trapped.status(), 500);
    // A trapped instance is never entered again: the next request gets a new one.
    assert_eq!(served_counts(&host, "/p3/count", 2).await, [1, 2]);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wasip3_guest_past_the_request_deadline_gets_a_504() {
    if skip_under_spin("the request deadline is this host's own") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        request_timeout: Some(Duration::from_millis(500)),
        ..Limits::default()
    };
    let host = start_probe_p3(dir.path(), limits).await;
    let late = reqwest::get(format!("http://{}/p3/sleep?ms=5000", host.addr()))
        .await
        .unwrap();
    assert_eq!(late.status(), 504);
    let prompt = get_json(&host, "/p3/sleep?ms=10").await;
    assert_eq!(prompt["slept_ms"], 10);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_emulated_edge_host_refuses_a_wasip3_component() {
    if skip_under_spin("checks the in-process host's start-up error") {
        return;
    }
    build_probe_p3();
    let dir = tempfile::tempdir().unwrap();
    let platform = dochub_host::emulate::Platform::AkamaiFunctions;
    let err = dochub_host::start(HostOptions {
        manifest: probe_p3_manifest(),
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(dir.path().to_path_buf()),
        limits: dochub_host::emulate::limits(platform, &Limits::default()),
        emulate: Some(platform),
        ..Default::default()
    })
    .await
    .err()
    .expect("start fails");
    let message = format!("{err:#}");
    assert!(
        message.contains("wasi:http/types@0.3.0-rc-2026-03-15 (WASI 0.3 is not offered"),
        "{message}"
    );
}
