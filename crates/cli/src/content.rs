//! `dochub build`: the manifests and the search and navigation index, from the shell.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use dochub_content::ContentRoot;
use dochub_index::build::write_build;

/// Arguments of `dochub build`.
#[derive(Args)]
pub struct BuildArgs {
    /// The content root, e.g. `content`.
    content_dir: PathBuf,
    /// Where to write the manifests, e.g. `build` (created if needed).
    out_dir: PathBuf,
}

pub fn build(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let root = ContentRoot::open(&args.content_dir)?;
    let started = std::time::Instant::now();
    let summary = write_build(
        &root,
        &args.out_dir,
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .with_context(|| format!("building into `{}`", args.out_dir.display()))?;
    println!(
        "wrote {} project and {} subproject manifests ({} documents) to {}",
        summary.projects,
        summary.subprojects,
        summary.documents,
        args.out_dir.display()
    );
    println!(
        "wrote llms-full.txt: {} pages, {:.1} MB",
        summary.llms_full.pages,
        summary.llms_full.bytes as f64 / 1e6
    );
    let index = summary.index;
    println!(
        "indexed {} pages ({:.1} MB) with {} keys and {} terms: index {:.1} MB, built in {:.2} s",
        index.pages,
        index.corpus_bytes as f64 / 1e6,
        index.keys,
        index.terms,
        index.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    for page in &index.plain_code {
        eprintln!("warning: {page}: a code block took too long to highlight and is shown plain");
    }
    Ok(ExitCode::SUCCESS)
}
