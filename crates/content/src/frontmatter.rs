//! Page frontmatter: the YAML block between `---` lines at the top of a page,
//! and the fallbacks used when it is missing or broken.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::yaml::{order_field, parse_yaml, str_field};

/// The reference type assumed when a reference gives none.
pub const DEFAULT_REFERENCE_TYPE: &str = "depends_on";

/// The value of the frontmatter key `llms` that marks a page as optional for agents.
pub const LLMS_OPTIONAL: &str = "optional";

/// A cross-reference from a page to a subproject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The referenced subproject, `<project>/<subproject>`.
    pub target: String,
    /// The kind of reference, e.g. `depends_on`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// What the frontmatter of a page said, field by field, before fallbacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    /// Whether the page starts with a frontmatter block at all.
    pub present: bool,
    /// `title`, when given as a non-blank scalar.
    pub title: Option<String>,
    /// `summary`, when given as a non-blank scalar.
    pub summary: Option<String>,
    /// `references` entries that could be read.
    pub references: Vec<Reference>,
    /// `order`, when it is an integer: where the page goes among its subproject's
    /// ([`crate::reading_order`]).
    pub order: Option<i64>,
    /// `llms: optional`: the page is low priority for agents (listed under `## Optional` in
    /// `/llms.txt`, see [`crate::llms`]).
    pub llms_optional: bool,
    /// `updated`, when it is a date `YYYY-MM-DD` ([`crate::is_date`]): when the page last
    /// changed, shown on it and in the sitemap.
    pub updated: Option<String>,
    /// `redirect_from`: the page's old paths that are well formed, at most
    /// [`crate::MAX_REDIRECTS`] (see [`crate::redirect`]).
    pub redirect_from: Vec<crate::PagePath>,
    /// Why the block could not be parsed (then all fields are empty).
    pub error: Option<String>,
    /// Problems with single fields that did not stop parsing (for `dochub check`).
    pub warnings: Vec<String>,
    /// Fields that are wrong, not merely odd: an `updated` that is no date, a malformed or
    /// surplus `redirect_from` entry (`dochub check` reports them as errors). Each message
    /// starts with the field's name in backticks.
    pub field_errors: Vec<String>,
}

/// A page's text split into frontmatter and body, with the displayed fields resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPage {
    /// The frontmatter as written.
    pub frontmatter: Frontmatter,
    /// The markdown after the frontmatter block (the whole text when there is none),
    /// decoded lossily when the file is not UTF-8.
    pub body: String,
    /// Title: frontmatter `title`, else the first `# ` heading, else the page id.
    pub title: String,
    /// Whether [`ParsedPage::title`] came from the first `# ` heading.
    pub title_from_heading: bool,
    /// Summary: frontmatter `summary`, else `""`.
    pub summary: String,
}

/// Parses a page's bytes. Never fails: broken YAML, bad bytes or an empty file
/// give the fallbacks and a note in [`Frontmatter::error`].
///
/// ```
/// let page = dochub_content::parse_page("intro", b"---\ntitle: Hello\n---\n# Ignored\nText\n");
/// assert_eq!(page.title, "Hello");
/// assert_eq!(page.body, "# Ignored\nText\n");
/// let page = dochub_content::parse_page("intro", b"# From heading\n");
/// assert_eq!(page.title, "From heading");
/// ```
pub fn parse_page(id: &str, bytes: &[u8]) -> ParsedPage {
    let text = page_text(bytes);
    let text = text.as_ref();
    let (frontmatter, body) = match split(text) {
        Split::None => (Frontmatter::default(), text),
        Split::Unclosed => (
            Frontmatter {
                present: true,
                error: Some("frontmatter opened with `---` but never closed with `---`".into()),
                ..Frontmatter::default()
            },
            text,
        ),
        Split::Block { yaml, body } => (read_frontmatter(yaml), body),
    };
    let heading = if frontmatter.title.is_none() {
        first_heading(body)
    } else {
        None
    };
    let title_from_heading = heading.is_some();
    let title = frontmatter
        .title
        .clone()
        .or(heading)
        .unwrap_or_else(|| id.to_owned());
    ParsedPage {
        summary: frontmatter.summary.clone().unwrap_or_default(),
        body: body.to_owned(),
        title,
        title_from_heading,
        frontmatter,
    }
}

