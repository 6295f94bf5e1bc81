//! The hub's HTTP layer on SQLite (through the `Sql` test double): routes, status codes,
//! headers, body shapes, auth.

mod common;

use common::{SqliteDb, TestDb};
use dochub_http::Request;
use dochub_hub::api::{Body, MAX_REQUEST, handle};
use dochub_hub::auth::{HubAuth, token_digest};
use dochub_hub::{Hub, Limits, MAX_BODY};
use http::{Method, StatusCode};
use serde_json::{Value, json};

/// A request as the hub component hands it over: `uri` is the whole path, and the query.
fn request<'a>(method: &'a str, uri: &'a str, headers: &'a [(String, String)]) -> Request<'a> {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    Request {
        method,
        path,
        query,
        headers,
    }
}

fn owned(headers: &[(&str, &str)]) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

struct Call<'a> {
    hub: &'a Hub<SqliteDb>,
    auth: HubAuth,
}

impl Call<'_> {
    fn req(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Body,
    ) -> (StatusCode, http::HeaderMap, Value) {
        let headers = owned(headers);
        let response = handle(
            self.hub,
            &self.auth,
            &request(method.as_str(), uri, &headers),
            body,
        );
        assert_eq!(response.header("content-type"), Some("application/json"));
        let mut headers = http::HeaderMap::new();
        for (name, value) in &response.headers {
            headers.append(*name, value.parse().unwrap());
        }
        let value = serde_json::from_slice(&response.body).unwrap();
        let status = StatusCode::from_u16(response.status).unwrap();
        (status, headers, value)
    }

    fn send(&self, json: &Value, token: Option<&str>) -> (StatusCode, Value) {
        self.send_with(json, token, &[])
    }

    fn send_with(
        &self,
        json: &Value,
        token: Option<&str>,
        extra: &[(&str, &str)],
    ) -> (StatusCode, Value) {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        headers.extend_from_slice(extra);
        let body = Body::Bytes(json.to_string().into_bytes());
        let (status, _, value) = self.req(Method::POST, "/api/send", &headers, body);
        (status, value)
    }

    fn get(&self, uri: &str, token: Option<&str>) -> (StatusCode, Value) {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", &**a)).collect();
        let (status, _, value) = self.req(Method::GET, uri, &headers, Body::Bytes(Vec::new()));
        (status, value)
    }

    fn ack(&self, machine: &str, body: &str, token: Option<&str>) -> (StatusCode, Value) {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
        let uri = format!("/api/inbox/{machine}/ack");
        let body = Body::Bytes(body.as_bytes().to_vec());
        let (status, _, value) = self.req(Method::POST, &uri, &headers, body);
        (status, value)
    }
}

fn open(hub: &Hub<SqliteDb>) -> Call<'_> {
    Call {
        hub,
        auth: HubAuth::new("development", ""),
    }
}

fn error_of(value: &Value) -> &str {
    value["error"].as_str().unwrap()
}

#[test]
fn send_returns_201_with_the_stored_message() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    let (status, m) = c.send(
        &json!({"from": "laptop", "to": "ci-runner", "body": "héllo ✓"}),
        None,
    );
    assert_eq!(status, StatusCode::CREATED);
    let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
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
    assert_eq!(m["id"], 1);
    // Without the new fields, a message is normal, unanswered and starts its own thread.
    assert_eq!(
        (
            &m["subject"],
            &m["importance"],
            &m["thread"],
            &m["reply_to"]
        ),
        (&Value::Null, &json!("normal"), &json!(1), &Value::Null)
    );
    assert_eq!(m["from"], "laptop");
    assert_eq!(m["to"], "ci-runner");
    assert_eq!(m["body"], "héllo ✓");
    let ts = m["timestamp"].as_str().unwrap();
    assert!(chrono::DateTime::parse_from_rfc3339(ts).is_ok(), "{ts}");
    assert!(ts.ends_with('Z') && ts.len() == 24, "{ts}");

    let (status, inbox) = c.get("/api/inbox/ci-runner?ack=true&limit=10", None);
    assert_eq!(status, StatusCode::OK);
    let mut expected = m.clone();
    expected["read"] = json!(true);
    assert_eq!(
        inbox,
        json!({"machine": "ci-runner", "messages": [expected]})
    );
    let (_, inbox) = c.get("/api/inbox/ci-runner", None);
    assert_eq!(inbox, json!({"machine": "ci-runner", "messages": []}));

    let (status, machines) = c.get("/machines", None);
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = machines
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e.as_object().unwrap().len(), 2);
            assert!(chrono::DateTime::parse_from_rfc3339(e["last_seen"].as_str().unwrap()).is_ok());
            e["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["ci-runner", "laptop"]);
}

