//! Docs benchmark (not a test): the real `docs.wasm` under the local host, over HTTP.
//!
//! Prints the p50 / p90 / p99 time of rendering a 20 KB markdown page in the full layout
//! (`GET /docs/p/s/big`), the same for the raw markdown (`?format=raw`, which reads the file but
//! renders nothing) and for a one-line page in the same layout, so the differences are the cost
//! of rendering, and the size of `docs.wasm`.
//!
//! Run it with `benches/docs.sh` (or `cargo run -p dochub-tests --example docs_bench`); set
//! `DOCS_BENCH_REQUESTS=<n>` to change the 300 timed requests per route.

use std::path::Path;
use std::time::{Duration, Instant};

use dochub_tests::{TestApp, repo_root};
use reqwest::Client;

/// A markdown page of about `target` bytes with what real pages have: frontmatter, headings,
/// About 20 KB of typical markdown: frontmatter, headings, prose with inline markup and links,
/// nested and task lists, tables and fenced code. The docs benchmarks share it.
const PAGE_20K: &str = include_str!("../../crates/app/benches/page-20k.md");

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn time(client: &Client, url: &str, requests: usize) -> anyhow::Result<Vec<Duration>> {
    for _ in 0..20 {
        client.get(url).send().await?.bytes().await?;
    }
    let mut times = Vec::with_capacity(requests);
    for _ in 0..requests {
        let start = Instant::now();
        let res = client.get(url).send().await?;
        anyhow::ensure!(res.status() == 200, "{url}: {}", res.status());
        res.bytes().await?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times)
}

fn report(what: &str, times: &[Duration]) {
    println!(
        "{what}: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms ({} requests)",
        percentile(times, 0.5).as_secs_f64() * 1e3,
        percentile(times, 0.9).as_secs_f64() * 1e3,
        percentile(times, 0.99).as_secs_f64() * 1e3,
        times.len()
    );
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)?;
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let requests: usize = std::env::var("DOCS_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let content = tempfile::tempdir()?;
    let big = PAGE_20K.to_string();
    write(&content.path().join("p/s/big.md"), &big)?;
    write(&content.path().join("p/s/other.md"), "# Other\n")?;
    // The overview component mounts this folder.
    std::fs::create_dir_all(content.path().join("_overviews"))?;
    let app = TestApp::builder().content(content.path()).start().await?;
    let client = Client::new();

    let rendered = client
        .get(app.url("/docs/p/s/big"))
        .send()
        .await?
        .text()
        .await?;
    println!(
        "page: {} bytes of markdown, {} bytes of HTML",
        big.len(),
        rendered.len()
    );
    let html = time(&client, &app.url("/docs/p/s/big"), requests).await?;
    report("rendered (GET /docs/p/s/big)", &html);
    let raw = time(&client, &app.url("/docs/p/s/big?format=raw"), requests).await?;
    report("raw (GET /docs/p/s/big?format=raw)", &raw);
    let small = time(&client, &app.url("/docs/p/s/other"), requests).await?;
    report(
        "a one-line page in the same layout (GET /docs/p/s/other)",
        &small,
    );
    for path in ["/docs/", "/docs/p/", "/docs/search?q=z"] {
        let times = time(&client, &app.url(path), requests).await?;
        report(&format!("GET {path}"), &times);
    }
    println!(
        "rendering cost at p50: {:.2} ms",
        (percentile(&html, 0.5).as_secs_f64() - percentile(&raw, 0.5).as_secs_f64()) * 1e3
    );
    app.stop().await;

    let wasm = repo_root().join("target/wasm32-wasip2/wasm/docs.wasm");
    println!("docs.wasm: {} bytes", std::fs::metadata(wasm)?.len());
    Ok(())
}
