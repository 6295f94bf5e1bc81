//! The message hub end to end: the real `hub.wasm` under the local host, over HTTP, on the SQLite
//! store and on Redis (127.0.0.1:6379).
//!
//! Tests that share the Redis server never flush it: each uses machine names with a unique suffix.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use dochub_tests::TestApp;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

const MAX_BODY: usize = 64 * 1024;

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
    assert_eq!(res.status(), StatusCode::CREATED, "send {from} -> {to}");
    res.json().await.unwrap()
}

async fn inbox(client: &Client, base: &str, machine: &str, query: &str) -> Vec<Value> {
    let res = client
        .get(format!("{base}/api/inbox/{machine}?{query}"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK, "inbox {machine}?{query}");
    let value: Value = res.json().await.unwrap();
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

#[tokio::test(flavor = "multi_thread")]
async fn send_inbox_and_machines_have_the_documented_shapes() {
    let app = TestApp::builder().start().await.unwrap();
    let c = Client::new();
    let res = c
        .post(app.url("/api/send"))
        .header("content-type", "application/json")
        .body(r#"{"from":"laptop","to":"ci-runner","body":"build 412 is green"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.headers()["content-type"], "application/json");
    let sent: Value = res.json().await.unwrap();
    let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["body", "from", "id", "timestamp", "to"]);
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

    let big = json!({"from": "a", "to": "b", "body": "x".repeat(MAX_BODY)}).to_string();
    let (status, message) = error(post("application/json", big.into()).await.unwrap()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(message.contains("64 KiB"));

    // Nothing but the good sends registered anyone.
    let machines: Value = c
        .get(app.url("/machines"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = machines
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"]);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inbox_reads_methods_and_paths() {
    let app = TestApp::builder().start().await.unwrap();
    let c = Client::new();
    for (query, reason) in [
        ("all", "reserved"),
        ("bad%20name", "machine name"),
        ("b?limit=0", "`limit` must be an integer from 1 to 500"),
        ("b?limit=501", "`limit`"),
        ("b?limit=abc", "`limit`"),
        ("b?limit=-5", "`limit`"),
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
    for path in ["/api/inbox/a/b", "/api/inbox/", "/api/inbox"] {
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
        bodies(&inbox(&c, &base, "b", "ack=1&limit=500").await),
        ["m2", "m3", "m4"]
    );
    assert!(inbox(&c, &base, "b", "ack=true").await.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn broadcast_reaches_every_registered_machine_once() {
    let app = TestApp::builder().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machines = ["m1", "m2", "m3", "m4", "m5"];
    for m in machines {
        inbox(&c, &base, m, "").await;
    }
    let sent = send(&c, &base, "m1", "all", "to everyone").await;
    assert_eq!(sent["to"], "all");
    inbox(&c, &base, "late", "").await;
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
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unicode_and_64_kib_bodies_come_back_byte_exact() {
    let app = TestApp::builder().start().await.unwrap();
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let texts = [
        "héllo wörld — ✓ 日本語 🚀👩‍👩‍👧 e\u{301}".to_owned(),
        "quotes \" \\ and\nnewlines\r\n\ttabs \u{0} nul \u{1f} and \u{feff}bom".to_owned(),
    ];
    for t in &texts {
        send(&c, &base, "a", "b", t).await;
    }
    // A request body of exactly 64 KiB is accepted; one byte more is 413.
    let frame = json!({"from": "a", "to": "b", "body": ""})
        .to_string()
        .len();
    let room = MAX_BODY - frame;
    let big = "€".repeat(room / 3) + &"x".repeat(room % 3);
    let raw = json!({"from": "a", "to": "b", "body": big}).to_string();
    assert_eq!(raw.len(), MAX_BODY);
    let res = c
        .post(app.url("/api/send"))
        .header("content-type", "application/json")
        .body(raw.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let over = format!(" {raw}");
    let res = c
        .post(app.url("/api/send"))
        .header("content-type", "application/json")
        .body(over)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);

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

#[tokio::test(flavor = "multi_thread")]
async fn eight_concurrent_senders_deliver_all_2000_once_and_in_order() {
    let app = TestApp::builder().start().await.unwrap();
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
    let mut readers_with_messages = 0;
    for t in tasks {
        let got = t.await.unwrap();
        readers_with_messages += usize::from(!got.is_empty());
        for n in got {
            assert!(seen.insert(n), "message {n} received by two readers");
        }
    }
    assert_eq!(seen.len(), count);
    assert!(readers_with_messages > 1, "the readers did not overlap");
}

#[tokio::test(flavor = "multi_thread")]
async fn four_concurrent_acking_readers_never_share_a_message() {
    let app = TestApp::builder().start().await.unwrap();
    let base = app.base_url().to_owned();
    concurrent_readers(&base, std::slice::from_ref(&base), 600).await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_restart_between_send_and_read_loses_nothing() {
    let state = tempfile::tempdir().unwrap();
    let c = Client::new();
    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    let base = app.base_url().to_owned();
    for i in 0..20 {
        send(&c, &base, "a", "b", &format!("m{i}")).await;
    }
    assert_eq!(
        bodies(&inbox(&c, &base, "b", "limit=5&ack=true").await),
        ["m0", "m1", "m2", "m3", "m4"]
    );
    app.stop().await;

    let app = TestApp::builder()
        .state_dir(state.path())
        .start()
        .await
        .unwrap();
    let base = app.base_url().to_owned();
    let got = drain(&c, &base, "b").await;
    let expected: Vec<String> = (5..20).map(|i| format!("m{i}")).collect();
    assert_eq!(bodies(&got), expected);
    // Ids go on after a restart.
    let next = send(&c, &base, "a", "b", "after").await;
    assert_eq!(next["id"], 21);
    let machines: Value = c
        .get(app.url("/machines"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(machines.as_array().unwrap().len(), 2);
    app.stop().await;
}

fn redis_config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("runtime-config.toml");
    std::fs::write(
        &path,
        "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n",
    )
    .unwrap();
    path
}

/// Two hosts on different ports share one Redis: sends and acknowledging reads through both at
/// the same time deliver every message exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn two_hosts_sharing_redis_deliver_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = redis_config(dir.path());
    let one = TestApp::builder()
        .runtime_config(&config)
        .start()
        .await
        .unwrap();
    let two = TestApp::builder()
        .runtime_config(&config)
        .start()
        .await
        .unwrap();
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

#[tokio::test(flavor = "multi_thread")]
async fn production_binds_each_token_to_its_machine() {
    // sha256("tok-laptop"), sha256("tok-ci")
    let tokens = "laptop=52e2c11017bdb8f95c72ad51bb7559d067d92bd3a24e50645747146b6de13849,\
                  ci=ee037f54510155cee42806b26a48187d4b8644857a020a77c867585a50a577ff";
    let app = TestApp::builder()
        .variable("environment", "production")
        .variable("hub_tokens", tokens)
        .start()
        .await
        .unwrap();
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