/// The body [`parse_page`] finds in a page's bytes, without reading its frontmatter: for a
/// page whose title and summary are known already (the prebuilt index recorded them).
///
/// ```
/// use dochub_content::{page_body, parse_page};
/// let page = b"---\ntitle: Hi\n---\n# Body\n";
/// assert_eq!(page_body(page), parse_page("p", page).body);
/// ```
pub fn page_body(bytes: &[u8]) -> String {
    let text = page_text(bytes);
    match split(&text) {
        Split::Block { body, .. } => body.to_owned(),
        Split::None | Split::Unclosed => text.into_owned(),
    }
}

/// A page's text: its bytes decoded lossily, without a leading BOM. What search matches and
/// what the frontmatter is split from.
pub fn page_text(raw: &[u8]) -> Cow<'_, str> {
    // Valid text first: `from_utf8` checks ASCII a word at a time, where the lossy decoder's
    // chunking costs several times as much on every page a search reads.
    match std::str::from_utf8(raw) {
        Ok(text) => Cow::Borrowed(text.strip_prefix('\u{feff}').unwrap_or(text)),
        Err(_) => {
            let text = String::from_utf8_lossy(raw).into_owned();
            Cow::Owned(match text.strip_prefix('\u{feff}') {
                Some(rest) => rest.to_owned(),
                None => text,
            })
        }
    }
}

/// The YAML block and the body of a page's text (a leading BOM already removed): `---` on the
/// first line, up to the next line that is `---` or `...` (trailing spaces and `\r` ignored).
/// `None` when the text has no block, or opens one and never closes it: then it is all body.
/// The one splitter: the renderer's `strip_frontmatter` uses it too.
///
/// ```
/// use dochub_content::split_frontmatter;
/// assert_eq!(split_frontmatter("---\ntitle: Hi\n---\n# Body\n"), Some(("title: Hi\n", "# Body\n")));
/// assert_eq!(split_frontmatter("---\nnever closed\n"), None);
/// ```
pub fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    match split(text) {
        Split::Block { yaml, body } => Some((yaml, body)),
        Split::None | Split::Unclosed => None,
    }
}

enum Split<'a> {
    None,
    Unclosed,
    Block { yaml: &'a str, body: &'a str },
}

/// Finds a `---` first line and the next `---` (or `...`) line.
fn split(text: &str) -> Split<'_> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if text[..first_end].trim_end() != "---" {
        return Split::None;
    }
    let yaml_start = (first_end + 1).min(text.len());
    let mut pos = yaml_start;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..line_end].trim_end();
        if line == "---" || line == "..." {
            return Split::Block {
                yaml: &text[yaml_start..pos],
                body: &text[(line_end + 1).min(text.len())..],
            };
        }
        pos = line_end + 1;
    }
    Split::Unclosed
}

fn read_frontmatter(yaml: &str) -> Frontmatter {
    let mut fm = Frontmatter {
        present: true,
        ..Frontmatter::default()
    };
    let value = match parse_yaml(yaml) {
        Ok(v) => v,
        Err(e) => {
            fm.error = Some(format!("invalid YAML in frontmatter: {e}"));
            return fm;
        }
    };
    match value {
        serde_json::Value::Null => return fm,
        serde_json::Value::Object(_) => {}
        _ => {
            fm.error = Some("frontmatter is not a mapping of `key: value` lines".into());
            return fm;
        }
    }
    fm.title = str_field(&value, "title");
    fm.summary = str_field(&value, "summary");
    match order_field(&value) {
        Ok(order) => fm.order = order,
        Err(warning) => fm.warnings.push(warning),
    }
    fm.llms_optional = str_field(&value, "llms").is_some_and(|v| v.trim() == LLMS_OPTIONAL);
    if let Some(refs) = value.get("references") {
        read_references(refs, &mut fm);
    }
    read_updated(&value, &mut fm);
    if let Some(old) = value.get("redirect_from") {
        read_redirects(old, &mut fm);
    }
    fm
}

