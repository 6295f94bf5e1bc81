//! `dochub check --target akamai-functions CONTENT_DIR`: whether the tree, the build `dochub
//! build` makes of it and the edge build's components fit a Spin edge host's published limits,
//! before a deploy finds out. The figures are [`dochub_edge_limits`]'s, the same ones
//! `dochub-host --emulate akamai-functions` applies:
//!
//! - the app (components, `content/` and `build/`, each distinct file once) within
//!   [`Platform::max_app_bytes`];
//! - no answer over [`Platform::max_body_bytes`]: a page's markdown (`/api/raw`, the
//!   twin) and every file served whole (overviews, reports), the manifests and `/llms.txt` as
//!   the build writes them. `/llms-full.txt` is answered in parts of 8 MiB and always fits.

use std::path::{Path, PathBuf};

use dochub_content::{ContentRoot, Diagnostic, Severity};
use dochub_edge_limits::{AppSize, Platform, mib};

/// The platform checked against.
const PLATFORM: Platform = Platform::AkamaiFunctions;

/// The platforms `--target` knows.
pub const TARGETS: &[&str] = &[PLATFORM.name()];

/// The largest app.
const MAX_APP: u64 = PLATFORM.max_app_bytes();
/// The largest response body.
const MAX_RESPONSE: u64 = PLATFORM.max_body_bytes();

/// What fits and what does not, and the figures behind it.
pub struct EdgeReport {
    /// One finding per thing too big.
    pub diagnostics: Vec<Diagnostic>,
    /// Lines of figures: the app's size by part, the largest answers.
    pub figures: Vec<String>,
}

/// Checks `content_dir` (with the build it makes, and the components `manifest` names when it
/// exists) against [`PLATFORM`]'s limits.
pub fn check_edge(content_dir: &Path, manifest: &Path) -> anyhow::Result<EdgeReport> {
    let root = ContentRoot::open(content_dir)?;
    let build = tempfile::tempdir()?;
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )?;
    let mut diagnostics = Vec::new();
    let mut figures = Vec::new();
    let mut seen = AppSize::default();

    let content = seen.add(content_dir)?;
    let built = seen.add(build.path())?;
    let mut components = 0;
    let mut missing = Vec::new();
    for source in component_sources(manifest)? {
        if source.is_file() {
            components += seen.add(&source)?;
        } else {
            missing.push(source.display().to_string());
        }
    }
    let total = content + built + components;
    figures.push(format!(
        "app: {} of at most {} (content {}, build {}, components {})",
        mib(total),
        mib(MAX_APP),
        mib(content),
        mib(built),
        mib(components)
    ));
    if !missing.is_empty() {
        figures.push(format!(
            "not counted, not built yet: {} (spin build -f {})",
            missing.join(", "),
            manifest.display()
        ));
    }
    if total > MAX_APP {
        diagnostics.push(Diagnostic::on(
            ".",
            Severity::Error,
            format!(
                "the app would be {}, over the {} {} takes (content {}, build {}, components {}); \
                 largest files: {}",
                mib(total),
                mib(MAX_APP),
                PLATFORM.title(),
                mib(content),
                mib(built),
                mib(components),
                largest(&seen, 5, content_dir, build.path())
            ),
        ));
    }

    // Files served whole: every file of the tree (pages, overviews, reports) and the
    // manifests and outline the build writes.
    let mut largest = (0, String::new());
    for (path, bytes) in files(content_dir)? {
        let shown = relative(&path, content_dir);
        if bytes > largest.0 {
            largest = (bytes, shown.clone());
        }
        if bytes > MAX_RESPONSE {
            diagnostics.push(Diagnostic::on(
                shown,
                Severity::Error,
                format!(
                    "is {}: served whole, it passes the {} response limit of {}; split it",
                    mib(bytes),
                    mib(MAX_RESPONSE),
                    PLATFORM.title()
                ),
            ));
        }
    }
    let mut manifests = files(&build.path().join(dochub_index::build::MANIFEST_DIR))?;
    manifests.extend(files(&build.path().join(dochub_index::build::MASTER_FILE))?);
    for (path, bytes) in manifests {
        if bytes > largest.0 {
            largest = (bytes, format!("manifest {}", relative(&path, build.path())));
        }
        if bytes > MAX_RESPONSE {
            diagnostics.push(Diagnostic::on(
                ".",
                Severity::Error,
                format!(
                    "the manifest {} would be {}, over the {} response limit of {}: spread the \
                     pages over more projects or subprojects",
                    relative(&path, build.path()),
                    mib(bytes),
                    mib(MAX_RESPONSE),
                    PLATFORM.title()
                ),
            ));
        }
    }
    figures.push(format!(
        "largest answer served whole: {} ({})",
        largest.1,
        size(largest.0)
    ));
    Ok(EdgeReport {
        diagnostics,
        figures,
    })
}

/// The component files a manifest names, resolved against its folder; none without one.
fn component_sources(manifest: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Ok(Vec::new());
    };
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", manifest.display()))?;
    let base = manifest.parent().unwrap_or(Path::new("."));
    let mut sources: Vec<PathBuf> = doc
        .get("component")
        .and_then(|c| c.as_table())
        .into_iter()
        .flat_map(|components| components.values())
        .filter_map(|c| c.get("source").and_then(|s| s.as_str()))
        .map(|s| base.join(s))
        .collect();
    sources.sort();
    sources.dedup();
    Ok(sources)
}

/// Every file under `dir` (or `dir` itself when it is a file) with its size.
fn files(dir: &Path) -> anyhow::Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::metadata(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        } else {
            out.push((path, meta.len()));
        }
    }
    Ok(out)
}

/// The `n` largest files of the app, named from the content or build folder.
fn largest(seen: &AppSize, n: usize, content: &Path, build: &Path) -> String {
    seen.largest(n)
        .into_iter()
        .map(|(len, path)| {
            let name = if path.starts_with(build) {
                format!("build/{}", relative(path, build))
            } else {
                relative(path, content)
            };
            format!("{name} ({})", mib(len))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// `bytes` in KiB below a MiB, else in MiB.
fn size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        mib(bytes)
    }
}