#[test]
fn inbox_without_ack_returns_unread_messages_again() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    for i in 0..3 {
        c.send(
            &json!({"from": "a", "to": "b", "body": format!("m{i}")}),
            None,
        );
    }
    for _ in 0..2 {
        let (_, inbox) = c.get("/api/inbox/b?limit=2&ack=false", None);
        let got: Vec<(&str, bool)> = inbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["body"].as_str().unwrap(), m["read"].as_bool().unwrap()))
            .collect();
        assert_eq!(got, [("m0", false), ("m1", false)]);
    }
    let (_, inbox) = c.get("/api/inbox/b?ack=1", None);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn bad_sends_are_400_with_a_reason() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    let cases = [
        (json!({"to": "b", "body": "x"}), "`from` is required"),
        (json!({"from": "a", "body": "x"}), "`to` is required"),
        (json!({"from": "a", "to": "b"}), "`body` is required"),
        (
            json!({"from": "a", "to": "b", "body": ""}),
            "`body` must not be empty",
        ),
        (
            json!({"from": "", "to": "b", "body": "x"}),
            "`from` must not be empty",
        ),
        (
            json!({"from": "a", "to": "", "body": "x"}),
            "`to` must not be empty",
        ),
        (json!({"from": "all", "to": "b", "body": "x"}), "reserved"),
        (
            json!({"from": "a b", "to": "b", "body": "x"}),
            "`from` must be a machine name",
        ),
        (
            json!({"from": "a", "to": "b/c", "body": "x"}),
            "`to` must be a machine name",
        ),
        (
            json!({"from": "a", "to": "b", "body": 5}),
            "`body` must be a string",
        ),
        (json!(["a", "b"]), "not a JSON object"),
    ];
    for (body, reason) in cases {
        let (status, value) = c.send(&body, None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_of(&value).contains(reason), "{body}: {value}");
    }
    let (status, _, value) = c.req(
        Method::POST,
        "/api/send",
        &[("content-type", "application/json")],
        Body::Bytes(b"{\"from\":".to_vec()),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&value).contains("not a JSON object"));
    assert!(
        hub.machines().unwrap().is_empty(),
        "nothing registered by bad sends"
    );
}

#[test]
fn content_type_and_size_are_checked() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    let ok = json!({"from": "a", "to": "b", "body": "x"})
        .to_string()
        .into_bytes();
    for ct in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let headers: Vec<(&str, &str)> = ct.iter().map(|ct| ("content-type", *ct)).collect();
        let (status, _, value) =
            c.req(Method::POST, "/api/send", &headers, Body::Bytes(ok.clone()));
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct:?}");
        assert!(error_of(&value).contains("application/json"));
    }
    let headers = [("content-type", "Application/JSON; charset=utf-8")];
    let (status, _, _) = c.req(Method::POST, "/api/send", &headers, Body::Bytes(ok));
    assert_eq!(status, StatusCode::CREATED);

    // A body of exactly 64 KiB is accepted, also written all in `\u00e9` escapes as Python's
    // json.dumps sends it (three times the JSON); one byte more is 413.
    let text = "é".repeat(MAX_BODY / 2);
    let escaped = format!(
        r#"{{"from": "a", "to": "b", "body": "{}"}}"#,
        "\\u00e9".repeat(MAX_BODY / 2)
    );
    assert!(escaped.len() > 3 * MAX_BODY);
    let (status, _, m) = c.req(
        Method::POST,
        "/api/send",
        &headers,
        Body::Bytes(escaped.into_bytes()),
    );
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(m["body"].as_str().unwrap(), text);
    let over = json!({"from": "a", "to": "b", "body": text + "x"})
        .to_string()
        .into_bytes();
    assert!(over.len() < MAX_REQUEST);
    let (status, _, value) = c.req(Method::POST, "/api/send", &headers, Body::Bytes(over));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(error_of(&value).contains("64 KiB"), "{value}");
    let huge = vec![b' '; MAX_REQUEST + 1];
    let (status, _, _) = c.req(Method::POST, "/api/send", &headers, Body::Bytes(huge));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, _, _) = c.req(Method::POST, "/api/send", &headers, Body::TooLarge);
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[test]
fn bad_inbox_requests_are_400_and_limits_are_clamped() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    for (uri, reason) in [
        ("/api/inbox/all", "reserved"),
        ("/api/inbox/a%20b", "machine name"),
        ("/api/inbox/b?limit=ten", "`limit` must be an integer"),
        ("/api/inbox/b?limit=", "`limit`"),
        ("/api/inbox/b?ack=maybe", "`ack` must be true or false"),
    ] {
        let (status, value) = c.get(uri, None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(error_of(&value).contains(reason), "{uri}: {value}");
    }
    for i in 0..3 {
        c.send(
            &json!({"from": "a", "to": "b", "body": format!("m{i}")}),
            None,
        );
    }
    for (query, count) in [("limit=0", 1), ("limit=-4", 1), ("limit=501", 3), ("", 3)] {
        let (status, inbox) = c.get(&format!("/api/inbox/b?{query}"), None);
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(
            inbox["messages"].as_array().unwrap().len(),
            count,
            "{query}"
        );
    }
    let (_, inbox) = c.get("/api/inbox/b?limit=1&ack", None);
    assert_eq!(inbox["messages"][0]["read"], true, "a bare `ack` is true");
    let (_, inbox) = c.get("/api/inbox/b?ack=YES", None);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 2);
    let (_, inbox) = c.get("/api/inbox/b", None);
    assert_eq!(inbox["messages"], json!([]));
}

