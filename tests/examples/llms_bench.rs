//! Docs-for-agents figures (not a test): the size and generation time of `/llms-full.txt` and
//! `/llms.txt` for a content tree, natively (the library writing into a byte counter) and
//! through the real `docs.wasm` under the local host, over HTTP (streamed), read from the tree
//! (`SERVE_PREBUILT=0`) and copied from a build made for the purpose (`dochub build`, timed too).
//!
//! `cargo run --example llms_bench -- [CONTENT_DIR] [RUNS]` (default: the bundled `content/`,
//! 3 runs; the median is printed). For the 10,000-page figure, write a corpus first:
//! `cargo run --example corpus -- /tmp/corpus 10 10 100`, then pass `/tmp/corpus`.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use dochub_content::llms::{llms_txt, write_full};
use dochub_content::{Catalog, ContentRoot};
use dochub_index::build::write_build;
use dochub_tests::{TestApp, repo_root};

/// Counts bytes and drops them.
struct Counter(u64);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map_or_else(|| repo_root().join("content"), PathBuf::from);
    let runs: usize = match args.next() {
        Some(n) => n.parse().context("RUNS is a number")?,
        None => 3,
    };
    anyhow::ensure!(runs > 0, "RUNS must be at least 1");
    let root = ContentRoot::open(&dir)?;

    let mut times = Vec::new();
    let (mut pages, mut bytes) = (0, 0);
    for _ in 0..runs {
        let start = Instant::now();
        let intro = root.site_intro()?;
        let mut counter = Counter(0);
        pages = write_full(&root, &intro, None, &mut counter)?;
        times.push(start.elapsed());
        bytes = counter.0;
    }
    println!(
        "{}: llms-full.txt natively: {pages} pages, {bytes} bytes ({:.1} MB), median {:.3} s",
        dir.display(),
        mb(bytes),
        median(times).as_secs_f64()
    );
    let start = Instant::now();
    let index = llms_txt(
        &root.site_intro()?,
        &Catalog::llms_outline(&root)?,
        1,
        "http://127.0.0.1:3000",
    );
    println!(
        "llms.txt natively from the tree: {} bytes, {:.3} s",
        index.len(),
        start.elapsed().as_secs_f64()
    );

    let build = tempfile::tempdir()?;
    let start = Instant::now();
    let summary = write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )?;
    println!(
        "dochub build (manifests, index and llms-full.txt): {:.3} s; llms-full.txt {} bytes",
        start.elapsed().as_secs_f64(),
        summary.llms_full.bytes
    );

    let client = reqwest::Client::new();
    let live = TestApp::builder()
        .content(&dir)
        .env("SERVE_PREBUILT", "0")
        .start()
        .await?;
    let prebuilt = TestApp::builder()
        .content(&dir)
        .mount(build.path(), "/prebuilt")
        .env("BUILD_DIR", "/prebuilt")
        .env("SERVE_PREBUILT", "1")
        .start()
        .await?;
    for (app, how) in [(&live, "from the tree"), (&prebuilt, "prebuilt")] {
        for path in ["/llms-full.txt", "/llms.txt"] {
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..runs {
                let start = Instant::now();
                let res = client.get(app.url(path)).send().await?;
                anyhow::ensure!(res.status() == 200, "{path}: {}", res.status());
                size = res.bytes().await?.len();
                times.push(start.elapsed());
            }
            println!(
                "{path} {how}, through docs.wasm under dochub-host: {size} bytes ({:.1} MB), median {:.3} s",
                mb(size as u64),
                median(times).as_secs_f64()
            );
        }
    }
    live.stop().await;
    prebuilt.stop().await;
    Ok(())
}
