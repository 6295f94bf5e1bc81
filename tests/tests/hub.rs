//! The message hub end to end: the real `hub.wasm` under the local host, over HTTP, on Spin's
//! SQLite database (`.spin/sqlite_db.db`) and on PostgreSQL (127.0.0.1:5432, a fresh database per
//! test, dropped afterwards).

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dochub_tests::{AppBuilder, PgDb, TestApp, skip_on_edge};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MAX_BODY: usize = 64 * 1024;
/// Where the hub keeps its data in a test.
enum Backend {
    Sqlite,
    Postgres(PgDb),
}

impl Backend {
    fn app(&self) -> AppBuilder {
        match self {
            Backend::Sqlite => TestApp::builder(),
            Backend::Postgres(db) => TestApp::builder().variable("hub_database_url", &db.url),
        }
    }
}

/// Runs an async scenario on SQLite and on PostgreSQL, as two tests.
macro_rules! on_both {
    ($scenario:ident, $sqlite:ident, $postgres:ident) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn $sqlite() {
            if skip_on_edge("the hub has no SQLite there; the PostgreSQL twin of this test runs") {
                return;
            }
            $scenario(Backend::Sqlite).await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn $postgres() {
            if let Some(db) = PgDb::create().await {
                $scenario(Backend::Postgres(db)).await;
            }
        }
    };
}

/// A machine name no other test (or earlier run sharing Redis) uses.
fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{nanos:x}-{n}", std::process::id())
}

async fn send(client: &Client, base: &str, from: &str, to: &str, body: &str) -> Value {
    let res = client
        .post(format!("{base}/api/send"))
        .json(&json!({ "from": from, "to": to, "body": body }))
        .send()
        .await
        .unwrap();
    let status = res.status();
    let answer = res.text().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "send {from} -> {to}: {answer}");
    serde_json::from_str(&answer).unwrap()
}

async fn inbox(client: &Client, base: &str, machine: &str, query: &str) -> Vec<Value> {
    let res = client
        .get(format!("{base}/api/inbox/{machine}?{query}"))
        .send()
        .await
        .unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "inbox {machine}?{query}: {text}");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["machine"], machine);
    value["messages"].as_array().unwrap().clone()
}

fn bodies(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["body"].as_str().unwrap())
        .collect()
}

/// Reads the inbox with ack until it is empty.
async fn drain(client: &Client, base: &str, machine: &str) -> Vec<Value> {
    let mut all = Vec::new();
    loop {
        let batch = inbox(client, base, machine, "limit=500&ack=true").await;
        if batch.is_empty() {
            return all;
        }
        all.extend(batch);
    }
}

