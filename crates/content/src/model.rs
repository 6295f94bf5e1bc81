//! The content model: one family of types for projects, subprojects and pages, used by the
//! manifests, the docs sidebar, the llms files, search and the CLI alike, whichever catalog
//! ([`crate::Catalog`]) gave them.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::frontmatter::ParsedPage;

/// A project: a directory under the root whose name does not start with `_`
/// or `.`, other than `reports`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// Directory name.
    pub id: String,
    /// `name` from `_project.yaml`, else the id.
    pub name: String,
    /// `description` from `_project.yaml`, else `""`.
    pub description: String,
    /// Number of subprojects.
    pub subproject_count: usize,
    /// Number of pages across its subprojects.
    pub doc_count: usize,
    /// `order` from `_project.yaml` (see [`reading_order`]).
    pub order: Option<i64>,
    /// `versions` from `_project.yaml`: subprojects that are versions of one another, newest
    /// first (only those that exist, each once; see `crate::versions`).
    pub versions: Vec<String>,
    /// Why `_project.yaml` could not be read, if it could not.
    pub meta_error: Option<String>,
    /// Problems with single fields of `_project.yaml`.
    pub meta_warnings: Vec<String>,
}

/// The eight `schema_coverage` booleans of a subproject, as written in
/// `_subproject.yaml` (missing keys are `false`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaCoverage {
    /// The subproject's purpose is documented.
    pub purpose: bool,
    /// Its architecture is documented.
    pub architecture: bool,
    /// Its variables / configuration are documented.
    pub variables: bool,
    /// Its API endpoints are documented.
    pub api_endpoints: bool,
    /// Its handshakes (protocols with other parts) are documented.
    pub handshakes: bool,
    /// Its data model is documented.
    pub data_model: bool,
    /// Its dependencies are documented.
    pub dependencies: bool,
    /// Its status is documented.
    pub status: bool,
}

impl SchemaCoverage {
    /// The keys, in the order of the spec.
    pub const KEYS: [&'static str; 8] = [
        "purpose",
        "architecture",
        "variables",
        "api_endpoints",
        "handshakes",
        "data_model",
        "dependencies",
        "status",
    ];

    pub(crate) fn slot(&mut self, key: &str) -> Option<&mut bool> {
        Some(match key {
            "purpose" => &mut self.purpose,
            "architecture" => &mut self.architecture,
            "variables" => &mut self.variables,
            "api_endpoints" => &mut self.api_endpoints,
            "handshakes" => &mut self.handshakes,
            "data_model" => &mut self.data_model,
            "dependencies" => &mut self.dependencies,
            "status" => &mut self.status,
            _ => return None,
        })
    }
}

/// A subproject: a directory inside a project whose name does not start with `_` or `.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subproject {
    /// The project's id.
    pub project: String,
    /// Directory name.
    pub id: String,
    /// `name` from `_subproject.yaml`, else the id.
    pub name: String,
    /// `description` from `_subproject.yaml`, else `""`.
    pub description: String,
    /// Number of pages.
    pub doc_count: usize,
    /// `schema_coverage` from `_subproject.yaml`.
    pub schema_coverage: SchemaCoverage,
    /// `order` from `_subproject.yaml` (see [`reading_order`]).
    pub order: Option<i64>,
    /// Why `_subproject.yaml` could not be read, if it could not.
    pub meta_error: Option<String>,
    /// Problems with single fields of `_subproject.yaml`.
    pub meta_warnings: Vec<String>,
}

