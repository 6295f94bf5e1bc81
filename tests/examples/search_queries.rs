//! Runs a list of search queries against a content tree (not a test): the dochub side of
//! `benches/relevance.sh`, which scores the answers against judged pages.
//!
//! `cargo run --example search_queries -- CONTENT_DIR QUERIES_JSON` reads QUERIES_JSON, an
//! array of strings or of objects with a `query` field, and prints one JSON line per query:
//! `{"query": .., "paths": [..], "excerpts": [..], "index_agrees": ..}`, the paths and their
//! excerpts in the live search's order and whether the prebuilt index (built once, into a
//! temporary folder) answered the same paths in the same order. A query the live search
//! refuses gets `"error"` instead of paths.

use std::path::PathBuf;

use anyhow::Context;
use dochub_content::{Catalog, ContentRoot};
use dochub_index::{Index, write_index};
use serde_json::{Value, json};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, queries] = args.as_slice() else {
        anyhow::bail!("usage: search_queries CONTENT_DIR QUERIES_JSON");
    };
    let queries_path = PathBuf::from(queries);
    let text = std::fs::read_to_string(&queries_path)
        .with_context(|| format!("reading {}", queries_path.display()))?;
    let list: Vec<Value> = serde_json::from_str(&text)
        .with_context(|| format!("parsing {}", queries_path.display()))?;
    let queries = list
        .iter()
        .map(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.get("query")?.as_str().map(str::to_owned),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()
        .context("each query must be a string or an object with a string `query`")?;

    let root = ContentRoot::open(dir).with_context(|| format!("opening {dir}"))?;
    let tmp = tempfile::tempdir()?;
    write_index(&root, tmp.path()).context("building the index")?;
    let index = Index::open(tmp.path()).context("opening the index")?;

    for q in &queries {
        let live = root.search(q);
        let indexed = index.search(&root, q);
        let line = match live {
            Ok(live) => {
                let paths: Vec<&str> = live.results.iter().map(|h| h.path.as_str()).collect();
                let excerpts: Vec<&str> = live.results.iter().map(|h| h.excerpt.as_str()).collect();
                // An index that fails where the live search answers disagrees with it.
                let index_agrees = indexed.is_ok_and(|r| {
                    r.results
                        .iter()
                        .map(|h| h.path.as_str())
                        .eq(paths.iter().copied())
                });
                json!({"query": q, "paths": paths, "excerpts": excerpts, "index_agrees": index_agrees})
            }
            Err(e) => {
                json!({"query": q, "error": e.to_string(), "index_agrees": indexed.is_err()})
            }
        };
        println!("{line}");
    }
    Ok(())
}
