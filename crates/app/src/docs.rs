//! The docs site (`/docs/...`) as a plain function from a request to a response, so the Spin
//! component stays a page of glue and every route is tested natively.
//!
//! | Path below `/docs` | Answer |
//! |---|---|
//! | `` (i.e. `/docs`) | 301 to `/docs/` |
//! | `/` | `_master/index.md` as a document, else a card list of projects |
//! | `/search?q=` | results in the layout; empty `q` is a 302 to `/docs/` |
//! | `/<p>` | 301 to `/docs/<p>/` when the project exists |
//! | `/<p>/` | card list of subprojects; 404 when there are none |
//! | `/<p>/<s>` | 301 to `/docs/<p>/<s>/` when the subproject exists |
//! | `/<p>/<s>/` | its `index.md` as a document, else a card list of pages; 404 when none |
//! | `/<p>/<s>/<page>` | the page (`?format=raw`, or an `Accept` preferring `text/markdown`: the markdown as `text/markdown`, see [`crate::negotiate`]) |
//! | `/<p>/<s>/<page>.md` | the page's markdown twin: its bytes, as `/api/raw` gives them |
//! | `/<p>/<s>/<page>/` | 301 to `/docs/<p>/<s>/<page>` when it exists |
//! | `/<p>/<s>/index` | 301 to `/docs/<p>/<s>/` (its raw form stays at `?format=raw`) |
//!
//! A page address that is no page, in any of its forms, answers 301 to the page that lists it in
//! its `redirect_from` (the same form, the query kept), if one does.
//!
//! Anything else, and any segment that is not a valid id (`..`, `.hidden`, `_master`,
//! encoded slashes), is a 404 page in the layout. Methods other than GET and HEAD get a 405
//! with `Allow`. A page's HTML (and a subproject's landing page) names its markdown twin in a
//! `Link` header and a `<link rel="alternate">`, and says `Vary: Accept`. In production every
//! route needs a token (see `content/dochub/deployment/auth.md`): `/docs` serves the
//! same text as `/api/raw`.
//!
//! ```
//! use dochub_http::auth::AuthConfig;
//! use dochub_app::docs::{SiteConfig, handle};
//! use dochub_http::Request;
//! use dochub_index::Source;
//! use dochub_index::build::BuildMode;
//! let config = SiteConfig {
//!     source: Source { content_dir: "/no/such/dir".into(), build: BuildMode::Off, memo: None },
//!     auth: AuthConfig::new("development", ""),
//!     edit_url: String::new(),
//! };
//! let req = Request { method: "GET", path: "", query: "", headers: &[] };
//! let res = handle(&config, &req);
//! assert_eq!((res.status, res.header("location")), (301, Some("/docs/")));
//! ```

use dochub_content::{
    Catalog, CatalogError, ContentError, PagePath, PageSummary, ReadError, encode_segment,
    llms::twin_url, page_body,
};
use dochub_http::auth::{AuthConfig, BASIC_CHALLENGE};
use dochub_http::query_param;
use dochub_index::Source;
use dochub_search::{MAX_RESULTS, MIN_QUERY_CHARS};

use crate::agents::{self, AgentError, Scope, Versions};
use percent_encoding::percent_decode_str;

use dochub_render::{
    Card, LayoutError, Location, Nav, NavItem, NavProject, NavSubproject, PageMeta, VersionLink,
    VersionSwitcher, card_page, document_page_with, edit_href, not_found_page, page_href,
    project_href, search_page, subproject_href,
};
use dochub_render::{render_body, render_body_highlighted};

