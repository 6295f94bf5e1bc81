//! Mailbox search benchmark (not a test): the real `hub.wasm` under the local host (or under
//! `spin up` with `SPIN_BIN`), over HTTP.
//!
//! For each store — Spin's SQLite database and PostgreSQL (127.0.0.1:5432, a fresh database,
//! dropped afterwards) — fills one mailbox of 2,000 and, in a fresh store, one of 20,000
//! messages whose bodies are 12 words drawn from a vocabulary of 400, then prints the p50 of
//! `GET /api/messages/<machine>?q=<words>&limit=20` over the same 200 queries (one, two and
//! three words) in each, and the ratio of the two: a search that scans would grow tenfold.
//!
//! Run it with `benches/hub.sh search`; `HUB_BENCH_PG=0` skips PostgreSQL.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dochub_tests::{AppBuilder, TestApp};
use reqwest::Client;

const CLIENTS: usize = 8;
const QUERIES: usize = 200;
const VOCABULARY: usize = 400;
const WORDS_PER_BODY: usize = 12;
const PG_ADMIN: &str = "host=127.0.0.1 port=5432 user=postgres dbname=test";

/// A small deterministic generator: the same bodies and queries in every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

/// Word `i` of the vocabulary: pronounceable, distinct, no stemming surprises.
fn word(i: usize) -> String {
    const SYLLABLES: [&str; 20] = [
        "ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu", "ze", "ba", "do", "fi", "go", "hu",
        "ja", "ke", "li", "mo", "nu",
    ];
    format!(
        "{}{}{}",
        SYLLABLES[i % 20],
        SYLLABLES[(i / 20) % 20],
        SYLLABLES[(i * 7 + 3) % 20]
    )
}

fn body(rng: &mut Lcg) -> String {
    (0..WORDS_PER_BODY)
        .map(|_| word(rng.next(VOCABULARY)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{}_{nanos:x}", std::process::id())
}

/// Sends `count` messages from `CLIENTS` concurrent senders to `machine`.
async fn fill(c: &Client, base: &str, machine: &str, count: usize) -> anyhow::Result<()> {
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (c, base, machine) = (c.clone(), base.to_owned(), machine.to_owned());
            let n = count / CLIENTS + usize::from(i < count % CLIENTS);
            tokio::spawn(async move {
                let mut rng = Lcg(i as u64 + 1);
                let from = format!("search-sender-{i}");
                for _ in 0..n {
                    let message =
                        serde_json::json!({"from": from, "to": machine, "body": body(&mut rng)});
                    let res = c
                        .post(format!("{base}/api/send"))
                        .json(&message)
                        .send()
                        .await?;
                    anyhow::ensure!(res.status() == 201, "send: {}", res.status());
                }
                anyhow::Ok(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(())
}

/// p50 of the benchmark's queries against `machine`'s mailbox, and how many hits they found.
async fn search_p50(c: &Client, base: &str, machine: &str) -> anyhow::Result<(Duration, usize)> {
    let mut rng = Lcg(99);
    let mut times = Vec::with_capacity(QUERIES);
    let mut hits = 0;
    for q in 0..QUERIES {
        let words: Vec<String> = (0..=q % 3).map(|_| word(rng.next(VOCABULARY))).collect();
        let url = format!(
            "{base}/api/messages/{machine}?limit=20&q={}",
            words.join("+")
        );
        let start = Instant::now();
        let res = c.get(&url).send().await?;
        anyhow::ensure!(res.status() == 200, "search: {}", res.status());
        let answer: serde_json::Value = res.json().await?;
        times.push(start.elapsed());
        hits += answer["messages"].as_array().map_or(0, Vec::len);
    }
    times.sort();
    Ok((times[times.len() / 2], hits))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn one(builder: AppBuilder, size: usize) -> anyhow::Result<(Duration, usize)> {
    let app = builder.variable("hub_max_unread", "100000").start().await?;
    let (c, base) = (Client::new(), app.base_url().to_owned());
    let machine = unique("mailbox");
    fill(&c, &base, &machine, size).await?;
    let result = search_p50(&c, &base, &machine).await;
    app.stop().await;
    result
}

async fn figures(label: &str, small: AppBuilder, large: AppBuilder) -> anyhow::Result<()> {
    let (small, small_hits) = one(small, 2_000).await?;
    let (large, large_hits) = one(large, 20_000).await?;
    println!(
        "{label:10} search p50, mailbox of 2,000:  {:7.2} ms ({small_hits} hits in {QUERIES} queries)",
        ms(small)
    );
    println!(
        "{label:10} search p50, mailbox of 20,000: {:7.2} ms ({large_hits} hits), {:.2}x the first",
        ms(large),
        large.as_secs_f64() / small.as_secs_f64()
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let under = if dochub_tests::spin_bin().is_some() {
        "spin up"
    } else {
        "dochub-host"
    };
    println!("under {under}");
    figures("sqlite", TestApp::builder(), TestApp::builder()).await?;
    if std::env::var("HUB_BENCH_PG").as_deref() != Ok("0") {
        let (admin, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        let names = [unique("hub_search_small"), unique("hub_search_large")];
        for name in &names {
            admin
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await?;
        }
        let app = |name: &str| {
            TestApp::builder().variable(
                "hub_database_url",
                &format!("postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable"),
            )
        };
        let result = figures("postgres", app(&names[0]), app(&names[1])).await;
        for name in names {
            admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await?;
        }
        result?;
    }
    Ok(())
}