/// The order readers see projects, subprojects and pages in (the sidebar, listings, the
/// manifests, the llms files, previous / next): those with an `order` first, lowest first;
/// then those without; within each, by display name (case-insensitively, then exactly), then
/// by id. Each argument is `(order, name, id)`.
///
/// ```
/// use dochub_content::reading_order;
/// let mut pages = [(None, "Upgrade", "upgrade"), (Some(2), "Install", "install"),
///                  (None, "api", "api"), (Some(1), "Quickstart", "quickstart")];
/// pages.sort_by(|a, b| reading_order(*a, *b));
/// let ids: Vec<_> = pages.iter().map(|p| p.2).collect();
/// assert_eq!(ids, ["quickstart", "install", "api", "upgrade"]);
/// ```
pub fn reading_order(a: (Option<i64>, &str, &str), b: (Option<i64>, &str, &str)) -> Ordering {
    let place = |order: Option<i64>| (order.is_none(), order.unwrap_or(0));
    let folded = |name: &str| {
        name.chars()
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    place(a.0)
        .cmp(&place(b.0))
        .then_with(|| folded(a.1).cmp(&folded(b.1)))
        .then_with(|| a.1.cmp(b.1))
        .then_with(|| a.2.cmp(b.2))
}

/// One page: `<project>/<subproject>/<id>.md`, read and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The project's id.
    pub project: String,
    /// The subproject's id.
    pub subproject: String,
    /// File name without `.md`.
    pub id: String,
    /// The file's bytes, frontmatter included, exactly as on disk.
    pub raw: Vec<u8>,
    /// Frontmatter, body and resolved title and summary.
    pub parsed: ParsedPage,
}

impl Page {
    /// Resolved title (frontmatter, first `# ` heading, or id).
    pub fn title(&self) -> &str {
        &self.parsed.title
    }
    /// Frontmatter summary or `""`.
    pub fn summary(&self) -> &str {
        &self.parsed.summary
    }
    /// Markdown after the frontmatter.
    pub fn body(&self) -> &str {
        &self.parsed.body
    }
    /// What places this page among its subproject's: `(order, title, id)` for
    /// [`reading_order`].
    pub fn reading_key(&self) -> (Option<i64>, &str, &str) {
        (self.parsed.frontmatter.order, &self.parsed.title, &self.id)
    }
    /// `<project>/<subproject>/<id>`.
    pub fn path(&self) -> String {
        format!("{}/{}/{}", self.project, self.subproject, self.id)
    }
}

/// A project's name and its subprojects' names: what the docs sidebar shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectOutline {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Its subprojects' ids and display names, in [`reading_order`].
    pub subprojects: Vec<(String, String)>,
    /// Its versioned subprojects, newest first (see [`Project::versions`]).
    pub versions: Vec<String>,
}

/// A subproject as a card or a manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubprojectSummary {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Number of pages.
    pub doc_count: usize,
}

/// A page as a listing shows it, with what its catalog needs to read it back
/// ([`crate::Catalog::page_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSummary {
    /// File name without `.md`.
    pub id: String,
    /// Title, with fallbacks.
    pub title: String,
    /// Summary or `""`.
    pub summary: String,
    /// Frontmatter `llms: optional`.
    pub optional: bool,
    /// When the page last changed, `YYYY-MM-DD`: its frontmatter's `updated`, else (in the
    /// prebuilt index) the date of the last git commit that touched it.
    pub updated: Option<String>,
    /// Where the page's bytes come from.
    pub source: PageSource,
}

/// How a listed page is read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageSource {
    /// The live tree read the file to list it and kept only what it lists: the text is read
    /// again when asked for, so a list of 20,000 pages holds their titles, not their text.
    Tree,
    /// The index recorded the file's size and hash: it is read again and compared.
    Recorded {
        /// File size in bytes.
        size: u64,
        /// Hash of the file's bytes.
        hash: u64,
        /// The page's number in the index.
        number: u32,
    },
}

impl PageSummary {
    /// The summary of a page read from the tree.
    pub fn of_page(page: Page) -> PageSummary {
        PageSummary {
            id: page.id,
            title: page.parsed.title,
            summary: page.parsed.summary,
            optional: page.parsed.frontmatter.llms_optional,
            updated: page.parsed.frontmatter.updated,
            source: PageSource::Tree,
        }
    }
}

impl From<Subproject> for SubprojectSummary {
    fn from(s: Subproject) -> SubprojectSummary {
        SubprojectSummary {
            id: s.id,
            name: s.name,
            description: s.description,
            doc_count: s.doc_count,
        }
    }
}
