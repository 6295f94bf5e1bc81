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
//! (`benches/floor`), the most any route could reach; and as a share of the store's own
//! ceiling: the commits per second the same database takes from as many writers, each
//! committing one small row at a time, as durably as a send commits (SQLite with write-ahead
//! logging and its default `synchronous = FULL`, in the same folder as the app's state;
//! PostgreSQL with the server's own settings). A send is one such commit and more, so it can
//! come near that ceiling but not pass it.
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

/// How long each ceiling is measured.
const CEILING_TIME: Duration = Duration::from_secs(3);

/// Commits per second into SQLite from [`clients`] writers, each on its own connection,
/// committing one row per `BEGIN IMMEDIATE … COMMIT`, as a send does, in a database in `dir`.
fn sqlite_ceiling(dir: &std::path::Path) -> anyhow::Result<f64> {
    let path = dir.join("ceiling.db");
    let setup = rusqlite::Connection::open(&path)?;
    let mode: String = setup.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
    anyhow::ensure!(mode == "wal", "SQLite kept journal mode {mode}");
    setup.execute_batch("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)")?;
    let start = Instant::now();
    let writers: Vec<_> = (0..clients())
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || -> anyhow::Result<u64> {
                let conn = rusqlite::Connection::open(path)?;
                conn.busy_timeout(Duration::from_secs(5))?;
                let mut commits = 0;
                while start.elapsed() < CEILING_TIME {
                    conn.execute_batch(
                        "BEGIN IMMEDIATE; INSERT INTO rows (body) VALUES ('message'); COMMIT",
                    )?;
                    commits += 1;
                }
                Ok(commits)
            })
        })
        .collect();
    let mut commits = 0;
    for writer in writers {
        commits += writer
            .join()
            .map_err(|_| anyhow::anyhow!("a writer panicked"))??;
    }
    Ok(commits as f64 / start.elapsed().as_secs_f64())
}

/// Commits per second into the PostgreSQL database at `url` from [`clients`] connections,
/// each inserting one row per statement (one commit each, as a send's one statement).
async fn postgres_ceiling(url: &str) -> anyhow::Result<f64> {
    let connect = || async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        anyhow::Ok(client)
    };
    connect()
        .await?
        .batch_execute("CREATE TABLE ceiling_rows (id BIGSERIAL PRIMARY KEY, body TEXT)")
        .await?;
    let start = Instant::now();
    let mut writers = Vec::new();
    for _ in 0..clients() {
        let client = connect().await?;
        writers.push(tokio::spawn(async move {
            let mut commits = 0u64;
            while start.elapsed() < CEILING_TIME {
                client
                    .execute("INSERT INTO ceiling_rows (body) VALUES ('message')", &[])
                    .await?;
                commits += 1;
            }
            anyhow::Ok(commits)
        }));
    }
    let mut commits = 0;
    for writer in writers {
        commits += writer.await??;
    }
    let rate = commits as f64 / start.elapsed().as_secs_f64();
    connect()
        .await?
        .batch_execute("DROP TABLE ceiling_rows")
        .await?;
    Ok(rate)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The store's commit ceiling beside the floor, for [`figures`].
struct Bounds {
    floor: f64,
    ceiling: f64,
}

impl Bounds {
    /// `rate` as shares of the floor and of the store's ceiling.
    fn shares(&self, rate: f64) -> String {
        format!(
            "({:.1} % of the floor, {:.0} % of the store's ceiling)",
            rate / self.floor * 100.0,
            rate / self.ceiling * 100.0
        )
    }
}

async fn figures(
    label: &str,
    builder: AppBuilder,
    big: usize,
    bounds: Bounds,
) -> anyhow::Result<()> {
    println!(
        "{label:10} store ceiling ({} writers, one row a commit): {:8.0} commits/s",
        clients(),
        bounds.ceiling
    );
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
        "{label:10} sends/s ({} clients, {big} sends):        {:8.0}  {}",
        clients(),
        sends.rate,
        bounds.shares(sends.rate)
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
        "{label:10} sends/s of one sender keeping {MAX_READ} read:  {:8.0}  {}",
        busy_sends.rate,
        bounds.shares(busy_sends.rate)
    );
    println!("{label:10} its send time: {}", busy_sends.latencies());
    println!(
        "{label:10} sends/s into an inbox of {FULL_UNREAD} unread:   {:8.0}  {}",
        full_sends.rate,
        bounds.shares(full_sends.rate)
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
    // The ceiling's database beside the app's state: both in the system's temporary folder.
    let scratch = tempfile::tempdir()?;
    let ceiling = sqlite_ceiling(scratch.path())?;
    let bounds = Bounds {
        floor: floor_rate,
        ceiling,
    };
    figures("sqlite", TestApp::builder(), big, bounds).await?;

    if std::env::var("HUB_BENCH_PG").as_deref() != Ok("0") {
        let (admin, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        let name = unique("hub_bench");
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await?;
        let url = format!("postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable");
        let result = match postgres_ceiling(&url).await {
            Ok(ceiling) => {
                let bounds = Bounds {
                    floor: floor_rate,
                    ceiling,
                };
                let app = TestApp::builder().variable("hub_database_url", &url);
                figures("postgres", app, big, bounds).await
            }
            Err(e) => Err(e),
        };
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await?;
        result?;
    }

    let wasm = repo_root().join("target/wasm32-wasip2/wasm/hub.wasm");
    println!("hub.wasm: {} bytes", std::fs::metadata(wasm)?.len());
    Ok(())
}
