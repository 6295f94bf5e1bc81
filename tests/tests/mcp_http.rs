//! `/mcp`, the MCP server over Streamable HTTP: the real `mcp` component under the host (or
//! `spin up` with `SPIN_BIN`), driven over HTTP as an agent's client drives it.

use dochub_tests::{TestApp, fixture};
use serde_json::{Value, json};

async fn app(environment: &str) -> TestApp {
    let mut builder = TestApp::builder().content(fixture("versions"));
    if environment == "production" {
        // The token `s3cret` for the machine `laptop`.
        let digest = dochub_http::auth::token_digest("s3cret");
        builder = builder
            .variable("environment", "production")
            .variable("hub_tokens", &format!("laptop={digest}"));
    }
    builder.start().await.expect("app starts")
}

async fn post(
    app: &TestApp,
    target: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = reqwest::Client::new()
        .post(app.url(target))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let res = request.send().await.expect("the request is answered");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.text().await.unwrap())
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_answers_a_question_in_one_call() {
    let app = app("development").await;
    let target = "/mcp?machine=laptop";
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "e2e", "version": "1"}}),
    );
    let (status, headers, body) = post(&app, target, &[], &init).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(headers["cache-control"], "no-store");
    let init: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");

    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, body) = post(
        &app,
        target,
        &[("mcp-protocol-version", "2025-11-25")],
        &note,
    )
    .await;
    assert_eq!((status, body.as_str()), (202, ""));

    let (_, _, body) = post(&app, target, &[], &rpc(2, "tools/list", json!({}))).await;
    let tools: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["query_docs", "search_docs", "read_doc", "list_docs"]
    );

    let call = rpc(
        3,
        "tools/call",
        json!({"name": "query_docs", "arguments": {"query": "How do I check the install?", "max_tokens": 200}}),
    );
    let (status, _, body) = post(
        &app,
        target,
        &[("mcp-protocol-version", "2025-06-18")],
        &call,
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "--- spin/v2/install#check-the-install (Install › Check the install) ---\n"
        ),
        "{text}"
    );
    assert!(text.contains("it prints 2.0"), "{text}");
    assert!(!text.contains("spin/v1/"), "{text}");
    assert!(dochub_content::count_tokens(text) <= 200);

    let call = rpc(
        4,
        "tools/call",
        json!({"name": "read_doc", "arguments": {"path": "spin/v1/install", "anchor": "check-the-install"}}),
    );
    let (_, _, body) = post(&app, target, &[], &call).await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "## Check the install\n\nRun `spin --version`: it prints 1.0.\n"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_transport_refuses_what_it_must() {
    let app = app("development").await;
    let ping = rpc(1, "ping", json!({}));
    let res = reqwest::get(app.url("/mcp?machine=laptop")).await.unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(res.headers()["allow"], "POST");
    let (status, _, body) = post(&app, "/mcp", &[], &ping).await;
    assert_eq!(status, 400);
    assert!(body.contains("machine="), "{body}");
    let (status, _, _) = post(
        &app,
        "/mcp?machine=laptop",
        &[("origin", "http://evil.example")],
        &ping,
    )
    .await;
    assert_eq!(status, 403);
    let own = format!("http://{}", app.addr());
    let (status, _, _) = post(&app, "/mcp?machine=laptop", &[("origin", &own)], &ping).await;
    assert_eq!(status, 200);
    let (status, _, body) = post(
        &app,
        "/mcp?machine=laptop",
        &[("mcp-protocol-version", "2020-01-01")],
        &ping,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32600
    );

    // Not JSON, and a body over the limit: JSON-RPC errors, never a 500.
    let res = reqwest::Client::new()
        .post(app.url("/mcp?machine=laptop"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        (body["error"]["code"].clone(), body["id"].clone()),
        (json!(-32700), Value::Null)
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":"{}"}}}}"#,
        "a".repeat(2 * 1024 * 1024)
    );
    let res = reqwest::Client::new()
        .post(app.url("/mcp?machine=laptop"))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn in_production_the_hub_token_names_the_machine() {
    let app = app("production").await;
    let ping = rpc(1, "ping", json!({}));
    let (status, headers, _) = post(&app, "/mcp", &[], &ping).await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let (status, _, _) = post(&app, "/mcp", &[("authorization", "Bearer nope")], &ping).await;
    assert_eq!(status, 401);
    let token = [("authorization", "Bearer s3cret")];
    let (status, _, _) = post(&app, "/mcp", &token, &ping).await;
    assert_eq!(status, 200);
    let (status, _, _) = post(&app, "/mcp?machine=laptop", &token, &ping).await;
    assert_eq!(status, 200);
    let (status, _, _) = post(&app, "/mcp?machine=ci-runner", &token, &ping).await;
    assert_eq!(status, 403);
    app.stop().await;
}