/// The names `/machines` lists, in its order.
async fn machine_names(client: &Client, base: &str) -> Vec<String> {
    let (status, listed) = get_json(client, format!("{base}/machines")).await;
    assert_eq!(status, StatusCode::OK, "/machines: {listed}");
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn error(res: reqwest::Response) -> (StatusCode, String) {
    let status = res.status();
    assert_eq!(
        res.headers()["content-type"],
        "application/json",
        "{status}"
    );
    let value: Value = res.json().await.unwrap();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error"]);
    (status, value["error"].as_str().unwrap().to_owned())
}

fn assert_iso_millis(ts: &str) {
    let b = ts.as_bytes();
    assert_eq!(b.len(), 24, "{ts}");
    assert!(
        b[4] == b'-' && b[10] == b'T' && b[19] == b'.' && b[23] == b'Z',
        "not ISO 8601 UTC with milliseconds: {ts}"
    );
}

on_both!(shapes, shapes_on_sqlite, shapes_on_postgres);

/// Send, inbox and machines answer the documented shapes.
async fn shapes(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let c = Client::new();
    let res = c
        .post(app.url("/api/send"))
        .header("content-type", "application/json")
        .body(r#"{"from":"laptop","to":"ci-runner","body":"build 412 is green"}"#)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let content_type = res.headers()["content-type"].clone();
    let answer = res.text().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(content_type, "application/json");
    let sent: Value = serde_json::from_str(&answer).unwrap();
    let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "body",
            "from",
            "id",
            "importance",
            "reply_to",
            "subject",
            "thread",
            "timestamp",
            "to"
        ]
    );
    assert!(sent["id"].is_u64());
    assert_eq!(
        (&sent["from"], &sent["to"], &sent["body"]),
        (
            &json!("laptop"),
            &json!("ci-runner"),
            &json!("build 412 is green")
        )
    );
    assert_iso_millis(sent["timestamp"].as_str().unwrap());

    let res = c
        .get(app.url("/api/inbox/ci-runner?limit=10&ack=true"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/json");
    let mut expected = sent.clone();
    expected["read"] = json!(true);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"machine": "ci-runner", "messages": [expected]})
    );
    let res = c.get(app.url("/api/inbox/ci-runner")).send().await.unwrap();
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"machine": "ci-runner", "messages": []})
    );

    let res = c.get(app.url("/machines")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "application/json");
    let machines: Value = res.json().await.unwrap();
    let machines = machines.as_array().unwrap();
    let names: Vec<&str> = machines
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ci-runner", "laptop"]);
    for m in machines {
        assert_eq!(m.as_object().unwrap().len(), 2);
        assert_iso_millis(m["last_seen"].as_str().unwrap());
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_sends_are_refused_with_the_right_status() {
    let app = TestApp::builder().start().await.unwrap();
    let c = Client::new();
    let url = app.url("/api/send");
    let post =
        |ct: &'static str, body: Vec<u8>| c.post(&url).header("content-type", ct).body(body).send();
    for (body, reason) in [
        ("{", "not a JSON object"),
        ("[]", "not a JSON object"),
        (r#"{"to":"b","body":"x"}"#, "`from` is required"),
        (r#"{"from":"a","body":"x"}"#, "`to` is required"),
        (r#"{"from":"a","to":"b"}"#, "`body` is required"),
        (
            r#"{"from":"a","to":"b","body":""}"#,
            "`body` must not be empty",
        ),
        (
            r#"{"from":"","to":"b","body":"x"}"#,
            "`from` must not be empty",
        ),
        (r#"{"from":"all","to":"b","body":"x"}"#, "reserved"),
        // A broadcast typed in capitals would land in an inbox nobody reads.
        (
            r#"{"from":"a","to":"ALL","body":"x"}"#,
            "`to` cannot be `ALL`",
        ),
        (r#"{"from":"All","to":"b","body":"x"}"#, "reserved"),
        (r#"{"from":"a","to":"..","body":"x"}"#, "not machine names"),
        (r#"{"from":".","to":"b","body":"x"}"#, "not machine names"),
        (
            r#"{"from":"a/b","to":"b","body":"x"}"#,
            "`from` must be a machine name",
        ),
        (
            r#"{"from":"a","to":"b c","body":"x"}"#,
            "`to` must be a machine name",
        ),
        (
            r#"{"from":"a","to":"b","body":7}"#,
            "`body` must be a string",
        ),
    ] {
        let (status, message) = error(post("application/json", body.into()).await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(message.contains(reason), "{body}: {message}");
    }
    let ok = br#"{"from":"a","to":"b","body":"x"}"#.to_vec();
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let (status, message) = error(post(ct, ok.clone()).await.unwrap()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct}");
        assert!(message.contains("application/json"));
    }
    let (status, _) = error(c.post(&url).body(ok.clone()).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let res = post("application/json; charset=utf-8", ok).await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);

    let big = json!({"from": "a", "to": "b", "body": "x".repeat(MAX_BODY + 1)}).to_string();
    let (status, message) = error(post("application/json", big.into()).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(message.contains("64 KiB"));
    // Refused before its body is read, so the server closes that connection after the answer:
    // `Connection: close` keeps the client from picking it for the next request in the race.
    let huge = vec![b' '; 7 * MAX_BODY];
    let res = c
        .post(&url)
        .header("content-type", "application/json")
        .header("connection", "close")
        .body(huge)
        .send()
        .await
        .unwrap();
    let (status, _) = error(res).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    for key in ["", "tab\tkey", &"k".repeat(129)] {
        let res = c
            .post(&url)
            .header("idempotency-key", key)
            .json(&json!({"from": "a", "to": "b", "body": "x"}))
            .send()
            .await
            .unwrap();
        let (status, message) = error(res).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{key:?}");
        assert!(message.contains("Idempotency-Key"), "{message}");
    }

    // Nothing but the good sends registered anyone.
    assert_eq!(machine_names(&c, app.base_url()).await, ["a"]);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inbox_reads_methods_and_paths() {
    let app = TestApp::builder().start().await.unwrap();
    let c = Client::new();
    for (query, reason) in [
        ("all", "reserved"),
        ("ALL", "reserved"),
        ("bad%20name", "machine name"),
        ("b?limit=abc", "`limit` must be an integer"),
        ("b?limit=", "`limit`"),
        ("b?ack=maybe", "`ack` must be true or false"),
    ] {
        let res = c
            .get(app.url(&format!("/api/inbox/{query}")))
            .send()
            .await
            .unwrap();
        let (status, message) = error(res).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert!(message.contains(reason), "{query}: {message}");
    }
    for path in [
        "/api/inbox/a/b",
        "/api/inbox/",
        "/api/inbox",
        "/api/inbox/a/ack/x",
    ] {
        let (status, message) = error(c.get(app.url(path)).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(message.contains("no hub route"), "{path}: {message}");
    }
    for (method, path, allow) in [
        (reqwest::Method::GET, "/api/send", "POST"),
        (reqwest::Method::PUT, "/api/send", "POST"),
        (reqwest::Method::POST, "/api/inbox/b", "GET"),
        (reqwest::Method::DELETE, "/api/inbox/b", "GET"),
        (reqwest::Method::POST, "/machines", "GET"),
        (reqwest::Method::PATCH, "/machines", "GET"),
        (reqwest::Method::GET, "/api/inbox/b/ack", "POST"),
    ] {
        let res = c
            .request(method.clone(), app.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(res.headers()["allow"], allow, "{method} {path}");
        let (status, _) = error(res).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn limit_and_ack_semantics() {
    let app = TestApp::builder().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            send(&c, &base, "a", "b", &format!("m{i}")).await["id"]
                .as_u64()
                .unwrap(),
        );
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    // Without ack, the same unread messages come back, oldest first, marked unread.
    for _ in 0..2 {
        let got = inbox(&c, &base, "b", "limit=2").await;
        assert_eq!(bodies(&got), ["m0", "m1"]);
        assert!(got.iter().all(|m| m["read"] == false));
    }
    assert_eq!(
        inbox(&c, &base, "b", "").await.len(),
        5,
        "limit defaults to 50"
    );
    let got = inbox(&c, &base, "b", "limit=2&ack=true").await;
    assert_eq!(bodies(&got), ["m0", "m1"]);
    assert!(got.iter().all(|m| m["read"] == true));
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "ack=false").await),
        ["m2", "m3", "m4"]
    );
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "limit=0").await),
        ["m2"],
        "clamped to 1"
    );
    assert_eq!(
        inbox(&c, &base, "b", "limit=9999").await.len(),
        3,
        "clamped to 500"
    );
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "ack&limit=-3").await),
        ["m2"],
        "a bare ack is true"
    );
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "ack=YES&limit=500").await),
        ["m3", "m4"]
    );
    assert!(inbox(&c, &base, "b", "ack=On").await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broadcast_reaches_every_registered_machine_once() {
    let app = TestApp::builder().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machines = ["m1", "m2", "m3", "m4", "m5"];
    for m in machines {
        inbox(&c, &base, m, "ack=true").await;
    }
    // An anonymous peek does not register: a mistyped name collects nothing.
    inbox(&c, &base, "typo", "").await;
    let sent = send(&c, &base, "m1", "all", "to everyone").await;
    assert_eq!(sent["to"], "all");
    inbox(&c, &base, "late", "ack=true").await;
    for m in &machines[1..] {
        let got = drain(&c, &base, m).await;
        assert_eq!(got.len(), 1, "{m}");
        assert_eq!(got[0]["id"], sent["id"]);
        assert_eq!(got[0]["to"], "all");
        assert_eq!(got[0]["body"], "to everyone");
    }
    assert!(drain(&c, &base, "m1").await.is_empty(), "not to the sender");
    assert!(
        drain(&c, &base, "late").await.is_empty(),
        "not to machines registered later"
    );
    assert!(
        drain(&c, &base, "typo").await.is_empty(),
        "not to a peeked name"
    );
    app.stop().await;
}

on_both!(
    unicode_and_escaped_64_kib_bodies,
    unicode_and_escaped_64_kib_bodies_on_sqlite,
    unicode_and_escaped_64_kib_bodies_on_postgres
);

/// Bodies come back byte-exact; the 64 KiB limit is on the decoded body, so 64 KiB sent as
/// Python's `json.dumps` sends it (`\u00e9` escapes, about 190 KB of JSON) is accepted.
async fn unicode_and_escaped_64_kib_bodies(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let texts = [
        "héllo wörld — ✓ 日本語 🚀👩‍👩‍👧 e\u{301}".to_owned(),
        "quotes \" \\ and\nnewlines\r\n\ttabs \u{1f} and \u{feff}bom".to_owned(),
    ];
    for t in &texts {
        send(&c, &base, "a", "b", t).await;
    }
    let big = "é".repeat(MAX_BODY / 2);
    let escaped = format!(
        r#"{{"from": "a", "to": "b", "body": "{}"}}"#,
        "\\u00e9".repeat(MAX_BODY / 2)
    );
    assert!(escaped.len() > 180_000);
    let post = |body: String| {
        c.post(app.url("/api/send"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let res = post(escaped.clone()).await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let over = escaped.replacen("\\u00e9", "\\u00e9x", 1);
    let (status, message) = error(post(over).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(message.contains("64 KiB"), "{message}");

    let got = drain(&c, &base, "b").await;
    assert_eq!(
        bodies(&got),
        [texts[0].as_str(), texts[1].as_str(), big.as_str()]
    );
    app.stop().await;
}

/// 8 senders × 250 messages to one inbox at the same time: all 2,000 delivered exactly once, each
/// sender's in its order.
async fn concurrent_senders(bases: &[String]) {
    let c = Client::new();
    let target = unique("inbox");
    let senders: Vec<String> = (0..8).map(|i| unique(&format!("s{i}"))).collect();
    let tasks: Vec<_> = senders
        .iter()
        .enumerate()
        .map(|(i, from)| {
            let (c, base, from, target) = (
                c.clone(),
                bases[i % bases.len()].clone(),
                from.clone(),
                target.clone(),
            );
            tokio::spawn(async move {
                for n in 0..250 {
                    send(&c, &base, &from, &target, &format!("{from}:{n}")).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let got = drain(&c, &bases[0], &target).await;
    let mut next: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ids = HashSet::new();
    for m in &got {
        assert!(
            ids.insert(m["id"].as_u64().unwrap()),
            "delivered twice: {m}"
        );
        let (from, n) = m["body"].as_str().unwrap().rsplit_once(':').unwrap();
        assert_eq!(m["from"], from);
        let expected = next.entry(from).or_default();
        assert_eq!(
            n.parse::<usize>().unwrap(),
            *expected,
            "{from}'s messages out of order"
        );
        *expected += 1;
    }
    assert_eq!(got.len(), 2000);
    assert!(next.values().all(|&n| n == 250));
}

on_both!(
    eight_concurrent_senders,
    eight_concurrent_senders_deliver_all_2000_once_and_in_order_on_sqlite,
    eight_concurrent_senders_deliver_all_2000_once_and_in_order_on_postgres
);

async fn eight_concurrent_senders(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    concurrent_senders(&[app.base_url().to_owned()]).await;
    app.stop().await;
}

/// Readers with ack drain one inbox at the same time: each message reaches exactly one of them.
async fn concurrent_readers(send_base: &str, read_bases: &[String], count: usize) {
    let c = Client::new();
    let target = unique("drained");
    let from = unique("filler");
    for n in 0..count {
        send(&c, send_base, &from, &target, &n.to_string()).await;
    }
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let (c, base, target) = (
                c.clone(),
                read_bases[i % read_bases.len()].clone(),
                target.clone(),
            );
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let batch = inbox(&c, &base, &target, "limit=7&ack=true").await;
                    if batch.is_empty() {
                        return got;
                    }
                    let mut ns: Vec<usize> = batch
                        .iter()
                        .map(|m| m["body"].as_str().unwrap().parse().unwrap())
                        .collect();
                    assert!(
                        ns.windows(2).all(|w| w[0] < w[1]),
                        "a batch out of order: {ns:?}"
                    );
                    got.append(&mut ns);
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in tasks {
        for n in t.await.unwrap() {
            assert!(seen.insert(n), "message {n} received by two readers");
        }
    }
    assert_eq!(seen.len(), count);
}

on_both!(
    first_readers,
    fifty_fresh_machines_with_four_first_acking_readers_get_no_message_twice_on_sqlite,
    fifty_fresh_machines_with_four_first_acking_readers_get_no_message_twice_on_postgres
);

/// 50 fresh machines, 5 messages each; per machine, 4 acknowledging readers start together, so
/// the very first read of each inbox races: every message is returned exactly once.
async fn first_readers(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machines: Vec<String> = (0..50).map(|i| unique(&format!("fresh{i}"))).collect();
    for m in &machines {
        for n in 0..5 {
            send(&c, &base, "filler", m, &format!("{m}/{n}")).await;
        }
    }
    let tasks: Vec<_> = machines
        .iter()
        .flat_map(|m| (0..4).map(move |_| m.clone()))
        .map(|m| {
            let (c, base) = (c.clone(), base.clone());
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let batch = inbox(&c, &base, &m, "limit=2&ack=true").await;
                    if batch.is_empty() {
                        return got;
                    }
                    got.extend(batch.iter().map(|x| x["body"].as_str().unwrap().to_owned()));
                }
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in tasks {
        for body in t.await.unwrap() {
            assert!(seen.insert(body.clone()), "{body} delivered twice");
        }
    }
    assert_eq!(seen.len(), 250);
    app.stop().await;
}

on_both!(
    four_readers,
    four_concurrent_acking_readers_never_share_a_message_on_sqlite,
    four_concurrent_acking_readers_never_share_a_message_on_postgres
);

async fn four_readers(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    let base = app.base_url().to_owned();
    concurrent_readers(&base, std::slice::from_ref(&base), 600).await;
    app.stop().await;
}

on_both!(
    registration_race,
    registration_racing_broadcasts_loses_no_machine_on_sqlite,
    registration_racing_broadcasts_loses_no_machine_on_postgres
);

/// Fresh machines register (acknowledging reads) while broadcasts go out: every machine is
/// listed, none gets a broadcast twice, and each gets every broadcast sent after it registered.
async fn registration_race(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let caster = unique("caster");
    let registrars: Vec<_> = (0..4)
        .map(|t| {
            let (c, base) = (c.clone(), base.clone());
            tokio::spawn(async move {
                let mut registered = Vec::new();
                for i in 0..10 {
                    let m = unique(&format!("reg{t}-{i}"));
                    inbox(&c, &base, &m, "ack=true").await;
                    registered.push((m, Instant::now()));
                }
                registered
            })
        })
        .collect();
    let mut broadcasts = Vec::new();
    for i in 0..20 {
        let started = Instant::now();
        let sent = send(&c, &base, &caster, "all", &format!("b{i}")).await;
        broadcasts.push((sent["id"].as_u64().unwrap(), started));
    }
    let mut registered = Vec::new();
    for t in registrars {
        registered.extend(t.await.unwrap());
    }
    let listed: HashSet<String> = machine_names(&c, &base).await.into_iter().collect();
    for (m, at) in &registered {
        assert!(listed.contains(m), "{m} lost from /machines");
        let got: Vec<u64> = drain(&c, &base, m)
            .await
            .iter()
            .map(|x| x["id"].as_u64().unwrap())
            .collect();
        let unique_ids: HashSet<u64> = got.iter().copied().collect();
        assert_eq!(unique_ids.len(), got.len(), "{m} got a broadcast twice");
        for (id, _) in broadcasts.iter().filter(|(_, started)| started > at) {
            assert!(unique_ids.contains(id), "{m} missed broadcast {id}");
        }
    }
    app.stop().await;
}

on_both!(
    idempotent_retry,
    a_retried_send_with_its_idempotency_key_is_stored_once_on_sqlite,
    a_retried_send_with_its_idempotency_key_is_stored_once_on_postgres
);

/// A retry with the same key answers the first 201 body and stores nothing, also when the
/// retries race each other.
async fn idempotent_retry(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let (from, to) = (unique("sender"), unique("target"));
    let post = |key: &str, body: &str| {
        c.post(app.url("/api/send"))
            .header("idempotency-key", key)
            .json(&json!({"from": from, "to": to, "body": body}))
            .send()
    };
    let res = post("order 17", "first").await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let first: Value = res.json().await.unwrap();
    let res = post("order 17", "first").await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.json::<Value>().await.unwrap(), first);
    // The key re-used for another body, or another recipient, is refused and stores nothing.
    let (status, message) = error(post("order 17", "second").await.unwrap()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert!(message.contains("order 17"), "{message}");
    let elsewhere = c
        .post(app.url("/api/send"))
        .header("idempotency-key", "order 17")
        .json(&json!({"from": from, "to": unique("elsewhere"), "body": "first"}))
        .send()
        .await
        .unwrap();
    let (status, _) = error(elsewhere).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // Eight retries of a new key at once: one message, eight identical answers.
    let racing: Vec<_> = (0..8)
        .map(|_| {
            let (c, url) = (c.clone(), app.url("/api/send"));
            let body = json!({"from": from, "to": to, "body": "raced"});
            tokio::spawn(async move {
                let res = c
                    .post(url)
                    .header("idempotency-key", "order 18")
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), StatusCode::CREATED);
                res.json::<Value>().await.unwrap()
            })
        })
        .collect();
    let mut answers = HashSet::new();
    for t in racing {
        answers.insert(t.await.unwrap().to_string());
    }
    assert_eq!(answers.len(), 1, "{answers:?}");
    // Another sender using the same key sends its own message.
    send(&c, &base, &unique("other"), &to, "not a retry").await;
    let got = drain(&c, &base, &to).await;
    assert_eq!(bodies(&got), ["first", "raced", "not a retry"]);
    app.stop().await;
}

/// Sends a GET by hand and closes the connection after the first bytes of the answer, as a
/// client that dies mid-read does.
async fn dropped_read(addr: std::net::SocketAddr, path: &str) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
}

on_both!(
    two_step_ack,
    two_step_acknowledgement_survives_a_dropped_client_on_sqlite,
    two_step_acknowledgement_survives_a_dropped_client_on_postgres
);

/// Read without ack, drop the connection: the messages come back; acknowledge through an id:
/// exactly those are gone, and a repeat marks nothing.
async fn two_step_ack(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let m = unique("worker");
    for i in 0..5 {
        send(&c, &base, "boss", &m, &format!("job{i}")).await;
    }
    dropped_read(app.addr(), &format!("/api/inbox/{m}?limit=3")).await;
    let got = inbox(&c, &base, &m, "limit=3").await;
    assert_eq!(bodies(&got), ["job0", "job1", "job2"]);
    assert!(got.iter().all(|x| x["read"] == false));
    let through = got[2]["id"].as_u64().unwrap();
    let ack = |through: u64| {
        c.post(app.url(&format!("/api/inbox/{m}/ack")))
            .json(&json!({ "through": through }))
            .send()
    };
    let res = ack(through).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"machine": m, "acknowledged": 3})
    );
    let res = ack(through).await.unwrap();
    assert_eq!(res.json::<Value>().await.unwrap()["acknowledged"], 0);
    assert_eq!(bodies(&inbox(&c, &base, &m, "").await), ["job3", "job4"]);
    assert!(
        machine_names(&c, &base).await.contains(&m),
        "acknowledging registers the machine"
    );
    app.stop().await;
}

on_both!(
    caps,
    the_unread_cap_is_507_on_sqlite,
    the_unread_cap_is_507_on_postgres
);

/// With `hub_max_unread = 3`, a fourth unread message is refused with 507 and a JSON error; a
/// broadcast skips the full inbox; reading makes room.
async fn caps(backend: Backend) {
    let app = backend
        .app()
        .variable("hub_max_unread", "3")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let (full, roomy) = (unique("full"), unique("roomy"));
    inbox(&c, &base, &full, "ack=true").await;
    inbox(&c, &base, &roomy, "ack=true").await;
    for i in 0..3 {
        send(&c, &base, "a", &full, &format!("m{i}")).await;
    }
    let res = c
        .post(app.url("/api/send"))
        .json(&json!({"from": "a", "to": full, "body": "one too many"}))
        .send()
        .await
        .unwrap();
    let (status, message) = error(res).await;
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE);
    assert!(
        message.contains(&full) && message.contains("hub_max_unread"),
        "{message}"
    );
    send(&c, &base, "a", "all", "broadcast").await;
    assert_eq!(bodies(&drain(&c, &base, &roomy).await), ["broadcast"]);
    assert_eq!(bodies(&drain(&c, &base, &full).await), ["m0", "m1", "m2"]);
    send(&c, &base, "a", &full, "fits again").await;
    app.stop().await;

    let bad = backend
        .app()
        .variable("hub_retention_days", "soon")
        .start()
        .await
        .unwrap();
    let res = Client::new()
        .get(bad.url("/machines"))
        .send()
        .await
        .unwrap();
    let request_id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    let (status, message) = error(res).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    // The detail (which variable) is in the log under the request id, not in the body.
    assert!(message.contains(&request_id), "{message}");
    bad.stop().await;
}

/// Sends, then a restart of the host on the same data: what was unread is still there, ids go on.
async fn restart(first: TestApp, second: impl std::future::Future<Output = TestApp>) {
    let c = Client::new();
    let base = first.base_url().to_owned();
    let (a, b) = (unique("a"), unique("b"));
    let mut last = 0;
    for i in 0..20 {
        last = send(&c, &base, &a, &b, &format!("m{i}")).await["id"]
            .as_u64()
            .unwrap();
    }
    assert_eq!(
        bodies(&inbox(&c, &base, &b, "limit=5&ack=true").await),
        ["m0", "m1", "m2", "m3", "m4"]
    );
    first.stop().await;

    let app = second.await;
    let base = app.base_url().to_owned();
    let got = drain(&c, &base, &b).await;
    let expected: Vec<String> = (5..20).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies(&got), expected);
    let next = send(&c, &base, &a, &b, "after").await;
    assert_eq!(next["id"], last + 1, "ids go on after a restart");
    assert_eq!(machine_names(&c, &base).await.len(), 2);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_restart_loses_nothing_on_sqlite() {
    if skip_on_edge("the hub has no SQLite there; a_host_restart_loses_nothing_on_postgres runs") {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let start = || TestApp::builder().state_dir(state.path()).start();
    let first = start().await.unwrap();
    restart(first, async { start().await.unwrap() }).await;
    assert!(
        state.path().join("sqlite_db.db").exists(),
        "the hub keeps Spin's SQLite file"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_restart_loses_nothing_on_postgres() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let backend = Backend::Postgres(db);
    let first = backend.app().start().await.unwrap();
    restart(first, async { backend.app().start().await.unwrap() }).await;
}

/// Two hosts on different ports share one PostgreSQL: sends and acknowledging reads through both
/// at the same time deliver every message exactly once, in order.
#[tokio::test(flavor = "multi_thread")]
async fn two_hosts_sharing_postgres_deliver_exactly_once() {
    let _crowd = dochub_tests::crowded_turn().await;
    let Some(db) = PgDb::create().await else {
        return;
    };
    let backend = Backend::Postgres(db);
    let one = backend.app().start().await.unwrap();
    let two = backend.app().start().await.unwrap();
    assert_ne!(one.addr(), two.addr());
    let bases = [one.base_url().to_owned(), two.base_url().to_owned()];
    concurrent_senders(&bases).await;
    concurrent_readers(&bases[0], &bases, 400).await;

    // What one host writes, the other reads.
    let c = Client::new();
    let (a, b) = (unique("a"), unique("b"));
    let sent = send(&c, &bases[0], &a, &b, "across hosts").await;
    let got = inbox(&c, &bases[1], &b, "ack=true").await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["id"], sent["id"]);
    assert!(inbox(&c, &bases[0], &b, "ack=true").await.is_empty());
    one.stop().await;
    two.stop().await;
}

/// Waits until `n` sessions of the test's PostgreSQL database wait for a lock.
async fn lock_waits(pg: &tokio_postgres::Client, n: i64) {
    let started = Instant::now();
    loop {
        let row = pg
            .query_one(
                "SELECT COUNT(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap();
        if row.get::<_, i64>(0) >= n {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{n} waiting");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Another instance's transaction (`other`) holds `held`'s row while a send that purges (the
/// purge must be due) and then a send of "`from` to `to`" start, each once it is the next to
/// wait for a lock (`pg` watches); then it commits, and both sends must be stored.
async fn purge_and_send_past_a_held_machine(
    c: &Client,
    app: &TestApp,
    (pg, other): (&tokio_postgres::Client, &tokio_postgres::Client),
    held: &str,
    (from, to): (&str, &str),
) {
    let post = |from: &str, to: &str| {
        let (c, url) = (c.clone(), app.url("/api/send"));
        let body = json!({ "from": from, "to": to, "body": format!("{from} to {to}") });
        tokio::spawn(async move {
            let res = c.post(url).json(&body).send().await.unwrap();
            (res.status(), res.text().await.unwrap())
        })
    };
    other
        .batch_execute(&format!(
            "BEGIN; SELECT 1 FROM hub_machines WHERE name = '{held}' FOR UPDATE"
        ))
        .await
        .unwrap();
    let purging = post("sender", "receiver");
    lock_waits(pg, 1).await;
    let second = post(from, to);
    lock_waits(pg, 2).await;
    other.batch_execute("COMMIT").await.unwrap();
    for (what, sent) in [("the purging send", purging), ("the other", second)] {
        let (status, body) = sent.await.unwrap();
        assert_eq!(status, StatusCode::CREATED, "{what}: {body}");
    }
}

/// A purge on PostgreSQL and a broadcast never wait for each other in a circle. The purge's
/// delete of expired messages counts them off their machines' rows; a broadcast locks its
/// recipients' rows in name order. Here another instance's transaction holds a machine in the
/// middle while the purge and then a broadcast start, with the expired messages stored in
/// reverse name order: a purge locking rows in the order it meets them would hold the later
/// half, the broadcast the earlier one, and the database would break the circle by failing
/// one of them (503).
#[tokio::test(flavor = "multi_thread")]
async fn a_purge_and_a_broadcast_meeting_on_machines_both_go_through_on_postgres() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let (pg, other) = (db.connect().await, db.connect().await);
    let backend = Backend::Postgres(db);
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machines: Vec<String> = (0..12).map(|n| format!("p{n:02}")).collect();
    for m in &machines {
        inbox(&c, &base, m, "ack=true").await;
    }
    // The first send purges (none ran yet) and sets everything up.
    send(&c, &base, "caster", "p00", "before").await;
    drain(&c, &base, "p00").await;
    pg.batch_execute(
        "INSERT INTO hub_messages (machine, id, sender, recipient, body, created) \
         SELECT name, nextval('hub_message_ids'), 'old', name, 'expired', 1 \
         FROM hub_machines, generate_series(1, 3) WHERE name LIKE 'p%' ORDER BY name DESC; \
         UPDATE hub_counter SET value = 0 WHERE name = 'purged'",
    )
    .await
    .unwrap();
    purge_and_send_past_a_held_machine(&c, &app, (&pg, &other), "p06", ("caster", "all")).await;
    let expired = pg
        .query_one("SELECT COUNT(*) FROM hub_messages WHERE created = 1", &[])
        .await
        .unwrap();
    assert_eq!(expired.get::<_, i64>(0), 0, "the purge deleted them all");
    for m in &machines {
        assert_eq!(bodies(&drain(&c, &base, m).await), ["caster to all"], "{m}");
    }
    app.stop().await;
}

/// A purge forgetting silent machines and a send between two of them never wait for each
/// other in a circle on PostgreSQL. The purge deletes machines unseen for the retention period
/// and without messages; a send locks its sender's and recipient's rows in name order. Here the
/// two silent machines are stored in reverse name order and another instance's transaction
/// holds the later one while the purge starts: a purge locking rows in the order it meets them
/// would take that one first, the send the earlier one, and the database would break the circle
/// by failing one of them (503). The sender, forgotten while its send waited, comes back as seen.
#[tokio::test(flavor = "multi_thread")]
async fn a_purge_forgetting_machines_and_a_send_between_them_both_go_through_on_postgres() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let (pg, other) = (db.connect().await, db.connect().await);
    let backend = Backend::Postgres(db);
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    // The first send purges (none ran yet) and sets everything up.
    send(&c, &base, "sender", "receiver", "before").await;
    drain(&c, &base, "receiver").await;
    pg.batch_execute(
        "INSERT INTO hub_machines (name, last_seen) VALUES ('silent-z', 1), ('silent-a', 1); \
         UPDATE hub_counter SET value = 0 WHERE name = 'purged'",
    )
    .await
    .unwrap();
    purge_and_send_past_a_held_machine(
        &c,
        &app,
        (&pg, &other),
        "silent-z",
        ("silent-a", "silent-z"),
    )
    .await;
    assert_eq!(
        bodies(&drain(&c, &base, "silent-z").await),
        ["silent-a to silent-z"]
    );
    // The purge forgot the sender while its send waited; the send made it again, as seen.
    let names = machine_names(&c, &base).await;
    assert!(
        names.iter().any(|n| n == "silent-a"),
        "the sender is listed: {names:?}"
    );
    app.stop().await;
}

/// A PostgreSQL store of a release before, which drew ids from the counter row, has no
/// sequence of ids nor `hub_send_5` and the functions it calls: the first send after the
/// upgrade makes them and goes on after every id given, an instance of the release before
/// still sending beside it takes its ids from the sequence too (never one twice), and the
/// unread cap holds through the new functions.
#[tokio::test(flavor = "multi_thread")]
async fn a_postgres_store_of_the_release_before_gains_the_send_functions() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let backend = Backend::Postgres(db);
    let app = backend
        .app()
        .variable("hub_max_unread", "2")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    send(&c, &base, "a", "b", "m1").await;
    run_sql(
        &backend,
        &app,
        "DROP FUNCTION hub_send_5; DROP FUNCTION hub_trim_read_4; \
         DROP FUNCTION hub_inbox_has_room_3; DROP FUNCTION hub_mailbox_clock_3; \
         DROP TRIGGER hub_ids_from_sequence ON hub_counter; \
         DROP FUNCTION hub_ids_from_sequence(); DROP SEQUENCE hub_message_ids; \
         UPDATE hub_counter SET value = 41 WHERE name = 'ids';",
    )
    .await;

    assert_eq!(send(&c, &base, "a", "b", "m2").await["id"], 42);
    // The release before takes an id as this does (43).
    run_sql(
        &backend,
        &app,
        "UPDATE hub_counter SET value = value + 1 WHERE name = 'ids';",
    )
    .await;
    assert_eq!(send(&c, &base, "a", "c", "m3").await["id"], 44);
    let res = c
        .post(app.url("/api/send"))
        .json(&json!({"from": "a", "to": "b", "body": "one too many"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::INSUFFICIENT_STORAGE, "two unread");
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "ack=true").await),
        ["m1", "m2"]
    );
    assert_eq!(bodies(&inbox(&c, &base, "c", "ack=true").await), ["m3"]);
    app.stop().await;
}

/// An app in production with the tokens `tok-laptop` and `tok-ci` bound to their machines.
async fn production_app() -> TestApp {
    // sha256("tok-laptop"), sha256("tok-ci")
    let tokens = "laptop=52e2c11017bdb8f95c72ad51bb7559d067d92bd3a24e50645747146b6de13849,\
                  ci=ee037f54510155cee42806b26a48187d4b8644857a020a77c867585a50a577ff";
    TestApp::builder()
        .variable("environment", "production")
        .variable("hub_tokens", tokens)
        .start()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn production_binds_each_token_to_its_machine() {
    let app = production_app().await;
    let c = Client::new();
    let msg = json!({"from": "laptop", "to": "ci", "body": "x"});
    let send = |token: Option<&str>| {
        let mut req = c.post(app.url("/api/send")).json(&msg);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    let get = |path: &str, token: Option<&str>| {
        let mut req = c.get(app.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    for token in [None, Some("wrong")] {
        for res in [
            send(token).await.unwrap(),
            get("/api/inbox/ci", token).await.unwrap(),
            get("/machines", token).await.unwrap(),
        ] {
            assert_eq!(
                res.headers()["www-authenticate"],
                "Bearer realm=\"dochub hub\""
            );
            assert_eq!(error(res).await.0, StatusCode::UNAUTHORIZED);
        }
    }
    let (status, message) = error(send(Some("tok-ci")).await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(message.contains("laptop"), "{message}");
    let (status, _) = error(get("/api/inbox/ci", Some("tok-laptop")).await.unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    assert_eq!(
        send(Some("tok-laptop")).await.unwrap().status(),
        StatusCode::CREATED
    );
    let res = get("/api/inbox/ci?ack=true", Some("tok-ci")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let value: Value = res.json().await.unwrap();
    assert_eq!(value["messages"][0]["body"], "x");
    assert_eq!(
        get("/machines", Some("tok-ci")).await.unwrap().status(),
        StatusCode::OK
    );
    app.stop().await;
}

on_both!(
    bounded_answers,
    an_acknowledging_read_of_huge_escaped_messages_loses_none_on_sqlite,
    an_acknowledging_read_of_huge_escaped_messages_loses_none_on_postgres
);

/// 150 messages of 64 KiB of control characters take 57 MiB of JSON (6 bytes each, escaped):
/// more than one instance's memory. Each acknowledging read answers what fits in its byte
/// budget and deletes only that; together they return all 150, in order.
async fn bounded_answers(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let (from, to) = (unique("sender"), unique("victim"));
    let body = "\u{1}".repeat(MAX_BODY);
    let mut sent = Vec::new();
    for _ in 0..150 {
        sent.push(
            send(&c, &base, &from, &to, &body).await["id"]
                .as_u64()
                .unwrap(),
        );
    }
    let mut received = Vec::new();
    loop {
        let res = c
            .get(format!("{base}/api/inbox/{to}?limit=200&ack=true"))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let answer = res.bytes().await.unwrap();
        assert!(answer.len() <= 5 * 1024 * 1024, "{} bytes", answer.len());
        let value: Value = serde_json::from_slice(&answer).unwrap();
        let batch = value["messages"].as_array().unwrap();
        if batch.is_empty() {
            break;
        }
        for m in batch {
            assert_eq!(m["body"].as_str().unwrap(), body);
            received.push(m["id"].as_u64().unwrap());
        }
    }
    assert_eq!(received, sent);
    app.stop().await;
}

on_both!(
    exact_cap,
    the_unread_cap_holds_exactly_against_racing_senders_on_sqlite,
    the_unread_cap_holds_exactly_against_racing_senders_on_postgres
);

/// 40 senders race for an inbox capped at 5: exactly 5 are stored (201), every other send is
/// refused (507), and the inbox holds 5.
async fn exact_cap(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend
        .app()
        .variable("hub_max_unread", "5")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let target = unique("capped");
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let (c, base, target) = (c.clone(), base.clone(), target.clone());
            tokio::spawn(async move {
                let res = c
                    .post(format!("{base}/api/send"))
                    .json(&json!({"from": format!("racer{i}"), "to": target, "body": "m"}))
                    .send()
                    .await
                    .unwrap();
                res.status()
            })
        })
        .collect();
    let mut statuses = BTreeMap::new();
    for t in tasks {
        *statuses.entry(t.await.unwrap().as_u16()).or_insert(0) += 1;
    }
    assert_eq!(statuses, BTreeMap::from([(201, 5), (507, 35)]));
    assert_eq!(inbox(&c, &base, &target, "limit=500").await.len(), 5);
    app.stop().await;
}

on_both!(
    ordered_timestamps,
    timestamps_never_go_back_in_id_order_on_sqlite,
    timestamps_never_go_back_in_id_order_on_postgres
);

/// 8 senders × 50 messages at once: read in id order, the timestamps never decrease.
async fn ordered_timestamps(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let target = unique("stamped");
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (c, base, target) = (c.clone(), base.clone(), target.clone());
            tokio::spawn(async move {
                for n in 0..50 {
                    send(&c, &base, &format!("s{i}"), &target, &n.to_string()).await;
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let got = drain(&c, &base, &target).await;
    assert_eq!(got.len(), 400);
    for pair in got.windows(2) {
        assert!(pair[0]["id"].as_u64() < pair[1]["id"].as_u64());
        // ISO 8601 with fixed width: text order is time order.
        let (a, b) = (pair[0]["timestamp"].as_str(), pair[1]["timestamp"].as_str());
        assert!(a <= b, "timestamp went back: {} then {}", pair[0], pair[1]);
    }
    app.stop().await;
}

on_both!(
    machine_cap,
    a_new_machine_beyond_hub_max_machines_is_507_on_sqlite,
    a_new_machine_beyond_hub_max_machines_is_507_on_postgres
);

/// With `hub_max_machines = 2`, a third name (as sender or as recipient) is refused with 507;
/// the two known machines go on.
async fn machine_cap(backend: Backend) {
    let app = backend
        .app()
        .variable("hub_max_machines", "2")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    send(&c, &base, "one", "two", "hello").await;
    for (from, to) in [("three", "two"), ("one", "three")] {
        let res = c
            .post(app.url("/api/send"))
            .json(&json!({"from": from, "to": to, "body": "x"}))
            .send()
            .await
            .unwrap();
        let (status, message) = error(res).await;
        assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE);
        assert!(
            message.contains("hub_max_machines") && message.contains("three"),
            "{message}"
        );
    }
    send(&c, &base, "two", "one", "still fine").await;
    assert_eq!(bodies(&drain(&c, &base, "two").await), ["hello"]);
    app.stop().await;
}

/// A SQLite database written by an earlier dochub (no clock row, rollback journal): the first
/// send completes its set-up, ids go on, and the file is in write-ahead logging.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_sqlite_database_is_set_up_on_first_send() {
    if skip_on_edge("the hub has no SQLite there") {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("sqlite_db.db");
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=DELETE;
         CREATE TABLE hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL);
         CREATE TABLE hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL,
           sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
           created BIGINT NOT NULL, PRIMARY KEY (machine, id));
         CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
         INSERT INTO hub_counter VALUES ('ids', 41);
         CREATE TABLE hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL,
           id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
           created BIGINT NOT NULL, PRIMARY KEY (sender, idem_key));",
    )
    .unwrap();
    drop(conn);
    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    let c = Client::new();
    let sent = send(&c, app.base_url(), "a", "b", "after the upgrade").await;
    assert_eq!(sent["id"], 42);
    assert_eq!(
        bodies(&drain(&c, app.base_url(), "b").await),
        ["after the upgrade"]
    );
    app.stop().await;
    let mode: String = rusqlite::Connection::open(&file)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// Sends racing the set-up of a fresh store, then a search: every message is found once.
/// (Set-up fills the new full-text index from the messages already stored, which may include
/// sends the next search indexes as well.)
#[tokio::test(flavor = "multi_thread")]
async fn messages_sent_while_the_store_is_set_up_are_each_found_once() {
    let app = TestApp::builder().start().await.unwrap();
    let c = Client::new();
    let sends: Vec<_> = (0..16)
        .map(|i| {
            let (c, base) = (c.clone(), app.base_url().to_owned());
            tokio::spawn(
                async move { send(&c, &base, &format!("s{i}"), "hq", "status green").await },
            )
        })
        .collect();
    for sent in sends {
        assert!(sent.await.unwrap()["id"].is_u64());
    }
    let (status, found) = get_json(&c, app.url("/api/messages/hq?q=green&limit=50")).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let mut ids = ids(&found);
    ids.sort_unstable();
    assert_eq!(ids, (1..=16).collect::<Vec<u64>>());
    app.stop().await;
}

/// A SQLite database of the release that indexed each message as it was sent (no `indexed`
/// counter): its index is kept as it is, and messages sent since, which the next search
/// indexes, are found too, each once.
#[tokio::test(flavor = "multi_thread")]
async fn a_sqlite_index_of_the_release_that_indexed_at_send_goes_on() {
    if skip_on_edge("the hub has no SQLite there") {
        return;
    }
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("sqlite_db.db");
    let c = Client::new();
    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    send(&c, app.base_url(), "a", "b", "alpha from before").await;
    app.stop().await;
    // What that release left: the message in the index, and no `indexed` rows.
    let conn = rusqlite::Connection::open(&file).unwrap();
    conn.execute_batch(
        "DELETE FROM hub_search;
         INSERT INTO hub_search (rowid, subject, body) VALUES (1, NULL, 'alpha from before');
         DELETE FROM hub_counter WHERE name IN ('indexed', 'indexed_at');",
    )
    .unwrap();
    drop(conn);

    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    send(&c, app.base_url(), "a", "b", "beta and alpha after").await;
    send(&c, app.base_url(), "b", "a", "gamma after").await;
    let search = |q: &'static str| {
        let url = app.url(&format!("/api/messages/a?q={q}"));
        let c = c.clone();
        async move { ids(&get_json(&c, url).await.1) }
    };
    assert_eq!(search("alpha").await, [2, 1]);
    assert_eq!(search("beta").await, [2]);
    assert_eq!(search("gamma").await, [3]);
    // A send after a search is found by the next one; nothing is indexed twice.
    send(&c, app.base_url(), "a", "b", "alpha again").await;
    assert_eq!(search("alpha").await, [4, 2, 1]);
    app.stop().await;
    let indexed: i64 = rusqlite::Connection::open(&file)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM hub_search", [], |r| r.get(0))
        .unwrap();
    assert_eq!(indexed, 4);
}

/// The JSON of a long-poll's answer (white space kept the connection checked while it waited).
async fn waited(res: reqwest::Response) -> Value {
    let (status, headers) = (res.status(), res.headers().clone());
    let text = res.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(headers["content-type"], "application/json");
    serde_json::from_str(text.trim_start()).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

on_both!(
    long_poll,
    a_long_poll_times_out_empty_or_wakes_on_a_send_on_sqlite,
    a_long_poll_times_out_empty_or_wakes_on_a_send_on_postgres
);

/// `?wait=1` on an empty inbox answers an empty list after about a second; a waiter with
/// `ack=true` is woken by a send and takes the message; bad waits are 400.
async fn long_poll(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let m = unique("waiter");
    let started = Instant::now();
    let res = c
        .get(format!("{base}/api/inbox/{m}?wait=1"))
        .send()
        .await
        .unwrap();
    let answer = waited(res).await;
    let took = started.elapsed();
    assert_eq!(answer, json!({"machine": m, "messages": []}));
    assert!(
        took >= std::time::Duration::from_millis(950) && took.as_secs() < 5,
        "{took:?}"
    );

    let waiter = {
        let (c, url) = (c.clone(), format!("{base}/api/inbox/{m}?wait=20&ack=true"));
        tokio::spawn(async move { waited(c.get(url).send().await.unwrap()).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let sent = send(&c, &base, "poster", &m, "wake up").await;
    let sent_at = Instant::now();
    let answer = waiter.await.unwrap();
    let woke = sent_at.elapsed();
    assert_eq!(answer["messages"][0]["id"], sent["id"]);
    assert_eq!(answer["messages"][0]["read"], true);
    assert!(woke.as_secs() < 2, "woken {woke:?} after the send");
    assert!(inbox(&c, &base, &m, "").await.is_empty(), "taken once");

    // Messages already there: answered at once, with a length, like any read.
    send(&c, &base, "poster", &m, "waiting already").await;
    let res = c
        .get(format!("{base}/api/inbox/{m}?wait=20"))
        .send()
        .await
        .unwrap();
    assert!(res.headers().contains_key("content-length"));
    assert_eq!(
        bodies(&waited(res).await["messages"].as_array().unwrap().clone()),
        ["waiting already"]
    );

    for bad in ["-1", "soon", "1e3", ""] {
        let res = c
            .get(format!("{base}/api/inbox/{m}?wait={bad}"))
            .send()
            .await
            .unwrap();
        let (status, message) = error(res).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(
            message.contains("`wait` must be a number of seconds from 0 to 25"),
            "{message}"
        );
    }
    app.stop().await;
}

on_both!(
    forty_waiters,
    forty_waiters_each_get_exactly_their_message_on_sqlite,
    forty_waiters_each_get_exactly_their_message_on_postgres
);

/// 40 machines wait at once; one message to each wakes each with exactly its own.
async fn forty_waiters(backend: Backend) {
    many_waiters(backend, 40, Duration::ZERO).await;
}

on_both!(
    forty_waiters_apart,
    forty_waiters_arriving_apart_share_looks_and_get_their_own_on_sqlite,
    forty_waiters_arriving_apart_share_looks_and_get_their_own_on_postgres
);

/// 40 machines start waiting 20 ms apart, so that they share instances and their looks are
/// gathered into one statement: one message to each wakes each with exactly its own, and
/// only those with mail.
async fn forty_waiters_apart(backend: Backend) {
    many_waiters(backend, 40, Duration::from_millis(20)).await;
}

/// 100 waiters on PostgreSQL, more than Spin's pool of 64 connections: a waiting request holds
/// no connection between its looks, so the sends that wake them get one.
#[tokio::test(flavor = "multi_thread")]
async fn a_hundred_waiters_leave_the_connection_pool_to_others_on_postgres() {
    if let Some(db) = PgDb::create().await {
        many_waiters(Backend::Postgres(db), 100, Duration::ZERO).await;
    }
}

/// `count` machines start waiting `gap` apart; a message to each of the first half wakes
/// each of them with exactly its own while the others wait on; then the others get theirs.
async fn many_waiters(backend: Backend, count: usize, gap: Duration) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machines: Vec<String> = (0..count).map(|i| unique(&format!("w{i}"))).collect();
    let mut waiters = Vec::new();
    for m in &machines {
        let (c, url) = (c.clone(), format!("{base}/api/inbox/{m}?wait=20&ack=true"));
        waiters.push(tokio::spawn(async move {
            waited(c.get(url).send().await.unwrap()).await
        }));
        tokio::time::sleep(gap).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut waiters: Vec<_> = machines.iter().zip(waiters).collect();
    let later = waiters.split_off(count / 2);
    for (round, woken) in [waiters, later].into_iter().enumerate() {
        if round == 1 {
            assert!(
                woken.iter().all(|(_, waiter)| !waiter.is_finished()),
                "a waiter with no mail waits on"
            );
        }
        for (m, _) in &woken {
            send(&c, &base, "dispatcher", m, &format!("for {m}")).await;
        }
        for (m, waiter) in woken {
            let answer = tokio::time::timeout(Duration::from_secs(20), waiter)
                .await
                .expect("every waiter answers")
                .unwrap();
            assert_eq!(
                bodies(answer["messages"].as_array().unwrap()),
                [format!("for {m}")]
            );
        }
    }
    app.stop().await;
}

/// A waiter on one host is woken by a send through another host sharing the PostgreSQL hub.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_on_one_host_is_woken_by_a_send_on_another() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let backend = Backend::Postgres(db);
    let one = backend.app().start().await.unwrap();
    let two = backend.app().start().await.unwrap();
    let c = Client::new();
    let m = unique("far");
    let waiter = {
        let (c, url) = (
            c.clone(),
            one.url(&format!("/api/inbox/{m}?wait=20&ack=true")),
        );
        tokio::spawn(async move { waited(c.get(url).send().await.unwrap()).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let sent = send(&c, two.base_url(), "near", &m, "across").await;
    let sent_at = Instant::now();
    let answer = waiter.await.unwrap();
    assert_eq!(answer["messages"][0]["id"], sent["id"]);
    assert!(sent_at.elapsed().as_secs() < 2, "{:?}", sent_at.elapsed());
    one.stop().await;
    two.stop().await;
}

on_both!(
    gone_waiter,
    a_client_that_leaves_mid_wait_loses_nothing_on_sqlite,
    a_client_that_leaves_mid_wait_loses_nothing_on_postgres
);

/// An acknowledging long-poll whose client hangs up while waiting takes nothing: a message
/// sent after it left is still there for the next read.
async fn gone_waiter(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let m = unique("leaver");
    let addr = app.addr();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /api/inbox/{m}?wait=6&ack=true HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    send(&c, &base, "poster", &m, "kept for later").await;
    // Past the abandoned wait's end: had it gone on, it would have taken the message.
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert_eq!(bodies(&drain(&c, &base, &m).await), ["kept for later"]);
    app.stop().await;
}

/// Reads events from an open stream until `count` have come (or 15 s pass): `(id, body)`.
async fn events(
    res: &mut reqwest::Response,
    count: usize,
    text: &mut String,
) -> Vec<(u64, String)> {
    let deadline = Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let parsed: Vec<(u64, String)> = text
            .split("\n\n")
            .filter_map(|block| {
                let id = block.lines().find_map(|l| l.strip_prefix("id: "))?;
                let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
                let message: Value = serde_json::from_str(data).unwrap();
                assert_eq!(message["id"].as_u64(), id.parse().ok(), "{block}");
                assert_eq!(message["read"], false);
                Some((id.parse().unwrap(), message["body"].as_str()?.to_owned()))
            })
            .collect();
        if parsed.len() >= count {
            return parsed;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, res.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(std::str::from_utf8(&chunk).unwrap()),
            other => panic!(
                "{} of {count} events, then {other:?}: {text:?}",
                parsed.len()
            ),
        }
    }
}

on_both!(
    event_stream,
    an_event_stream_delivers_live_and_resumes_after_last_event_id_on_sqlite,
    an_event_stream_delivers_live_and_resumes_after_last_event_id_on_postgres
);

/// A stream starts with the unread messages, delivers new ones as they come, acknowledges
/// nothing; a reconnect with `Last-Event-ID` resumes with nothing skipped or repeated.
async fn event_stream(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let m = unique("listener");
    send(&c, &base, "poster", &m, "before").await;
    let url = format!("{base}/api/inbox/{m}/events");
    let mut res = c
        .get(&url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    assert_eq!(res.headers()["cache-control"], "no-store");
    let mut text = String::new();
    assert_eq!(events(&mut res, 1, &mut text).await[0].1, "before");
    assert!(text.starts_with("retry: "), "{text:?}");
    for body in ["live 1", "live 2"] {
        send(&c, &base, "poster", &m, body).await;
    }
    let seen = events(&mut res, 3, &mut text).await;
    let bodies_seen: Vec<&str> = seen.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(bodies_seen, ["before", "live 1", "live 2"]);
    drop(res);

    for body in ["while away 1", "while away 2"] {
        send(&c, &base, "poster", &m, body).await;
    }
    let last = seen[2].0;
    let mut res = c
        .get(&url)
        .header("accept", "text/event-stream")
        .header("last-event-id", last.to_string())
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    let resumed = events(&mut res, 2, &mut text).await;
    let bodies_resumed: Vec<&str> = resumed.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(bodies_resumed, ["while away 1", "while away 2"]);
    assert!(resumed[0].0 > last);
    drop(res);
    // `?after=` does the same for clients that cannot set the header.
    let mut res = c
        .get(format!("{url}?after={}", resumed[0].0))
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    assert_eq!(events(&mut res, 1, &mut text).await[0].1, "while away 2");
    drop(res);
    // The stream acknowledged nothing.
    assert_eq!(inbox(&c, &base, &m, "").await.len(), 5);

    let res = c
        .get(&url)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(error(res).await.0, StatusCode::NOT_ACCEPTABLE);
    let res = c
        .get(&url)
        .header("last-event-id", "soon")
        .send()
        .await
        .unwrap();
    let (status, message) = error(res).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message.contains("Last-Event-ID"), "{message}");
    app.stop().await;
}

/// A wait asked for longer than `hub_max_wait` ends by itself after `hub_max_wait` seconds, and
/// a stream too, with a `retry:` hint: both within the request deadline, which a WASIp3
/// request, its body included, does not outlive (as under `spin up --request-timeout`).
#[tokio::test(flavor = "multi_thread")]
async fn waits_and_streams_end_by_themselves_at_hub_max_wait() {
    let app = TestApp::builder()
        .variable("hub_max_wait", "4")
        .request_timeout(std::time::Duration::from_secs(6))
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let m = unique("patient");
    let started = Instant::now();
    let res = c
        .get(format!("{base}/api/inbox/{m}?wait=60"))
        .send()
        .await
        .unwrap();
    assert_eq!(waited(res).await["messages"], json!([]));
    let took = started.elapsed();
    assert!(
        took.as_millis() >= 3900 && took.as_secs() < 7,
        "clamped to 4 s: {took:?}"
    );

    let started = Instant::now();
    let res = c
        .get(format!("{base}/api/inbox/{m}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let text = res.text().await.unwrap();
    let took = started.elapsed();
    assert!(took.as_millis() >= 3900 && took.as_secs() < 7, "{took:?}");
    assert!(text.ends_with("retry: 1000\n\n"), "{text:?}");
    assert!(text.contains(": keep-alive\n\n"), "{text:?}");
    assert!(text.contains("reconnect with Last-Event-ID: 0"), "{text:?}");
    app.stop().await;
}

on_both!(mail, mail_on_sqlite, mail_on_postgres);

async fn get_json(client: &Client, url: String) -> (StatusCode, Value) {
    let res = client.get(url).send().await.unwrap();
    let status = res.status();
    (status, res.json().await.unwrap())
}

fn ids(answer: &Value) -> Vec<u64> {
    answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect()
}

/// Subjects, importance, replies and threads, the mailbox, its search and the importance filter
/// of the inbox, over HTTP; every bad parameter a 400 that leaks no SQL.
async fn mail(backend: Backend) {
    let app = backend.app().start().await.unwrap();
    let c = Client::new();
    let post = |message: Value| c.post(app.url("/api/send")).json(&message).send();
    let res = post(
        json!({"from": "lead", "to": "worker", "body": "Deploy build 412 tonight?",
                          "subject": "Deploy", "importance": "urgent"}),
    )
    .await
    .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let ask: Value = res.json().await.unwrap();
    assert_eq!(
        (
            &ask["subject"],
            &ask["importance"],
            &ask["thread"],
            &ask["reply_to"]
        ),
        (&json!("Deploy"), &json!("urgent"), &ask["id"], &Value::Null)
    );
    post(json!({"from": "lead", "to": "worker", "body": "lunch?", "importance": "low"}))
        .await
        .unwrap();
    let (_, urgent) = get_json(&c, app.url("/api/inbox/worker?importance=high&ack=true")).await;
    assert_eq!(ids(&urgent), [ask["id"].as_u64().unwrap()]);
    let reply: Value = post(
        json!({"from": "worker", "to": "lead", "body": "yes, at 22:00",
                                   "reply_to": ask["id"]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        (&reply["thread"], &reply["reply_to"]),
        (&ask["id"], &ask["id"])
    );

    let (status, worker) = get_json(&c, app.url("/api/messages/worker")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(worker["machine"], "worker");
    let read: Vec<(&str, bool)> = worker["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["body"].as_str().unwrap(), m["read"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        read,
        [
            ("yes, at 22:00", true),
            ("lunch?", false),
            ("Deploy build 412 tonight?", true)
        ],
        "newest first, what was read kept"
    );
    let thread = ask["id"].as_u64().unwrap();
    let (_, in_thread) =
        get_json(&c, app.url(&format!("/api/messages/lead?thread={thread}"))).await;
    assert_eq!(ids(&in_thread), [reply["id"].as_u64().unwrap(), thread]);
    let (_, found) = get_json(&c, app.url("/api/messages/lead?q=TONIGHT%20deploy")).await;
    assert_eq!(ids(&found), [thread]);
    let (_, page) = get_json(
        &c,
        app.url(&format!(
            "/api/messages/worker?limit=1&before={}",
            reply["id"]
        )),
    )
    .await;
    assert_eq!(page["messages"][0]["body"], "lunch?");
    let (_, outsider) = get_json(&c, app.url("/api/messages/stranger?q=deploy")).await;
    assert_eq!(ids(&outsider), Vec::<u64>::new());

    // A reply to what the sender never saw: the same 404 as for no message at all.
    for reply_to in [thread, 987_654] {
        let res =
            post(json!({"from": "stranger", "to": "lead", "body": "x", "reply_to": reply_to}))
                .await
                .unwrap();
        let (status, message) = error(res).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(message.contains("has no message"), "{message}");
    }
    let words = "word ".repeat(5_000);
    for (path, expected) in [
        ("/api/messages/lead?before=-1".to_owned(), "`before`"),
        ("/api/messages/lead?thread=abc".to_owned(), "`thread`"),
        ("/api/messages/lead?q=%22%20*%20-".to_owned(), "no word"),
        (format!("/api/messages/lead?q={words}"), "at most"),
        (
            "/api/inbox/lead?importance=critical".to_owned(),
            "low, normal, high, urgent",
        ),
    ] {
        let (status, message) = error(c.get(app.url(&path)).send().await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {message}");
        assert!(message.contains(expected), "{path}: {message}");
        assert!(!message.to_lowercase().contains("sql"), "{path}: {message}");
    }
    // Full-text syntax is searched as words, never run as syntax.
    for q in [
        "deploy%20OR%20x",
        "%22deploy",
        "deploy*",
        "NEAR(deploy)",
        "-deploy",
    ] {
        let (status, _) = get_json(&c, app.url(&format!("/api/messages/lead?q={q}"))).await;
        assert_eq!(status, StatusCode::OK, "{q}");
    }
    for (body, expected) in [
        (
            json!({"from": "a", "to": "b", "body": "x", "reply_to": "7"}),
            "positive integer",
        ),
        (
            json!({"from": "a", "to": "b", "body": "x", "reply_to": 0}),
            "positive integer",
        ),
        (
            json!({"from": "a", "to": "b", "body": "x", "importance": "meh"}),
            "one of low",
        ),
        (
            json!({"from": "a", "to": "b", "body": "x", "subject": "s".repeat(201)}),
            "at most 200",
        ),
    ] {
        let (status, message) = error(post(body).await.unwrap()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{message}");
        assert!(message.contains(expected), "{message}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mailbox_is_read_with_its_own_machines_token_only() {
    let app = production_app().await;
    let c = Client::new();
    let sent = c
        .post(app.url("/api/send"))
        .bearer_auth("tok-laptop")
        .json(&json!({"from": "laptop", "to": "ci", "body": "private"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), StatusCode::CREATED);
    let get = |token: Option<&'static str>| {
        let mut req = c.get(app.url("/api/messages/ci?q=private"));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        req.send()
    };
    assert_eq!(
        error(get(None).await.unwrap()).await.0,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        error(get(Some("tok-laptop")).await.unwrap()).await.0,
        StatusCode::FORBIDDEN
    );
    let own: Value = get(Some("tok-ci")).await.unwrap().json().await.unwrap();
    assert_eq!(own["messages"][0]["body"], "private");
    app.stop().await;
}

/// A PostgreSQL hub made by the first release: its messages stay, gain a thread and become
/// searchable; reads, replies and acknowledgements work at once.
#[tokio::test(flavor = "multi_thread")]
async fn an_older_postgres_schema_is_upgraded_in_place() {
    let Some(db) = PgDb::create().await else {
        return;
    };
    let pg = db.connect().await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    pg.batch_execute(&format!(
        "CREATE TABLE hub_machines (name TEXT PRIMARY KEY, last_seen BIGINT NOT NULL);
         CREATE TABLE hub_messages (machine TEXT NOT NULL, id BIGINT NOT NULL,
           sender TEXT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
           created BIGINT NOT NULL, PRIMARY KEY (machine, id));
         CREATE INDEX hub_messages_created ON hub_messages (created);
         CREATE TABLE hub_counter (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
         CREATE TABLE hub_sends (sender TEXT NOT NULL, idem_key TEXT NOT NULL,
           id BIGINT NOT NULL, recipient TEXT NOT NULL, body TEXT NOT NULL,
           created BIGINT NOT NULL, PRIMARY KEY (sender, idem_key));
         CREATE INDEX hub_sends_created ON hub_sends (created);
         CREATE FUNCTION hub_unread(inbox TEXT, cap BIGINT, locked BIGINT) RETURNS BIGINT
           LANGUAGE sql VOLATILE AS
           $$ SELECT COUNT(*) FROM (SELECT 1 FROM hub_messages WHERE machine = inbox LIMIT cap) n $$;
         INSERT INTO hub_machines VALUES ('a', {now}), ('b', {now});
         INSERT INTO hub_counter VALUES ('ids', 2), ('clock', {now});
         INSERT INTO hub_messages VALUES ('b', 1, 'a', 'b', 'kept from the old release', {now});
         INSERT INTO hub_messages VALUES ('b', 2, 'a', 'b', 'another old one', {now});"
    ))
    .await
    .unwrap();
    let app = TestApp::builder()
        .variable("hub_database_url", &db.url)
        .start()
        .await
        .unwrap();
    let c = Client::new();
    let old = inbox(&c, app.base_url(), "b", "").await;
    assert_eq!(
        bodies(&old),
        ["kept from the old release", "another old one"]
    );
    assert_eq!(
        (&old[0]["thread"], &old[0]["importance"]),
        (&json!(1), &json!("normal"))
    );
    let reply: Value = c
        .post(app.url("/api/send"))
        .json(&json!({"from": "b", "to": "a", "body": "seen", "reply_to": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!((&reply["id"], &reply["thread"]), (&json!(3), &json!(1)));
    assert_eq!(drain(&c, app.base_url(), "b").await.len(), 2);
    let (_, found) = get_json(&c, app.url("/api/messages/b?q=old%20release")).await;
    assert_eq!(ids(&found), [1], "read, kept and searchable");
    let (_, thread) = get_json(&c, app.url("/api/messages/b?thread=1")).await;
    assert_eq!(ids(&thread), [3, 1], "the old message is in its thread");
    app.stop().await;
}

/// Two hosts on one PostgreSQL: a worker reads (acknowledging) through one host and replies
/// through the other while its lead does the same the other way round; every message and every
/// reply arrives once, each reply in its thread, and both mailboxes hold each message once.
#[tokio::test(flavor = "multi_thread")]
async fn replies_and_reads_racing_on_two_hosts_lose_and_double_nothing() {
    let _crowd = dochub_tests::crowded_turn().await;
    let Some(db) = PgDb::create().await else {
        return;
    };
    let backend = Backend::Postgres(db);
    let one = backend.app().start().await.unwrap();
    let two = backend.app().start().await.unwrap();
    let (a, b) = (one.base_url().to_owned(), two.base_url().to_owned());
    const ASKS: usize = 60;
    let c = Client::new();
    let lead = {
        let (c, a) = (c.clone(), a.clone());
        tokio::spawn(async move {
            for i in 0..ASKS {
                send(&c, &a, "lead", "worker", &format!("task {i}")).await;
            }
        })
    };
    let worker = {
        let (c, a, b) = (c.clone(), a.clone(), b.clone());
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while seen.len() < ASKS {
                for task in inbox(&c, &b, "worker", "limit=7&ack=true").await {
                    let id = task["id"].as_u64().unwrap();
                    seen.push(id);
                    let res = c
                        .post(format!("{a}/api/send"))
                        .header("idempotency-key", format!("reply-{id}"))
                        .json(&json!({"from": "worker", "to": "lead", "body": "done",
                                      "reply_to": id}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), StatusCode::CREATED);
                    let reply: Value = res.json().await.unwrap();
                    assert_eq!(reply["thread"], id, "the reply joins its task's thread");
                }
            }
            seen
        })
    };
    lead.await.unwrap();
    let mut seen = worker.await.unwrap();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), ASKS, "every task read once");
    let replies = drain(&c, &a, "lead").await;
    let mut answered: Vec<u64> = replies
        .iter()
        .map(|r| r["reply_to"].as_u64().unwrap())
        .collect();
    answered.sort_unstable();
    assert_eq!(answered, seen, "one reply per task, none twice");
    for (machine, base) in [("lead", &b), ("worker", &a)] {
        let (_, mailbox) = get_json(&c, format!("{base}/api/messages/{machine}?limit=200")).await;
        let mut all = ids(&mailbox);
        let count = all.len();
        all.dedup();
        assert_eq!((count, all.len()), (2 * ASKS, 2 * ASKS), "{machine}");
        assert!(
            mailbox["messages"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["read"] == true)
        );
    }
    one.stop().await;
    two.stop().await;
}

/// Runs `statements` on the hub's store of `app`, as an operator's SQL shell would.
async fn run_sql(backend: &Backend, app: &TestApp, statements: &str) {
    match backend {
        Backend::Sqlite => {
            let file = app.dir().join(".spin/sqlite_db.db");
            rusqlite::Connection::open(file)
                .unwrap()
                .execute_batch(statements)
                .unwrap();
        }
        Backend::Postgres(db) => db.connect().await.batch_execute(statements).await.unwrap(),
    }
}

/// The mailbox's messages as (id, read), newest first.
async fn mailbox(client: &Client, app: &TestApp, machine: &str) -> Vec<(u64, bool)> {
    let (status, answer) = get_json(client, app.url(&format!("/api/messages/{machine}"))).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_u64().unwrap(), m["read"].as_bool().unwrap()))
        .collect()
}

on_both!(
    read_messages_are_kept_up_to_hub_max_read_in_an_upgraded_store_too,
    read_messages_are_kept_up_to_hub_max_read_on_sqlite,
    read_messages_are_kept_up_to_hub_max_read_on_postgres
);

/// A mailbox keeps `hub_max_read` read messages, sent or acknowledged, the newest; unread ones
/// all. A store of a release before the per-machine counts (no `read_kept`, read messages over
/// the cap) is counted on the next send and trimmed to the cap.
async fn read_messages_are_kept_up_to_hub_max_read_in_an_upgraded_store_too(backend: Backend) {
    let app = backend
        .app()
        .variable("hub_max_read", "3")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    for i in 1..=5 {
        send(&c, &base, "a", "b", &format!("m{i}")).await;
    }
    let sent_read: Vec<(u64, bool)> = (3..=5).rev().map(|id| (id, true)).collect();
    assert_eq!(mailbox(&c, &app, "a").await, sent_read, "the newest sent");
    let taken = inbox(&c, &base, "b", "limit=4&ack=true").await;
    assert_eq!(bodies(&taken), ["m1", "m2", "m3", "m4"]);
    assert_eq!(
        mailbox(&c, &app, "b").await,
        [(5, false), (4, true), (3, true), (2, true)],
        "the unread one, and the newest three read"
    );

    // What a release before the counts left: none, and read messages it never trimmed.
    run_sql(&backend, &app, drop_counts(&backend)).await;
    run_sql(
        &backend,
        &app,
        "ALTER TABLE hub_machines DROP COLUMN read_kept",
    )
    .await;
    run_sql(
        &backend,
        &app,
        "UPDATE hub_messages SET read_at = created WHERE machine = 'b'",
    )
    .await;
    assert_eq!(mailbox(&c, &app, "b").await.len(), 4, "over the cap");

    let reply = send(&c, &base, "b", "a", "after the upgrade").await;
    assert_eq!(reply["id"], 6);
    assert_eq!(
        mailbox(&c, &app, "b").await,
        [(6, true), (5, true), (4, true)],
        "trimmed to the newest three"
    );
    app.stop().await;
}

on_both!(
    a_busy_sender_keeps_hub_max_read,
    a_busy_sender_racing_itself_keeps_hub_max_read_on_sqlite,
    a_busy_sender_racing_itself_keeps_hub_max_read_on_postgres
);

/// One machine sending from eight clients at once, every send over its cap of read messages:
/// each send trims in its own statement, so none is lost and the mailbox ends with exactly
/// the newest `hub_max_read` of them.
async fn a_busy_sender_keeps_hub_max_read(backend: Backend) {
    let _crowd = dochub_tests::crowded_turn().await;
    let app = backend
        .app()
        .variable("hub_max_read", "5")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let busy = unique("busy");
    let inboxes: Vec<String> = (0..4).map(|i| unique(&format!("to{i}"))).collect();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let (c, base, busy, to) = (
                c.clone(),
                base.clone(),
                busy.clone(),
                inboxes[i % inboxes.len()].clone(),
            );
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..25 {
                    let sent = send(&c, &base, &busy, &to, &format!("{i}:{n}")).await;
                    ids.push(sent["id"].as_u64().unwrap());
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    ids.sort_unstable();
    let newest: Vec<(u64, bool)> = ids.iter().rev().take(5).map(|&id| (id, true)).collect();
    assert_eq!(mailbox(&c, &app, &busy).await, newest, "the newest five");
    let mut delivered = 0;
    for to in &inboxes {
        delivered += drain(&c, &base, to).await.len();
    }
    assert_eq!(delivered, 200, "every message in its inbox");
    app.stop().await;
}

/// Drops `unread_kept` and what keeps both counts, as they were before the unread one came
/// (and, on SQLite, the view `hub_send` of a later release, whose trigger reads the counts).
fn drop_counts(backend: &Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "DROP VIEW hub_send; DROP TRIGGER hub_message_added; DROP TRIGGER hub_message_marked; \
             DROP TRIGGER hub_message_removed; ALTER TABLE hub_machines DROP COLUMN unread_kept;"
        }
        Backend::Postgres(_) => {
            "DROP TRIGGER hub_count_messages ON hub_messages; DROP FUNCTION hub_count_messages(); \
             DROP FUNCTION hub_inbox_has_room_3; \
             ALTER TABLE hub_machines DROP COLUMN unread_kept;"
        }
    }
}

/// The triggers that counted read messages in the release before `unread_kept`, as it made
/// them.
fn read_count_of_the_release_before(backend: &Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "CREATE TRIGGER hub_read_added AFTER INSERT ON hub_messages \
             WHEN NEW.read_at IS NOT NULL BEGIN \
             INSERT INTO hub_machines (name, last_seen, read_kept) VALUES (NEW.machine, 0, 1) \
             ON CONFLICT (name) DO UPDATE SET read_kept = read_kept + 1; END; \
             CREATE TRIGGER hub_read_marked AFTER UPDATE OF read_at ON hub_messages \
             WHEN OLD.read_at IS NULL AND NEW.read_at IS NOT NULL BEGIN \
             INSERT INTO hub_machines (name, last_seen, read_kept) VALUES (NEW.machine, 0, 1) \
             ON CONFLICT (name) DO UPDATE SET read_kept = read_kept + 1; END; \
             CREATE TRIGGER hub_read_removed AFTER DELETE ON hub_messages \
             WHEN OLD.read_at IS NOT NULL BEGIN \
             UPDATE hub_machines SET read_kept = read_kept - 1 WHERE name = OLD.machine; END;"
        }
        Backend::Postgres(_) => {
            "CREATE FUNCTION hub_count_read() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN \
               IF TG_OP = 'DELETE' THEN \
                 IF OLD.read_at IS NOT NULL THEN \
                   UPDATE hub_machines SET read_kept = read_kept - 1 WHERE name = OLD.machine; \
                 END IF; \
               ELSIF TG_OP = 'INSERT' THEN \
                 IF NEW.read_at IS NOT NULL THEN \
                   INSERT INTO hub_machines (name, last_seen, read_kept) VALUES (NEW.machine, 0, 1) \
                     ON CONFLICT (name) DO UPDATE SET read_kept = hub_machines.read_kept + 1; \
                 END IF; \
               ELSIF OLD.read_at IS NULL AND NEW.read_at IS NOT NULL THEN \
                 INSERT INTO hub_machines (name, last_seen, read_kept) VALUES (NEW.machine, 0, 1) \
                   ON CONFLICT (name) DO UPDATE SET read_kept = hub_machines.read_kept + 1; \
               END IF; \
               RETURN NULL; \
             END $f$; \
             CREATE TRIGGER hub_count_read AFTER INSERT OR DELETE OR UPDATE OF read_at \
               ON hub_messages FOR EACH ROW EXECUTE FUNCTION hub_count_read();"
        }
    }
}

on_both!(
    unread_counts_in_an_upgraded_store,
    the_unread_cap_and_the_read_trim_hold_in_an_upgraded_store_on_sqlite,
    the_unread_cap_and_the_read_trim_hold_in_an_upgraded_store_on_postgres
);

/// A store of the release that counted read messages only gets the unread count on the next
/// send, in place of the old triggers: the unread cap is exact from then on, and each read
/// message is counted once, so the trim keeps exactly `hub_max_read`.
async fn unread_counts_in_an_upgraded_store(backend: Backend) {
    let app = backend
        .app()
        .variable("hub_max_read", "3")
        .variable("hub_max_unread", "3")
        .start()
        .await
        .unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    for i in 1..=3 {
        send(&c, &base, "a", "b", &format!("m{i}")).await;
    }
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "limit=1&ack=true").await),
        ["m1"]
    );

    // What the release before left: the read count and its triggers, no unread count.
    run_sql(&backend, &app, drop_counts(&backend)).await;
    run_sql(&backend, &app, read_count_of_the_release_before(&backend)).await;

    send(&c, &base, "a", "b", "m4").await;
    let res = c
        .post(app.url("/api/send"))
        .json(&json!({"from": "a", "to": "b", "body": "one too many"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        StatusCode::INSUFFICIENT_STORAGE,
        "three unread"
    );
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "ack=true").await),
        ["m2", "m3", "m4"]
    );
    assert_eq!(
        mailbox(&c, &app, "b").await,
        [(4, true), (3, true), (2, true)],
        "the newest three read, each counted once"
    );
    let last = send(&c, &base, "a", "b", "fits again").await["id"]
        .as_u64()
        .unwrap();
    // A refused send takes an id on PostgreSQL, none on SQLite.
    assert_eq!(
        mailbox(&c, &app, "a").await,
        [(last, true), (4, true), (3, true)],
        "the sender's too"
    );
    app.stop().await;
}
