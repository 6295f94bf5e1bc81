//! Which subprojects a search keeps to ([`Within`]): each backend leaves the others' pages out
//! of its candidates, while the corpus statistics stay the whole store's, so a page scores the
//! same with a filter as without.

use std::collections::BTreeSet;

/// The subprojects whose pages may answer: every one, or every one but those left out (the
/// other versions of a versioned project, for `version=`).
///
/// ```
/// use dochub_search::Within;
/// let within = Within::leaving_out([("spin".to_owned(), "v1".to_owned())]);
/// assert!(within.admits("spin", "v2") && !within.admits("spin", "v1"));
/// assert!(Within::everything().admits("spin", "v1"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Within {
    left_out: BTreeSet<(String, String)>,
}

impl Within {
    /// Every subproject.
    pub fn everything() -> Within {
        Within::default()
    }

    /// Every subproject but these `(project, subproject)` pairs.
    pub fn leaving_out(subprojects: impl IntoIterator<Item = (String, String)>) -> Within {
        Within {
            left_out: subprojects.into_iter().collect(),
        }
    }

    /// Whether pages of this subproject may answer.
    pub fn admits(&self, project: &str, subproject: &str) -> bool {
        self.left_out.is_empty()
            || !self
                .left_out
                .contains(&(project.to_owned(), subproject.to_owned()))
    }

    /// The subprojects left out.
    pub fn left_out(&self) -> impl Iterator<Item = (&str, &str)> {
        self.left_out.iter().map(|(p, s)| (p.as_str(), s.as_str()))
    }
}
