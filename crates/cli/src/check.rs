//! `dochub check CONTENT_DIR`: the content lint and the overview registry check, one line per
//! problem as `file:line: level: message`, exit 1 on errors.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use dochub_content::{ContentRoot, Diagnostic, Severity};

/// Arguments of `dochub check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The content root, e.g. `content`.
    content_dir: PathBuf,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    /// Also check that the tree, its build and the edge build's components fit this edge
    /// host's published limits (app size, response size): `akamai-functions`.
    #[arg(long, value_name = "PLATFORM", value_parser = clap::builder::PossibleValuesParser::new(crate::edge::TARGETS))]
    target: Option<String>,
    /// The manifest whose components count towards the app size with `--target`; default:
    /// `spin-edge.toml` in the folder above CONTENT_DIR.
    #[arg(long, requires = "target")]
    manifest: Option<PathBuf>,
}

/// Prints every finding and a count; fails on errors (and on warnings with `--strict`).
pub fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let root = ContentRoot::open(&args.content_dir)?;
    let mut diagnostics = root.check()?;
    diagnostics.extend(overview_diagnostics(&args.content_dir)?);
    let mut figures = Vec::new();
    if args.target.is_some() {
        let manifest = args.manifest.clone().unwrap_or_else(|| {
            let content = std::path::absolute(&args.content_dir).unwrap_or_default();
            content
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join("spin-edge.toml")
        });
        let report = crate::edge::check_edge(&args.content_dir, &manifest)?;
        diagnostics.extend(report.diagnostics);
        figures = report.figures;
    }
    diagnostics.sort();
    for d in &diagnostics {
        println!("{d}");
    }
    for line in &figures {
        println!("{line}");
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    println!("{errors} error(s), {warnings} warning(s)");
    Ok(if errors > 0 || (args.strict && warnings > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The overview registry against `_overviews/`. A tree without that folder serves no overview
/// pages; one with it must match the registry both ways.
fn overview_diagnostics(content_dir: &std::path::Path) -> anyhow::Result<Vec<Diagnostic>> {
    let dir = content_dir.join("_overviews");
    if !dir.is_dir() {
        // Legitimate for a docs-only tree, but every registered overview then answers 404.
        let ids: Vec<&str> = dochub_overview::OVERVIEWS.iter().map(|o| o.id).collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        return Ok(vec![Diagnostic::on(
            "_overviews",
            Severity::Warning,
            format!(
                "no _overviews/ folder: the {} registered overview(s) ({}) answer 404",
                ids.len(),
                ids.join(", ")
            ),
        )]);
    }
    let report = dochub_overview::check_dir(&dir)?;
    let mut out = Vec::new();
    for o in &report.missing_files {
        out.push(Diagnostic::on(
            format!("_overviews/{}.html", o.id),
            Severity::Error,
            format!(
                "overview `{}` ({}) is registered but this file is missing: add the file or remove the registry entry",
                o.id, o.title
            ),
        ));
    }
    for name in &report.unregistered_files {
        out.push(Diagnostic::at(
            format!("_overviews/{name}"),
            1,
            Severity::Error,
            "has no entry in the overview registry, so it is never served: add an entry or remove the file".into(),
        ));
    }
    Ok(out)
}
