//! The docs site layout: header bar, sidebar, breadcrumbs, summary, content and "On this page".

use askama::Template;
use dochub_content::encode_segment;
use dochub_search::{SearchHit, excerpt};

use crate::highlight::{Segment, highlight};
use crate::markdown::{Rendered, TocEntry};

/// Errors from laying out a page.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// The template failed to render (only a formatting failure can cause this).
    #[error("page template failed to render: {0}")]
    Template(#[from] askama::Error),
}

/// Something with an id (its URL segment) and a display name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavItem {
    /// URL segment: the directory name or the page file name without `.md`.
    pub id: String,
    /// Display name (a project or subproject name, a page title).
    pub name: String,
}

impl NavItem {
    /// A `NavItem` from an id and a display name.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
        }
    }
}

/// A subproject in the sidebar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavSubproject {
    /// The subproject's id and name.
    pub subproject: NavItem,
    /// Its pages (id and title), in display order. Only the current subproject's pages are
    /// shown, so these may be left empty for the others.
    pub pages: Vec<NavItem>,
}

/// A project in the sidebar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavProject {
    /// The project's id and display name.
    pub project: NavItem,
    /// Its subprojects, in display order.
    pub subprojects: Vec<NavSubproject>,
    /// Its subprojects that are versions of one another, newest first: the sidebar shows them
    /// as one entry, the version being read (else the latest).
    pub versions: Vec<String>,
}

/// The sidebar: every project and its subprojects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nav {
    /// Projects in display order.
    pub projects: Vec<NavProject>,
    /// Whether there is a report to link to: without one the header shows no Report link
    /// (it would lead to a 404).
    pub has_reports: bool,
    /// The version the search box keeps to (a hidden `version` field), on a page of a
    /// versioned subproject and on a search kept to a version.
    pub version: Option<String>,
    /// The version switcher of a page in a versioned subproject.
    pub switcher: Option<VersionSwitcher>,
}

/// One version in the switcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionLink {
    /// The version's subproject id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// The same page in that version, or that version's landing page when it has none.
    pub href: String,
    /// Whether `href` is the same page (`false`: the version's landing page).
    pub same_page: bool,
}

/// What a page of a versioned subproject shows of its versions: the switcher, and on an older
/// version a notice pointing to the latest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionSwitcher {
    /// Every version, newest first: the first is the latest.
    pub links: Vec<VersionLink>,
    /// The position in `links` of the version being read.
    pub current: usize,
    /// On an older version, the absolute URL of the same page in the latest version when it
    /// exists there: the page's `<link rel="canonical">`.
    pub canonical: Option<String>,
}

impl VersionSwitcher {
    /// The latest version, when the one being read is older.
    fn older_than(&self) -> Option<&VersionLink> {
        (self.current > 0).then(|| self.links.first()).flatten()
    }
}

impl Nav {
    /// The names of a project and one of its subprojects, when both are in the sidebar.
    pub fn find(&self, project: &str, subproject: &str) -> Option<(NavItem, NavItem)> {
        let p = self.projects.iter().find(|p| p.project.id == project)?;
        let s = p
            .subprojects
            .iter()
            .find(|s| s.subproject.id == subproject)?;
        Some((p.project.clone(), s.subproject.clone()))
    }
}

/// Where in the tree the reader is; drives the breadcrumbs, the open sidebar section and the
/// `active` link. The default is the docs home.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location {
    /// The current project.
    pub project: Option<NavItem>,
    /// The current subproject (only with a project).
    pub subproject: Option<NavItem>,
    /// The current page (only with a subproject); `index` is the subproject's landing page.
    pub page: Option<NavItem>,
}

/// One card of a card-list page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// Where the card links to.
    pub href: String,
    /// Card heading.
    pub title: String,
    /// Description under the heading; may be empty.
    pub description: String,
    /// A muted line such as "3 pages"; may be empty.
    pub meta: String,
}

/// URL of a project's card list (ids are percent-encoded).
pub fn project_href(project: &str) -> String {
    format!("/docs/{}/", encode_segment(project))
}

/// URL of a subproject's landing page (ids are percent-encoded).
pub fn subproject_href(project: &str, subproject: &str) -> String {
    format!(
        "/docs/{}/{}/",
        encode_segment(project),
        encode_segment(subproject)
    )
}

