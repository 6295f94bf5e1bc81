//! Hub benchmark (not a test): the real `hub.wasm` under the local host, over HTTP.
//!
//! For each store — Spin's SQLite database and PostgreSQL (127.0.0.1:5432, a fresh database,
//! dropped afterwards) — prints sends per second (8 concurrent clients) and the time each send
//! took (p50, p99, the slowest), the p50 of an inbox read (`limit=50`, without ack, so the
//! backlog stays put) with 100 and with 100,000 messages stored (spread over 20 inboxes of
//! 5,000, below the default `hub_max_unread`), the sends of a busy machine (one sender that
//! keeps the default `hub_max_read` of read messages already, so each send trims one), the
//! sends into one inbox holding 9,000 unread messages, and the size of `hub.wasm`. Sends are also given
//! as a share of the floor: the same requests answered by a component that does nothing
//! (`benches/floor`), the most any route could reach.
//!
//! Run it with `benches/hub.sh`; set `HUB_BENCH_BIG=<n>` to change the 100,000, `HUB_BENCH_PG=0`
//! to skip PostgreSQL.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dochub_tests::{AppBuilder, TestApp, repo_root};
use reqwest::Client;

/// Concurrent clients: 8, or `HUB_BENCH_CLIENTS`.
fn clients() -> usize {
    std::env::var("HUB_BENCH_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(8)
}
const READS: usize = 300;
const INBOXES: usize = 20;
/// The default `hub_max_read`: what the busy sender has sent before it is measured.
const MAX_READ: usize = 10_000;
/// Sends measured from the busy sender.
const BUSY_SENDS: usize = 3_000;
/// Unread messages in the full inbox before its sends are measured, and the sends measured:
/// together under the default `hub_max_unread` of 10,000, so every one is taken.
const FULL_UNREAD: usize = 9_000;
const FULL_SENDS: usize = 900;
const PG_ADMIN: &str = "host=127.0.0.1 port=5432 user=postgres dbname=test";

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{nanos:x}", std::process::id())
}

/// What a run of concurrent posts measured: requests per second and the time each took.
struct Posts {
    rate: f64,
    /// Sorted.
    times: Vec<Duration>,
}

impl Posts {
    fn percentile(&self, p: usize) -> Duration {
        self.times[(self.times.len() * p / 100).min(self.times.len() - 1)]
    }

    /// `p50 … p99 … max …`, in milliseconds.
    fn latencies(&self) -> String {
        let max = self.times.last().copied().unwrap_or_default();
        format!(
            "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            ms(self.percentile(50)),
            ms(self.percentile(99)),
            ms(max)
        )
    }
}

/// Sends `count` messages spread over `inboxes` from [`clients`] concurrent clients.
async fn fill(c: &Client, base: &str, inboxes: &[String], count: usize) -> anyhow::Result<Posts> {
    post_all(c, base, inboxes, count, 201, None).await
}

