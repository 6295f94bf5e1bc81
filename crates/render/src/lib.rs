//! Rendering for dochub's docs site: markdown to HTML with stable heading ids and an h2/h3
//! outline, links between pages rewritten to `/docs/...` URLs, and the page layout (header
//! bar, sidebar, breadcrumbs, "On this page") as compiled `askama` templates with embedded
//! CSS. It reads no files and answers no requests (the routes are `dochub-app`'s); nothing
//! here knows about Spin.
//!
//! ```
//! use dochub_render::{Location, Nav, NavItem, NavProject, NavSubproject, document_page, render_markdown};
//!
//! let source = "---\ntitle: Setup\n---\n# Setup\n\n## Install\n\nSee [the API](../api/index.md).\n";
//! let rendered = render_markdown(source, &["dochub", "docs"]);
//! assert_eq!(rendered.toc[0].id, "install");
//!
//! let nav = Nav {
//!     projects: vec![NavProject {
//!         project: NavItem::new("dochub", "dochub"),
//!         subprojects: vec![NavSubproject {
//!             subproject: NavItem::new("docs", "Docs"),
//!             pages: vec![NavItem::new("setup", "Setup")],
//!         }],
//!         versions: vec![],
//!     }],
//!     has_reports: true,
//!     ..Nav::default()
//! };
//! let here = Location {
//!     project: Some(NavItem::new("dochub", "dochub")),
//!     subproject: Some(NavItem::new("docs", "Docs")),
//!     page: Some(NavItem::new("setup", "Setup")),
//! };
//! let html = document_page(&nav, &here, "Setup", "How to install", &rendered).unwrap();
//! assert!(html.contains(r#"<a class="active" aria-current="page" href="/docs/dochub/docs/setup">Setup</a>"#));
//! assert!(html.contains(r#"href="/docs/dochub/api/""#));
//! ```
#![deny(missing_docs)]

mod highlight;
mod layout;
mod links;
mod markdown;

pub use dochub_content::{FALLBACK_ID, slugify};
pub use highlight::{Segment, highlight};
pub use layout::{
    Card, LayoutError, Location, MAX_SIDEBAR_PAGES, Nav, NavItem, NavProject, NavSubproject,
    PageMeta, VersionLink, VersionSwitcher, card_page, document_page, document_page_with,
    edit_href, markdown_href, not_found_page, page_href, project_href, search_page,
    subproject_href,
};
pub use markdown::{
    Rendered, TocEntry, options, render_body, render_body_highlighted, render_markdown,
    strip_frontmatter,
};
