//! Hub benchmark (not a test): the real `hub.wasm` under the local host, over HTTP.
//!
//! Prints sends per second (8 concurrent clients) and the p50 of an inbox read (`limit=50`,
//! without ack, so the backlog stays put) on the SQLite store and on Redis (127.0.0.1:6379), the
//! inbox-read p50 with 100 and with 100,000 messages waiting, and the size of `hub.wasm`.
//!
//! Run it with `benches/hub.sh` (or `cargo run -p dochub-tests --example hub_bench`); set
//! `HUB_BENCH_BIG=<n>` to change the 100,000, `HUB_BENCH_REDIS=0` to skip Redis.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dochub_tests::{TestApp, repo_root};
use reqwest::Client;

const CLIENTS: usize = 8;
const READS: usize = 300;

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}-{}-{nanos:x}", std::process::id())
}

/// Sends `count` messages to `to` from `CLIENTS` concurrent clients; returns sends per second.
async fn fill(c: &Client, base: &str, to: &str, count: usize) -> anyhow::Result<f64> {
    let start = Instant::now();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (c, base, to) = (c.clone(), base.to_owned(), to.to_owned());
            let n = count / CLIENTS + usize::from(i < count % CLIENTS);
            tokio::spawn(async move {
                let from = format!("bench-sender-{i}");
                for k in 0..n {
                    let body = serde_json::json!({"from": from, "to": to, "body": format!("message {k} of {from}")});
                    let res = c.post(format!("{base}/api/send")).json(&body).send().await?;
                    anyhow::ensure!(res.status() == 201, "send: {}", res.status());
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(count as f64 / start.elapsed().as_secs_f64())
}

/// p50 of `READS` sequential inbox reads of `machine` (limit 50, no ack).
async fn read_p50(c: &Client, base: &str, machine: &str) -> anyhow::Result<Duration> {
    let url = format!("{base}/api/inbox/{machine}?limit=50");
    let mut times = Vec::with_capacity(READS);
    for _ in 0..READS {
        let start = Instant::now();
        let res = c.get(&url).send().await?;
        anyhow::ensure!(res.status() == 200, "inbox: {}", res.status());
        let body: serde_json::Value = res.json().await?;
        anyhow::ensure!(
            body["messages"].as_array().is_some_and(|m| m.len() == 50),
            "short inbox"
        );
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

/// Empties `machine`'s inbox (so a shared Redis is left as found).
async fn drain(c: &Client, base: &str, machine: &str) -> anyhow::Result<()> {
    let url = format!("{base}/api/inbox/{machine}?limit=500&ack=true");
    loop {
        let body: serde_json::Value = c.get(&url).send().await?.json().await?;
        if body["messages"].as_array().is_none_or(|m| m.is_empty()) {
            return Ok(());
        }
    }
}

async fn store_figures(label: &str, app: &TestApp) -> anyhow::Result<()> {
    let c = Client::new();
    let inbox = unique("bench-inbox");
    let rate = fill(&c, app.base_url(), &inbox, 2000).await?;
    println!("{label:7} sends/s (8 clients, 2,000 sends):        {rate:8.0}");
    let few = unique("bench-few");
    fill(&c, app.base_url(), &few, 100).await?;
    let p50 = read_p50(&c, app.base_url(), &few).await?;
    println!(
        "{label:7} inbox-read p50, 100 waiting, limit=50:  {:8.2} ms",
        ms(p50)
    );
    drain(&c, app.base_url(), &inbox).await?;
    drain(&c, app.base_url(), &few).await?;
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let big: usize = std::env::var("HUB_BENCH_BIG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let app = TestApp::builder().start().await?;
    store_figures("sqlite", &app).await?;

    let c = Client::new();
    let small = unique("bench-100");
    fill(&c, app.base_url(), &small, 100).await?;
    let large = unique("bench-big");
    let start = Instant::now();
    fill(&c, app.base_url(), &large, big).await?;
    eprintln!(
        "(stored {big} messages in {:.0} s)",
        start.elapsed().as_secs_f64()
    );
    let p_small = read_p50(&c, app.base_url(), &small).await?;
    let p_large = read_p50(&c, app.base_url(), &large).await?;
    println!(
        "sqlite  inbox-read p50 with 100 stored:          {:8.2} ms",
        ms(p_small)
    );
    println!(
        "sqlite  inbox-read p50 with {big} stored:       {:8.2} ms",
        ms(p_large)
    );
    app.stop().await;

    if std::env::var("HUB_BENCH_REDIS").as_deref() != Ok("0") {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("runtime-config.toml");
        std::fs::write(
            &config,
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n",
        )?;
        let app = TestApp::builder().runtime_config(&config).start().await?;
        store_figures("redis", &app).await?;
        app.stop().await;
    }

    let wasm = repo_root().join("target/wasm32-wasip2/wasm/hub.wasm");
    println!("hub.wasm: {} bytes", std::fs::metadata(wasm)?.len());
    Ok(())
}
