//! Link destinations: relative links between markdown files become `/docs/...` URLs, and
//! script-bearing URL schemes are neutralised.

use dochub_content::encode_segment;

/// Schemes that run code in the reader's browser when a link is followed.
const UNSAFE_SCHEMES: [&str; 3] = ["javascript", "vbscript", "data"];

/// What a link in a rendered page points to, after rewriting.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// Keep the destination as written.
    Keep,
    /// Use this destination instead.
    To(String),
}

/// The URL scheme of `dest`, lowercased, read the way browsers read it (ASCII whitespace and
/// control characters inside the scheme are ignored by them, so they are ignored here too).
fn scheme(dest: &str) -> Option<String> {
    let colon = dest.find(':')?;
    let raw = &dest[..colon];
    let cleaned: String = raw
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let mut chars = cleaned.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(cleaned)
}

/// Whether a destination would run script when followed or loaded.
pub(crate) fn is_unsafe(dest: &str) -> bool {
    scheme(dest).is_some_and(|s| UNSAFE_SCHEMES.contains(&s.as_str()))
}

/// Rewrites a link destination found in a markdown file that lives in the content directory
/// `base` (e.g. `["dochub", "docs"]` for `dochub/docs/page.md`, `["_master"]` for the hub home).
///
/// A relative link to a `.md` file that resolves to `<project>/<subproject>/<page>.md` becomes
/// `/docs/<project>/<subproject>/<page>` (`index.md` becomes the subproject's landing URL), with
/// its `#fragment` kept. Anything that does not resolve to a page is left alone; unsafe schemes
/// become `#`.
pub(crate) fn rewrite(dest: &str, base: &[&str]) -> Rewrite {
    if is_unsafe(dest) {
        return Rewrite::To("#".to_owned());
    }
    if dest.is_empty() || dest.starts_with('#') || dest.starts_with('/') || scheme(dest).is_some() {
        return Rewrite::Keep;
    }
    let (path, fragment) = match dest.find('#') {
        Some(i) => (&dest[..i], &dest[i..]),
        None => (dest, ""),
    };
    // A query string on a link to a markdown file has no meaning here; such links are kept.
    if path.contains('?') {
        return Rewrite::Keep;
    }
    let Some(stem) = path.strip_suffix(".md") else {
        return Rewrite::Keep;
    };
    // The link is already in URL form; the directory names are not, so they are encoded.
    let mut segments: Vec<String> = base.iter().map(|s| encode_segment(s)).collect();
    for part in stem.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Rewrite::Keep;
                }
            }
            other => segments.push(other.to_owned()),
        }
    }
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match segments.as_slice() {
        [project, subproject, "index"] => {
            Rewrite::To(format!("/docs/{project}/{subproject}/{fragment}"))
        }
        [project, subproject, page] => {
            Rewrite::To(format!("/docs/{project}/{subproject}/{page}{fragment}"))
        }
        _ => Rewrite::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: [&str; 2] = ["dochub", "docs"];

    fn to(s: &str) -> Rewrite {
        Rewrite::To(s.to_owned())
    }

    #[test]
    fn sibling_pages() {
        assert_eq!(rewrite("other.md", &PAGE), to("/docs/dochub/docs/other"));
        assert_eq!(rewrite("./other.md", &PAGE), to("/docs/dochub/docs/other"));
        assert_eq!(
            rewrite("other.md#section-two", &PAGE),
            to("/docs/dochub/docs/other#section-two")
        );
        assert_eq!(rewrite("index.md", &PAGE), to("/docs/dochub/docs/"));
        assert_eq!(rewrite("index.md#top", &PAGE), to("/docs/dochub/docs/#top"));
    }

    #[test]
    fn other_subprojects_and_projects() {
        assert_eq!(rewrite("../api/raw.md", &PAGE), to("/docs/dochub/api/raw"));
        assert_eq!(
            rewrite("../../other/sub/x.md", &PAGE),
            to("/docs/other/sub/x")
        );
        assert_eq!(
            rewrite("../x.md", &PAGE),
            Rewrite::Keep,
            "a project-level file is no page"
        );
        assert_eq!(
            rewrite("../../../x.md", &PAGE),
            Rewrite::Keep,
            "escapes the content root"
        );
    }

    #[test]
    fn from_the_hub_home() {
        let master = ["_master"];
        assert_eq!(
            rewrite("../dochub/docs/intro.md", &master),
            to("/docs/dochub/docs/intro")
        );
        assert_eq!(rewrite("other.md", &master), Rewrite::Keep);
    }

    #[test]
    fn directory_names_are_encoded() {
        assert_eq!(
            rewrite("x%20y.md", &["my proj", "s"]),
            to("/docs/my%20proj/s/x%20y")
        );
    }

    #[test]
    fn other_links_are_kept() {
        for dest in [
            "https://example.com/a.md",
            "/docs/dochub/",
            "#local",
            "mailto:someone@example.com",
            "image.png",
            "other",
            "other.md?x=1",
            "",
        ] {
            assert_eq!(rewrite(dest, &PAGE), Rewrite::Keep, "{dest}");
        }
    }

    #[test]
    fn script_schemes_are_neutralised() {
        for dest in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "java\tscript:alert(1)",
            " javascript:alert(1)",
            "vbscript:msgbox",
            "data:text/html;base64,PHNjcmlwdD4=",
        ] {
            assert_eq!(rewrite(dest, &PAGE), to("#"), "{dest:?}");
        }
    }
}