pub use dochub_http::{ALLOW_READ as ALLOW, HTML, MARKDOWN, TEXT};
use dochub_http::{Request, Response};
/// The pages run one script, dochub's own ([`dochub_http::page::SCRIPT`], allowed by its
/// hash), and load nothing but their inline style and images from this site (or inlined); the
/// policy says so, as a second line of defence behind the escaping of raw HTML. The search box
/// submits to `/docs/search`. `connect-src 'self'` lets tools that audit a page from inside it
/// (Lighthouse reads `/robots.txt` that way) reach the site itself; the page's own script
/// fetches nothing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     script-src 'sha256-30TygC+e3/mJYFulOxmvQwgJg2YPGIDnmYBGlRYKhIo='; connect-src 'self'; \
     img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Configuration, read once at the component's entry.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// Where answers come from.
    pub source: Source,
    /// Who may read the docs.
    pub auth: AuthConfig,
    /// The variable `edit_url`: where a page's "Edit this page" leads, `{path}` standing for
    /// its file relative to the content root ([`dochub_render::edit_href`]); empty: no link.
    pub edit_url: String,
}

fn html_response(status: u16, html: String) -> Response {
    Response::new(status, HTML, html.into_bytes())
        .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
}

pub(crate) fn text_response(status: u16, text: &str) -> Response {
    Response::text(status, text)
}

/// A resolved docs route, segments decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/docs` without the slash.
    Bare,
    /// `/docs/`
    Home,
    /// `/docs/search`
    Search,
    /// `/docs/<p>` (`slash: false`) or `/docs/<p>/`.
    Project {
        /// Project id.
        project: String,
        /// Whether the path ended in `/`.
        slash: bool,
    },
    /// `/docs/<p>/<s>` (`slash: false`) or `/docs/<p>/<s>/`.
    Subproject {
        /// Project id.
        project: String,
        /// Subproject id.
        subproject: String,
        /// Whether the path ended in `/`.
        slash: bool,
    },
    /// `/docs/<p>/<s>/<page>`, or with a trailing `/` (`slash: true`).
    Page {
        /// Project id.
        project: String,
        /// Subproject id.
        subproject: String,
        /// Page id (as requested; may end in `.md`).
        page: String,
        /// Whether the path ended in `/`.
        slash: bool,
    },
    /// Anything else.
    NotFound,
}

/// Resolves a path below `/docs` (percent-encoded, as received). Each segment is decoded on
/// its own, so an encoded `/` stays inside its segment and is then refused as an id.
///
/// ```
/// use dochub_app::docs::{route, Route};
/// assert_eq!(route("/"), Route::Home);
/// assert_eq!(route("/dochub"), Route::Project { project: "dochub".into(), slash: false });
/// assert_eq!(route("/a/b/%2e%2e"), Route::NotFound);
/// ```
pub fn route(path: &str) -> Route {
    if path.is_empty() {
        return Route::Bare;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Route::NotFound;
    };
    if rest.is_empty() {
        return Route::Home;
    }
    if rest == "search" {
        return Route::Search;
    }
    let (rest, slash) = match rest.strip_suffix('/') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let mut segments = Vec::new();
    for raw in rest.split('/') {
        match percent_decode_str(raw).decode_utf8() {
            Ok(s) if dochub_content::is_valid_id(&s) => segments.push(s.into_owned()),
            _ => return Route::NotFound,
        }
    }
    let mut segments = segments.into_iter();
    match (
        segments.next(),
        segments.next(),
        segments.next(),
        segments.next(),
    ) {
        (Some(project), None, None, None) => Route::Project { project, slash },
        (Some(project), Some(subproject), None, None) => Route::Subproject {
            project,
            subproject,
            slash,
        },
        (Some(project), Some(subproject), Some(page), None) => Route::Page {
            project,
            subproject,
            page,
            slash,
        },
        _ => Route::NotFound,
    }
}

/// Answers a request.
pub fn handle(config: &SiteConfig, req: &Request<'_>) -> Response {
    handle_accepting(config, req, None)
}

/// Answers a request with its `Accept` header: a page's URL answers its markdown twin when
/// [`crate::negotiate::prefers_markdown`], and says `Vary: Accept` either way.
pub fn handle_accepting(config: &SiteConfig, req: &Request<'_>, accept: Option<&str>) -> Response {
    handle_at(config, req, accept, "")
}

