//! `/mcp` natively: who may call, what the transport refuses, and the docs tools' answers.

use std::path::Path;

use dochub_app::agents::MIN_MAX_TOKENS;
use dochub_app::mcp::{Body, MAX_BODY, McpConfig, admit, respond};
use dochub_content::count_tokens;
use dochub_http::auth::token_digest;
use dochub_http::{Incoming, Response};
use dochub_hub::auth::HubAuth;
use dochub_index::Source;
use dochub_index::build::BuildMode;
use serde_json::{Value, json};

fn config(environment: &str) -> McpConfig {
    McpConfig {
        source: Source {
            content_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/versions"),
            build: BuildMode::Off,
            memo: None,
        },
        auth: HubAuth::new(environment, &format!("laptop={}", token_digest("s3cret"))),
    }
}

fn incoming(method: &str, target: &str, headers: &[(&str, &str)]) -> Incoming {
    let mut all = vec![(
        "spin-full-url".to_owned(),
        format!("http://127.0.0.1:3000{target}"),
    )];
    all.extend(
        headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned())),
    );
    Incoming::new(method, target, all)
}

fn post(config: &McpConfig, target: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    let incoming = incoming("POST", target, headers);
    match admit(config, &incoming) {
        Ok(caller) => respond(
            config,
            &caller,
            Body::Bytes(body.to_string().into_bytes()),
            None,
        ),
        Err(refusal) => refusal,
    }
}

fn call(config: &McpConfig, tool: &str, arguments: Value) -> (bool, String) {
    let res = post(
        config,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}),
    );
    assert_eq!(res.status, 200);
    let body: Value = serde_json::from_slice(&res.body).unwrap();
    let result = &body["result"];
    assert!(result.is_object(), "{body}");
    (
        result["isError"].as_bool().unwrap(),
        result["content"][0]["text"].as_str().unwrap().to_owned(),
    )
}

fn status_and_json(res: &Response) -> (u16, Value) {
    (
        res.status,
        serde_json::from_slice(&res.body).unwrap_or(Value::Null),
    )
}

#[test]
fn who_may_call() {
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let dev = config("development");
    assert_eq!(post(&dev, "/mcp?machine=laptop", &[], &ping).status, 200);
    let (status, body) = status_and_json(&post(&dev, "/mcp", &[], &ping));
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("?machine="),
        "{body}"
    );
    assert_eq!(post(&dev, "/mcp?machine=a%20b", &[], &ping).status, 400);

    let prod = config("production");
    assert_eq!(post(&prod, "/mcp", &[], &ping).status, 401);
    let res = post(&prod, "/mcp", &[("authorization", "Bearer wrong")], &ping);
    assert_eq!(res.status, 401);
    assert!(
        res.header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
    let ok = [("authorization", "Bearer s3cret")];
    assert_eq!(post(&prod, "/mcp", &ok, &ping).status, 200);
    assert_eq!(post(&prod, "/mcp?machine=laptop", &ok, &ping).status, 200);
    assert_eq!(post(&prod, "/mcp?machine=ci", &ok, &ping).status, 403);
}

#[test]
fn the_transport_refuses_what_it_does_not_serve() {
    let dev = config("development");
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let res = admit(&dev, &incoming("GET", "/mcp?machine=laptop", &[])).unwrap_err();
    assert_eq!((res.status, res.header("allow")), (405, Some("POST")));
    for origin in ["http://evil.example", "http://127.0.0.1:3001", "null"] {
        let res = post(&dev, "/mcp?machine=laptop", &[("origin", origin)], &ping);
        assert_eq!(res.status, 403, "{origin}");
    }
    let own = [("origin", "http://127.0.0.1:3000")];
    assert_eq!(post(&dev, "/mcp?machine=laptop", &own, &ping).status, 200);
    let (status, body) = status_and_json(&post(
        &dev,
        "/mcp?machine=laptop",
        &[("mcp-protocol-version", "2024-01-01")],
        &ping,
    ));
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32600))
    );
    for version in ["2025-06-18", "2025-11-25"] {
        let res = post(
            &dev,
            "/mcp?machine=laptop",
            &[("mcp-protocol-version", version)],
            &ping,
        );
        assert_eq!(res.status, 200, "{version}");
    }
    let machine = admit(&dev, &incoming("POST", "/mcp?machine=laptop", &[])).unwrap();
    let (status, body) = status_and_json(&respond(&dev, &machine, Body::TooLarge, None));
    assert_eq!(status, 413);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&MAX_BODY.to_string())
    );
    let res = respond(&dev, &machine, Body::Bytes(b"{not json".to_vec()), None);
    let (status, body) = status_and_json(&res);
    assert_eq!(
        (status, body["error"]["code"].clone(), body["id"].clone()),
        (400, json!(-32700), Value::Null)
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let res = post(&dev, "/mcp?machine=laptop", &[], &note);
    assert_eq!((res.status, res.body.len()), (202, 0));
}

