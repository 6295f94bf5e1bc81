//! Content lint for `dochub check`: everything the service silently works
//! around (broken or missing frontmatter, `_subproject.yaml` errors, references
//! to nothing, pages no route can reach) reported with the file and line it is in.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use crate::error::ContentError;
use crate::limits::{MAX_PAGE_BYTES, human_size};
use crate::model::{Page, Project, Subproject};
use crate::report::is_report_name;
use crate::segment::is_valid_id;
use crate::tree::{ContentRoot, PROJECT_META, REPORTS_DIR, SUBPROJECT_META};
use crate::yaml::yaml_error_line;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Served with a fallback; worth fixing (`dochub check --strict` fails on it).
    Warning,
    /// Content is wrong: `dochub check` fails.
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// File or directory, relative to the content root, with `/` separators.
    pub path: String,
    /// The 1-based line the problem is on, when it is in a file that exists.
    pub line: Option<usize>,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong, and what the service does about it.
    pub message: String,
}

impl Diagnostic {
    /// A finding on a line of a file.
    pub fn at(path: impl Into<String>, line: usize, severity: Severity, message: String) -> Self {
        Diagnostic {
            path: path.into(),
            line: Some(line),
            severity,
            message,
        }
    }

    /// A finding about a directory or a missing file, which has no line.
    pub fn on(path: impl Into<String>, severity: Severity, message: String) -> Self {
        Diagnostic {
            path: path.into(),
            line: None,
            severity,
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `path:line: level: message`, the shape editors and CI logs link to.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match self.line {
            Some(line) => write!(f, "{}:{line}: {level}: {}", self.path, self.message),
            None => write!(f, "{}: {level}: {}", self.path, self.message),
        }
    }
}

impl ContentRoot {
    /// Lints the whole tree; findings sorted by path and line.
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
        let mut targets = BTreeSet::new();
        let mut pages = Vec::new();
        for p in self.projects()? {
            self.check_project_meta(&p, &mut out);
            let subs = self.subprojects(&p.id)?.unwrap_or_default();
            if subs.is_empty() {
                out.push(Diagnostic::on(
                    &p.id,
                    Severity::Warning,
                    "project has no subprojects".into(),
                ));
            }
            for s in subs {
                self.check_subproject_meta(&s, &mut out);
                targets.insert(format!("{}/{}", p.id, s.id));
                pages.extend(self.pages(&p.id, &s.id)?);
            }
        }
        check_redirects(&pages, &mut out);
        for page in &pages {
            let path = format!("{}.md", page.path());
            let size = std::fs::metadata(self.path().join(&path)).map_or(0, |m| m.len());
            if size > MAX_PAGE_BYTES {
                // What is served in its place is checked by construction.
                out.push(Diagnostic::on(
                    path,
                    Severity::Error,
                    format!(
                        "page is {size} bytes ({}), over the limit of {}: served as a notice, not rendered, searched or listed for agents",
                        human_size(size),
                        human_size(MAX_PAGE_BYTES)
                    ),
                ));
                continue;
            }
            check_page(page, &targets, &mut out);
        }
        self.check_reports(&mut out)?;
        self.check_unreachable(Path::new(""), 0, &mut out)?;
        out.sort();
        Ok(out)
    }

    fn check_project_meta(&self, project: &Project, out: &mut Vec<Diagnostic>) {
        let id = &project.id;
        let path = format!("{id}/{PROJECT_META}");
        self.check_utf8(&path, out);
        if !project.meta_warnings.is_empty() {
            let text = self.text(&path);
            for w in &project.meta_warnings {
                // A `versions` entry left out changes what readers are shown: an error.
                let (key, severity) = if w.starts_with("`versions`") {
                    ("versions:", Severity::Error)
                } else {
                    ("order:", Severity::Warning)
                };
                let line = line_of(&text, key).unwrap_or(1);
                out.push(Diagnostic::at(&path, line, severity, w.clone()));
            }
        }
        if let Some(e) = &project.meta_error {
            let line = self.yaml_line(&path);
            out.push(Diagnostic::at(
                path,
                line,
                Severity::Error,
                format!("{e}; the name falls back to `{id}`"),
            ));
        } else if !self.path().join(&path).is_file() {
            out.push(Diagnostic::on(
                id,
                Severity::Warning,
                format!("no {PROJECT_META}; the name falls back to `{id}`"),
            ));
        }
    }