#[test]
fn an_anonymous_peek_does_not_register_the_machine() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    c.get("/api/inbox/typo?limit=5", None);
    c.get("/api/inbox/reader?ack=false", None);
    let (_, machines) = c.get("/machines", None);
    assert_eq!(machines, json!([]));
    c.get("/api/inbox/reader?ack=true", None);
    c.ack("acker", r#"{"through": 0}"#, None);
    let (_, machines) = c.get("/machines", None);
    let names: Vec<&str> = machines
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["acker", "reader"]);
}

#[test]
fn two_step_acknowledgement_over_http() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    for i in 0..4 {
        c.send(
            &json!({"from": "a", "to": "b", "body": format!("m{i}")}),
            None,
        );
    }
    let (_, inbox) = c.get("/api/inbox/b?limit=3", None);
    let through = inbox["messages"][2]["id"].clone();
    let (status, value) = c.ack("b", &json!({"through": through}).to_string(), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(value, json!({"machine": "b", "acknowledged": 3}));
    let (_, value) = c.ack("b", &json!({"through": through}).to_string(), None);
    assert_eq!(value, json!({"machine": "b", "acknowledged": 0}));
    let (_, inbox) = c.get("/api/inbox/b", None);
    assert_eq!(inbox["messages"][0]["body"], "m3");
    // By id: only those.
    let (_, inbox) = c.get("/api/inbox/b", None);
    let last = inbox["messages"][0]["id"].clone();
    let (status, value) = c.ack("b", &json!({"ids": [last, 999_999]}).to_string(), None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(value, json!({"machine": "b", "acknowledged": 1}));
    let (_, inbox) = c.get("/api/inbox/b", None);
    assert_eq!(inbox["messages"], json!([]));
    for (body, reason) in [
        (r#"{"ids": [1, -2]}"#, "`ids`"),
        (r#"{"ids": 3}"#, "`ids`"),
        (r#"{"ids": [1], "through": 1}"#, "not both"),
        ("{}", "`through`"),
        (r#"{"through": -1}"#, "`through`"),
        (r#"{"through": "3"}"#, "`through`"),
        (r#"{"through": 1.5}"#, "`through`"),
        ("[", "not a JSON object"),
    ] {
        let (status, value) = c.ack("b", body, None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(error_of(&value).contains(reason), "{body}: {value}");
    }
    let (status, _, value) = c.req(
        Method::POST,
        "/api/inbox/b/ack",
        &[("content-type", "text/plain")],
        Body::Bytes(b"{\"through\": 1}".to_vec()),
    );
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(error_of(&value).contains("application/json"));
    let (status, value) = c.ack("all", r#"{"through": 1}"#, None);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(error_of(&value).contains("reserved"));
}

#[test]
fn idempotency_keys_over_http() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    let msg = json!({"from": "a", "to": "b", "body": "once"});
    let (status, first) = c.send_with(&msg, None, &[("idempotency-key", "retry 7")]);
    assert_eq!(status, StatusCode::CREATED);
    let (status, again) = c.send_with(&msg, None, &[("idempotency-key", "retry 7")]);
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(again, first);
    let long = "k".repeat(129);
    for bad in ["", long.as_str(), "tab\there"] {
        let (status, value) = c.send_with(&msg, None, &[("idempotency-key", bad)]);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert!(error_of(&value).contains("Idempotency-Key"), "{value}");
    }
    let (_, inbox) = c.get("/api/inbox/b", None);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 1);
}

#[test]
fn a_full_inbox_is_507() {
    let db = TestDb::new();
    let limits = Limits {
        max_unread: 2,
        ..Limits::default()
    };
    let hub = Hub::with_clock(SqliteDb::open(&db.path()), dochub_hub::SystemClock, limits);
    let c = open(&hub);
    let msg = json!({"from": "a", "to": "b", "body": "x"});
    assert_eq!(c.send(&msg, None).0, StatusCode::CREATED);
    assert_eq!(c.send(&msg, None).0, StatusCode::CREATED);
    let (status, value) = c.send(&msg, None);
    assert_eq!(status, StatusCode::INSUFFICIENT_STORAGE);
    assert!(error_of(&value).contains("hub_max_unread"), "{value}");
}

#[test]
fn unknown_paths_are_404_and_other_methods_405() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    for uri in [
        "/api/inbox/",
        "/api/inbox",
        "/api/inbox/a/b",
        "/api/inbox//ack",
        "/nope",
    ] {
        let (status, value) = c.get(uri, None);
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        assert!(error_of(&value).contains("no hub route"));
    }
    for (method, uri, allow) in [
        (Method::GET, "/api/send", "POST"),
        (Method::PUT, "/api/send", "POST"),
        (Method::POST, "/api/inbox/b", "GET"),
        (Method::DELETE, "/api/inbox/b", "GET"),
        (Method::POST, "/machines", "GET"),
        (Method::GET, "/api/inbox/b/ack", "POST"),
    ] {
        let (status, headers, value) = c.req(method.clone(), uri, &[], Body::Bytes(Vec::new()));
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        assert_eq!(headers["allow"], allow);
        assert!(error_of(&value).contains("not allowed"));
    }
}

#[test]
fn production_binds_each_token_to_its_machine() {
    let db = TestDb::new();
    let hub = db.hub();
    let tokens = format!("laptop={},ci={}", token_digest("tl"), token_digest("tc"));
    let c = Call {
        hub: &hub,
        auth: HubAuth::new("production", &tokens),
    };
    let msg = json!({"from": "laptop", "to": "ci", "body": "x"});
    for token in [None, Some("wrong")] {
        for (status, value) in [
            c.send(&msg, token),
            c.get("/api/inbox/ci", token),
            c.get("/machines", token),
        ] {
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}");
            assert!(error_of(&value).contains("token"));
        }
    }
    let (_, headers, _) = c.req(Method::GET, "/machines", &[], Body::Bytes(Vec::new()));
    assert_eq!(headers["www-authenticate"], "Bearer realm=\"dochub hub\"");

    let (status, value) = c.send(&msg, Some("tc"));
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(error_of(&value).contains("may not send as `laptop`"));
    let (status, value) = c.get("/api/inbox/ci", Some("tl"));
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(error_of(&value).contains("may not read the inbox of `ci`"));

    assert_eq!(c.send(&msg, Some("tl")).0, StatusCode::CREATED);
    let (status, inbox) = c.get("/api/inbox/ci?ack=true", Some("tc"));
    assert_eq!(status, StatusCode::OK);
    assert_eq!(inbox["messages"][0]["body"], "x");
    assert_eq!(c.get("/machines", Some("tc")).0, StatusCode::OK);
}

fn get(hub: &Hub<SqliteDb>, uri: &str, headers: &[(&str, &str)]) -> dochub_http::Response {
    handle(
        hub,
        &HubAuth::new("development", ""),
        &request("GET", uri, &owned(headers)),
        Body::Bytes(Vec::new()),
    )
}

#[test]
fn a_long_poll_is_woken_by_a_send_on_another_connection() {
    let db = TestDb::new();
    let hub = db.hub();
    assert!(hub.machines().unwrap().is_empty());
    let path = db.path();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let send = dochub_hub::SendRequest::from_json(br#"{"from":"a","to":"b","body":"hi"}"#);
        Hub::new(SqliteDb::open(&path))
            .send(&send.unwrap(), None)
            .unwrap()
    });
    let started = std::time::Instant::now();
    let res = get(&hub, "/api/inbox/b?wait=10&ack=true", &[]);
    let sent = sender.join().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(res.status, 200);
    let text = String::from_utf8(res.body).unwrap();
    // A space before the messages were taken, then the inbox.
    assert!(text.starts_with(' '), "{text:?}");
    let value: Value = serde_json::from_str(text.trim_start()).unwrap();
    assert_eq!(value["messages"][0]["id"], sent.id);
    assert_eq!(value["messages"][0]["read"], true);
}

/// The [`dochub_hub::api::Later`] that `answer` hands back for `uri` (a long-poll of an empty
/// inbox, or an event stream).
fn later<C: dochub_hub::Clock>(hub: &Hub<SqliteDb, C>, uri: &str) -> dochub_hub::api::Later {
    let auth = HubAuth::new("development", "");
    let request = request("GET", uri, &[]);
    match dochub_hub::api::answer(hub, &auth, &request, Body::Bytes(Vec::new())) {
        dochub_hub::api::Answer::Later(later) => later,
        dochub_hub::api::Answer::Now(response) => panic!("answered at once: {}", response.status),
    }
}

/// Runs `later` with connections from `open`, of which the first `failing` get none (a host's
/// connect timeout under load); before connection `send_at`, `a` sends `hi` to `b`. Returns
/// the body written and how many connections were asked for (one a look, and one more to
/// read what a look found).
fn run_with_failing_looks<C: dochub_hub::Clock>(
    later: &dochub_hub::api::Later,
    open: &dyn Fn() -> Hub<SqliteDb, C>,
    failing: u32,
    send_at: u32,
) -> (Result<(), dochub_hub::wait::WaitError>, Vec<u8>, u32) {
    let looks = std::cell::Cell::new(0);
    let connect = || {
        looks.set(looks.get() + 1);
        if looks.get() == send_at {
            let send = dochub_hub::SendRequest::from_json(br#"{"from":"a","to":"b","body":"hi"}"#);
            open().send(&send.unwrap(), None).unwrap();
        }
        if looks.get() <= failing {
            return Err(dochub_hub::HubError::Unavailable(
                "no free connection".into(),
            ));
        }
        Ok(open())
    };
    let mut body = Vec::new();
    let outcome = later.run(
        &connect,
        &dochub_hub::wait::ThreadPause::default(),
        &mut body,
    );
    (outcome, body, looks.get())
}

/// Looks that get no connection from the pool are skipped: the wait goes on and a message
/// sent meanwhile is delivered, read once.
#[test]
fn a_long_poll_survives_looks_that_get_no_connection() {
    let db = TestDb::new();
    let hub = db.hub();
    let later = later(&hub, "/api/inbox/b?wait=10&ack=true");
    let (outcome, body, connections) = run_with_failing_looks(&later, &|| db.hub(), 3, 2);
    outcome.unwrap();
    assert_eq!(
        connections, 5,
        "three failed looks, one that found, one read"
    );
    let value: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(value["messages"][0]["body"], "hi");
    assert_eq!(value["messages"][0]["read"], true);
    let left = hub
        .inbox(
            &dochub_hub::MachineName::parse("b", "machine").unwrap(),
            10,
            false,
            false,
        )
        .unwrap();
    assert!(left.messages.is_empty(), "read once: {left:?}");
}

/// A wait whose every look failed does not answer "nothing came": it ends with the failure.
#[test]
fn a_long_poll_that_never_saw_the_store_ends_with_the_failure() {
    let db = TestDb::new();
    let later = later(&db.hub(), "/api/inbox/b?wait=1");
    let (outcome, body, _) = run_with_failing_looks(&later, &|| db.hub(), u32::MAX, 0);
    assert!(
        matches!(
            outcome,
            Err(dochub_hub::wait::WaitError::Hub(
                dochub_hub::HubError::Unavailable(_)
            ))
        ),
        "{outcome:?}"
    );
    assert!(body.iter().all(|&b| b == b' '), "{body:?}");
}

/// An event stream goes on past looks that get no connection, and delivers what came.
#[test]
fn an_event_stream_survives_looks_that_get_no_connection() {
    let db = TestDb::new();
    let limits = Limits {
        max_wait: std::time::Duration::from_secs(1),
        ..Limits::default()
    };
    let open = || Hub::with_clock(SqliteDb::open(&db.path()), dochub_hub::SystemClock, limits);
    let later = later(&open(), "/api/inbox/b/events");
    let (outcome, body, _) = run_with_failing_looks(&later, &open, 2, 1);
    outcome.unwrap();
    let text = String::from_utf8(body).unwrap();
    assert_eq!(text.matches("\ndata: ").count(), 1, "{text}");
    assert!(text.contains(r#""body":"hi""#), "{text}");
    assert!(text.ends_with("retry: 1000\n\n"), "{text}");
}

#[test]
fn an_event_stream_sends_each_message_once_and_ends_with_a_retry_hint() {
    let db = TestDb::new();
    let limits = Limits {
        max_wait: std::time::Duration::from_secs(1),
        ..Limits::default()
    };
    let hub = Hub::with_clock(SqliteDb::open(&db.path()), dochub_hub::SystemClock, limits);
    for body in ["one", "two", "three"] {
        let json = json!({"from": "a", "to": "b", "body": body}).to_string();
        let send = dochub_hub::SendRequest::from_json(json.as_bytes()).unwrap();
        hub.send(&send, None).unwrap();
    }
    let res = get(&hub, "/api/inbox/b/events", &[("last-event-id", "1")]);
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    let text = String::from_utf8(res.body).unwrap();
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(ids, ["2", "3"]);
    assert!(text.starts_with("retry: 1000\n\n"), "{text:?}");
    assert!(
        text.ends_with("reconnect with Last-Event-ID: 3\nretry: 1000\n\n"),
        "{text:?}"
    );
    let refused = get(&hub, "/api/inbox/b/events", &[("accept", "text/html")]);
    assert_eq!(refused.status, 406);
}

#[test]
fn a_read_only_store_serves_reads_and_answers_writes_503_naming_it() {
    let db = TestDb::new();
    let hub = db.hub();
    let c = open(&hub);
    c.send(&json!({"from": "a", "to": "b", "body": "kept"}), None);
    c.get("/api/inbox/b", None);
    let read_only = Hub::new(SqliteDb::open_read_only(&db.path()));
    let c = open(&read_only);
    // A read registers its machine as seen; on a store that takes no writes it still answers.
    let (status, inbox) = c.get("/api/inbox/b?limit=5", None);
    assert_eq!(status, StatusCode::OK, "{inbox}");
    assert_eq!(inbox["messages"][0]["body"], "kept");
    let (status, machines) = c.get("/machines", None);
    assert_eq!(status, StatusCode::OK, "{machines}");
    // What must write answers 503, saying why, and the message is still there.
    let (status, headers, body) = c.req(
        Method::GET,
        "/api/inbox/b?ack=true",
        &[],
        Body::Bytes(Vec::new()),
    );
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(headers["retry-after"], "1");
    assert!(
        error_of(&body).starts_with("the hub's store is unwritable: "),
        "{body}"
    );
    let (status, body) = c.send(&json!({"from": "a", "to": "b", "body": "new"}), None);
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(error_of(&body).contains("unwritable"), "{body}");
    let (_, inbox) = c.get("/api/inbox/b", None);
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 1);
}

#[test]
fn a_store_that_is_not_a_database_answers_503_naming_it() {
    let db = TestDb::new();
    std::fs::write(db.path(), vec![b'x'; 8192]).unwrap();
    let hub = db.hub();
    let c = open(&hub);
    for (status, body) in [
        c.send(&json!({"from": "a", "to": "b", "body": "m"}), None),
        c.get("/api/inbox/b", None),
        c.get("/machines", None),
    ] {
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(
            error_of(&body).starts_with("the hub's store is unreadable: "),
            "{body}"
        );
        assert!(error_of(&body).contains("file is not a database"), "{body}");
    }
}
