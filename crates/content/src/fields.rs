//! Values of frontmatter fields that other parts of dochub read on their own: page paths
//! (`redirect_from`) and dates (`updated`).

use serde::{Deserialize, Serialize};

use crate::segment::is_valid_id;

/// The most old paths one page may list: entries past it are ignored (and `dochub check` says
/// so). A page moves a few times in its life; the cap keeps one hostile page from filling the
/// redirect table that every other page's miss is looked up in.
pub const MAX_REDIRECTS: usize = 100;

/// A page's place in the tree, `<project>/<subproject>/<page>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PagePath {
    /// Project id.
    pub project: String,
    /// Subproject id.
    pub subproject: String,
    /// Page id (the file name without `.md`).
    pub page: String,
}

impl PagePath {
    /// A path from its three ids.
    pub fn new(project: &str, subproject: &str, page: &str) -> PagePath {
        PagePath {
            project: project.to_owned(),
            subproject: subproject.to_owned(),
            page: page.to_owned(),
        }
    }

    /// Reads an entry of `redirect_from`: three valid ids joined by `/`, nothing else; the
    /// error says what is wrong with it.
    ///
    /// ```
    /// use dochub_content::PagePath;
    /// assert_eq!(PagePath::parse("spin/v3/build"), Ok(PagePath::new("spin", "v3", "build")));
    /// assert!(PagePath::parse("/docs/spin/v3/build").is_err());
    /// assert!(PagePath::parse("spin/v3").is_err());
    /// assert!(PagePath::parse("spin/v3/build.md").is_err());
    /// ```
    pub fn parse(entry: &str) -> Result<PagePath, String> {
        let shape = "expected `<project>/<subproject>/<page>`";
        let parts: Vec<&str> = entry.split('/').collect();
        let [project, subproject, page] = parts[..] else {
            return Err(format!("`{entry}` is not a page path ({shape})"));
        };
        if let Some(bad) = [project, subproject, page]
            .into_iter()
            .find(|id| !is_valid_id(id))
        {
            return Err(format!(
                "`{entry}` is not a page path: `{bad}` is not a valid id ({shape})"
            ));
        }
        if page.ends_with(".md") {
            return Err(format!(
                "`{entry}` is not a page path: name the page without `.md` ({shape})"
            ));
        }
        Ok(PagePath::new(project, subproject, page))
    }

    /// `<project>/<subproject>/<page>`.
    pub fn joined(&self) -> String {
        format!("{}/{}/{}", self.project, self.subproject, self.page)
    }
}

/// Whether `text` is a date `YYYY-MM-DD` that exists on the calendar.
///
/// ```
/// use dochub_content::is_date;
/// assert!(is_date("2024-02-29"));
/// assert!(!is_date("2023-02-29"));
/// assert!(!is_date("yesterday"));
/// assert!(!is_date("2024-5-1"));
/// ```
pub fn is_date(text: &str) -> bool {
    let shaped = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    shaped && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_three_valid_ids() {
        assert!(PagePath::parse("a/b/c").is_ok());
        for bad in [
            "", "a/b", "a/b/c/d", "a//c", "../b/c", "a/_b/c", "a/b/c.md", "a/b/", "a:b/c/d",
        ] {
            assert!(PagePath::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(PagePath::new("a", "b", "c").joined(), "a/b/c");
    }

    #[test]
    fn dates() {
        assert!(is_date("2026-11-26"));
        for bad in [
            "2026-13-01",
            "2026-11-31",
            "26-11-26",
            "2026/11/26",
            "2026-11-26T10:00",
            "+202-11-26",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }
}
