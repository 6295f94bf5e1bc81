//! Checks the registry against the overview files on disk.

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::registry::{OVERVIEWS, Overview};

/// What disagrees between [`OVERVIEWS`] and an `_overviews` directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Registered overviews whose `<id>.html` file is missing.
    pub missing_files: Vec<&'static Overview>,
    /// `*.html` files (by name) that no registry entry serves, sorted.
    pub unregistered_files: Vec<String>,
}

impl CheckReport {
    /// True when every entry has a file and every file an entry.
    pub fn is_ok(&self) -> bool {
        self.missing_files.is_empty() && self.unregistered_files.is_empty()
    }
}

impl fmt::Display for CheckReport {
    /// One line per problem, each saying how to fix it; nothing when all is well.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for o in &self.missing_files {
            writeln!(
                f,
                "overview `{}` ({}) is registered but _overviews/{}.html is missing: add the file or remove the entry",
                o.id, o.title, o.id
            )?;
        }
        for name in &self.unregistered_files {
            writeln!(
                f,
                "_overviews/{name} has no registry entry, so it is never served: add an entry to the overview registry or remove the file"
            )?;
        }
        Ok(())
    }
}

/// The `_overviews` directory could not be read.
#[derive(Debug, Error)]
#[error("cannot read overview directory {}: {source}", dir.display())]
pub struct CheckError {
    /// The directory that was read.
    pub dir: PathBuf,
    /// The underlying I/O error.
    #[source]
    pub source: std::io::Error,
}

/// Compares the registry with the `*.html` files directly in `dir` (an `_overviews` directory).
///
/// Other files (a README, `.gitkeep`) and subdirectories are ignored. A missing directory is
/// an error, not "every file missing", so a wrong path is not mistaken for empty content.
pub fn check_dir(dir: &Path) -> Result<CheckReport, CheckError> {
    let err = |source| CheckError {
        dir: dir.to_owned(),
        source,
    };
    let mut html_files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        // A link counts as what it points to: Spin's start-up copy follows it and serves the
        // file (a link leaving the tree is `dochub check`'s content walk's to report).
        if !std::fs::metadata(entry.path()).is_ok_and(|meta| meta.is_file()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".html") {
            html_files.push(name);
        }
    }
    html_files.sort();

    let missing_files = OVERVIEWS
        .iter()
        .filter(|o| !html_files.iter().any(|f| o.is_file_name(f)))
        .collect();
    let unregistered_files = html_files
        .into_iter()
        .filter(|f| !OVERVIEWS.iter().any(|o| o.is_file_name(f)))
        .collect();
    Ok(CheckReport {
        missing_files,
        unregistered_files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::find;

    /// CI fails here when the repository's overview files and the registry disagree.
    #[test]
    fn repository_overviews_match_the_registry() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../content/_overviews");
        let report = check_dir(&dir).unwrap();
        assert!(report.is_ok(), "{report}");
    }

    #[test]
    fn reports_missing_and_unregistered_files() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str| std::fs::write(dir.path().join(name), "<!doctype html>").unwrap();
        write("architecture.html");
        write("auth-deployment.html");
        write("zeta.html");
        write("alpha.html");
        write("notes.md");
        write(".gitkeep");
        std::fs::create_dir(dir.path().join("content-pipeline.html")).unwrap();

        let report = check_dir(dir.path()).unwrap();
        assert!(!report.is_ok());
        assert_eq!(report.missing_files, [find("content-pipeline").unwrap()]);
        assert_eq!(report.unregistered_files, ["alpha.html", "zeta.html"]);
        let text = report.to_string();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(
            text.contains("_overviews/content-pipeline.html is missing"),
            "{text}"
        );
        assert!(
            text.contains("_overviews/zeta.html has no registry entry"),
            "{text}"
        );
    }

    #[test]
    fn complete_directory_is_ok() {
        let dir = tempfile::tempdir().unwrap();
        for o in OVERVIEWS {
            std::fs::write(dir.path().join(format!("{}.html", o.id)), "x").unwrap();
        }
        let report = check_dir(dir.path()).unwrap();
        assert!(report.is_ok(), "{report}");
        assert_eq!(report.to_string(), "");
    }

    #[test]
    fn missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = check_dir(&dir.path().join("nope")).unwrap_err();
        assert!(
            err.to_string().contains("cannot read overview directory"),
            "{err}"
        );
    }
}