fn read_updated(value: &serde_json::Value, fm: &mut Frontmatter) {
    match value.get("updated") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::String(date)) if crate::is_date(date.trim()) => {
            fm.updated = Some(date.trim().to_owned());
        }
        Some(other) => fm.field_errors.push(format!(
            "`updated` is {}, not a date `YYYY-MM-DD`; the page shows no date",
            match other {
                serde_json::Value::String(s) => format!("`{s}`"),
                other => format!("`{other}`"),
            }
        )),
    }
}

fn read_redirects(old: &serde_json::Value, fm: &mut Frontmatter) {
    use crate::fields::{MAX_REDIRECTS, PagePath};
    let items = match old {
        serde_json::Value::Null => return,
        // One path on its own is a list of one.
        serde_json::Value::String(_) => std::slice::from_ref(old),
        serde_json::Value::Array(items) => items.as_slice(),
        _ => {
            fm.field_errors.push(
                "`redirect_from` is not a list of `<project>/<subproject>/<page>` paths; it is ignored"
                    .into(),
            );
            return;
        }
    };
    if items.len() > MAX_REDIRECTS {
        fm.field_errors.push(format!(
            "`redirect_from` lists {} paths, over the limit of {MAX_REDIRECTS}; only the first {MAX_REDIRECTS} redirect",
            items.len()
        ));
    }
    for item in items.iter().take(MAX_REDIRECTS) {
        let parsed = match item {
            serde_json::Value::String(entry) => PagePath::parse(entry.trim()),
            other => Err(format!("`{other}` is not a page path")),
        };
        match parsed {
            Ok(path) => fm.redirect_from.push(path),
            Err(why) => fm
                .field_errors
                .push(format!("`redirect_from`: {why}; it is ignored")),
        }
    }
}

fn read_references(refs: &serde_json::Value, fm: &mut Frontmatter) {
    let items = match refs {
        serde_json::Value::Null => return,
        serde_json::Value::Array(items) => items,
        _ => {
            fm.warnings
                .push("`references` is not a list; it is ignored".into());
            return;
        }
    };
    for (i, item) in items.iter().enumerate() {
        let reference = match item {
            serde_json::Value::String(target) if !target.trim().is_empty() => Some(Reference {
                target: target.trim().to_owned(),
                kind: DEFAULT_REFERENCE_TYPE.into(),
            }),
            serde_json::Value::Object(_) => str_field(item, "target").map(|target| Reference {
                target,
                kind: str_field(item, "type").unwrap_or_else(|| DEFAULT_REFERENCE_TYPE.into()),
            }),
            _ => None,
        };
        match reference {
            Some(r) => fm.references.push(r),
            None => fm.warnings.push(format!(
                "reference #{} has no `target`; it is ignored",
                i + 1
            )),
        }
    }
}

