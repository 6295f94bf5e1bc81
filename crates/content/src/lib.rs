//! dochub's content model and the live tree, with no Spin dependency: projects, subprojects
//! and pages on disk; page frontmatter; a page as plain text ([`plain_text`]); the JSON
//! manifests; raw text; the tree as a search backend ([`TreeScan`], for `dochub_search`); the
//! latest daily report; the text of `/llms.txt` and `/llms-full.txt` ([`llms`]); content lint; and
//! the [`Catalog`] every reader asks, which the tree itself implements ([`ContentRoot`]) and
//! the prebuilt index implements in `dochub-index`. [`fsio`] is the file layer both read
//! through (direct WASI 0.2 calls in a component, `std` natively).
//!
//! Layout of a content root:
//!
//! ```text
//! <project>/_project.yaml                 name, description, order, versions
//! <project>/<subproject>/_subproject.yaml name, description, schema_coverage, order
//! <project>/<subproject>/<page>.md        a page, optionally with YAML frontmatter
//! _master/index.md                        the hub's home document
//! reports/YYYY-MM-DD.json                 daily agent reports
//! ```
//!
//! ```no_run
//! use dochub_content::{Catalog, ContentRoot};
//! # fn main() -> Result<(), dochub_content::CatalogError> {
//! let root = ContentRoot::open("content")?;
//! let manifest = root.master_manifest("2026-01-02T03:04:05.678Z")?;
//! for p in &manifest.projects {
//!     println!("{} ({} documents)", p.name, p.doc_count);
//! }
//! if let Some(page) = root.page("dochub", "api", "routes")? {
//!     println!("{}: {}", page.title(), page.summary());
//! }
//! let hits = root.search("manifest")?;
//! println!("{} hits", hits.results.len());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod callout;
mod catalog;
mod check;
mod code;
#[cfg(any(test, feature = "corpus"))]
pub mod corpus;
mod error;
mod fields;
mod frontmatter;
pub mod fsio;
pub mod limits;
pub mod llms;
mod manifest;
mod model;
mod plain;
pub mod redirect;
mod report;
mod search;
mod sections;
mod segment;
mod slug;
mod tree;
mod versions;
mod yaml;

pub use callout::{
    CalloutFinding, CalloutKind, Markdown, Piece, callout_findings, markdown_options,
};
pub use catalog::{Catalog, CatalogError, ManifestName, ReadError};
pub use check::{Diagnostic, Severity};
pub use code::{CodeBlock, code_blocks, code_key, fence_language};
pub use error::ContentError;
pub use fields::{MAX_REDIRECTS, PagePath, is_date};
pub use frontmatter::{
    DEFAULT_REFERENCE_TYPE, Frontmatter, LLMS_OPTIONAL, ParsedPage, Reference, page_body,
    page_text, parse_page, split_frontmatter,
};
pub use manifest::{
    DocumentEntry, MasterManifest, Named, ProjectEntry, ProjectManifest, SubprojectEntry,
    SubprojectManifest, encode_segment, raw_url, to_json,
};
pub use model::{
    Page, PageSource, PageSummary, Project, ProjectOutline, SchemaCoverage, Subproject,
    SubprojectSummary, reading_order,
};
pub use plain::{PlainBody, page_analysis, page_terms, plain_body, plain_text};
pub use report::{Report, is_report_name};
pub use search::TreeScan;
pub use sections::{BYTES_PER_TOKEN, Cut, Section, block_starts, count_tokens, cut, sections};
pub use segment::{MAX_ID_BYTES, is_valid_id};
pub use slug::{FALLBACK_ID, IdAllocator, heading_id_text, is_html_comment, slugify};
pub use tree::{ContentRoot, PROJECT_META, REPORTS_DIR, SUBPROJECT_META};
pub use versions::{known_versions, version_scope};
