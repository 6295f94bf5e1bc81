//! Content lint for `dochub check`: everything the service silently works
//! around (broken YAML, missing titles, references to nothing) reported with
//! the file it is in.

use std::collections::BTreeSet;
use std::fmt;

use crate::error::ContentError;
use crate::report::is_report_name;
use crate::tree::{ContentRoot, PROJECT_META, REPORTS_DIR, SUBPROJECT_META};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Served with a fallback; worth fixing.
    Warning,
    /// Content is wrong: `dochub check` fails.
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// File or directory, relative to the content root.
    pub path: String,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong, and what the service does about it.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{level}: {}: {}", self.path, self.message)
    }
}

impl ContentRoot {
    /// Lints the whole tree; findings sorted by path.
    ///
    /// ```no_run
    /// let root = dochub_content::ContentRoot::open("content")?;
    /// for d in root.check()? {
    ///     eprintln!("{d}");
    /// }
    /// # Ok::<(), dochub_content::ContentError>(())
    /// ```
    pub fn check(&self) -> Result<Vec<Diagnostic>, ContentError> {
        let mut out = Vec::new();
        let mut push = |path: String, severity, message: String| {
            out.push(Diagnostic {
                path,
                severity,
                message,
            })
        };
        let projects = self.projects()?;
        let mut targets = BTreeSet::new();
        let mut pages = Vec::new();
        for p in &projects {
            if let Some(e) = &p.meta_error {
                push(
                    format!("{}/{PROJECT_META}", p.id),
                    Severity::Error,
                    format!("{e}; the name falls back to `{}`", p.id),
                );
            } else if !self.path().join(&p.id).join(PROJECT_META).is_file() {
                push(
                    p.id.clone(),
                    Severity::Warning,
                    format!("no {PROJECT_META}; the name falls back to `{}`", p.id),
                );
            }
            let subs = self.subprojects(&p.id)?.unwrap_or_default();
            if subs.is_empty() {
                push(
                    p.id.clone(),
                    Severity::Warning,
                    "project has no subprojects".into(),
                );
            }
            for s in subs {
                let dir = format!("{}/{}", p.id, s.id);
                let meta = format!("{dir}/{SUBPROJECT_META}");
                if let Some(e) = &s.meta_error {
                    push(
                        meta.clone(),
                        Severity::Error,
                        format!("{e}; name, description and schema_coverage fall back to defaults"),
                    );
                } else if !self
                    .path()
                    .join(&p.id)
                    .join(&s.id)
                    .join(SUBPROJECT_META)
                    .is_file()
                {
                    push(
                        dir.clone(),
                        Severity::Warning,
                        format!("no {SUBPROJECT_META}; schema_coverage is all false"),
                    );
                }
                for w in &s.meta_warnings {
                    push(meta.clone(), Severity::Warning, w.clone());
                }
                if s.doc_count == 0 {
                    push(
                        dir.clone(),
                        Severity::Warning,
                        "subproject has no pages".into(),
                    );
                }
                targets.insert(dir);
                pages.extend(self.pages(&p.id, &s.id)?);
            }
        }
        for page in &pages {
            let path = format!("{}.md", page.path());
            let fm = &page.parsed.frontmatter;
            if let Some(e) = &fm.error {
                push(
                    path.clone(),
                    Severity::Error,
                    format!("{e}; served with fallbacks"),
                );
            }
            for w in &fm.warnings {
                push(path.clone(), Severity::Warning, w.clone());
            }
            if std::str::from_utf8(&page.raw).is_err() {
                push(
                    path.clone(),
                    Severity::Warning,
                    "not valid UTF-8; invalid bytes are shown as U+FFFD".into(),
                );
            }
            if fm.title.is_none() && fm.error.is_none() {
                if page.parsed.title_from_heading {
                    push(
                        path.clone(),
                        Severity::Warning,
                        format!(
                            "no `title` in frontmatter; using the heading `{}`",
                            page.title()
                        ),
                    );
                } else {
                    push(
                        path.clone(),
                        Severity::Error,
                        format!(
                            "missing title: no `title` in frontmatter and no `# ` heading; using `{}`",
                            page.id
                        ),
                    );
                }
            }
            for r in &fm.references {
                if !targets.contains(&r.target) {
                    push(
                        path.clone(),
                        Severity::Error,
                        format!(
                            "reference target `{}` does not exist (expected `<project>/<subproject>`)",
                            r.target
                        ),
                    );
                }
            }
        }
        self.check_reports(&mut push)?;
        out.sort();
        Ok(out)
    }

    fn check_reports(
        &self,
        push: &mut impl FnMut(String, Severity, String),
    ) -> Result<(), ContentError> {
        let dir = self.path().join(REPORTS_DIR);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        for entry in entries {
            let entry = entry.map_err(|e| ContentError::io(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{REPORTS_DIR}/{name}");
            if !is_report_name(&name) {
                push(
                    path,
                    Severity::Warning,
                    "ignored: report files are named YYYY-MM-DD.json".into(),
                );
                continue;
            }
            let bytes =
                std::fs::read(entry.path()).map_err(|e| ContentError::io(entry.path(), e))?;
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(_)) => {}
                Ok(_) => push(path, Severity::Error, "not a JSON object".into()),
                Err(e) => push(path, Severity::Error, format!("invalid JSON: {e}")),
            }
        }
        Ok(())
    }
}
