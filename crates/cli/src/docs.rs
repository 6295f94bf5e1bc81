//! `dochub docs ls|cat|search` and `dochub report`: the docs API from the shell, found through
//! the manifests.

use std::io::Write;

use clap::{Args, Subcommand};
use serde_json::Value;

use crate::client::Client;
use crate::output::{Output, str_of};

/// `dochub docs ...`.
#[derive(Subcommand)]
pub enum DocsCommand {
    /// List projects; `ls <project>` lists its subprojects, `ls <project>/<subproject>` its pages.
    Ls(LsArgs),
    /// Print a page's raw markdown: `cat <project>/<subproject>/<page>`.
    Cat(CatArgs),
    /// Search every page: one line per hit with path, title and excerpt.
    Search(SearchArgs),
}

/// Arguments of `docs ls`.
#[derive(Args)]
pub struct LsArgs {
    /// Nothing, `<project>` or `<project>/<subproject>`.
    #[arg(default_value = "")]
    path: String,
}

/// Arguments of `docs cat`.
#[derive(Args)]
pub struct CatArgs {
    /// `<project>/<subproject>/<page>`.
    path: String,
}

/// Arguments of `docs search`.
#[derive(Args)]
pub struct SearchArgs {
    /// The text to find (at least 2 characters, case-insensitive).
    query: String,
}

/// Runs a `docs` subcommand.
pub async fn run(client: &Client, command: DocsCommand, out: &Output) -> anyhow::Result<()> {
    match command {
        DocsCommand::Ls(a) => {
            let manifest = client.manifest(&a.path).await?;
            out.json_or(&manifest, || listing(&manifest))
        }
        DocsCommand::Cat(a) => {
            let bytes = client.raw(&a.path).await?;
            if out.json {
                let page = serde_json::json!({
                    "path": a.path.trim_matches('/'),
                    "markdown": String::from_utf8_lossy(&bytes),
                });
                out.json_or(&page, String::new)
            } else {
                // The page exactly as stored, bytes and all.
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(&bytes)?;
                stdout.flush()?;
                Ok(())
            }
        }
        DocsCommand::Search(a) => {
            let results = client.search(&a.query).await?;
            out.json_or(&results, || search_lines(&results))
        }
    }
}

/// `dochub report`: the latest agent report, pretty-printed (`--json`: as one line).
pub async fn report(client: &Client, out: &Output) -> anyhow::Result<()> {
    let report = client.latest_report().await?;
    out.json_or(&report, || {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    })
}

/// One line per entry of whichever manifest came back.
fn listing(manifest: &Value) -> String {
    let mut text = String::new();
    let rows = |key: &str| -> Vec<Value> {
        manifest
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if manifest.get("projects").is_some() {
        for p in rows("projects") {
            text += &format!(
                "{}  {} ({} subprojects, {} documents)\n",
                str_of(&p, "id"),
                str_of(&p, "name"),
                p["subproject_count"],
                p["doc_count"]
            );
        }
    } else if manifest.get("subprojects").is_some() {
        let project = str_of(&manifest["project"], "id");
        for s in rows("subprojects") {
            text += &format!(
                "{project}/{}  {} ({} documents)\n",
                str_of(&s, "id"),
                str_of(&s, "name"),
                s["doc_count"]
            );
        }
    } else {
        let prefix = format!(
            "{}/{}",
            str_of(manifest, "project"),
            str_of(&manifest["subproject"], "id")
        );
        for d in rows("documents") {
            let summary = str_of(&d, "summary");
            let sep = if summary.is_empty() { "" } else { " — " };
            text += &format!(
                "{prefix}/{}  {}{sep}{summary}\n",
                str_of(&d, "id"),
                str_of(&d, "title")
            );
        }
    }
    text
}

/// One line a hit: `path[#anchor]  title[ › section]  excerpt`.
fn search_lines(results: &Value) -> String {
    let mut text = String::new();
    for hit in results
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let mut at = str_of(hit, "path").to_owned();
        let mut title = str_of(hit, "title").to_owned();
        if let Some(anchor) = hit.get("anchor").and_then(Value::as_str) {
            at = format!("{at}#{anchor}");
        }
        if let Some(section) = hit.get("section").and_then(Value::as_str) {
            title = format!("{title} › {section}");
        }
        text += &format!("{at}  {title}  {}\n", str_of(hit, "excerpt"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_follow_the_manifest_kind() {
        let master = serde_json::json!({"projects": [
            {"id": "p", "name": "P", "subproject_count": 2, "doc_count": 5}
        ]});
        assert_eq!(listing(&master), "p  P (2 subprojects, 5 documents)\n");
        let sub = serde_json::json!({
            "project": "p", "subproject": {"id": "s"},
            "documents": [{"id": "a", "title": "A", "summary": "About a"}, {"id": "b", "title": "B", "summary": ""}]
        });
        assert_eq!(listing(&sub), "p/s/a  A — About a\np/s/b  B\n");
    }

    #[test]
    fn search_lines_name_the_section() {
        let results = serde_json::json!({"query": "kv", "results": [
            {"path": "p/s/a", "title": "A", "excerpt": "kv here", "section": "Key value", "anchor": "key-value"},
            {"path": "p/s/b", "title": "B", "excerpt": "kv first"}
        ]});
        assert_eq!(
            search_lines(&results),
            "p/s/a#key-value  A › Key value  kv here\np/s/b  B  kv first\n"
        );
    }
}
