//! The `dochub` command against the real components under the host: every subcommand, the
//! `--json` shapes, and the error exits a user meets (connection refused, 404, 401).

use std::process::{Output, Stdio};

use dochub_http::auth::token_digest;
use dochub_tests::clients::dochub_bin;
use dochub_tests::{TestApp, fixture};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

/// Runs `dochub` with `args`, `env` and `stdin`. `RUST_BACKTRACE=1` is always set: a backtrace
/// must never reach the user anyway.
async fn dochub(args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Output {
    let mut cmd = tokio::process::Command::new(dochub_bin().expect("dochub builds"));
    cmd.args(args)
        .env_remove("DOCHUB_URL")
        .env_remove("DOCHUB_TOKEN")
        .env("RUST_BACKTRACE", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("dochub runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    if let Some(bytes) = stdin {
        input.write_all(bytes).await.expect("stdin takes the body");
    }
    drop(input);
    child.wait_with_output().await.expect("dochub finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_out(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// A failure: exit 2, exactly one line on stderr containing `needle`, no backtrace, no stdout.
fn assert_one_line_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "`{needle}` in {err}");
    assert!(
        !err.contains("backtrace") && !err.contains("panicked"),
        "{err}"
    );
    assert!(o.stdout.is_empty(), "{}", stdout(o));
}

async fn basic_app() -> TestApp {
    TestApp::builder()
        .content(fixture("basic"))
        .start()
        .await
        .expect("app starts")
}

#[tokio::test(flavor = "multi_thread")]
async fn docs_ls_cat_search_and_report() {
    let app = basic_app().await;
    let url = app.base_url().to_owned();
    let run = |args: Vec<&'static str>| {
        let url = url.clone();
        async move {
            let mut all = vec!["--url", url.as_str()];
            all.extend(args);
            dochub(&all, &[], None).await
        }
    };

    let o = run(vec!["docs", "ls"]).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("alpha  Alpha Project (2 subprojects, "),
        "{}",
        stdout(&o)
    );
    let master = json_out(&run(vec!["docs", "ls", "--json"]).await);
    let api: Value = reqwest::get(app.url("/api/manifest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(master["projects"], api["projects"]);
    assert_eq!(master["total_documents"], 9);

    let o = run(vec!["docs", "ls", "alpha"]).await;
    let text = stdout(&o);
    assert!(text.contains("alpha/guide  "), "{text}");
    assert!(text.contains("alpha/reference  "), "{text}");
    let project = json_out(&run(vec!["--json", "docs", "ls", "alpha"]).await);
    assert_eq!(project["project"]["id"], "alpha");

    let o = run(vec!["docs", "ls", "alpha/guide"]).await;
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.starts_with("alpha/guide/install  ")),
        "{text}"
    );
    let sub = json_out(&run(vec!["docs", "ls", "alpha/guide", "--json"]).await);
    assert_eq!(sub["documents"].as_array().unwrap().len(), 7);

    // cat: the file's bytes exactly, frontmatter included (and a non-UTF-8 page untouched).
    for page in ["install", "latin1"] {
        let path = format!("alpha/guide/{page}");
        let o = dochub(&["--url", &url, "docs", "cat", &path], &[], None).await;
        assert!(o.status.success(), "{}", stderr(&o));
        let disk = std::fs::read(fixture("basic").join(format!("{path}.md"))).unwrap();
        assert_eq!(o.stdout, disk, "{path}");
    }
    let page = json_out(&run(vec!["docs", "cat", "alpha/guide/install", "--json"]).await);
    assert_eq!(page["path"], "alpha/guide/install");
    assert!(page["markdown"].as_str().unwrap().starts_with("---"));

    let o = run(vec!["docs", "search", "install"]).await;
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = text.lines().next().unwrap_or("");
    assert!(first.starts_with("alpha/guide/"), "{text}");
    // Best first: the page titled "Installation", at the heading the match is in; its
    // excerpt is plain text.
    assert!(
        first.starts_with(
            "alpha/guide/install#installation  Installation › Installation  Installation Run the installer"
        ),
        "path#anchor, title › section, excerpt: {first}"
    );
    let results = json_out(&run(vec!["docs", "search", "install", "--json"]).await);
    assert_eq!(results["query"], "install");
    assert!(results["results"][0]["excerpt"].is_string());

    let o = run(vec!["report"]).await;
    let api: Value = reqwest::get(app.url("/api/report/latest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        stdout(&o),
        serde_json::to_string_pretty(&api).unwrap() + "\n"
    );
    assert_eq!(json_out(&run(vec!["report", "--json"]).await), api);
    assert_eq!(
        stdout(&run(vec!["report", "--json"]).await).lines().count(),
        1
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hub_send_inbox_machines() {
    let app = basic_app().await;
    let url = app.base_url().to_owned();
    let env = [("DOCHUB_URL", url.as_str())];

    let o = dochub(
        &[
            "hub",
            "send",
            "--from",
            "laptop",
            "--to",
            "ci-runner",
            "deploy done",
        ],
        &env,
        None,
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("sent message ") && stdout(&o).ends_with(" to ci-runner\n"),
        "{}",
        stdout(&o)
    );
    // `-`: the body from stdin, quotes, `$()` and newlines untouched.
    let body = "line one\n\"quoted\" $(rm -rf /) `x`\nline three";
    let sent = json_out(
        &dochub(
            &[
                "hub",
                "send",
                "--from",
                "laptop",
                "--to",
                "ci-runner",
                "-",
                "--json",
            ],
            &env,
            Some(body.as_bytes()),
        )
        .await,
    );
    assert_eq!(sent["from"], "laptop");
    assert_eq!(sent["to"], "ci-runner");
    assert_eq!(sent["body"], body);
    assert!(sent["id"].as_u64().unwrap() > 0);
    assert!(sent["timestamp"].is_string());

    let o = dochub(&["hub", "inbox", "ci-runner"], &env, None).await;
    let text = stdout(&o);
    assert!(
        text.contains(" laptop -> ci-runner\n  deploy done\n"),
        "{text}"
    );
    assert!(text.contains("\n  \"quoted\" $(rm -rf /) `x`\n"), "{text}");
    let inbox = json_out(
        &dochub(
            &["hub", "inbox", "ci-runner", "--limit", "1", "--json"],
            &env,
            None,
        )
        .await,
    );
    assert_eq!(inbox["machine"], "ci-runner");
    let messages = inbox["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1);
    for key in ["id", "from", "to", "body", "timestamp", "read"] {
        assert!(messages[0].get(key).is_some(), "{key} in {inbox}");
    }
    assert_eq!(messages[0]["body"], "deploy done");

    // --ack: printed, then marked read; the next read is empty.
    let acked = json_out(
        &dochub(
            &["hub", "inbox", "ci-runner", "--ack", "--json"],
            &env,
            None,
        )
        .await,
    );
    assert_eq!(acked["messages"].as_array().unwrap().len(), 2);
    let o = dochub(&["hub", "inbox", "ci-runner"], &env, None).await;
    assert_eq!(stdout(&o), "no unread messages for ci-runner\n");

    let o = dochub(&["hub", "machines"], &env, None).await;
    let text = stdout(&o);
    assert!(text.lines().any(|l| l.starts_with("laptop  20")), "{text}");
    let machines = json_out(&dochub(&["hub", "machines", "--json"], &env, None).await);
    let names: Vec<&str> = machines
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"laptop") && names.contains(&"ci-runner"),
        "{machines}"
    );
    assert!(machines[0]["last_seen"].is_string());

    let o = dochub(
        &["hub", "send", "--from", "all", "--to", "x", "hi"],
        &env,
        None,
    )
    .await;
    assert_one_line_error(&o, "/api/send: 400 Bad Request");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_one_line_with_a_nonzero_exit() {
    // Nothing listens on a port just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let o = dochub(&["--url", &closed, "docs", "ls"], &[], None).await;
    assert_one_line_error(&o, &format!("cannot connect to {closed}"));
    let o = dochub(
        &["hub", "machines"],
        &[("DOCHUB_URL", closed.as_str())],
        None,
    )
    .await;
    assert_one_line_error(&o, "set --url or DOCHUB_URL");

    let app = basic_app().await;
    let url = app.base_url().to_owned();
    let o = dochub(
        &["--url", &url, "docs", "cat", "alpha/guide/nope"],
        &[],
        None,
    )
    .await;
    assert_one_line_error(&o, "/api/raw/alpha/guide/nope: 404 Not Found");
    let o = dochub(&["--url", &url, "docs", "ls", "nope"], &[], None).await;
    assert_one_line_error(&o, "/api/manifest/nope: 404 Not Found");
    let o = dochub(&["--url", &url, "docs", "cat", "alpha"], &[], None).await;
    assert_one_line_error(&o, "expected `<project>/<subproject>/<page>`");
    let o = dochub(&["--url", &url, "docs", "search", "x"], &[], None).await;
    assert_one_line_error(&o, "400 Bad Request");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_come_from_dochub_token() {
    let app = TestApp::builder()
        .content(fixture("basic"))
        .variable("environment", "production")
        .variable("auth_tokens", &token_digest("docs-secret"))
        .variable(
            "hub_tokens",
            &format!("laptop={}", token_digest("laptop-secret")),
        )
        .start()
        .await
        .expect("app starts");
    let url = app.base_url().to_owned();
    let o = dochub(&["--url", &url, "docs", "ls"], &[], None).await;
    assert_one_line_error(&o, "/api/manifest: 401 Unauthorized");
    assert!(stderr(&o).contains("set DOCHUB_TOKEN"), "{}", stderr(&o));
    let o = dochub(
        &["--url", &url, "docs", "ls"],
        &[("DOCHUB_TOKEN", "wrong")],
        None,
    )
    .await;
    assert_one_line_error(&o, "401 Unauthorized");
    let o = dochub(
        &["--url", &url, "docs", "ls"],
        &[("DOCHUB_TOKEN", "docs-secret")],
        None,
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("alpha  "), "{}", stdout(&o));

    let token = [("DOCHUB_TOKEN", "laptop-secret")];
    let o = dochub(
        &[
            "--url", &url, "hub", "send", "--from", "laptop", "--to", "ci", "x",
        ],
        &token,
        None,
    )
    .await;
    assert!(o.status.success(), "{}", stderr(&o));
    let o = dochub(&["--url", &url, "hub", "inbox", "ci"], &token, None).await;
    assert_one_line_error(&o, "/api/inbox/ci: 403 Forbidden");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_name_the_problem() {
    let o = dochub(&["hub", "inbox", "x", "--limit", "0"], &[], None).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--limit"), "{}", stderr(&o));
    let o = dochub(&["mcp", "--machine", "all"], &[], None).await;
    assert_one_line_error(&o, "`--machine` cannot be `all`");
}

/// `hub inbox --wait` holds an empty read; `hub watch` prints messages as they arrive,
/// acknowledges only what it printed, and stops cleanly on
/// Ctrl-C (SIGINT).
#[tokio::test(flavor = "multi_thread")]
async fn hub_inbox_waits_and_watch_follows_an_inbox() {
    use tokio::io::AsyncBufReadExt;
    let app = basic_app().await;
    let url = app.base_url().to_owned();
    let env = [("DOCHUB_URL", url.as_str())];
    let started = std::time::Instant::now();
    let o = dochub(&["hub", "inbox", "watched", "--wait", "1"], &env, None).await;
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "no unread messages for watched\n");
    assert!(started.elapsed() >= std::time::Duration::from_millis(950));
    let o = dochub(&["hub", "inbox", "watched", "--wait", "soon"], &env, None).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    let mut child = tokio::process::Command::new(dochub_bin().unwrap())
        .args(["hub", "watch", "watched", "--json"])
        .env("DOCHUB_URL", &url)
        .env_remove("DOCHUB_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let send = |body: &'static str| async move {
        let o = dochub(
            &["hub", "send", "--from", "poster", "--to", "watched", body],
            &env,
            None,
        )
        .await;
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let mut seen = Vec::new();
    for body in ["first", "second", "third"] {
        send(body).await;
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("watch prints within seconds")
            .unwrap()
            .unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        seen.push(message["body"].as_str().unwrap().to_owned());
    }
    assert_eq!(seen, ["first", "second", "third"]);
    // Printed, then acknowledged: the inbox empties.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let o = dochub(&["hub", "inbox", "watched", "--json"], &env, None).await;
        if json_out(&o)["messages"].as_array().unwrap().is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never acknowledged");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // Ctrl-C in the middle of a wait: exit 0, at once.
    let pid = child.id().unwrap() as i32;
    let stopped = std::time::Instant::now();
    assert_eq!(send_sigint(pid), 0);
    let status = tokio::time::timeout(std::time::Duration::from_secs(5), child.wait())
        .await
        .expect("watch stops on Ctrl-C")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(stopped.elapsed().as_secs() < 5);
    app.stop().await;
}

/// Sends SIGINT to `pid` with the `kill` command; its exit code.
fn send_sigint(pid: i32) -> i32 {
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

/// `hub send --subject --importance --reply-to`, `hub inbox --importance`, `hub thread` and
/// `hub search`, as a shell user types them.
#[tokio::test(flavor = "multi_thread")]
async fn hub_mail_threads_and_search() {
    let app = basic_app().await;
    let url = app.base_url().to_owned();
    let env = [("DOCHUB_URL", url.as_str()), ("DOCHUB_MACHINE", "laptop")];
    let ask = json_out(
        &dochub(
            &[
                "hub",
                "send",
                "--from",
                "laptop",
                "--to",
                "ci",
                "--subject",
                "Deploy",
                "--importance",
                "urgent",
                "deploy 412?",
                "--json",
            ],
            &env,
            None,
        )
        .await,
    );
    assert_eq!(
        (&ask["subject"], &ask["importance"]),
        (&json!("Deploy"), &json!("urgent"))
    );
    let id = ask["id"].to_string();
    let reply = json_out(
        &dochub(
            &[
                "hub",
                "send",
                "--from",
                "ci",
                "--to",
                "laptop",
                "--reply-to",
                &id,
                "done",
                "--json",
            ],
            &env,
            None,
        )
        .await,
    );
    assert_eq!(reply["thread"], ask["id"]);
    let o = dochub(&["hub", "inbox", "ci", "--importance", "high"], &env, None).await;
    assert!(
        stdout(&o).contains("[urgent]") && stdout(&o).contains("Subject: Deploy"),
        "{}",
        stdout(&o)
    );
    let o = dochub(&["hub", "thread", &id], &env, None).await;
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let (first, second) = (
        text.find("deploy 412?").unwrap(),
        text.find("done").unwrap(),
    );
    assert!(first < second, "oldest first: {text}");
    assert!(
        text.contains(&format!("(reply to #{id}, thread #{id})")),
        "{text}"
    );
    let found = json_out(&dochub(&["hub", "search", "DONE", "--json"], &env, None).await);
    assert_eq!(found["messages"].as_array().unwrap().len(), 1);
    assert_eq!(found["messages"][0]["body"], "done");
    let o = dochub(
        &[
            "hub",
            "send",
            "--from",
            "a",
            "--to",
            "b",
            "--importance",
            "meh",
            "x",
        ],
        &env,
        None,
    )
    .await;
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("low, normal, high, urgent"),
        "{}",
        stderr(&o)
    );
    let o = dochub(&["hub", "search", "*", "--machine", "laptop"], &env, None).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no word"), "{}", stderr(&o));
    app.stop().await;
}