    fn check_subproject_meta(&self, s: &Subproject, out: &mut Vec<Diagnostic>) {
        let dir = format!("{}/{}", s.project, s.id);
        let meta = format!("{dir}/{SUBPROJECT_META}");
        self.check_utf8(&meta, out);
        if let Some(e) = &s.meta_error {
            out.push(Diagnostic::at(
                &meta,
                self.yaml_line(&meta),
                Severity::Error,
                format!("{e}; name, description and schema_coverage fall back to defaults"),
            ));
        } else if !self.path().join(&meta).is_file() {
            out.push(Diagnostic::on(
                &dir,
                Severity::Warning,
                format!("no {SUBPROJECT_META}; schema_coverage is all false"),
            ));
        }
        let text = self.text(&meta);
        for w in &s.meta_warnings {
            // Warnings name the key as `schema_coverage.<key>` or `` `order` ``: point at
            // that key's line.
            let key = if w.starts_with("`order`") {
                "order"
            } else {
                w.strip_prefix("schema_coverage.")
                    .and_then(|rest| rest.split_whitespace().next())
                    .unwrap_or("schema_coverage")
            };
            let line = line_of(&text, &format!("{key}:")).unwrap_or(1);
            out.push(Diagnostic::at(&meta, line, Severity::Warning, w.clone()));
        }
        if s.doc_count == 0 {
            out.push(Diagnostic::on(
                dir,
                Severity::Warning,
                "subproject has no pages".into(),
            ));
        }
    }

    /// Names and descriptions end up in every manifest and page title: bytes that are not
    /// UTF-8 are an error there, shown as U+FFFD everywhere.
    fn check_utf8(&self, path: &str, out: &mut Vec<Diagnostic>) {
        let Ok(bytes) = std::fs::read(self.path().join(path)) else {
            return;
        };
        if let Err(e) = std::str::from_utf8(&bytes) {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            out.push(Diagnostic::at(
                path,
                line,
                Severity::Error,
                "not valid UTF-8; invalid bytes are shown as U+FFFD".into(),
            ));
        }
    }

    /// The line a YAML file's parse error is on (1 when the parser gives none).
    fn yaml_line(&self, path: &str) -> usize {
        yaml_error_line(&self.text(path)).unwrap_or(1)
    }