#[test]
fn initialize_and_the_docs_tools() {
    let dev = config("development");
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}),
    );
    let (_, body) = status_and_json(&res);
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(body["result"]["serverInfo"]["name"], "dochub");
    assert!(
        body["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("`laptop`")
    );

    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let (_, body) = status_and_json(&res);
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["query_docs", "search_docs", "read_doc", "list_docs"]
    );
    for tool in body["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
    }

    let (error, text) = call(
        &dev,
        "query_docs",
        json!({"query": "how do I check the install?"}),
    );
    assert!(!error, "{text}");
    assert!(text.starts_with("--- spin/v2/install#check-the-install (Install › Check the install) ---\n## Check the install"), "{text}");
    assert!(!text.contains("spin/v1/"), "{text}");
    let (_, text) = call(
        &dev,
        "query_docs",
        json!({"query": "check the install", "version": "v1"}),
    );
    assert!(
        text.contains("spin/v1/install") && !text.contains("spin/v2/"),
        "{text}"
    );
    let (error, text) = call(
        &dev,
        "query_docs",
        json!({"query": "kettle", "version": "v7"}),
    );
    assert!(error && text.contains("Unknown version `v7`"), "{text}");

    let (error, text) = call(&dev, "search_docs", json!({"query": "kettle", "limit": 2}));
    assert!(!error, "{text}");
    let hits: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(hits["results"].as_array().unwrap().len(), 2);
    assert!(!text.contains("spin/v1/"), "{text}");

    let (error, text) = call(
        &dev,
        "read_doc",
        json!({"path": "spin/v1/install", "anchor": "check-the-install"}),
    );
    assert!(!error);
    assert_eq!(
        text,
        "## Check the install\n\nRun `spin --version`: it prints 1.0.\n"
    );
    let (error, text) = call(
        &dev,
        "read_doc",
        json!({"path": "spin/v1/install", "max_tokens": MIN_MAX_TOKENS}),
    );
    assert!(!error && count_tokens(&text) <= MIN_MAX_TOKENS, "{text}");
    assert!(
        text.contains("Read on with path `spin/v1/install`, offset "),
        "{text}"
    );
    let (error, text) = call(&dev, "read_doc", json!({"path": "spin/v1/nope"}));
    assert!(error && text.contains("no page"), "{text}");
    let (error, _) = call(&dev, "read_doc", json!({"path": "../../etc/passwd"}));
    assert!(error);

    let (error, text) = call(&dev, "list_docs", json!({"path": "spin"}));
    assert!(!error && text.contains("\"subprojects\""), "{text}");

    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_doc", "arguments": {}}}),
    );
    let (_, body) = status_and_json(&res);
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "send_message", "arguments": {}}}),
    );
    let (_, body) = status_and_json(&res);
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

#[test]
fn pages_are_resources() {
    let dev = config("development");
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}),
    );
    let (_, body) = status_and_json(&res);
    let uris: Vec<&str> = body["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"dochub://docs/spin/v1/install"), "{uris:?}");
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "dochub://docs/spin/v1/install"}}),
    );
    let (_, body) = status_and_json(&res);
    assert!(
        body["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("---\ntitle: Install")
    );
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "dochub://docs/spin/v1/none"}}),
    );
    let (_, body) = status_and_json(&res);
    assert_eq!(body["error"]["code"], -32002);
}

#[test]
fn without_the_hub_only_the_docs_tools_are_served() {
    let dev = config("development");
    let list = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let (_, body) = status_and_json(&list);
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["query_docs", "search_docs", "read_doc", "list_docs"]
    );
    let res = post(
        &dev,
        "/mcp?machine=laptop",
        &[],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "read_inbox", "arguments": {}}}),
    );
    let (_, body) = status_and_json(&res);
    assert_eq!(body["error"]["code"], -32602, "{body}");
}

#[test]
fn initialize_opens_a_session_and_a_session_keeps_its_id() {
    let dev = config("development");
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}});
    let first = post(&dev, "/mcp?machine=laptop", &[], &init);
    let id = first.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(id.len(), 32);
    let second = post(&dev, "/mcp?machine=laptop", &[], &init);
    assert_ne!(second.header("mcp-session-id"), Some(id.as_str()));
    let within = post(
        &dev,
        "/mcp?machine=laptop",
        &[("mcp-session-id", &id)],
        &init,
    );
    assert_eq!(within.header("mcp-session-id"), None);
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(
        post(&dev, "/mcp?machine=laptop", &[], &ping).header("mcp-session-id"),
        None
    );
}
