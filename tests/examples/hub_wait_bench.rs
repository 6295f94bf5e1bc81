//! Benchmark of the hub's waits (not a test): the real `hub.wasm` under the local host, over
//! HTTP, on Spin's SQLite database and on PostgreSQL shared by two host instances.
//!
//! Prints:
//! - wake latency, from a send's `201` to the answer of a long-poll waiting for it (p50, p99
//!   over `ROUNDS` rounds; on PostgreSQL the waiter and the sender use different instances);
//! - 100 idle waiters held for `IDLE_SECONDS`, arriving at once, then 100 more arriving
//!   `ARRIVAL_GAP` apart: the CPU the whole process used meanwhile (host and client, in % of
//!   one core) and, on PostgreSQL, the statements per second they cost and the CPU of the
//!   server's processes meanwhile (every process named `postgres` this machine shows);
//! - send p50 with the 100 waiters held, against without;
//! - 1,000 open event streams on SQLite: the memory they take (resident set of the process, host
//!   and client), per stream.
//!
//! Run it with `benches/hub.sh wait`; `HUB_BENCH_PG=0` skips PostgreSQL.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dochub_tests::{AppBuilder, TestApp};
use reqwest::Client;

const ROUNDS: usize = 100;
/// Milliseconds after which a waiter looks at the store at its steady pace.
const STEADY_AFTER: u64 = 1_000;
/// The hub's longest pause between two looks (`dochub_hub::wait::LOOK_EVERY`), in
/// milliseconds: the wake rounds spread their sends over it.
const LOOK_EVERY_MS: u64 = 400;
const WAITERS: usize = 100;
/// Between the waiters' arrivals in the second round of idle waiters. A WASIp3 instance takes
/// another request only while its event loop is idle, so of waiters arriving together, those
/// that come before any instance is idle each start one, and look alone; arriving apart, they
/// share instances, up to 16, and looks (see `dochub_hub::wait::Gathering`).
const ARRIVAL_GAP: Duration = Duration::from_millis(20);
const IDLE_SECONDS: u64 = 30;
/// Long enough for the waiters to outlast the idle period.
const MAX_WAIT: &str = "60";
/// Event streams opened at once (`HUB_BENCH_STREAMS` changes it).
const STREAMS: usize = 1_000;
const SENDS: usize = 200;
const PG_ADMIN: &str = "host=127.0.0.1 port=5432 user=postgres dbname=test";

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{nanos:x}", std::process::id())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// CPU time (user + system) this process has used.
fn cpu_time() -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    stat_command_and_cpu(&stat)
        .map(|(_, cpu)| cpu)
        .ok_or_else(|| anyhow::anyhow!("unreadable /proc/self/stat"))
}

/// The command name and CPU time (user + system) of a `/proc/<pid>/stat`.
fn stat_command_and_cpu(stat: &str) -> Option<(&str, Duration)> {
    let (head, rest) = stat.rsplit_once(") ")?;
    let command = head.split_once(" (")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports in clock ticks of 1/100 s on every platform dochub runs on.
    Some((command, Duration::from_millis(ticks * 10)))
}

/// CPU time of each process of this machine's PostgreSQL server (backends, WAL writer,
/// checkpointer), by pid: the store's share of what waiters cost, which the process's own time
/// leaves out. Empty when the server's processes are not visible.
fn postgres_cpu_times() -> std::collections::HashMap<u32, Duration> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Default::default();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (command, cpu) = stat_command_and_cpu(&stat)?;
            (command == "postgres").then_some((pid, cpu))
        })
        .collect()
}

/// The CPU PostgreSQL's processes used between `before` and now; one that ended meanwhile
/// is not counted, so this is a lower bound.
fn postgres_cpu_since(before: &std::collections::HashMap<u32, Duration>) -> Duration {
    postgres_cpu_times()
        .into_iter()
        .map(|(pid, cpu)| cpu.saturating_sub(before.get(&pid).copied().unwrap_or_default()))
        .sum()
}