/// [`handle_accepting`] for a site at `origin` (scheme and authority, [`crate::crawl::origin`]):
/// what an older version's page starts its `<link rel="canonical">` with (empty: the link is
/// relative).
pub fn handle_at(
    config: &SiteConfig,
    req: &Request<'_>,
    accept: Option<&str>,
    origin: &str,
) -> Response {
    if let Some(refused) = gate(config, req) {
        return refused;
    }
    let markdown = accept.is_some_and(crate::negotiate::prefers_markdown);
    let res = match respond(config, req, markdown, origin) {
        Ok(res) => res,
        Err(e) => text_response(500, &e.to_string()),
    };
    strip(res, req.method.eq_ignore_ascii_case("HEAD"))
}

/// The 401 or 405 a request gets before any route looks at it, if it gets one (the docs
/// site and `/llms*.txt` alike).
pub(crate) fn gate(config: &SiteConfig, req: &Request<'_>) -> Option<Response> {
    let head = req.method.eq_ignore_ascii_case("HEAD");
    if !config.auth.allows(req.authorization()) {
        let res = text_response(
            401,
            "Authentication required: send Authorization: Bearer <token>, or sign in with the token as the password.",
        );
        return Some(strip(
            res.with_header("www-authenticate", BASIC_CHALLENGE),
            head,
        ));
    }
    if !(req.method == "GET" || head) {
        let res = text_response(405, "Method not allowed; use GET.");
        return Some(strip(res.with_header("allow", ALLOW), head));
    }
    None
}

fn strip(res: Response, head: bool) -> Response {
    res.strip_for(if head { "HEAD" } else { "GET" })
}

/// Why a page could not be served at all.
#[derive(Debug, thiserror::Error)]
enum SiteError {
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
}

impl ReadError for SiteError {
    fn catalog(&self) -> Option<&CatalogError> {
        match self {
            SiteError::Catalog(e) => Some(e),
            SiteError::Layout(_) => None,
        }
    }
}

impl From<ContentError> for SiteError {
    fn from(e: ContentError) -> SiteError {
        SiteError::Catalog(e.into())
    }
}

/// `location` with the request's query string kept.
fn with_query(location: String, query: &str) -> String {
    if query.is_empty() {
        location
    } else {
        format!("{location}?{query}")
    }
}

fn respond(
    config: &SiteConfig,
    req: &Request<'_>,
    markdown: bool,
    origin: &str,
) -> Result<Response, SiteError> {
    let route = route(req.path);
    if route == Route::Bare {
        return Ok(Response::redirect(
            301,
            with_query("/docs/".into(), req.query),
        ));
    }
    let (res, warning) = config.source.read(|catalog| {
        let site = Site {
            catalog,
            origin,
            edit_url: &config.edit_url,
            query: req.query,
        };
        serve(&site, route.clone(), req, markdown)
    })?;
    Ok(res.with_warning(warning))
}

/// `markdown`: the request's `Accept` prefers markdown (a page then answers its twin).
fn serve(
    site: &Site<'_>,
    route: Route,
    req: &Request<'_>,
    markdown: bool,
) -> Result<Response, SiteError> {
    match route {
        Route::Home => site.home(),
        Route::Search => {
            let q = query_param(req.query, "q").unwrap_or_default();
            if q.trim().is_empty() {
                return Ok(Response::redirect(302, "/docs/".into()));
            }
            let version = query_param(req.query, "version").filter(|v| !v.trim().is_empty());
            site.search(&q, version.as_deref())
        }
        Route::Project { project, slash } => {
            if !slash {
                return Ok(match site.catalog.project(&project)? {
                    Some(_) => {
                        Response::redirect(301, with_query(project_href(&project), req.query))
                    }
                    None => site.not_found(&format!("There is no project “{project}”."))?,
                });
            }
            site.project(&project)
        }
        Route::Subproject {
            project,
            subproject,
            slash,
        } => {
            if !slash {
                return Ok(match site.catalog.subproject(&project, &subproject)? {
                    Some(_) => Response::redirect(
                        301,
                        with_query(subproject_href(&project, &subproject), req.query),
                    ),
                    None => site.not_found(&format!(
                        "There is no subproject “{subproject}” in “{project}”."
                    ))?,
                });
            }
            site.subproject(&project, &subproject, markdown)
        }
        Route::Page {
            project,
            subproject,
            page,
            slash,
        } => serve_page(site, &project, &subproject, &page, slash, req, markdown),
        Route::Bare | Route::NotFound => site.not_found("There is no page at this address."),
    }
}

