//! Hostile-content benchmark (not a test): what the worst files cost, under the limits and over
//! them, served by the real `docs.wasm` and `api.wasm` under the local host from the live tree.
//!
//! For each file it prints the status, time and size of its docs page, its raw text and a
//! search, then how long `ContentRoot::check` takes on the whole tree and the process's peak
//! memory after it.
//!
//! ```text
//! cargo run -p dochub-tests --example hostile_bench
//! ```

use std::time::{Duration, Instant};

use dochub_tests::TestApp;
use dochub_tests::hostile::{at_the_limits, over_the_limits, write_tree};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let files: Vec<_> = at_the_limits()
        .into_iter()
        .chain(over_the_limits())
        .collect();
    write_tree(dir.path(), &files)?;

    let started = Instant::now();
    let root = dochub_content::ContentRoot::open(dir.path())?;
    let findings = root.check()?;
    let check_time = started.elapsed();
    let errors = findings
        .iter()
        .filter(|d| d.severity == dochub_content::Severity::Error)
        .count();
    println!(
        "dochub check: {:.2} s, {errors} errors, peak memory of the process {} MiB",
        check_time.as_secs_f64(),
        peak_rss_kib() / 1024
    );
    for file in &files {
        let started = Instant::now();
        let parsed = dochub_content::parse_page("p", &file.bytes);
        println!(
            "  parse {:<45} {:>8.1} ms  {}",
            file.name,
            started.elapsed().as_secs_f64() * 1000.0,
            parsed.frontmatter.error.as_deref().unwrap_or("ok")
        );
    }

    let app = TestApp::builder()
        .content(dir.path())
        .env("SERVE_PREBUILT", "0")
        .request_timeout(Duration::from_secs(60))
        .start()
        .await?;
    let client = reqwest::Client::new();
    println!(
        "{:<48} {:>6} {:>9} {:>10}",
        "live route", "status", "ms", "bytes"
    );
    let mut routes: Vec<(String, String)> = Vec::new();
    for file in &files {
        if let Some(page) = file.path.strip_suffix(".md") {
            routes.push((file.name.to_owned(), format!("/docs/{page}")));
            routes.push((
                format!("{} (raw)", file.name),
                format!("/docs/{page}?format=raw"),
            ));
        }
    }
    for (name, path) in [
        ("good page beside them", "/docs/hostile/bad/fine"),
        ("docs home", "/docs/"),
        ("search", "/api/search?q=quokka"),
        ("master manifest", "/api/manifest"),
        ("llms.txt", "/llms.txt"),
    ] {
        routes.push((name.to_owned(), path.to_owned()));
    }
    for (name, path) in routes {
        let started = Instant::now();
        let res = client.get(app.url(&path)).send().await?;
        let status = res.status().as_u16();
        let bytes = res.bytes().await?.len();
        println!(
            "{name:<48} {status:>6} {:>9.1} {bytes:>10}",
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    app.stop().await;
    Ok(())
}

/// The process's peak resident memory, from `/proc/self/status` (0 where there is none).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
