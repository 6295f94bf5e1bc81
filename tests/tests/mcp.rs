//! `dochub mcp` driven by a third-party client, the official Python MCP SDK, over stdio: against
//! the real components under the host, directly and through a real `sshd` on loopback.

use std::collections::BTreeSet;

use dochub_tests::clients::{Sshd, dochub_bin, mcp_python, run_mcp_client};
use dochub_tests::{TestApp, fixture};
use serde_json::{Value, json};

async fn basic_app() -> TestApp {
    TestApp::builder()
        .content(fixture("basic"))
        .start()
        .await
        .expect("app starts")
}

async fn send(app: &TestApp, from: &str, to: &str, body: &str) {
    let res = reqwest::Client::new()
        .post(app.url("/api/send"))
        .json(&json!({"from": from, "to": to, "body": body}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        201,
        "{}",
        res.text().await.unwrap_or_default()
    );
}

/// Whether the hub has the two-step acknowledgement (`POST /api/inbox/<m>/ack`).
async fn hub_acks_in_two_steps(app: &TestApp) -> bool {
    let res = reqwest::Client::new()
        .post(app.url("/api/inbox/probe-machine/ack"))
        .json(&json!({"through": 0}))
        .send()
        .await
        .unwrap();
    !matches!(res.status().as_u16(), 404 | 405)
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"op": "call", "tool": tool, "arguments": arguments})
}

/// The steps' results, each `{"ok": ...}` or `{"error": ...}`.
fn steps(report: &Value) -> &Vec<Value> {
    report["steps"].as_array().expect("steps")
}