/// `/<p>/<s>/<page>` in its forms: the markdown twin (`.md`), the trailing-slash redirect, the
/// landing page's one address, `?format=raw`, and the page itself.
fn serve_page(
    site: &Site<'_>,
    project: &str,
    subproject: &str,
    page: &str,
    slash: bool,
    req: &Request<'_>,
    markdown: bool,
) -> Result<Response, SiteError> {
    let catalog = site.catalog;
    let stem = page.strip_suffix(".md").filter(|s| !s.is_empty());
    if let (Some(id), false) = (stem, slash) {
        // The markdown twin: the file's bytes, as `?format=raw` and `/api/raw` give them.
        return match catalog.raw(project, subproject, id)? {
            Some(bytes) => Ok(Response::new(200, MARKDOWN, bytes)),
            None => site.moved_or_missing(project, subproject, id, |new| {
                twin_url(&new.project, &new.subproject, &new.page)
            }),
        };
    }
    if slash {
        // `/p/s/page/` and `/p/s/page.md/` name the page `page` when it exists.
        let id = stem.unwrap_or(page);
        if catalog.raw(project, subproject, id)?.is_some() {
            let href = format!(
                "/docs/{}/{}/{}",
                encode_segment(project),
                encode_segment(subproject),
                encode_segment(id)
            );
            return Ok(Response::redirect(301, with_query(href, req.query)));
        }
        return site.moved_or_missing(project, subproject, id, href_of);
    }
    let raw = query_param(req.query, "format").as_deref() == Some("raw");
    if page == "index" && !raw && catalog.raw(project, subproject, "index")?.is_some() {
        // The landing page has one address, the subproject's.
        return Ok(Response::redirect(
            301,
            subproject_href(project, subproject),
        ));
    }
    let res = site.page(project, subproject, page, raw || markdown)?;
    // The answer depends on `Accept` (unless the query fixed it).
    Ok(if raw || res.status != 200 {
        res
    } else {
        res.with_header("vary", "Accept")
    })
}