/// URL of a page (ids are percent-encoded); `index` is the subproject's landing page.
///
/// ```
/// assert_eq!(dochub_render::page_href("p", "s", "index"), "/docs/p/s/");
/// assert_eq!(dochub_render::page_href("p", "s", "a b#c"), "/docs/p/s/a%20b%23c");
/// ```
pub fn page_href(project: &str, subproject: &str, page: &str) -> String {
    if page == "index" {
        subproject_href(project, subproject)
    } else {
        format!(
            "/docs/{}/{}/{}",
            encode_segment(project),
            encode_segment(subproject),
            encode_segment(page)
        )
    }
}

/// The markdown twin (`/docs/<p>/<s>/<page>.md`) of the document at `here`, if it is a page
/// (a subproject's landing page is its `index.md`).
pub fn markdown_href(here: &Location) -> Option<String> {
    match (&here.project, &here.subproject, &here.page) {
        (Some(p), Some(s), Some(page)) => {
            Some(dochub_content::llms::twin_url(&p.id, &s.id, &page.id))
        }
        _ => None,
    }
}

/// URL of a search hit's page, from its `<project>/<subproject>/<page>` path.
fn hit_href(path: &str) -> String {
    let mut parts = path.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(p), Some(s), Some(page)) => page_href(p, s, page),
        _ => "/docs/".to_owned(),
    }
}

struct Crumb {
    label: String,
    href: Option<String>,
}

struct SidebarPage {
    href: String,
    title: String,
    active: bool,
}

struct SidebarSubproject {
    href: String,
    name: String,
    current: bool,
    active: bool,
    pages: Vec<SidebarPage>,
    /// Pages of the subproject the sidebar leaves out (see [`MAX_SIDEBAR_PAGES`]).
    more: usize,
}

/// The most pages the sidebar lists of a subproject: around the page shown, the rest reached
/// through the subproject's page. Every docs page carries its sidebar, so a subproject of
/// 20,000 pages would otherwise make each of them weigh a megabyte.
pub const MAX_SIDEBAR_PAGES: usize = 100;

/// The part of `pages` the sidebar lists: all of them, or [`MAX_SIDEBAR_PAGES`] around the
/// page `here` (from the first when it is none of them).
fn sidebar_window<'a>(pages: &'a [NavItem], here: Option<&str>) -> &'a [NavItem] {
    if pages.len() <= MAX_SIDEBAR_PAGES {
        return pages;
    }
    let at = here
        .and_then(|id| pages.iter().position(|page| page.id == id))
        .unwrap_or(0);
    let start = at
        .saturating_sub(MAX_SIDEBAR_PAGES / 2)
        .min(pages.len() - MAX_SIDEBAR_PAGES);
    &pages[start..start + MAX_SIDEBAR_PAGES]
}

/// The subprojects of `p` the sidebar lists: its versions as one entry, the one being read
/// (`here`, when it is one of them) else the latest, in the place of the first listed.
fn listed_subprojects<'a>(p: &'a NavProject, here: Option<&str>) -> Vec<&'a NavSubproject> {
    let is_version = |id: &str| p.versions.iter().any(|v| v == id);
    let shown = here
        .filter(|id| is_version(id))
        .or_else(|| p.versions.first().map(String::as_str));
    let mut placed = false;
    let mut out = Vec::new();
    for s in &p.subprojects {
        let id = s.subproject.id.as_str();
        if !is_version(id) {
            out.push(s);
        } else if !placed {
            placed = true;
            if let Some(shown) = p
                .subprojects
                .iter()
                .find(|s| Some(s.subproject.id.as_str()) == shown)
            {
                out.push(shown);
            }
        }
    }
    out
}

struct SidebarProject {
    href: String,
    name: String,
    open: bool,
    active: bool,
    subprojects: Vec<SidebarSubproject>,
}

struct HitView {
    /// The page, at the section's heading when the match is under one.
    href: String,
    title: String,
    section: Option<String>,
    path: String,
    excerpt: Vec<Segment>,
}

/// A link to the page before or after this one.
struct Neighbour {
    href: String,
    title: String,
}

enum Main<'a> {
    Document {
        /// Shown as the page's h1 when the markdown has none.
        heading: Option<&'a str>,
        html: &'a str,
        /// "Last updated" and "Edit this page", under the text.
        meta: &'a PageMeta,
    },
    Cards {
        heading: &'a str,
        cards: &'a [Card],
        empty: &'a str,
    },
    Search {
        query: &'a str,
        hits: Vec<HitView>,
        note: &'a str,
    },
    NotFound {
        message: &'a str,
    },
}

