//! MCP round-trip benchmark (not a test): `send_message` then `read_inbox` through `dochub mcp`,
//! driven by the official Python MCP SDK over stdio, against the real components under the host;
//! once directly and once through `--ssh` to a throwaway `sshd` on loopback.
//!
//! Prints, for each transport, the first pair (which includes opening the SSH connection and the
//! hub's acknowledgement probe) and the median and p90 of the following pairs.
//!
//! Run it with `cargo run -p dochub-tests --example mcp_bench` (set `MCP_BENCH_PAIRS`, default 30;
//! the Python SDK comes from `DOCHUB_MCP_PYTHON` or `.ci/run`'s virtual environment).

use anyhow::Context;
use dochub_tests::clients::{Sshd, dochub_bin, mcp_python, run_mcp_client};
use dochub_tests::{TestApp, fixture};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let pairs: usize = std::env::var("MCP_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let python = mcp_python().context("the Python MCP SDK is needed")?;
    let app = TestApp::builder().content(fixture("basic")).start().await?;
    let direct = vec![
        "mcp".to_owned(),
        "--machine".into(),
        "bench".into(),
        "--hub".into(),
        app.base_url().to_owned(),
    ];
    report("direct", &python, direct.clone(), pairs)?;
    match Sshd::start_or_skip()? {
        Some(sshd) => {
            let mut args = direct;
            args.extend(["--ssh".to_owned(), "127.0.0.1".to_owned()]);
            for o in sshd.client_options() {
                args.extend(["--ssh-option".to_owned(), o]);
            }
            report("ssh to loopback", &python, args, pairs)?;
        }
        None => println!("ssh to loopback: skipped (no sshd)"),
    }
    app.stop().await;
    Ok(())
}

fn report(
    label: &str,
    python: &std::path::Path,
    args: Vec<String>,
    pairs: usize,
) -> anyhow::Result<()> {
    let mut steps = Vec::new();
    for i in 0..pairs {
        steps.push(json!({"op": "call", "tool": "send_message",
            "arguments": {"to": "bench", "body": format!("message {i}")}}));
        steps.push(json!({"op": "call", "tool": "read_inbox", "arguments": {"limit": 1}}));
    }
    let script = json!({"command": dochub_bin()?, "args": args, "steps": steps});
    let out = run_mcp_client(python, &script)?;
    let results = out["steps"].as_array().context("steps")?;
    let mut times = Vec::new();
    for (i, pair) in results.chunks(2).enumerate() {
        for s in pair {
            anyhow::ensure!(
                s["ok"]["isError"] == Value::Bool(false),
                "call failed in pair {i}: {s}"
            );
        }
        times.push(pair.iter().filter_map(|s| s["ms"].as_f64()).sum::<f64>());
    }
    let first = times.first().copied().unwrap_or(0.0);
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        rest.get(((rest.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{label}: send_message + read_inbox, first pair {first:.1} ms, then p50 {:.1} ms, p90 {:.1} ms ({} pairs)",
        pct(0.5),
        pct(0.9),
        rest.len()
    );
    Ok(())
}