/// One request's view of the content, through whichever catalog answers it.
struct Site<'a> {
    catalog: &'a dyn Catalog,
    /// What absolute URLs start with (`<link rel="canonical">`); empty: they are relative.
    origin: &'a str,
    /// [`SiteConfig::edit_url`].
    edit_url: &'a str,
    /// The request's query string, kept by a redirect to where a page moved.
    query: &'a str,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Site<'_> {
    /// Every project and its subprojects; the pages of `open` (project, subproject) too.
    fn nav(&self, open: Option<(&str, &str, &[PageSummary])>) -> Result<Nav, CatalogError> {
        let projects = self
            .catalog
            .outline()?
            .into_iter()
            .map(|p| {
                let subprojects = p
                    .subprojects
                    .into_iter()
                    .map(|(sid, sname)| {
                        let pages = match open {
                            Some((op, os, pages)) if op == p.id && os == sid => {
                                sidebar_pages(pages)
                            }
                            _ => Vec::new(),
                        };
                        NavSubproject {
                            subproject: NavItem::new(sid, sname),
                            pages,
                        }
                    })
                    .collect();
                NavProject {
                    project: NavItem::new(p.id, p.name),
                    subprojects,
                    versions: p.versions,
                }
            })
            .collect();
        Ok(Nav {
            projects,
            has_reports: self.catalog.has_reports()?,
            ..Nav::default()
        })
    }

    /// On a page of a versioned subproject, the version switcher: the same page `id` in each
    /// version where it exists, else that version's landing page; on an older version, the
    /// canonical URL of the page in the latest when it exists there. `id` `index` is the
    /// landing page itself, which every version has.
    fn versions(
        &self,
        nav: &mut Nav,
        project: &str,
        subproject: &str,
        id: &str,
    ) -> Result<(), CatalogError> {
        let Some(p) = nav.projects.iter().find(|p| p.project.id == project) else {
            return Ok(());
        };
        let Some(current) = p.versions.iter().position(|v| v == subproject) else {
            return Ok(());
        };
        let mut links = Vec::new();
        for v in &p.versions {
            let name = p
                .subprojects
                .iter()
                .find(|s| s.subproject.id == *v)
                .map_or(v.as_str(), |s| s.subproject.name.as_str());
            let same_page = id == "index" || self.catalog.has_page(project, v, id)?;
            links.push(VersionLink {
                id: v.clone(),
                name: name.to_owned(),
                href: if same_page {
                    page_href(project, v, id)
                } else {
                    subproject_href(project, v)
                },
                same_page,
            });
        }
        let canonical = match links.first() {
            Some(latest) if current > 0 && latest.same_page => {
                Some(format!("{}{}", self.origin, latest.href))
            }
            _ => None,
        };
        nav.version = Some(subproject.to_owned());
        nav.switcher = Some(VersionSwitcher {
            links,
            current,
            canonical,
        });
        Ok(())
    }

    /// The page's markdown body, read through the catalog (which checks it is the page it
    /// listed).
    fn body(
        &self,
        project: &str,
        subproject: &str,
        page: &PageSummary,
    ) -> Result<(Vec<u8>, String), SiteError> {
        let raw = self.catalog.page_text(project, subproject, page)?;
        let body = page_body(&raw);
        Ok((raw, body))
    }

    fn not_found(&self, message: &str) -> Result<Response, SiteError> {
        // A 404 keeps the sidebar when the tree can be read; it is still a 404 when not. A
        // stale index is not a failure to read: the request is answered again from the tree.
        let nav = match self.nav(None) {
            Ok(nav) => nav,
            Err(e @ (CatalogError::Stale(_) | CatalogError::NoIndex)) => return Err(e.into()),
            Err(CatalogError::Content(_) | CatalogError::Query(_) | CatalogError::Prebuilt(_)) => {
                Nav::default()
            }
        };
        Ok(html_response(404, not_found_page(&nav, message)?))
    }

    fn missing_page(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<Response, SiteError> {
        self.not_found(&format!(
            "There is no page “{page}” in “{project}/{subproject}”."
        ))
    }

    /// A 301 to where the page `id` moved (a page listing it in `redirect_from`; `to` gives
    /// the address in the same form, page or markdown twin), the query kept; else the 404.
    fn moved_or_missing(
        &self,
        project: &str,
        subproject: &str,
        id: &str,
        to: impl Fn(&PagePath) -> String,
    ) -> Result<Response, SiteError> {
        let old = PagePath::new(project, subproject, id);
        match self.catalog.redirect(&old)? {
            Some(new) => Ok(Response::redirect(301, with_query(to(&new), self.query))),
            None => self.missing_page(project, subproject, id),
        }
    }

    /// "Last updated" and "Edit this page" of the page file `path` (relative to the root).
    fn meta(&self, path: &str, updated: Option<&str>) -> PageMeta {
        PageMeta {
            updated: updated.map(str::to_owned),
            edit_href: edit_href(self.edit_url, path),
        }
    }

    fn home(&self) -> Result<Response, SiteError> {
        let nav = self.nav(None)?;
        if let Some(page) = self.catalog.master_index()? {
            let rendered = render_body(page.body(), &["_master"]);
            let meta = self.meta(
                "_master/index.md",
                page.parsed.frontmatter.updated.as_deref(),
            );
            let html = document_page_with(
                &nav,
                &Location::default(),
                page.title(),
                page.summary(),
                &rendered,
                &meta,
            )?;
            return Ok(html_response(200, html));
        }
        let cards: Vec<Card> = self
            .catalog
            .projects()?
            .into_iter()
            .map(|p| Card {
                href: project_href(&p.id),
                meta: format!(
                    "{} · {}",
                    plural(p.subproject_count, "subproject", "subprojects"),
                    plural(p.doc_count, "page", "pages")
                ),
                title: p.name,
                description: p.description,
            })
            .collect();
        let html = card_page(
            &nav,
            &Location::default(),
            "Projects",
            "",
            &cards,
            "There are no projects yet.",
        )?;
        Ok(html_response(200, html))
    }

    fn project(&self, id: &str) -> Result<Response, SiteError> {
        let Some((project, subprojects)) = self.catalog.project(id)? else {
            return self.not_found(&format!("There is no project “{id}”."));
        };
        if subprojects.is_empty() {
            return self.not_found(&format!(
                "The project “{}” has no subprojects.",
                project.name
            ));
        }
        let cards: Vec<Card> = subprojects
            .into_iter()
            .map(|s| Card {
                href: subproject_href(id, &s.id),
                meta: plural(s.doc_count, "page", "pages"),
                title: s.name,
                description: s.description,
            })
            .collect();
        let nav = self.nav(None)?;
        let title = project.name.clone();
        let here = Location {
            project: Some(NavItem::new(project.id, project.name)),
            ..Location::default()
        };
        let html = card_page(&nav, &here, &title, &project.description, &cards, "")?;
        Ok(html_response(200, html))
    }

    fn subproject(
        &self,
        project: &str,
        subproject: &str,
        markdown: bool,
    ) -> Result<Response, SiteError> {
        let Some((p, s)) = self.catalog.subproject(project, subproject)? else {
            return self.not_found(&format!(
                "There is no subproject “{subproject}” in “{project}”."
            ));
        };
        let pages = self.catalog.pages(project, subproject)?;
        if pages.is_empty() {
            return self.not_found(&format!("“{}” has no pages yet.", s.name));
        }
        let mut nav = self.nav(Some((project, subproject, &pages)))?;
        self.versions(&mut nav, project, subproject, "index")?;
        let place = (NavItem::new(p.id, p.name), NavItem::new(&s.id, &s.name));
        if let Some(landing) = pages.iter().find(|page| page.id == "index") {
            let (raw, body) = self.body(project, subproject, landing)?;
            if markdown {
                return Ok(Response::new(200, MARKDOWN, raw).with_header("vary", "Accept"));
            }
            let here = Location {
                project: Some(place.0),
                subproject: Some(place.1),
                page: Some(NavItem::new("index", &landing.title)),
            };
            let highlighted = self.catalog.highlighted_code(landing)?;
            let rendered = render_body_highlighted(&body, &[project, subproject], &highlighted);
            let meta = self.meta(
                &format!("{project}/{subproject}/index.md"),
                landing.updated.as_deref(),
            );
            let html = document_page_with(
                &nav,
                &here,
                &landing.title,
                &landing.summary,
                &rendered,
                &meta,
            )?;
            return Ok(with_twin(html_response(200, html), &here).with_header("vary", "Accept"));
        }
        let cards: Vec<Card> = pages
            .iter()
            .map(|page| Card {
                href: page_href(project, subproject, &page.id),
                title: page.title.clone(),
                description: page.summary.clone(),
                meta: String::new(),
            })
            .collect();
        let here = Location {
            project: Some(place.0),
            subproject: Some(place.1),
            page: None,
        };
        let html = card_page(&nav, &here, &s.name, &s.description, &cards, "")?;
        Ok(html_response(200, html))
    }

    fn page(
        &self,
        project: &str,
        subproject: &str,
        id: &str,
        raw: bool,
    ) -> Result<Response, SiteError> {
        if raw {
            return match self.catalog.raw(project, subproject, id)? {
                Some(bytes) => Ok(Response::new(200, MARKDOWN, bytes)),
                None => self.moved_or_missing(project, subproject, id, href_of),
            };
        }
        // The sidebar lists the subproject's pages by title; the page itself is one of them.
        let pages = self.catalog.pages(project, subproject)?;
        let Some(page) = self.catalog.find_page(&pages, project, subproject, id)? else {
            return self.moved_or_missing(project, subproject, id, href_of);
        };
        let (_, body) = self.body(project, subproject, page)?;
        let mut nav = self.nav(Some((project, subproject, &pages)))?;
        self.versions(&mut nav, project, subproject, id)?;
        let Some((p, s)) = nav.find(project, subproject) else {
            return self.missing_page(project, subproject, id);
        };
        let here = Location {
            project: Some(p),
            subproject: Some(s),
            page: Some(NavItem::new(id, &page.title)),
        };
        let highlighted = self.catalog.highlighted_code(page)?;
        let rendered = render_body_highlighted(&body, &[project, subproject], &highlighted);
        let meta = self.meta(
            &format!("{project}/{subproject}/{id}.md"),
            page.updated.as_deref(),
        );
        let html = document_page_with(&nav, &here, &page.title, &page.summary, &rendered, &meta)?;
        Ok(with_twin(html_response(200, html), &here))
    }

    /// Results for `query`, kept to `version` as every search is ([`agents::search`]): an
    /// unknown version is answered 400, naming the versions there are.
    fn search(&self, query: &str, version: Option<&str>) -> Result<Response, SiteError> {
        let mut nav = self.nav(None)?;
        let scope = Scope {
            project: None,
            versions: Versions::parse(version, Versions::All),
        };
        let (status, results, note) = match agents::search(
            self.catalog,
            query,
            &scope,
            MAX_RESULTS,
        )? {
            Ok(found) => {
                nav.version = version.map(str::to_owned);
                let note = if found.results.len() >= MAX_RESULTS {
                    format!(
                        "Only the first {MAX_RESULTS} matching pages are shown; a longer query narrows them down."
                    )
                } else {
                    String::new()
                };
                (200, found.results, note)
            }
            Err(AgentError::Query(_)) => (
                200,
                Vec::new(),
                format!("Type at least {MIN_QUERY_CHARS} characters to search."),
            ),
            Err(e) => (400, Vec::new(), format!("{e}.")),
        };
        let html = search_page(&nav, query.trim(), &results, &note)?;
        Ok(html_response(status, html))
    }
}

/// Adds the `Link` header naming the page's markdown twin (the page's `<link rel="alternate">`
/// says the same).
fn with_twin(res: Response, here: &Location) -> Response {
    match dochub_render::markdown_href(here) {
        Some(href) => res.with_header(
            "link",
            &format!("<{href}>; rel=\"alternate\"; type=\"text/markdown\""),
        ),
        None => res,
    }
}

/// The docs address of a page.
fn href_of(page: &PagePath) -> String {
    page_href(&page.project, &page.subproject, &page.page)
}

/// A subproject's pages for the sidebar: the landing page (`index`) first, then by id.
fn sidebar_pages(pages: &[PageSummary]) -> Vec<NavItem> {
    let mut out: Vec<NavItem> = pages
        .iter()
        .map(|page| NavItem::new(page.id.clone(), page.title.clone()))
        .collect();
    out.sort_by_key(|page| page.id != "index");
    out
}
