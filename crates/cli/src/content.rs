//! `dochub build` (manifests and the search and navigation index) and `dochub check`: the content library, from the shell.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use dochub_content::prebuilt::write_build;
use dochub_content::{ContentRoot, Severity};

/// Arguments of `dochub build`.
#[derive(Args)]
pub struct BuildArgs {
    /// The content root, e.g. `content`.
    content_dir: PathBuf,
    /// Where to write the manifests, e.g. `build` (created if needed).
    out_dir: PathBuf,
}

/// Arguments of `dochub check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The content root, e.g. `content`.
    content_dir: PathBuf,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
}

pub fn build(args: &BuildArgs) -> anyhow::Result<ExitCode> {
    let root = ContentRoot::open(&args.content_dir)?;
    let started = std::time::Instant::now();
    let summary = write_build(&root, &args.out_dir, chrono::Utc::now())
        .with_context(|| format!("building into `{}`", args.out_dir.display()))?;
    println!(
        "wrote {} project and {} subproject manifests ({} documents) to {}",
        summary.projects,
        summary.subprojects,
        summary.documents,
        args.out_dir.display()
    );
    let index = summary.index;
    println!(
        "indexed {} pages ({:.1} MB) with {} keys: index {:.1} MB, built in {:.2} s",
        index.pages,
        index.corpus_bytes as f64 / 1e6,
        index.keys,
        index.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let root = ContentRoot::open(&args.content_dir)?;
    let diagnostics = root.check()?;
    for d in &diagnostics {
        println!("{d}");
    }
    let mut errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    // A tree without `_overviews` serves no overview pages; one with it must match the registry.
    let overviews = args.content_dir.join("_overviews");
    if overviews.is_dir() {
        let report = dochub_overview::check_dir(&overviews)?;
        for line in report.to_string().lines() {
            println!("error: {line}");
            errors += 1;
        }
    }
    let warnings = diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Error)
        .count();
    println!("{errors} error(s), {warnings} warning(s)");
    Ok(if errors > 0 || (args.strict && warnings > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