/// Posts `count` sends spread over `inboxes` to `base` from [`clients`] concurrent clients, each
/// answered `status`, as `from` or, without it, as one sender per client.
async fn post_all(
    c: &Client,
    base: &str,
    inboxes: &[String],
    count: usize,
    status: u16,
    from: Option<&str>,
) -> anyhow::Result<Posts> {
    let start = Instant::now();
    let clients = clients();
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let (c, base, inboxes) = (c.clone(), base.to_owned(), inboxes.to_vec());
            let n = count / clients + usize::from(i < count % clients);
            let from = from.map_or_else(|| format!("bench-sender-{i}"), str::to_owned);
            tokio::spawn(async move {
                let mut times = Vec::with_capacity(n);
                for k in 0..n {
                    let to = &inboxes[(k * clients + i) % inboxes.len()];
                    let body = serde_json::json!({"from": from, "to": to, "body": format!("message {k} of {from}")});
                    let sent = Instant::now();
                    let res = c.post(format!("{base}/api/send")).json(&body).send().await?;
                    anyhow::ensure!(res.status() == status, "send: {}", res.status());
                    // Read to the end, so that the connection is kept for the next send.
                    res.bytes().await?;
                    times.push(sent.elapsed());
                }
                anyhow::Ok(times)
            })
        })
        .collect();
    let mut times = Vec::with_capacity(count);
    for t in tasks {
        times.extend(t.await??);
    }
    times.sort();
    Ok(Posts {
        rate: count as f64 / start.elapsed().as_secs_f64(),
        times,
    })
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn figures(label: &str, builder: AppBuilder, big: usize, floor: f64) -> anyhow::Result<()> {
    let app = builder.start().await?;
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let small = vec![unique("bench-100")];
    fill(&c, &base, &small, 100).await?;
    let p_small = read_p50(&c, &base, &small[0]).await?;
    let inboxes: Vec<String> = (0..INBOXES)
        .map(|i| unique(&format!("bench-{i}")))
        .collect();
    let sends = fill(&c, &base, &inboxes, big).await?;
    println!(
        "{label:10} sends/s ({} clients, {big} sends):        {:8.0}  ({:.1} % of the floor)",
        clients(),
        sends.rate,
        sends.rate / floor * 100.0
    );
    println!("{label:10} send time: {}", sends.latencies());
    let p_large = read_p50(&c, &base, &inboxes[0]).await?;
    // Fresh inboxes, so that what is measured is the sender's trim, not a full inbox's count.
    let busy = unique("bench-busy");
    let fresh: Vec<String> = (0..50).map(|i| unique(&format!("busy-{i}"))).collect();
    post_all(&c, &base, &fresh, MAX_READ, 201, Some(&busy)).await?;
    let busy_sends = post_all(&c, &base, &fresh, BUSY_SENDS, 201, Some(&busy)).await?;
    // One inbox nearly full: each send decides whether it has room for one more.
    let full = vec![unique("bench-full")];
    fill(&c, &base, &full, FULL_UNREAD).await?;
    let full_sends = fill(&c, &base, &full, FULL_SENDS).await?;
    println!(
        "{label:10} inbox-read p50, 100 stored, limit=50:      {:8.2} ms",
        ms(p_small)
    );
    println!(
        "{label:10} inbox-read p50, {} stored, limit=50:  {:8.2} ms",
        big + 100,
        ms(p_large)
    );
    println!(
        "{label:10} sends/s of one sender keeping {MAX_READ} read:  {:8.0}  ({:.1} % of the floor)",
        busy_sends.rate,
        busy_sends.rate / floor * 100.0
    );
    println!("{label:10} its send time: {}", busy_sends.latencies());
    println!(
        "{label:10} sends/s into an inbox of {FULL_UNREAD} unread:   {:8.0}  ({:.1} % of the floor)",
        full_sends.rate,
        full_sends.rate / floor * 100.0
    );
    println!("{label:10} their send time: {}", full_sends.latencies());
    app.stop().await;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let big: usize = std::env::var("HUB_BENCH_BIG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    // The floor: the same requests to a component that answers 200 and does nothing else.
    let floor = dochub_tests::serve_floor().await?;
    let sinks: Vec<String> = (0..INBOXES).map(|i| format!("floor-{i}")).collect();
    let floor_posts = post_all(&Client::new(), &floor.base_url(), &sinks, big, 200, None).await?;
    floor.stop().await;
    let floor_rate = floor_posts.rate;
    println!(
        "floor      requests/s ({} clients, {big} sends):     {floor_rate:8.0}",
        clients()
    );
    println!("floor      request time: {}", floor_posts.latencies());
    figures("sqlite", TestApp::builder(), big, floor_rate).await?;

    if std::env::var("HUB_BENCH_PG").as_deref() != Ok("0") {
        let (admin, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        let name = unique("hub_bench");
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await?;
        let url = format!("postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable");
        let result = figures(
            "postgres",
            TestApp::builder().variable("hub_database_url", &url),
            big,
            floor_rate,
        )
        .await;
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await?;
        result?;
    }

    let wasm = repo_root().join("target/wasm32-wasip2/wasm/hub.wasm");
    println!("hub.wasm: {} bytes", std::fs::metadata(wasm)?.len());
    Ok(())
}
