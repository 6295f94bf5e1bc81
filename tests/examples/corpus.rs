//! Writes a deterministic generated content tree (not a test): the corpus `benches/scale.sh`
//! measures, from `dochub_content::corpus`.
//!
//! `cargo run -p dochub-tests --example corpus -- OUT_DIR PROJECTS SUBPROJECTS PAGES [PAGE_BYTES]`
//! writes PROJECTS × SUBPROJECTS × PAGES pages of about PAGE_BYTES (default 8000) bytes into
//! OUT_DIR, and prints how many pages and bytes it wrote.

use std::path::PathBuf;

use anyhow::Context;
use dochub_content::corpus::{Spec, generate};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: corpus OUT_DIR PROJECTS SUBPROJECTS PAGES [PAGE_BYTES]";
    let [out, projects, subprojects, pages, rest @ ..] = args.as_slice() else {
        anyhow::bail!(usage);
    };
    let number = |s: &str| {
        s.parse::<usize>()
            .with_context(|| format!("`{s}`: {usage}"))
    };
    let spec = Spec {
        projects: number(projects)?,
        subprojects: number(subprojects)?,
        pages: number(pages)?,
        page_bytes: match rest {
            [] => 8000,
            [bytes] => number(bytes)?,
            _ => anyhow::bail!(usage),
        },
    };
    let out = PathBuf::from(out);
    let written = generate(&out, &spec).with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{} pages, {:.1} MB in {}",
        written.pages,
        written.bytes as f64 / 1e6,
        out.display()
    );
    Ok(())
}
