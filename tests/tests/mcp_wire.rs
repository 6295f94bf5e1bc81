//! `dochub mcp` over a raw pipe, as JSON-RPC 2.0 and the MCP stdio transport read it: every
//! request answered (errors with JSON-RPC's codes), memory bounded under pipelined requests, and
//! the SSH tunnel's `ssh` gone with the server however the server ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use dochub_tests::browser::in_ci;
use dochub_tests::clients::{Sshd, dochub_bin};
use dochub_tests::{TestApp, fixture, repo_root};
use serde_json::{Value, json};

/// A `dochub mcp` process driven line by line.
struct Pipe {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
}

impl Pipe {
    fn start(args: &[String]) -> Pipe {
        let mut child = Command::new(dochub_bin().unwrap())
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dochub mcp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::sync_channel(0);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Pipe {
            child,
            stdin,
            lines,
        }
    }

    /// Starts a server for `machine` against a hub that is not there (for what needs no hub).
    fn offline() -> Pipe {
        Pipe::start(&args("laptop", "http://127.0.0.1:9"))
    }

    fn write(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, message: Value) {
        self.write(message.to_string().as_bytes());
    }

    /// The next line the server writes, as JSON; panics after `within`.
    fn read(&self, within: Duration) -> Value {
        let line = self
            .lines
            .recv_timeout(within)
            .expect("the server answered in time");
        serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&line)))
    }

    fn answer(&self) -> Value {
        self.read(Duration::from_secs(30))
    }

    fn initialize(&mut self) -> Value {
        self.request(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"}}}),
        );
        let answer = self.answer();
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        self.request(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}));
    }

    /// Waits up to `within` for the process to end.
    fn exited(&mut self, within: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < within {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn args(machine: &str, hub: &str) -> Vec<String> {
    ["--machine", machine, "--hub", hub]
        .map(str::to_owned)
        .to_vec()
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

#[test]
fn every_bad_line_gets_its_json_rpc_error_and_the_server_goes_on() {
    let mut pipe = Pipe::offline();
    pipe.initialize();
    let deep = "[".repeat(100_000);
    let not_requests: [&[u8]; 5] = [
        b"this is not json",
        b"",
        b"\xff\xfe\xfd",
        deep.as_bytes(),
        b"{",
    ];
    for line in not_requests {
        pipe.write(line);
        let answer = pipe.answer();
        assert_eq!(error_code(&answer), -32700, "{answer}");
        assert_eq!(answer["id"], Value::Null, "{answer}");
        assert!(answer.as_object().unwrap().contains_key("id"));
    }
    for (id, method, params) in [
        (2, "tools/call", json!({"name": 5})),
        (3, "resources/read", json!({"uri": 123})),
        (4, "tools/list", json!([1, 2])),
    ] {
        pipe.request(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = pipe.answer();
        assert_eq!(error_code(&answer), -32602, "{method}: {answer}");
        assert_eq!(answer["id"], id);
    }
    pipe.request(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}));
    assert_eq!(error_code(&pipe.answer()), -32601);
    pipe.request(
        json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "again", "version": "1"}}}),
    );
    let again = pipe.answer();
    assert_eq!(error_code(&again), -32600, "a second initialize: {again}");
    assert_eq!(again["id"], 6);
    // Over the documented limit: skipped unread and answered, not dropped without a word.
    let mut long =
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"".to_vec();
    long.resize(long.len() + 2 * 1024 * 1024, b'a');
    long.extend_from_slice(b"\"}}");
    pipe.write(&long);
    let answer = pipe.answer();
    assert_eq!(error_code(&answer), -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 MiB"),
        "{answer}"
    );
    pipe.request(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    assert_eq!(
        pipe.answer(),
        json!({"jsonrpc": "2.0", "id": 8, "result": {}})
    );
}

/// Peak resident memory of a process, from `/proc`, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/<pid>/status");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// 300,000 pings written before a single answer is read, then read: the server stops reading
/// while too many are unanswered, so its memory stays small.
#[test]
fn pipelined_requests_keep_the_server_small() {
    const REQUESTS: u64 = 300_000;
    let mut pipe = Pipe::offline();
    pipe.initialize();
    let mut stdin = pipe.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut batch = Vec::new();
        for id in 1..=REQUESTS {
            batch.extend_from_slice(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes(),
            );
            if batch.len() > 64 * 1024 {
                stdin.write_all(&batch).unwrap();
                batch.clear();
            }
        }
        stdin.write_all(&batch).unwrap();
        stdin
    });
    // Nobody reads for a while: the pipes fill and the writer blocks.
    std::thread::sleep(Duration::from_secs(3));
    assert!(!writer.is_finished(), "the server read everything at once");
    let pid = pipe.child.id();
    let unread_peak = peak_rss(pid);
    let mut seen = 0;
    let mut last_id = 0;
    while seen < REQUESTS {
        let answer = pipe.read(Duration::from_secs(60));
        assert_eq!(answer["result"], json!({}), "{answer}");
        last_id = last_id.max(answer["id"].as_u64().unwrap());
        seen += 1;
    }
    assert_eq!(last_id, REQUESTS);
    let _stdin = writer.join().unwrap();
    let peak = peak_rss(pid);
    eprintln!(
        "peak resident memory: {:.1} MB while unread, {:.1} MB after {REQUESTS} pings",
        unread_peak as f64 / 1e6,
        peak as f64 / 1e6
    );
    assert!(peak < 200_000_000, "peak {peak} bytes");
}