    /// A file's text, decoded lossily; empty when it cannot be read (the finding then points at line 1).
    fn text(&self, path: &str) -> String {
        std::fs::read(self.path().join(path))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn check_reports(&self, out: &mut Vec<Diagnostic>) -> Result<(), ContentError> {
        let dir = self.path().join(REPORTS_DIR);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        for entry in entries {
            let entry = entry.map_err(|e| ContentError::io(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{REPORTS_DIR}/{name}");
            if !is_report_name(&name) {
                out.push(Diagnostic::on(
                    path,
                    Severity::Warning,
                    "ignored: report files are named YYYY-MM-DD.json".into(),
                ));
                continue;
            }
            let bytes =
                std::fs::read(entry.path()).map_err(|e| ContentError::io(entry.path(), e))?;
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(_)) => {}
                Ok(_) => out.push(Diagnostic::at(
                    path,
                    1,
                    Severity::Error,
                    "not a JSON object".into(),
                )),
                Err(e) => out.push(Diagnostic::at(
                    path,
                    e.line().max(1),
                    Severity::Error,
                    format!("invalid JSON: {e}"),
                )),
            }
        }
        Ok(())
    }

    /// Every `.md` file no route serves: outside `<project>/<subproject>/`, nested deeper, or
    /// with a name the service skips. Hidden entries (`.git`) and symlinked folders are not entered.
    fn check_unreachable(
        &self,
        rel: &Path,
        depth: usize,
        out: &mut Vec<Diagnostic>,
    ) -> Result<(), ContentError> {
        let dir = self.path().join(rel);
        let entries = std::fs::read_dir(&dir).map_err(|e| ContentError::io(&dir, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ContentError::io(&dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || (depth == 0 && name == REPORTS_DIR) {
                continue;
            }
            let path = rel.join(&name);
            let kind = entry
                .file_type()
                .map_err(|e| ContentError::io(entry.path(), e))?;
            if kind.is_symlink() {
                if let Some(d) = self.check_link(&path) {
                    out.push(d);
                }
                continue;
            }
            if kind.is_dir() {
                self.check_unreachable(&path, depth + 1, out)?;
                continue;
            }
            let Some(stem) = name.strip_suffix(".md") else {
                continue;
            };
            let shown = path.to_string_lossy().replace('\\', "/");
            if let Some(why) = unreachable_reason(&shown, stem, depth) {
                out.push(Diagnostic::on(
                    shown,
                    Severity::Error,
                    format!("page is unreachable: {why}"),
                ));
            }
        }
        Ok(())
    }
}

impl ContentRoot {
    /// A link in the tree, as `spin up` would copy it at start (Spin v4.0.2's loader, `copy_glob`):
    /// the copy follows links, so a link to a file outside the tree is copied and served as if
    /// it were content, and a link to a folder above it is copied into itself at every level
    /// until the path is too long, and the app never starts.
    fn check_link(&self, rel: &Path) -> Option<Diagnostic> {
        let shown = rel.to_string_lossy().replace('\\', "/");
        let link = self.path().join(rel);
        let written = std::fs::read_link(&link)
            .map(|t| t.to_string_lossy().into_owned())
            .unwrap_or_default();
        let root = std::fs::canonicalize(self.path()).ok()?;
        let message = match std::fs::canonicalize(&link) {
            Err(e) => format!(
                "link to `{written}` cannot be followed ({e}); `spin up` fails to start on it"
            ),
            Ok(target)
                if link
                    .parent()
                    .and_then(|p| std::fs::canonicalize(p).ok())
                    .is_some_and(|dir| dir.starts_with(&target)) =>
            {
                format!(
                    "link to `{written}`, a folder holding the link itself: `spin up` copies it into itself until the path is too long and never starts; dochub-host refuses it"
                )
            }
            Ok(target) if !target.starts_with(&root) => format!(
                "link to `{}`, outside the content tree: `spin up` copies and serves what it points to; copy the file in, or remove the link",
                target.display()
            ),
            Ok(_) => return None,
        };
        Some(Diagnostic::on(shown, Severity::Error, message))
    }
}

/// Why a `.md` file at `path` (`depth` folders deep) is served by no route, if it is not.
fn unreachable_reason(path: &str, stem: &str, depth: usize) -> Option<&'static str> {
    if path == "_master/index.md" {
        return None;
    }
    let mut segments: Vec<&str> = path.split('/').collect();
    segments.pop();
    let bad_name = segments.iter().any(|s| !is_valid_id(s)) || !is_valid_id(stem);
    match depth {
        0 => Some("pages live in <project>/<subproject>/<page>.md, not at the content root"),
        _ if bad_name => Some(
            "names starting with `_` or `.`, or holding `:` or control characters, are never served",
        ),
        1 => Some("pages live in <project>/<subproject>/, not directly in a project folder"),
        2 => None,
        _ => Some("pages nested below <project>/<subproject>/ are never listed or served"),
    }
}

fn check_page(page: &Page, targets: &BTreeSet<String>, out: &mut Vec<Diagnostic>) {
    let path = format!("{}.md", page.path());
    let fm = &page.parsed.frontmatter;
    let text = String::from_utf8_lossy(&page.raw);
    let mut push = |line: usize, severity, message: String| {
        out.push(Diagnostic::at(&path, line, severity, message));
    };
    if !fm.present {
        push(
            1,
            Severity::Error,
            "missing frontmatter: start the page with a `---` block holding `title:` and `summary:`"
                .into(),
        );
    }
    if let Some(e) = &fm.error {
        // The YAML starts on line 2, after the opening `---`.
        let line = frontmatter_yaml(&text)
            .and_then(yaml_error_line)
            .map_or(1, |l| l + 1);
        push(line, Severity::Error, format!("{e}; served with fallbacks"));
    }
    for w in &fm.warnings {
        let key = if w.starts_with("`order`") {
            "order:"
        } else {
            "references:"
        };
        let line = line_of(&text, key).unwrap_or(1);
        push(line, Severity::Warning, w.clone());
    }
    for e in &fm.field_errors {
        let key = if e.starts_with("`updated`") {
            "updated:"
        } else {
            "redirect_from:"
        };
        // A bad entry is pointed at on its own line when it can be found.
        let entry = e.split('`').nth(3).filter(|_| key == "redirect_from:");
        let line = entry
            .and_then(|entry| entry_line(&text, entry))
            .or_else(|| line_of(&text, key))
            .unwrap_or(1);
        push(line, Severity::Error, e.clone());
    }
    if std::str::from_utf8(&page.raw).is_err() {
        push(
            1,
            Severity::Warning,
            "not valid UTF-8; invalid bytes are shown as U+FFFD".into(),
        );
    }
    if fm.title.is_none() && fm.error.is_none() {
        if !page.parsed.title_from_heading {
            push(
                1,
                Severity::Error,
                format!(
                    "missing title: no `title` in frontmatter and no `# ` heading; using `{}`",
                    page.id
                ),
            );
        } else if fm.present {
            push(
                1,
                Severity::Warning,
                format!(
                    "no `title` in frontmatter; using the heading `{}`",
                    page.title()
                ),
            );
        }
    }
    for r in &fm.references {
        if !targets.contains(&r.target) {
            let line = line_of(&text, &r.target)
                .or_else(|| line_of(&text, "references:"))
                .unwrap_or(1);
            push(
                line,
                Severity::Error,
                format!(
                    "reference target `{}` does not exist (expected `<project>/<subproject>`)",
                    r.target
                ),
            );
        }
    }
    let body = &page.parsed.body;
    // The body is the text's tail: its line 1 is the line after the frontmatter.
    let before = text
        .len()
        .checked_sub(body.len())
        .filter(|&at| text.is_char_boundary(at) && text[at..] == **body)
        .map_or(0, |at| text[..at].matches('\n').count());
    for (line, message) in crate::callout_findings(body) {
        push(before + line, Severity::Warning, message);
    }
}

/// What `redirect_from` makes wrong across pages: an old path that is a page (the page is
/// served, the redirect never), and an old path two pages claim (the first in path order wins).
fn check_redirects(pages: &[Page], out: &mut Vec<Diagnostic>) {
    let existing: BTreeSet<String> = pages.iter().map(Page::path).collect();
    let mut claims: BTreeMap<String, Vec<&Page>> = BTreeMap::new();
    for page in pages {
        let listed: BTreeSet<String> = page
            .parsed
            .frontmatter
            .redirect_from
            .iter()
            .map(crate::PagePath::joined)
            .collect();
        for old in listed {
            claims.entry(old).or_default().push(page);
        }
    }
    for (old, claimers) in claims {
        for page in &claimers {
            let path = format!("{}.md", page.path());
            let text = String::from_utf8_lossy(&page.raw);
            let line = entry_line(&text, &old)
                .or_else(|| line_of(&text, "redirect_from:"))
                .unwrap_or(1);
            let message = if existing.contains(&old) {
                format!(
                    "`redirect_from`: `{old}` is an existing page; the page is served there and this redirect never is"
                )
            } else if claimers.len() > 1 {
                let mut all: Vec<String> = claimers.iter().map(|p| p.path()).collect();
                all.sort();
                format!(
                    "`redirect_from`: `{old}` is claimed by {} pages ({}); `{}` gets the redirect",
                    all.len(),
                    all.join(", "),
                    all[0]
                )
            } else {
                continue;
            };
            out.push(Diagnostic::at(path, line, Severity::Error, message));
        }
    }
}

/// The 1-based number of the frontmatter line that lists `entry` as a block list item
/// (`- entry`, quoted or not); `None` when it is written otherwise (`[a, b]`).
fn entry_line(text: &str, entry: &str) -> Option<usize> {
    let yaml = frontmatter_yaml(text)?;
    yaml.lines()
        .position(|line| {
            let item = line.trim().strip_prefix('-').unwrap_or("").trim();
            item.trim_matches(['"', '\'']) == entry
        })
        .map(|i| i + 2)
}

/// The YAML between a page's opening `---` line and the next `---`/`...` line.
fn frontmatter_yaml(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n')?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut end = 0;
    for line in rest.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            return Some(&rest[..end]);
        }
        end += line.len();
    }
    Some(rest)
}

/// The 1-based number of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_by_depth_and_name() {
        assert!(unreachable_reason("notes.md", "notes", 0).is_some());
        assert!(unreachable_reason("p/notes.md", "notes", 1).is_some());
        assert!(unreachable_reason("p/s/page.md", "page", 2).is_none());
        assert!(unreachable_reason("p/s/_draft.md", "_draft", 2).is_some());
        assert!(unreachable_reason("p/_wip/page.md", "page", 2).is_some());
        assert!(unreachable_reason("p/s/deeper/page.md", "page", 3).is_some());
        assert!(unreachable_reason("_master/index.md", "index", 1).is_none());
        assert!(unreachable_reason("_master/other.md", "other", 1).is_some());
    }

    #[test]
    fn frontmatter_yaml_and_lines() {
        let text = "---\ntitle: T\nreferences:\n  - a/b\n---\nbody a/b\n";
        assert_eq!(
            frontmatter_yaml(text),
            Some("title: T\nreferences:\n  - a/b\n")
        );
        assert_eq!(line_of(text, "a/b"), Some(4));
        assert_eq!(frontmatter_yaml("# no block\n"), None);
    }
}
