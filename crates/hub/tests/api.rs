//! The hub's HTTP layer on the in-memory store: routes, status codes, headers, body shapes, auth.

use dochub_hub::api::{Body, MAX_BODY, handle};
use dochub_hub::auth::{HubAuth, token_digest};
use dochub_hub::{Hub, MemoryStore};
use http::{Method, StatusCode};
use serde_json::{Value, json};

struct Call<'a> {
    hub: &'a Hub<MemoryStore>,
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
        let mut builder = http::Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let response = handle(self.hub, &self.auth, builder.body(body).unwrap());
        assert_eq!(response.headers()["content-type"], "application/json");
        let (parts, body) = response.into_parts();
        let value = serde_json::from_slice(&body).unwrap();
        (parts.status, parts.headers, value)
    }

    fn send(&self, json: &Value, token: Option<&str>) -> (StatusCode, Value) {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a));
        }
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
}

fn open(hub: &Hub<MemoryStore>) -> Call<'_> {
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
    let hub = Hub::new(MemoryStore::new());
    let c = open(&hub);
    let (status, m) = c.send(
        &json!({"from": "laptop", "to": "ci-runner", "body": "héllo ✓"}),
        None,
    );
    assert_eq!(status, StatusCode::CREATED);
    let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["body", "from", "id", "timestamp", "to"]);
    assert_eq!(m["id"], 1);
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
    let hub = Hub::new(MemoryStore::new());
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
    let hub = Hub::new(MemoryStore::new());
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
    let hub = Hub::new(MemoryStore::new());
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

    // Exactly 64 KiB of request body is accepted, one byte more is 413.
    let frame = json!({"from": "a", "to": "b", "body": ""})
        .to_string()
        .len();
    let room = MAX_BODY - frame;
    let text = "é".repeat(room / 2) + &"x".repeat(room % 2);
    let fits = json!({"from": "a", "to": "b", "body": text})
        .to_string()
        .into_bytes();
    assert_eq!(fits.len(), MAX_BODY);
    let (status, _, m) = c.req(Method::POST, "/api/send", &headers, Body::Bytes(fits));
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(m["body"].as_str().unwrap(), text);
    let mut over = json!({"from": "a", "to": "b", "body": text})
        .to_string()
        .into_bytes();
    over.insert(1, b' ');
    let (status, _, value) = c.req(Method::POST, "/api/send", &headers, Body::Bytes(over));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(error_of(&value).contains("64 KiB"));
    let (status, _, _) = c.req(Method::POST, "/api/send", &headers, Body::TooLarge);
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[test]
fn bad_inbox_requests_are_400() {
    let hub = Hub::new(MemoryStore::new());
    let c = open(&hub);
    for (uri, reason) in [
        ("/api/inbox/all", "reserved"),
        ("/api/inbox/a%20b", "machine name"),
        (
            "/api/inbox/b?limit=0",
            "`limit` must be an integer from 1 to 500",
        ),
        ("/api/inbox/b?limit=501", "`limit`"),
        ("/api/inbox/b?limit=-1", "`limit`"),
        ("/api/inbox/b?limit=ten", "`limit`"),
        ("/api/inbox/b?limit=", "`limit`"),
        ("/api/inbox/b?ack=yes", "`ack` must be true or false"),
        ("/api/inbox/b?ack=", "`ack`"),
    ] {
        let (status, value) = c.get(uri, None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(error_of(&value).contains(reason), "{uri}: {value}");
    }
    let (status, _) = c.get("/api/inbox/b?limit=500&ack=false&other=1", None);
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn unknown_paths_are_404_and_other_methods_405() {
    let hub = Hub::new(MemoryStore::new());
    let c = open(&hub);
    for uri in ["/api/inbox/", "/api/inbox", "/api/inbox/a/b", "/nope"] {
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
    ] {
        let (status, headers, value) = c.req(method.clone(), uri, &[], Body::Bytes(Vec::new()));
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        assert_eq!(headers["allow"], allow);
        assert!(error_of(&value).contains("not allowed"));
    }
}

#[test]
fn production_binds_each_token_to_its_machine() {
    let hub = Hub::new(MemoryStore::new());
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