/// The `ssh` processes whose parent is `pid`.
fn ssh_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after its closing paren.
        let Some((head, tail)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid = tail.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        if head.ends_with("(ssh") && ppid == Some(pid) {
            found.push(child);
        }
    }
    found
}

/// Whether `pid` still runs (a zombie waiting for its new parent to reap it does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// Ends a server three ways (SIGTERM, SIGKILL, and stdin closed with a call in flight, as the
/// MCP TypeScript SDK's `close()` does) and checks its `ssh` goes each time.
#[tokio::test(flavor = "multi_thread")]
async fn the_ssh_tunnel_dies_with_its_server() {
    let Some(sshd) = Sshd::start_or_skip().unwrap() else {
        return;
    };
    let app = TestApp::builder()
        .content(fixture("basic"))
        .start()
        .await
        .expect("app starts");
    for ending in ["TERM", "KILL", "stdin closed"] {
        let mut server_args = args("tunnelled", app.base_url());
        server_args.extend(["--ssh".to_owned(), "127.0.0.1".to_owned()]);
        for option in sshd.client_options() {
            server_args.extend(["--ssh-option".to_owned(), option]);
        }
        let mut pipe = Pipe::start(&server_args);
        pipe.initialize();
        pipe.call(1, "list_docs", json!({}));
        let listed = pipe.answer();
        assert_eq!(listed["result"]["isError"], false, "{listed}");
        let tunnels = ssh_children(pipe.child.id());
        assert_eq!(tunnels.len(), 1, "one ssh child before: {ending}");
        let ssh = tunnels[0];
        match ending {
            "stdin closed" => {
                pipe.call(2, "wait_for_messages", json!({"timeout_seconds": 25}));
                std::thread::sleep(Duration::from_millis(300));
                drop(pipe.stdin.take());
                assert!(
                    pipe.exited(Duration::from_secs(10)),
                    "the server ends when stdin closes, a call in flight or not"
                );
            }
            signal => {
                pipe.signal(signal);
                assert!(pipe.exited(Duration::from_secs(10)));
            }
        }
        let start = Instant::now();
        while running(ssh) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!running(ssh), "ssh {ssh} outlived its server ({ending})");
    }
    app.stop().await;
}

/// A hub that answers the acknowledgement probe, then dies in the middle of every inbox answer,
/// as a host killed during a long-poll does.
fn hub_that_dies_mid_answer() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut head = Vec::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line);
            }
            let request_line = head.first().cloned().unwrap_or_default();
            let answer = if request_line.starts_with("POST") {
                // The probe's body is small: read past it so the close is clean.
                let length = head
                    .iter()
                    .find_map(|h| {
                        h.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut body);
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 18\r\n\r\n{\"acknowledged\":0}".to_owned()
            } else {
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n6\r\n{\"mach".to_owned()
            };
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    url
}

#[test]
fn a_hub_lost_mid_answer_is_reported_as_a_lost_connection_to_retry() {
    let mut pipe = Pipe::start(&args("laptop", &hub_that_dies_mid_answer()));
    pipe.initialize();
    pipe.call(1, "read_inbox", json!({}));
    let answer = pipe.answer();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("connection to dochub was lost") && text.contains("retry"),
        "{text}"
    );
}

/// The MCP Inspector CLI (pinned with the Node 22 it needs in `tests/mcp-inspector`, installed
/// by `.ci/run`) lists the tools with `--strict` and finds neither an error nor a warning.
#[test]
fn the_inspector_finds_nothing_to_warn_about_in_the_tool_schemas() {
    let dir = repo_root().join("tests/mcp-inspector/node_modules/.bin");
    if !dir.join("mcp-inspector").is_file() || !dir.join("node").is_file() {
        assert!(
            !in_ci(),
            "the MCP Inspector is required under CI (npm ci in tests/mcp-inspector)"
        );
        eprintln!(
            "skipping: the MCP Inspector is not installed: run `npm ci` in tests/mcp-inspector"
        );
        return;
    }
    let path = std::env::join_paths(std::iter::once(dir.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let out = Command::new(dir.join("mcp-inspector"))
        .env("PATH", path)
        .args(["--cli", "--method", "tools/list", "--strict"])
        .arg(dochub_bin().unwrap())
        .args(["mcp", "--machine", "laptop", "--hub", "http://127.0.0.1:9"])
        .stdin(Stdio::null())
        .output()
        .expect("the inspector runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {stderr}", out.status);
    assert!(
        !stderr.contains("Warning") && !stderr.contains("Error"),
        "{stderr}"
    );
    let listed: Value = serde_json::from_slice(&out.stdout).expect("the tools as JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(names.contains(&"wait_for_messages"));
}
