//! Redirects from a page's old addresses (`redirect_from` in its frontmatter) and the date it
//! was last updated (`updated`).
//!
//! A page that moved lists the paths it had, `<project>/<subproject>/<page>`:
//!
//! ```yaml
//! redirect_from:
//!   - spin/v3/build
//! ```
//!
//! and `/docs/spin/v3/build`, `/docs/spin/v3/build.md` and `/api/raw/spin/v3/build` answer 301
//! to the page's addresses. Only an address that is no page is redirected (a page there wins),
//! and of two pages claiming one old path the first in path order wins; `dochub check` reports
//! both as errors, as it does a malformed path and a list over [`crate::MAX_REDIRECTS`].

use crate::error::ContentError;
use crate::fields::PagePath;
use crate::frontmatter::parse_page;
use crate::tree::ContentRoot;

/// Whether a page's bytes may hold a `redirect_from` (a cheap test before parsing it, for the
/// live tree's look-up, which reads every page).
pub(crate) fn may_redirect(raw: &[u8]) -> bool {
    raw.windows(b"redirect_from".len())
        .any(|w| w == b"redirect_from")
}

impl ContentRoot {
    /// The page that lists `old` in its `redirect_from`, the first in path order, if any.
    /// Reads every page (those that do not mention `redirect_from` are not parsed): the live
    /// tree has no table, so it asks only for an address that is no page, a 404 otherwise.
    pub fn find_redirect(&self, old: &PagePath) -> Result<Option<PagePath>, ContentError> {
        for (project, subproject, page) in self.all_page_paths()? {
            let Some(raw) = self.raw(&project, &subproject, &page)? else {
                continue;
            };
            if !may_redirect(&raw) {
                continue;
            }
            if parse_page(&page, &raw)
                .frontmatter
                .redirect_from
                .contains(old)
            {
                return Ok(Some(PagePath {
                    project,
                    subproject,
                    page,
                }));
            }
        }
        Ok(None)
    }
}
