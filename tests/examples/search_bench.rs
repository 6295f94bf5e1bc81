//! Ranked search figures natively (not a test): the index of a content tree, built once
//! (timed, with its size), then each query answered through it `RUNS` times; the p50 and
//! the slowest run are printed, beside the number of results.
//!
//! `cargo run --release -p dochub-tests --example search_bench -- CONTENT_DIR [RUNS] [QUERY...]`
//! (default: 21 runs of the scale benchmark's four queries: a rare word, a common word, two
//! letters and three words). For the 10,000 and 100,000-page figures, write a corpus first:
//! `cargo run --release -p dochub-tests --example corpus -- /tmp/corpus 10 10 100` (or
//! `10 10 1000`). Under a Spin host the same queries are timed by `benches/scale.sh`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use dochub_content::ContentRoot;
use dochub_index::{Index, write_index};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: search_bench CONTENT_DIR [RUNS] [QUERY...]";
    let Some(dir) = args.first() else {
        anyhow::bail!(usage);
    };
    let runs: usize = match args.get(1) {
        Some(n) => n.parse().with_context(|| format!("`{n}`: {usage}"))?,
        None => 21,
    };
    let mut queries: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    if queries.is_empty() {
        queries = vec!["quasar", "service", "th", "key value store"];
    }
    let root = ContentRoot::open(PathBuf::from(dir)).with_context(|| format!("opening {dir}"))?;
    let out = tempfile::tempdir()?;
    let started = Instant::now();
    let summary = write_index(&root, out.path())?;
    println!(
        "{} pages ({:.1} MB): index {:.1} MB with {} keys and {} terms, built in {:.2} s",
        summary.pages,
        summary.corpus_bytes as f64 / 1e6,
        summary.bytes as f64 / 1e6,
        summary.keys,
        summary.terms,
        started.elapsed().as_secs_f64()
    );
    for query in queries {
        let mut times = Vec::with_capacity(runs);
        let mut results = 0;
        for _ in 0..runs {
            // Opened for each answer, as a component opens it for each request.
            let started = Instant::now();
            let index = Index::open(out.path())?;
            results = index.search(&root, query)?.results.len();
            times.push(started.elapsed());
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "  {:<20} p50 {:7.3} ms  max {:7.3} ms  {results} results",
            format!("{query:?}"),
            ms(times[times.len() / 2]),
            ms(times[times.len() - 1]),
        );
    }
    Ok(())
}