async fn send(c: &Client, base: &str, to: &str) -> anyhow::Result<()> {
    let body = serde_json::json!({"from": "bench", "to": to, "body": "wake up"});
    let res = c
        .post(format!("{base}/api/send"))
        .json(&body)
        .send()
        .await?;
    anyhow::ensure!(res.status() == 201, "send: {}", res.status());
    // Read to the end, so that the connection is kept for the next send.
    res.bytes().await?;
    Ok(())
}

/// A long-poll of `machine` on `base`, to its answer.
async fn wait(c: Client, url: String) -> anyhow::Result<Instant> {
    let res = c.get(url).send().await?;
    anyhow::ensure!(res.status() == 200, "wait: {}", res.status());
    res.bytes().await?;
    Ok(Instant::now())
}

/// Wake latency over `ROUNDS`: a waiter on `wait_base`, a send through `send_base`.
async fn wake(c: &Client, wait_base: &str, send_base: &str) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let machine = unique(&format!("wake{round}"));
        let waiter = tokio::spawn(wait(
            c.clone(),
            format!("{wait_base}/api/inbox/{machine}?wait=20&ack=true"),
        ));
        // Once the looks keep their steady pace (after 1 s), at points spread over one pause
        // between looks: a waiter that has waited a while, as most have.
        let at = STEADY_AFTER + round as u64 * LOOK_EVERY_MS / ROUNDS as u64;
        tokio::time::sleep(Duration::from_millis(at)).await;
        send(c, send_base, &machine).await?;
        let sent = Instant::now();
        let woken = waiter.await??;
        times.push(woken.saturating_duration_since(sent));
    }
    times.sort();
    Ok(times)
}

async fn send_p50(c: &Client, base: &str) -> anyhow::Result<Duration> {
    let to = unique("sink");
    let mut times = Vec::with_capacity(SENDS);
    for _ in 0..SENDS {
        let start = Instant::now();
        send(c, base, &to).await?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(percentile(&times, 0.5))
}

/// The resident set of this process, in bytes.
fn resident() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))?;
    Ok(kib * 1024)
}

/// Opens `STREAMS` event streams on idle inboxes, each read to its first event (the `retry:`
/// hint), and prints what they cost in memory.
async fn streams(base: &str) -> anyhow::Result<()> {
    let count = std::env::var("HUB_BENCH_STREAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(STREAMS);
    let c = Client::new();
    // One stream first, so that the instance pool and the client are warm.
    let mut warm = c
        .get(format!("{base}/api/inbox/{}/events", unique("warm")))
        .send()
        .await?;
    warm.chunk().await?;
    // The host serves 1,000 connections at once: this one's slot is freed at its next write.
    drop(warm);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = resident()?;
    let opened: Vec<_> = (0..count)
        .map(|i| {
            let url = format!("{base}/api/inbox/{}/events", unique(&format!("s{i}")));
            let c = c.clone();
            tokio::spawn(async move {
                let mut res = c.get(url).send().await?;
                anyhow::ensure!(res.status() == 200, "stream: {}", res.status());
                res.chunk().await?;
                Ok(res)
            })
        })
        .collect();
    let mut held = Vec::with_capacity(count);
    let mut failed = Vec::new();
    for s in opened {
        match s.await? {
            Ok(res) => held.push(res),
            Err(e) => failed.push(e.to_string()),
        }
    }
    if !failed.is_empty() {
        let maps = std::fs::read_to_string("/proc/self/maps")?.lines().count();
        println!(
            "SQLite: {} of {count} event streams failed to open (first: {}); the process has {maps} memory mappings",
            failed.len(),
            failed[0]
        );
    }
    // Let every stream settle into its looks.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = resident()?;
    let per = after.saturating_sub(before) as f64 / held.len().max(1) as f64;
    println!(
        "SQLite: {} open event streams: resident set {:.0} MiB -> {:.0} MiB, {:.0} KiB per stream (host and client)",
        held.len(),
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        per / 1024.0
    );
    drop(held);
    Ok(())
}

/// Statements PostgreSQL has committed in `db` so far.
async fn pg_commits(db: &str) -> anyhow::Result<i64> {
    let (client, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = $1",
            &[&db],
        )
        .await?;
    Ok(row.get(0))
}

async fn figures(
    label: &str,
    wait_base: &str,
    send_base: &str,
    pg: Option<&str>,
) -> anyhow::Result<()> {
    let c = Client::new();
    let times = wake(&c, wait_base, send_base).await?;
    println!(
        "{label}: wake latency p50 {:.0} ms, p99 {:.0} ms ({ROUNDS} rounds)",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99))
    );
    let alone = send_p50(&c, send_base).await?;
    // The first round's clients leave; the host notices at their next keep-alive.
    for w in idle(&c, label, wait_base, pg, Duration::ZERO).await? {
        w.abort();
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiters = idle(&c, label, wait_base, pg, ARRIVAL_GAP).await?;
    let with = send_p50(&c, send_base).await?;
    println!(
        "{label}: send p50 {:.2} ms alone, {:.2} ms with {WAITERS} waiters held ({:.2}×)",
        ms(alone),
        ms(with),
        with.as_secs_f64() / alone.as_secs_f64()
    );
    for w in waiters {
        w.await??;
    }
    Ok(())
}

