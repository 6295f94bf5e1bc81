//! `/mcp`, the MCP server over Streamable HTTP: the real `mcp` component under the host (or
//! `spin up` with `SPIN_BIN`), driven over HTTP as an agent's client drives it, and by the
//! third-party checkers pinned in `tests/mcp-inspector` (the official conformance suite and
//! the MCP Inspector CLI) and the official Python SDK's Streamable HTTP client.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use dochub_tests::browser::in_ci;
use dochub_tests::clients::{mcp_python, run_mcp_client};
use dochub_tests::{TestApp, fixture, repo_root};
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
        [
            "send_message",
            "reply_message",
            "read_thread",
            "search_messages",
            "read_inbox",
            "wait_for_messages",
            "list_machines",
            "query_docs",
            "search_docs",
            "read_doc",
            "list_docs"
        ]
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

/// The folder of the pinned MCP checkers' programs, or `None` (a skip, except under CI).
fn node_tools() -> Option<(PathBuf, std::ffi::OsString)> {
    let dir = repo_root().join("tests/mcp-inspector/node_modules/.bin");
    let needed = ["conformance", "mcp-inspector", "node"];
    if !needed.iter().all(|tool| dir.join(tool).is_file()) {
        assert!(
            !in_ci(),
            "the MCP conformance suite and Inspector are required under CI (npm ci in tests/mcp-inspector)"
        );
        eprintln!("skipping: run `npm ci` in tests/mcp-inspector for the MCP checkers");
        return None;
    }
    let path = std::env::join_paths(std::iter::once(dir.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    Some((dir, path))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_conformance_suite_passes_its_server_scenarios() {
    let Some((dir, path)) = node_tools() else {
        return;
    };
    let app = TestApp::builder().start().await.expect("app starts");
    let url = app.url("/mcp?machine=laptop");
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "dns-rebinding-protection",
    ] {
        let out = tokio::task::spawn_blocking({
            let (dir, path, url) = (dir.clone(), path.clone(), url.clone());
            move || {
                Command::new(dir.join("conformance"))
                    .env("PATH", path)
                    .args(["server", "--url", &url, "--scenario", scenario])
                    .stdin(Stdio::null())
                    .output()
                    .expect("the conformance suite runs")
            }
        })
        .await
        .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{scenario}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(" 0 failed, 0 warnings"), "{scenario}: {text}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_lists_and_calls_the_tools_over_http() {
    let Some((dir, path)) = node_tools() else {
        return;
    };
    let app = TestApp::builder().start().await.expect("app starts");
    let url = app.url("/mcp?machine=laptop");
    let inspect = |args: Vec<String>| {
        let (dir, path, url) = (dir.clone(), path.clone(), url.clone());
        tokio::task::spawn_blocking(move || {
            Command::new(dir.join("mcp-inspector"))
                .env("PATH", path)
                .args(["--cli", &url, "--transport", "http"])
                .args(args)
                .stdin(Stdio::null())
                .output()
                .expect("the inspector runs")
        })
    };
    let out = inspect(vec!["--method".into(), "tools/list".into()])
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("Warning") && !stderr.contains("Error"),
        "{stderr}"
    );
    let listed: Value = serde_json::from_slice(&out.stdout).expect("the tools as JSON");
    assert_eq!(listed["tools"].as_array().unwrap().len(), 11, "{listed}");
    let out = inspect(
        [
            "--method",
            "tools/call",
            "--tool-name",
            "query_docs",
            "--tool-arg",
            "query=how do I deploy to the edge",
            "--tool-arg",
            "max_tokens=400",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let called: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = called["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("--- dochub/"), "{text}");
    assert!(dochub_content::count_tokens(text) <= 400, "{text}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_reads_the_docs_over_http() {
    let Some(python) = mcp_python() else { return };
    let app = app("development").await;
    let script = json!({
        "url": app.url("/mcp?machine=laptop"),
        "steps": [
            {"op": "list_tools"},
            {"op": "call", "tool": "query_docs", "arguments": {"query": "check the install", "version": "v1"}},
            {"op": "call", "tool": "search_docs", "arguments": {"query": "kettle", "project": "other"}},
            {"op": "call", "tool": "read_doc", "arguments": {"path": "spin/v2/install", "anchor": "check-the-install"}},
            {"op": "list_resources"},
            {"op": "read_resource", "uri": "dochub://docs/spin/v1/install"},
            {"op": "call", "tool": "read_doc", "arguments": {"path": "spin/v9/none"}},
        ],
    });
    let report = tokio::task::spawn_blocking(move || run_mcp_client(&python, &script))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        report["initialize"]["serverInfo"]["name"], "dochub",
        "{report}"
    );
    let steps = report["steps"].as_array().unwrap();
    let text = |i: usize| {
        steps[i]["ok"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        steps[0]["ok"]["tools"].as_array().unwrap().len(),
        11,
        "{}",
        steps[0]
    );
    assert!(
        text(1).starts_with("--- spin/v1/install#check-the-install"),
        "{}",
        text(1)
    );
    assert!(!text(1).contains("spin/v2/"), "{}", text(1));
    assert!(text(2).contains("other/guide/intro"), "{}", text(2));
    assert_eq!(
        text(3),
        "## Check the install\n\nRun `spin --version`: it prints 2.0.\n"
    );
    let uris = steps[4]["ok"]["resources"].to_string();
    assert!(uris.contains("dochub://docs/spin/v1/install"), "{uris}");
    assert!(
        steps[5]["ok"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("prints 1.0")
    );
    assert_eq!(steps[6]["ok"]["isError"], true, "{}", steps[6]);
    app.stop().await;
}

/// A `tools/call` over `/mcp` as `machine`: the tool's text and whether it is an error.
async fn call_tool(
    app: &TestApp,
    machine: &str,
    headers: &[(&str, &str)],
    id: u64,
    tool: &str,
    arguments: Value,
) -> (String, bool) {
    let call = rpc(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    let (status, _, body) = post(app, &format!("/mcp?machine={machine}"), headers, &call).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let result = &answer["result"];
    assert!(result.is_object(), "{answer}");
    (
        result["content"][0]["text"].as_str().unwrap().to_owned(),
        result["isError"] == true,
    )
}

fn ids(inbox_text: &str) -> Vec<u64> {
    let inbox: Value = serde_json::from_str(inbox_text).unwrap();
    inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect()
}

async fn hub_inbox(app: &TestApp, machine: &str) -> Value {
    let res = reqwest::get(app.url(&format!("/api/inbox/{machine}")))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hubs_tools_work_on_the_hubs_own_store() {
    let app = app("development").await;
    // Sent over /mcp: the row the hub's own route reads.
    let (text, error) = call_tool(
        &app,
        "laptop",
        &[],
        1,
        "send_message",
        json!({"to": "ci", "body": "build 412?", "subject": "builds"}),
    )
    .await;
    assert!(!error, "{text}");
    let sent: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (sent["from"].as_str(), sent["to"].as_str()),
        (Some("laptop"), Some("ci"))
    );
    let inbox = hub_inbox(&app, "ci").await;
    assert_eq!(inbox["messages"][0]["body"], "build 412?", "{inbox}");

    // ci reads it; reading marks nothing, so it comes back until ci acknowledges it.
    let (text, _) = call_tool(&app, "ci", &[], 2, "read_inbox", json!({})).await;
    assert_eq!(ids(&text), [sent["id"].as_u64().unwrap()]);
    let (text, _) = call_tool(&app, "ci", &[], 3, "read_inbox", json!({})).await;
    assert_eq!(ids(&text).len(), 1, "a lost answer loses nothing: {text}");
    let (text, _) = call_tool(
        &app,
        "ci",
        &[],
        4,
        "reply_message",
        json!({"message_id": sent["id"], "body": "green"}),
    )
    .await;
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (
            reply["to"].as_str(),
            reply["subject"].as_str(),
            reply["thread"].clone()
        ),
        (Some("laptop"), Some("Re: builds"), sent["id"].clone())
    );
    let (text, _) = call_tool(
        &app,
        "ci",
        &[],
        5,
        "read_inbox",
        json!({"ack": [sent["id"]]}),
    )
    .await;
    assert_eq!(ids(&text), Vec::<u64>::new(), "{text}");
    assert_eq!(hub_inbox(&app, "ci").await["messages"], json!([]));

    let (text, _) = call_tool(
        &app,
        "laptop",
        &[],
        6,
        "read_thread",
        json!({"thread": sent["id"]}),
    )
    .await;
    let bodies: Vec<String> = serde_json::from_str::<Value>(&text).unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["body"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(bodies, ["build 412?", "green"]);
    let (text, _) = call_tool(
        &app,
        "laptop",
        &[],
        7,
        "search_messages",
        json!({"query": "GREEN"}),
    )
    .await;
    assert_eq!(ids(&text), [reply["id"].as_u64().unwrap()]);
    let (text, _) = call_tool(&app, "laptop", &[], 8, "list_machines", json!({})).await;
    assert!(
        text.contains("\"ci\"") && text.contains("\"laptop\""),
        "{text}"
    );

    // The hub's refusals reach the agent as tool errors.
    let (text, error) = call_tool(
        &app,
        "laptop",
        &[],
        9,
        "send_message",
        json!({"to": "..", "body": "x"}),
    )
    .await;
    assert!(error && text.contains("400"), "{text}");
    let (text, error) = call_tool(
        &app,
        "laptop",
        &[],
        10,
        "reply_message",
        json!({"message_id": 999_999, "body": "x"}),
    )
    .await;
    assert!(
        error && text.contains("not in the mailbox of laptop"),
        "{text}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_importance_filtered_read_never_marks_what_it_passed_over() {
    let app = app("development").await;
    for (id, body, importance) in [(1, "routine", "normal"), (2, "fire", "urgent")] {
        let (text, error) = call_tool(
            &app,
            "ops",
            &[],
            id,
            "send_message",
            json!({"to": "pager", "body": body, "importance": importance}),
        )
        .await;
        assert!(!error, "{text}");
    }
    let (urgent, _) = call_tool(
        &app,
        "pager",
        &[],
        3,
        "read_inbox",
        json!({"importance": "urgent"}),
    )
    .await;
    assert_eq!(ids(&urgent).len(), 1, "{urgent}");
    // Acknowledging the urgent one leaves the older, normal one unread.
    let (rest, _) = call_tool(
        &app,
        "pager",
        &[],
        4,
        "read_inbox",
        json!({"ack": ids(&urgent)}),
    )
    .await;
    let rest: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(rest["messages"].as_array().unwrap().len(), 1, "{rest}");
    assert_eq!(rest["messages"][0]["body"], "routine");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wait_for_messages_answers_when_a_message_arrives() {
    let app = app("development").await;
    // Registers the waiter, so the broadcast below reaches it.
    call_tool(&app, "waiter", &[], 1, "read_inbox", json!({})).await;
    let started = std::time::Instant::now();
    let (text, _) = call_tool(
        &app,
        "waiter",
        &[],
        2,
        "wait_for_messages",
        json!({"timeout_seconds": 1}),
    )
    .await;
    assert_eq!(ids(&text), Vec::<u64>::new());
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));

    let sender = {
        let url = app.url("/api/send");
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
            reqwest::Client::new()
                .post(url)
                .json(&json!({"from": "ci", "to": "all", "body": "deploy done"}))
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    let started = std::time::Instant::now();
    let (text, error) = call_tool(
        &app,
        "waiter",
        &[],
        3,
        "wait_for_messages",
        json!({"timeout_seconds": 20}),
    )
    .await;
    assert!(!error, "{text}");
    assert_eq!(sender.await.unwrap(), 201);
    assert!(text.contains("deploy done"), "{text}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let (text, error) = call_tool(
        &app,
        "waiter",
        &[],
        4,
        "wait_for_messages",
        json!({"timeout_seconds": 26}),
    )
    .await;
    assert!(error && text.contains("from 1 to 25"), "{text}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_send_is_stored_once_per_session_request() {
    let app = app("development").await;
    let init = rpc(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}}),
    );
    let (_, headers, _) = post(&app, "/mcp?machine=laptop", &[], &init).await;
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    assert!(session.len() >= 32, "{session}");
    let (_, again, _) = post(&app, "/mcp?machine=laptop", &[], &init).await;
    assert_ne!(
        again["mcp-session-id"],
        session.as_str(),
        "each session its own id"
    );

    let in_session = [("mcp-session-id", session.as_str())];
    let send = json!({"to": "ci", "body": "once"});
    let (first, _) = call_tool(&app, "laptop", &in_session, 7, "send_message", send.clone()).await;
    let (retry, _) = call_tool(&app, "laptop", &in_session, 7, "send_message", send.clone()).await;
    assert_eq!(first, retry, "the retry answers the first send");
    let (other, _) = call_tool(&app, "laptop", &in_session, 8, "send_message", send.clone()).await;
    assert_ne!(first, other, "another request is another message");
    // Without a session nothing is keyed: the same id sends again rather than losing it.
    let (bare, _) = call_tool(&app, "laptop", &[], 7, "send_message", send).await;
    assert_ne!(first, bare);
    assert_eq!(
        hub_inbox(&app, "ci").await["messages"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn in_production_the_hubs_tools_act_as_the_tokens_machine() {
    let app = app("production").await;
    let token = [("authorization", "Bearer s3cret")];
    let call = rpc(
        1,
        "tools/call",
        json!({"name": "send_message",
        "arguments": {"to": "ci", "body": "from the laptop"}}),
    );
    let (status, _, body) = post(&app, "/mcp", &token, &call).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap()["from"],
        "laptop",
        "{text}"
    );
    let call = rpc(
        2,
        "tools/call",
        json!({"name": "read_inbox", "arguments": {}}),
    );
    let (status, _, body) = post(&app, "/mcp", &token, &call).await;
    assert_eq!(status, 200);
    assert!(body.contains("\\\"machine\\\": \\\"laptop\\\""), "{body}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_sends_waits_and_acknowledges_over_http() {
    let Some(python) = mcp_python() else { return };
    let app = app("development").await;
    let call =
        |tool: &str, arguments: Value| json!({"op": "call", "tool": tool, "arguments": arguments});
    let script = json!({
        "url": app.url("/mcp?machine=agent"),
        "steps": [
            call("read_inbox", json!({})),
            {"op": "post_later", "url": app.url("/api/send"), "delay_ms": 1000,
             "json": {"from": "lead", "to": "agent", "body": "deploy 412"}},
            call("wait_for_messages", json!({"timeout_seconds": 20})),
            call("send_message", json!({"to": "lead", "body": "on it"})),
            {"op": "http", "url": app.url("/api/inbox/agent")},
        ],
    });
    let report = tokio::task::spawn_blocking(move || run_mcp_client(&python, &script))
        .await
        .unwrap()
        .unwrap();
    let steps = report["steps"].as_array().unwrap();
    let text = |i: usize| {
        steps[i]["ok"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(ids(&text(0)), Vec::<u64>::new(), "{}", steps[0]);
    let woke = ids(&text(2));
    assert_eq!(woke.len(), 1, "{}", steps[2]);
    let woke_ms = steps[2]["ms"].as_f64().unwrap();
    assert!((900.0..10_000.0).contains(&woke_ms), "{woke_ms} ms");
    assert!(text(3).contains("\"from\": \"agent\""), "{}", text(3));
    assert_eq!(
        steps[4]["ok"]["messages"].as_array().unwrap().len(),
        1,
        "unread until a call acknowledges it: {}",
        steps[4]
    );
    let ack = json!({
        "url": app.url("/mcp?machine=agent"),
        "steps": [call("read_inbox", json!({"ack": woke})), {"op": "http", "url": app.url("/api/inbox/agent")}],
    });
    let python = mcp_python().unwrap();
    let report = tokio::task::spawn_blocking(move || run_mcp_client(&python, &ack))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report["steps"][1]["ok"]["messages"], json!([]), "{report}");
    app.stop().await;
}