#[derive(Template)]
#[template(path = "layout.html")]
struct LayoutTemplate<'a> {
    title: &'a str,
    /// The page's markdown twin, announced with `<link rel="alternate">`.
    markdown_href: Option<String>,
    query: &'a str,
    home_active: bool,
    sidebar: Vec<SidebarProject>,
    crumbs: Vec<Crumb>,
    summary: &'a str,
    /// `<meta name="description">`: what search engines show under the title.
    description: String,
    main: Main<'a>,
    toc: &'a [TocEntry],
    has_reports: bool,
    /// A document's neighbours in its subproject's order.
    previous: Option<Neighbour>,
    next: Option<Neighbour>,
    /// The version the search box keeps to.
    version: Option<&'a str>,
    switcher: Option<&'a VersionSwitcher>,
    /// On an older version: the version being read and the latest.
    older: Option<(&'a VersionLink, &'a VersionLink)>,
    script: &'static str,
    theme_switch: &'static str,
}

fn id_of(named: Option<&NavItem>) -> Option<&str> {
    named.map(|n| n.id.as_str())
}

fn sidebar(nav: &Nav, here: &Location) -> Vec<SidebarProject> {
    let here_project = id_of(here.project.as_ref());
    let here_subproject = id_of(here.subproject.as_ref());
    let here_page = id_of(here.page.as_ref());
    nav.projects
        .iter()
        .map(|p| {
            let pid = p.project.id.as_str();
            let in_project = here_project == Some(pid);
            SidebarProject {
                href: project_href(pid),
                name: p.project.name.clone(),
                open: in_project,
                active: in_project && here_subproject.is_none(),
                subprojects: listed_subprojects(p, here_subproject.filter(|_| in_project))
                    .into_iter()
                    .map(|s| {
                        let sid = s.subproject.id.as_str();
                        let current = in_project && here_subproject == Some(sid);
                        let listed = if current {
                            sidebar_window(&s.pages, here_page)
                        } else {
                            &[]
                        };
                        SidebarSubproject {
                            href: subproject_href(pid, sid),
                            name: s.subproject.name.clone(),
                            current,
                            active: current && here_page.is_none(),
                            pages: listed
                                .iter()
                                .map(|page| SidebarPage {
                                    href: page_href(pid, sid, &page.id),
                                    title: page.name.clone(),
                                    active: here_page == Some(page.id.as_str()),
                                })
                                .collect(),
                            more: if current {
                                s.pages.len() - listed.len()
                            } else {
                                0
                            },
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The pages before and after `here` among its subproject's pages in the sidebar (the
/// order readers see).
fn neighbours(nav: &Nav, here: &Location) -> (Option<Neighbour>, Option<Neighbour>) {
    let (Some(p), Some(s), Some(page)) = (&here.project, &here.subproject, &here.page) else {
        return (None, None);
    };
    let pages = nav
        .projects
        .iter()
        .find(|np| np.project.id == p.id)
        .and_then(|np| np.subprojects.iter().find(|ns| ns.subproject.id == s.id))
        .map_or(&[][..], |ns| &ns.pages[..]);
    let Some(at) = pages.iter().position(|item| item.id == page.id) else {
        return (None, None);
    };
    let link = |item: &NavItem| Neighbour {
        href: page_href(&p.id, &s.id, &item.id),
        title: item.name.clone(),
    };
    let previous = at.checked_sub(1).and_then(|i| pages.get(i)).map(link);
    (previous, pages.get(at + 1).map(link))
}

/// Home > Project > Subproject > Page; the last crumb is the current location and unlinked.
/// The `index` page is the subproject's landing page, so its trail ends at the subproject.
fn breadcrumbs(here: &Location, last: Option<&str>) -> Vec<Crumb> {
    let mut crumbs = vec![Crumb {
        label: "Home".to_owned(),
        href: Some("/docs/".to_owned()),
    }];
    if let Some(p) = &here.project {
        crumbs.push(Crumb {
            label: p.name.clone(),
            href: Some(project_href(&p.id)),
        });
        if let Some(s) = &here.subproject {
            crumbs.push(Crumb {
                label: s.name.clone(),
                href: Some(subproject_href(&p.id, &s.id)),
            });
            if let Some(page) = here.page.as_ref().filter(|page| page.id != "index") {
                crumbs.push(Crumb {
                    label: page.name.clone(),
                    href: None,
                });
            }
        }
    }
    if let Some(label) = last {
        crumbs.push(Crumb {
            label: label.to_owned(),
            href: None,
        });
    }
    if let Some(current) = crumbs.last_mut() {
        current.href = None;
    }
    crumbs
}

/// Everything about a page but its main content.
struct Frame<'a> {
    here: &'a Location,
    title: &'a str,
    summary: &'a str,
    /// Describes the page to search engines ([`describe`] shortens it).
    description: &'a str,
    /// Prefills the search box.
    query: &'a str,
    /// A last, unlinked breadcrumb after the location's own (e.g. "Search").
    last_crumb: Option<&'a str>,
    toc: &'a [TocEntry],
}

/// A description on one line, cut as a search excerpt is (about
/// [`dochub_search::EXCERPT_CHARS`] characters, `…` where cut): search engines show about
/// this much.
fn describe(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    excerpt(&line, 0, 0)
}

fn render(nav: &Nav, frame: Frame<'_>, main: Main<'_>) -> Result<String, LayoutError> {
    let (previous, next) = match main {
        Main::Document { .. } => neighbours(nav, frame.here),
        _ => (None, None),
    };
    let page = LayoutTemplate {
        title: frame.title,
        markdown_href: markdown_href(frame.here),
        query: frame.query,
        home_active: frame.here.project.is_none()
            && !matches!(main, Main::Search { .. } | Main::NotFound { .. }),
        sidebar: sidebar(nav, frame.here),
        crumbs: breadcrumbs(frame.here, frame.last_crumb),
        summary: frame.summary,
        description: describe(frame.description),
        main,
        toc: frame.toc,
        has_reports: nav.has_reports,
        previous,
        next,
        version: nav.version.as_deref(),
        switcher: nav.switcher.as_ref(),
        older: nav
            .switcher
            .as_ref()
            .and_then(|v| Some((v.links.get(v.current)?, v.older_than()?))),
        script: dochub_http::page::SCRIPT,
        theme_switch: dochub_http::page::THEME_SWITCH,
    };
    Ok(page.render()?)
}

/// What a document page says about itself under its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageMeta {
    /// When the page last changed, `YYYY-MM-DD`: shown as "Last updated" in a
    /// `<time datetime>`.
    pub updated: Option<String>,
    /// Where "Edit this page" leads (see [`edit_href`]); `None`: no link.
    pub edit_href: Option<String>,
}

impl PageMeta {
    /// The date as readers see it, `4 March 2026` (the `datetime` keeps `2026-03-04`).
    fn updated_label(&self) -> Option<String> {
        let date = self.updated.as_deref()?;
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        let mut parts = date.splitn(3, '-');
        let (year, month, day) = (parts.next()?, parts.next()?, parts.next()?);
        let month = MONTHS.get(month.parse::<usize>().ok()?.checked_sub(1)?)?;
        let day = day.parse::<u32>().ok()?;
        Some(format!("{day} {month} {year}"))
    }
}

/// The "Edit this page" URL of the page file `path` (relative to the content root, e.g.
/// `spin/v4/build.md`) from the `edit_url` template: `{path}` replaced by the path, each
/// segment percent-encoded. An empty template gives no link, and so does one that is not an
/// `http://` or `https://` URL (a `javascript:` link must never reach the page).
///
/// ```
/// use dochub_render::edit_href;
/// let template = "https://github.com/o/r/edit/main/content/{path}";
/// assert_eq!(
///     edit_href(template, "p/s/a b.md").as_deref(),
///     Some("https://github.com/o/r/edit/main/content/p/s/a%20b.md")
/// );
/// assert_eq!(edit_href("", "p/s/a.md"), None);
/// assert_eq!(edit_href("javascript:alert(1)//{path}", "p/s/a.md"), None);
/// ```
pub fn edit_href(template: &str, path: &str) -> Option<String> {
    let template = template.trim();
    let scheme = template.get(..8).unwrap_or(template).to_ascii_lowercase();
    if !(scheme.starts_with("https://") || scheme.starts_with("http://")) {
        return None;
    }
    let encoded: Vec<String> = path.split('/').map(encode_segment).collect();
    Some(template.replace("{path}", &encoded.join("/")))
}

/// A markdown page in the full layout, with its "On this page" outline.
///
/// `title` names the page in `<title>` and the breadcrumbs (and becomes its h1 when the
/// markdown has none); `summary` is shown muted under the breadcrumbs when not empty.
///
/// ```
/// use dochub_render::{Location, Nav, NavItem, document_page, render_markdown};
/// let rendered = render_markdown("# Intro\n\n## Setup\n", &["dochub", "docs"]);
/// let here = Location {
///     project: Some(NavItem::new("dochub", "dochub")),
///     subproject: Some(NavItem::new("docs", "Docs")),
///     page: Some(NavItem::new("intro", "Intro")),
/// };
/// let html = document_page(&Nav::default(), &here, "Intro", "Start here", &rendered).unwrap();
/// assert!(html.contains(r##"<a href="#setup">Setup</a>"##));
/// ```
pub fn document_page(
    nav: &Nav,
    here: &Location,
    title: &str,
    summary: &str,
    rendered: &Rendered,
) -> Result<String, LayoutError> {
    document_page_with(nav, here, title, summary, rendered, &PageMeta::default())
}

/// [`document_page`] with what the page says about itself under its text: when it was last
/// updated and where to edit it.
pub fn document_page_with(
    nav: &Nav,
    here: &Location,
    title: &str,
    summary: &str,
    rendered: &Rendered,
    meta: &PageMeta,
) -> Result<String, LayoutError> {
    let main = Main::Document {
        heading: rendered.h1.is_none().then_some(title),
        html: &rendered.html,
        meta,
    };
    let description = if summary.trim().is_empty() {
        rendered.first_paragraph.as_str()
    } else {
        summary
    };
    let frame = Frame {
        here,
        title,
        summary,
        description: if description.trim().is_empty() {
            title
        } else {
            description
        },
        query: "",
        last_crumb: None,
        toc: &rendered.toc,
    };
    render(nav, frame, main)
}

/// A list of cards (projects, subprojects or pages) in the full layout. `empty` is shown when
/// there are no cards.
pub fn card_page(
    nav: &Nav,
    here: &Location,
    title: &str,
    summary: &str,
    cards: &[Card],
    empty: &str,
) -> Result<String, LayoutError> {
    let main = Main::Cards {
        heading: title,
        cards,
        empty,
    };
    // Without a summary, the list describes itself: "Projects: dochub, Spin, …".
    let listed = match cards {
        [] => title.to_owned(),
        _ => {
            let names: Vec<&str> = cards.iter().map(|c| c.title.as_str()).collect();
            format!("{title}: {}", names.join(", "))
        }
    };
    let frame = Frame {
        here,
        title,
        summary,
        description: if summary.trim().is_empty() {
            &listed
        } else {
            summary
        },
        query: "",
        // At the docs home the location has no crumb of its own but "Home".
        last_crumb: here.project.is_none().then_some(title),
        toc: &[],
    };
    render(nav, frame, main)
}

/// Search results for `query` in the full layout: each hit links to its page (at the heading
/// its match lies under, whose text it shows) and shows its excerpt with the query marked.
/// `note` (why nothing was searched, or that the list was cut) is shown above the results when
/// not empty; with a note and no hits, nothing else is said.
pub fn search_page(
    nav: &Nav,
    query: &str,
    hits: &[SearchHit],
    note: &str,
) -> Result<String, LayoutError> {
    let hits = hits
        .iter()
        .map(|hit| HitView {
            href: match &hit.anchor {
                Some(anchor) => format!("{}#{}", hit_href(&hit.path), encode_segment(anchor)),
                None => hit_href(&hit.path),
            },
            title: hit.title.clone(),
            section: hit.section.clone(),
            path: hit.path.clone(),
            excerpt: highlight(&hit.excerpt, query),
        })
        .collect();
    let main = Main::Search { query, hits, note };
    let title = format!("Search: {query}");
    let description = format!("Documentation pages matching “{query}”.");
    let frame = Frame {
        here: &Location::default(),
        title: &title,
        summary: "",
        description: &description,
        query,
        last_crumb: Some("Search"),
        toc: &[],
    };
    render(nav, frame, main)
}

/// The "not found" page in the full layout.
pub fn not_found_page(nav: &Nav, message: &str) -> Result<String, LayoutError> {
    let main = Main::NotFound { message };
    let frame = Frame {
        here: &Location::default(),
        title: "Page not found",
        summary: "",
        description: message,
        query: "",
        last_crumb: Some("Not found"),
        toc: &[],
    };
    render(nav, frame, main)
}