/// Holds `WAITERS` idle long-polls on `wait_base`, arriving `gap` apart, for `IDLE_SECONDS`
/// and prints the CPU they cost; hands them back, still waiting.
async fn idle(
    c: &Client,
    label: &str,
    wait_base: &str,
    pg: Option<&str>,
    gap: Duration,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<anyhow::Result<Instant>>>> {
    let waiters: Vec<_> = (0..WAITERS)
        .map(|i| {
            let url = format!(
                "{wait_base}/api/inbox/{}?wait=45",
                unique(&format!("idle{i}"))
            );
            let c = c.clone();
            tokio::spawn(async move {
                tokio::time::sleep(gap * i as u32).await;
                wait(c, url).await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1) + gap * WAITERS as u32).await;
    let (cpu, commits, server_cpu, start) = (
        cpu_time()?,
        match pg {
            Some(db) => Some(pg_commits(db).await?),
            None => None,
        },
        pg.map(|_| postgres_cpu_times()),
        Instant::now(),
    );
    tokio::time::sleep(Duration::from_secs(IDLE_SECONDS)).await;
    let used = cpu_time()? - cpu;
    let server_used = server_cpu.as_ref().map(postgres_cpu_since);
    let held = start.elapsed();
    let rate = match (pg, commits) {
        (Some(db), Some(before)) => {
            let after = pg_commits(db).await?;
            let server = match (&server_cpu, server_used) {
                (Some(before), Some(used)) if !before.is_empty() => format!(
                    ", PostgreSQL's processes {:.1} %",
                    used.as_secs_f64() / held.as_secs_f64() * 100.0
                ),
                _ => String::new(),
            };
            format!(
                ", {:.0} statements/s{server}",
                (after - before) as f64 / held.as_secs_f64()
            )
        }
        _ => String::new(),
    };
    let arrival = if gap.is_zero() {
        "arriving at once".to_string()
    } else {
        format!("arriving {} ms apart", gap.as_millis())
    };
    println!(
        "{label}: {WAITERS} idle waiters {arrival}, for {IDLE_SECONDS} s: {:.1} % of one core (host and client){rate}",
        used.as_secs_f64() / held.as_secs_f64() * 100.0
    );
    Ok(waiters)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let app = TestApp::builder()
        .variable("hub_max_wait", MAX_WAIT)
        .start()
        .await?;
    figures("SQLite", app.base_url(), app.base_url(), None).await?;
    streams(app.base_url()).await?;
    app.stop().await;

    if std::env::var("HUB_BENCH_PG").as_deref() == Ok("0") {
        return Ok(());
    }
    let (client, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let db = unique("hub_wait_bench");
    client
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await?;
    let url = format!("postgres://postgres@127.0.0.1:5432/{db}?sslmode=disable");
    let start = || -> AppBuilder {
        TestApp::builder()
            .variable("hub_database_url", &url)
            .variable("hub_max_wait", MAX_WAIT)
    };
    let one = start().start().await?;
    let two = start().start().await?;
    let result = figures(
        "PostgreSQL, two instances",
        one.base_url(),
        two.base_url(),
        Some(&db),
    )
    .await;
    one.stop().await;
    two.stop().await;
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .await?;
    result
}