/// The text of a successful tool call (panics, with the result, on anything else).
fn tool_text(step: &Value) -> String {
    let result = &step["ok"];
    assert_eq!(result["isError"], json!(false), "{step}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("text content in {step}"))
        .to_owned()
}

fn tool_json(step: &Value) -> Value {
    serde_json::from_str(&tool_text(step)).unwrap_or_else(|e| panic!("{e}: {step}"))
}

/// The error text of a failed tool call: a result with `isError`, not a protocol error.
fn tool_error(step: &Value) -> String {
    let result = &step["ok"];
    assert_eq!(result["isError"], json!(true), "{step}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn bodies(inbox: &Value) -> Vec<String> {
    inbox["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["body"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Bodies of the unread messages in an inbox read straight from the hub.
fn unread(inbox: &Value) -> Vec<String> {
    inbox["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["read"] == json!(false))
        .map(|m| m["body"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn page(path: &str) -> String {
    String::from_utf8(std::fs::read(fixture("basic").join(format!("{path}.md"))).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_and_resource_through_the_python_sdk() {
    let Some(python) = mcp_python() else { return };
    let app = basic_app().await;
    for body in ["m1", "m2", "m3"] {
        send(&app, "ci-runner", "laptop", body).await;
    }
    let two_step = hub_acks_in_two_steps(&app).await;
    let inbox_url = app.url("/api/inbox/laptop?limit=500");
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "laptop", "--hub", app.base_url()],
        "steps": [
            {"op": "list_tools"},
            call("list_machines", json!({})),
            call("read_inbox", json!({"limit": 2})),
            {"op": "http", "url": inbox_url},
            call("read_inbox", json!({"limit": 2})),
            {"op": "http", "url": inbox_url},
            call("read_inbox", json!({})),
            call("send_message", json!({"to": "ci-runner", "body": "hello from mcp"})),
            call("send_message", json!({"to": "not a name!", "body": "x"})),
            call("list_docs", json!({})),
            call("list_docs", json!({"path": "alpha"})),
            call("list_docs", json!({"path": "alpha/guide"})),
            call("read_doc", json!({"path": "alpha/guide/install"})),
            call("read_doc", json!({"path": "alpha/guide/nope"})),
            call("search_docs", json!({"query": "install"})),
            call("search_docs", json!({"query": "x"})),
            {"op": "list_resources"},
            {"op": "read_resource", "uri": "dochub://docs/alpha/guide/install"},
            {"op": "read_resource", "uri": "dochub://docs/alpha/guide/nope"},
            call("read_doc", json!({})),
            call("read_inbox", json!({"limit": 501})),
            call("list_machines", json!({})),
            call("query_docs", json!({"query": "how do I check the installed version?", "max_tokens": 300})),
            call("read_doc", json!({"path": "alpha/guide/install", "anchor": "installation", "max_tokens": 100})),
            call("read_doc", json!({"path": "alpha/guide/install", "anchor": "nope"})),
            call("search_docs", json!({"query": "command line", "project": "beta", "limit": 1})),
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);

    let init = &report["initialize"];
    assert_eq!(init["serverInfo"]["name"], "dochub", "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    assert!(init["instructions"].as_str().unwrap().contains("`laptop`"));

    let tools = s[0]["ok"]["tools"].as_array().unwrap();
    let names: BTreeSet<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "list_docs",
            "list_machines",
            "query_docs",
            "read_doc",
            "read_inbox",
            "read_thread",
            "reply_message",
            "search_docs",
            "search_messages",
            "send_message",
            "wait_for_messages"
        ])
    );
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(t["description"].as_str().unwrap().len() > 40, "{t}");
    }
    let required = |name: &str| -> Vec<Value> {
        tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(required("send_message"), [json!("to"), json!("body")]);
    assert_eq!(required("read_doc"), [json!("path")]);
    assert_eq!(required("read_inbox"), Vec::<Value>::new());
    assert!(tool_text(&s[1]).contains("\"ci-runner\""), "{}", s[1]);

    // Every message once, in order, over three calls; what the hub still holds says which
    // acknowledgement the hub offers: two-step marks a batch read only on the next call.
    let read: Vec<String> = [2, 4, 6]
        .iter()
        .flat_map(|&i| bodies(&tool_json(&s[i])))
        .collect();
    assert_eq!(read, ["m1", "m2", "m3"]);
    let after_first = unread(&s[3]["ok"]);
    let after_second = unread(&s[5]["ok"]);
    if two_step {
        assert_eq!(
            after_first,
            ["m1", "m2", "m3"],
            "nothing acknowledged before it was handed over"
        );
        assert_eq!(
            after_second,
            ["m3"],
            "the first batch acknowledged on the next call"
        );
    } else {
        assert_eq!(
            after_first,
            ["m3"],
            "ack=true on a hub without the ack route"
        );
        assert!(after_second.is_empty());
    }

    let sent = tool_json(&s[7]);
    assert_eq!(sent["from"], "laptop", "the machine is fixed by --machine");
    assert_eq!(sent["to"], "ci-runner");
    assert!(sent["id"].as_u64().unwrap() > 0);
    let ci: Value = reqwest::get(app.url("/api/inbox/ci-runner"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(bodies(&ci), ["hello from mcp"]);
    assert!(
        tool_error(&s[8]).contains("/api/send: 400 Bad Request"),
        "{}",
        s[8]
    );

    assert_eq!(tool_json(&s[9])["projects"][0]["id"], "alpha");
    assert_eq!(tool_json(&s[10])["project"]["id"], "alpha");
    assert_eq!(tool_json(&s[11])["documents"].as_array().unwrap().len(), 7);
    assert_eq!(tool_text(&s[12]), page("alpha/guide/install"));
    assert!(
        tool_error(&s[13]).contains("/api/raw/alpha/guide/nope: 404 Not Found"),
        "{}",
        s[13]
    );
    assert_eq!(tool_json(&s[14])["query"], "install");
    // Each hit names the section its match lies under, with the heading's anchor.
    let install = tool_json(&s[14])["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "alpha/guide/install")
        .cloned()
        .unwrap_or_else(|| panic!("{}", s[14]));
    assert_eq!(install["section"], "Installation", "{install}");
    assert_eq!(install["anchor"], "installation", "{install}");
    assert!(tool_error(&s[15]).contains("400 Bad Request"), "{}", s[15]);

    let resources = s[16]["ok"]["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 10, "the inbox, then one per page");
    assert_eq!(resources[0]["uri"], "dochub://inbox/laptop");
    assert_eq!(resources[0]["mimeType"], "application/json");
    let install = resources
        .iter()
        .find(|r| r["uri"] == "dochub://docs/alpha/guide/install")
        .unwrap_or_else(|| panic!("{resources:?}"));
    assert_eq!(install["mimeType"], "text/markdown");
    assert_eq!(install["name"], "alpha/guide/install");
    let contents = &s[17]["ok"]["contents"][0];
    assert_eq!(contents["text"], page("alpha/guide/install"));
    assert_eq!(contents["mimeType"], "text/markdown");
    assert!(
        s[18]["error"].as_str().unwrap_or("").contains("404"),
        "{}",
        s[18]
    );

    // Bad arguments are answered, and the server is still there afterwards.
    assert!(
        s[19].get("error").is_some() || s[19]["ok"]["isError"] == json!(true),
        "{}",
        s[19]
    );
    assert!(
        tool_error(&s[20]).contains("`limit` must be from 1 to 500"),
        "{}",
        s[20]
    );
    assert!(tool_text(&s[21]).contains("\"laptop\""), "{}", s[21]);

    // The docs tools by section and budget, through the API's routes.
    let answer = tool_text(&s[22]);
    assert!(
        answer.starts_with(
            "--- alpha/guide/install#installation (Installation › Installation) ---\n# Installation"
        ),
        "{answer}"
    );
    assert!(dochub_content::count_tokens(&answer) <= 300, "{answer}");
    let part = tool_text(&s[23]);
    assert!(part.starts_with("# Installation\n"), "{part}");
    assert!(
        part.contains("Read on with path `alpha/guide/install`, anchor `installation`, offset "),
        "{part}"
    );
    assert!(dochub_content::count_tokens(&part) <= 100, "{part}");
    assert!(
        tool_error(&s[24])
            .contains("no section `nope` on this page; its sections are: installation"),
        "{}",
        s[24]
    );
    let hits = tool_json(&s[25]);
    assert_eq!(hits["results"].as_array().unwrap().len(), 1, "{hits}");
    assert!(
        hits["results"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("beta/"),
        "{hits}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hub_down_is_a_tool_error_not_a_crash() {
    let Some(python) = mcp_python() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "laptop", "--hub", format!("http://127.0.0.1:{port}")],
        "steps": [
            call("read_inbox", json!({})),
            call("send_message", json!({"to": "x", "body": "y"})),
            {"op": "list_tools"},
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert!(tool_error(&s[0]).contains("cannot connect to"), "{}", s[0]);
    assert!(tool_error(&s[1]).contains("cannot connect to"), "{}", s[1]);
    assert_eq!(s[2]["ok"]["tools"].as_array().unwrap().len(), 11);
}

#[tokio::test(flavor = "multi_thread")]
async fn over_ssh_bodies_arrive_intact_and_a_dropped_link_reconnects() {
    let Some(python) = mcp_python() else { return };
    let Some(sshd) = Sshd::start_or_skip().unwrap() else {
        return;
    };
    let app = basic_app().await;
    // Quotes, command substitution, newlines, and exactly the hub's 64 KiB body limit (its
    // JSON, with the escapes, is larger): nothing is ever handed to a shell.
    let mut tricky =
        String::from("it's \"quoted\" $(touch /tmp/pwned) `id` ; | & \n line two\n\ttab ✓\n");
    while tricky.len() < 65_536 {
        tricky.push('x');
    }
    assert_eq!(tricky.len(), 65_536);
    let mut args = vec![
        "mcp".to_owned(),
        "--machine".into(),
        "laptop".into(),
        "--ssh".into(),
        "127.0.0.1".into(),
        "--hub".into(),
        app.base_url().to_owned(),
    ];
    for o in sshd.client_options() {
        args.push("--ssh-option".into());
        args.push(o);
    }
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": args,
        "steps": [
            call("send_message", json!({"to": "laptop", "body": tricky})),
            call("read_inbox", json!({"limit": 1})),
            {"op": "exec", "argv": sshd.drop_connections_argv()},
            call("send_message", json!({"to": "laptop", "body": "after the drop"})),
            call("read_inbox", json!({})),
            call("list_docs", json!({"path": "alpha"})),
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert_eq!(tool_json(&s[0])["body"], json!(tricky));
    assert_eq!(bodies(&tool_json(&s[1])), [tricky.clone()]);
    assert_eq!(
        s[2]["ok"]["status"], 0,
        "sshd had a connection to drop: {}",
        s[2]
    );
    assert_eq!(tool_json(&s[3])["body"], "after the drop", "{}", s[3]);
    assert_eq!(bodies(&tool_json(&s[4])), ["after the drop"]);
    assert_eq!(tool_json(&s[5])["project"]["id"], "alpha");
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    app.stop().await;
}

/// `wait_for_messages` returns as soon as a message arrives, returns an empty list when none
/// does, and acknowledges what it returned at the next call, as `read_inbox` does.
#[tokio::test(flavor = "multi_thread")]
async fn wait_for_messages_wakes_on_a_send_and_acknowledges_at_the_next_call() {
    let Some(python) = mcp_python() else { return };
    let app = basic_app().await;
    let inbox_url = app.url("/api/inbox/waiter?limit=500");
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "waiter", "--hub", app.base_url()],
        "steps": [
            {"op": "post_later", "url": app.url("/api/send"), "delay_ms": 1000,
             "json": {"from": "poster", "to": "waiter", "body": "worth the wait"}},
            call("wait_for_messages", json!({"timeout_seconds": 20})),
            {"op": "http", "url": inbox_url},
            call("wait_for_messages", json!({"timeout_seconds": 1})),
            {"op": "http", "url": inbox_url},
            call("wait_for_messages", json!({"timeout_seconds": 26})),
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert_eq!(bodies(&tool_json(&s[1])), ["worth the wait"]);
    let woke = s[1]["ms"].as_f64().unwrap();
    assert!((900.0..5000.0).contains(&woke), "{woke} ms");
    assert_eq!(
        unread(&s[2]["ok"]),
        ["worth the wait"],
        "kept until the next call"
    );
    assert!(bodies(&tool_json(&s[3])).is_empty());
    assert!(s[3]["ms"].as_f64().unwrap() >= 900.0, "{}", s[3]);
    assert!(
        unread(&s[4]["ok"]).is_empty(),
        "acknowledged by the next call"
    );
    assert!(
        tool_error(&s[5]).contains("`timeout_seconds` must be from 1 to 25"),
        "{}",
        s[5]
    );
    app.stop().await;
}

/// The inbox is a resource; a client subscribed to it hears of each message that arrives, and
/// of none after it unsubscribes. Reading it acknowledges nothing.
#[tokio::test(flavor = "multi_thread")]
async fn the_inbox_resource_notifies_its_subscriber_when_messages_arrive() {
    let Some(python) = mcp_python() else { return };
    let app = basic_app().await;
    let uri = "dochub://inbox/listener";
    let send = |body: &str, delay_ms: u64| {
        json!({"op": "post_later", "url": app.url("/api/send"), "delay_ms": delay_ms,
               "json": {"from": "poster", "to": "listener", "body": body}})
    };
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "listener", "--hub", app.base_url()],
        "steps": [
            {"op": "subscribe", "uri": uri},
            {"op": "updates", "count": 1, "wait_ms": 1500},
            send("first", 0),
            {"op": "updates", "count": 1, "wait_ms": 10000},
            send("second", 0),
            {"op": "updates", "count": 2, "wait_ms": 10000},
            {"op": "read_resource", "uri": uri},
            {"op": "subscribe", "uri": "dochub://docs/alpha/guide/install"},
            {"op": "unsubscribe", "uri": uri},
            send("third", 0),
            {"op": "updates", "count": 3, "wait_ms": 2000},
            {"op": "http", "url": app.url("/api/inbox/listener?limit=500")},
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert_eq!(
        report["initialize"]["capabilities"]["resources"]["subscribe"],
        true
    );
    assert_eq!(s[1]["ok"], json!([]), "nothing before a message arrives");
    assert_eq!(s[3]["ok"], json!([uri]), "{}", s[3]);
    assert!(s[3]["ms"].as_f64().unwrap() < 5000.0, "{}", s[3]);
    assert_eq!(s[5]["ok"], json!([uri, uri]), "{}", s[5]);
    let inbox: Value =
        serde_json::from_str(s[6]["ok"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(bodies(&inbox), ["first", "second"]);
    assert!(
        s[7]["error"]
            .as_str()
            .unwrap_or("")
            .contains("only this machine's inbox"),
        "{}",
        s[7]
    );
    assert_eq!(
        s[10]["ok"],
        json!([uri, uri]),
        "no update after unsubscribing: {}",
        s[10]
    );
    assert_eq!(
        unread(&s[11]["ok"]),
        ["first", "second", "third"],
        "nothing acknowledged"
    );
    app.stop().await;
}

/// The mail tools: a subject and importance on a send, a reply that finds its recipient and
/// thread, the thread read back, a search, and an inbox read that keeps to what is urgent.
#[tokio::test(flavor = "multi_thread")]
async fn mail_tools_reply_in_threads_and_search_the_mailbox() {
    let Some(python) = mcp_python() else { return };
    let app = basic_app().await;
    let ask = reqwest::Client::new()
        .post(app.url("/api/send"))
        .json(
            &json!({"from": "lead", "to": "agent", "body": "Can you deploy build 412?",
                      "subject": "Deploy 412", "importance": "urgent"}),
        )
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    send(&app, "lead", "agent", "lunch at noon").await;
    let id = ask["id"].as_u64().unwrap();
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "agent", "--hub", app.base_url()],
        "steps": [
            call("read_inbox", json!({"importance": "high"})),
            call("reply_message", json!({"message_id": id, "body": "deployed at 22:00"})),
            call("send_message", json!({"to": "lead", "body": "also: logs rotated",
                                        "subject": "Ops", "importance": "low", "reply_to": id})),
            call("read_thread", json!({"thread": id})),
            call("search_messages", json!({"query": "DEPLOYED 22"})),
            call("reply_message", json!({"message_id": 999_999, "body": "x"})),
            call("read_inbox", json!({"importance": "critical"})),
            call("read_inbox", json!({})),
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert_eq!(bodies(&tool_json(&s[0])), ["Can you deploy build 412?"]);
    let reply = tool_json(&s[1]);
    assert_eq!(
        (
            &reply["to"],
            &reply["reply_to"],
            &reply["thread"],
            &reply["subject"]
        ),
        (
            &json!("lead"),
            &json!(id),
            &json!(id),
            &json!("Re: Deploy 412")
        )
    );
    assert_eq!(tool_json(&s[2])["importance"], "low");
    assert_eq!(
        bodies(&tool_json(&s[3])),
        [
            "Can you deploy build 412?",
            "deployed at 22:00",
            "also: logs rotated"
        ],
        "the thread, oldest first"
    );
    assert_eq!(bodies(&tool_json(&s[4])), ["deployed at 22:00"]);
    assert!(tool_error(&s[5]).contains("not in the mailbox"), "{}", s[5]);
    assert!(
        s[6]["error"].as_str().is_some() || tool_error(&s[6]).contains("critical"),
        "{}",
        s[6]
    );
    // The urgent one was acknowledged by the calls after it; lunch waits.
    assert_eq!(bodies(&tool_json(&s[7])), ["lunch at noon"]);
    app.stop().await;
}

/// A read filtered by importance passes over older, less important messages: the next call
/// acknowledges what it returned, by id, and those stay unread.
#[tokio::test(flavor = "multi_thread")]
async fn an_importance_filtered_read_leaves_what_it_passed_over_unread() {
    let Some(python) = mcp_python() else { return };
    let app = basic_app().await;
    send(&app, "ops", "pager", "routine").await;
    let fire = reqwest::Client::new()
        .post(app.url("/api/send"))
        .json(&json!({"from": "ops", "to": "pager", "body": "fire", "importance": "urgent"}))
        .send()
        .await
        .unwrap();
    assert_eq!(fire.status(), 201);
    let script = json!({
        "command": dochub_bin().unwrap(),
        "args": ["mcp", "--machine", "pager", "--hub", app.base_url()],
        "steps": [
            call("read_inbox", json!({"importance": "urgent"})),
            call("read_inbox", json!({})),
        ],
    });
    let report = run_mcp_client(&python, &script).unwrap();
    let s = steps(&report);
    assert_eq!(bodies(&tool_json(&s[0])), ["fire"]);
    assert_eq!(
        bodies(&tool_json(&s[1])),
        ["routine"],
        "not lost to the filter"
    );
    app.stop().await;
}