/// The text of the first level-1 ATX heading outside fenced code.
fn first_heading(body: &str) -> Option<String> {
    let mut fence: Option<char> = None;
    for line in body.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent > 3 {
            continue;
        }
        let line = line.trim_start_matches(' ');
        if let Some(f) = fence {
            if line.starts_with(&[f, f, f][..]) {
                fence = None;
            }
            continue;
        }
        if line.starts_with("```") || line.starts_with("~~~") {
            fence = line.chars().next();
            continue;
        }
        let rest = if line == "#" {
            ""
        } else if let Some(rest) = line.strip_prefix("# ").or_else(|| line.strip_prefix("#\t")) {
            rest
        } else {
            continue;
        };
        // Drop an optional closing sequence of `#`s.
        let rest = rest.trim();
        let stripped = rest.trim_end_matches('#');
        let text = if stripped.is_empty() || stripped.ends_with([' ', '\t']) {
            stripped.trim()
        } else {
            rest
        };
        if !text.is_empty() {
            return Some(text.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_frontmatter_uses_heading_then_id() {
        let p = parse_page("x", b"Intro\n\n# The Title #\n");
        assert_eq!(p.title, "The Title");
        assert!(p.title_from_heading);
        assert!(!p.frontmatter.present);
        let p = parse_page("x", b"no heading here\n");
        assert_eq!(p.title, "x");
        assert_eq!(p.summary, "");
    }

    #[test]
    fn heading_inside_code_fence_is_skipped() {
        let p = parse_page("x", b"```bash\n# not a title\n```\n# Real\n");
        assert_eq!(p.title, "Real");
    }

    #[test]
    fn h2_and_hashtags_are_not_titles() {
        let p = parse_page("x", b"## Two\n#hashtag\n");
        assert_eq!(p.title, "x");
    }

    #[test]
    fn full_frontmatter() {
        let p = parse_page(
            "x",
            b"---\ntitle: T\nsummary: S\nreferences:\n  - target: a/b\n    type: depends_on\n  - c/d\n  - target: e/f\n    type: related\n---\nbody\n",
        );
        assert_eq!(p.title, "T");
        assert_eq!(p.summary, "S");
        assert_eq!(p.body, "body\n");
        assert_eq!(
            p.frontmatter.references,
            vec![
                Reference {
                    target: "a/b".into(),
                    kind: "depends_on".into()
                },
                Reference {
                    target: "c/d".into(),
                    kind: "depends_on".into()
                },
                Reference {
                    target: "e/f".into(),
                    kind: "related".into()
                },
            ]
        );
        assert!(p.frontmatter.error.is_none());
    }

    #[test]
    fn broken_yaml_falls_back() {
        let p = parse_page("x", b"---\ntitle: [unclosed\n---\n# H\n");
        assert_eq!(p.title, "H");
        assert!(
            p.frontmatter
                .error
                .as_deref()
                .unwrap_or("")
                .contains("invalid YAML")
        );
        assert_eq!(p.body, "# H\n");
    }

    #[test]
    fn unclosed_frontmatter_is_body() {
        let p = parse_page("x", b"---\ntitle: T\n");
        assert_eq!(p.title, "x");
        assert!(p.frontmatter.error.is_some());
        assert_eq!(p.body, "---\ntitle: T\n");
    }

    #[test]
    fn crlf_bom_and_dots_terminator() {
        let p = parse_page(
            "x",
            "\u{feff}---\r\ntitle: Ünïcødé ✓\r\n...\r\nbody".as_bytes(),
        );
        assert_eq!(p.title, "Ünïcødé ✓");
        assert_eq!(p.body, "body");
    }

    #[test]
    fn empty_and_non_utf8() {
        let p = parse_page("empty", b"");
        assert_eq!(p.title, "empty");
        let p = parse_page("bin", b"---\ntitle: Caf\xe9\n---\n\xff\xfe");
        assert_eq!(p.title, "Caf\u{fffd}");
        assert_eq!(p.body, "\u{fffd}\u{fffd}");
    }

    #[test]
    fn odd_field_types() {
        let p = parse_page(
            "x",
            b"---\ntitle: 2024\nsummary: [a]\nreferences: nope\n---\n",
        );
        assert_eq!(p.title, "2024");
        assert_eq!(p.summary, "");
        assert_eq!(p.frontmatter.warnings.len(), 1);
        let p = parse_page("x", b"---\n- a\n- b\n---\n");
        assert!(p.frontmatter.error.is_some());
        let p = parse_page("x", b"---\n---\n");
        assert!(p.frontmatter.present && p.frontmatter.error.is_none());
        let p = parse_page("x", b"---\ntitle: \"  \"\nreferences:\n  - type: x\n---\n");
        assert_eq!(p.title, "x");
        assert_eq!(p.frontmatter.warnings.len(), 1);
    }
}
