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
//! | `/<p>/<s>/<page>` | the page (`?format=raw`, or an `Accept` preferring `text/markdown`: the markdown as `text/markdown`, see [`crate::llms`]) |
//! | `/<p>/<s>/<page>.md` | the page's markdown twin: its bytes, as `/api/raw` gives them |
//! | `/<p>/<s>/<page>/` | 301 to `/docs/<p>/<s>/<page>` when it exists |
//! | `/<p>/<s>/index` | 301 to `/docs/<p>/<s>/` (its raw form stays at `?format=raw`) |
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
//! use dochub_render::site::{SiteConfig, SiteRequest, handle};
//! use dochub_content::prebuilt::BuildMode;
//! let config = SiteConfig {
//!     content_dir: "/no/such/dir".into(),
//!     build: BuildMode::Off,
//!     auth: AuthConfig::new("development", ""),
//!     memo: None,
//! };
//! let req = SiteRequest { method: "GET", path: "", query: "", authorization: None };
//! let res = handle(&config, &req);
//! assert_eq!((res.status, res.header("location")), (301, Some("/docs/")));
//! ```

use std::path::PathBuf;

use dochub_content::index::{Index, Indexed, IndexedPage, Memo, Scope};
use dochub_content::prebuilt::BuildMode;
use dochub_content::{
    ContentError, ContentRoot, MAX_RESULTS, MIN_QUERY_CHARS, Page, SidebarProject, encode_segment,
    page_body,
};
use dochub_http::auth::{AuthConfig, BASIC_CHALLENGE};
use dochub_http::query_param;
use percent_encoding::percent_decode_str;

use crate::layout::{
    Card, LayoutError, Location, Named, Nav, NavProject, NavSubproject, SearchHit, card_page,
    document_page, not_found_page, page_href, project_href, search_page, subproject_href,
};
use crate::markdown::render_body;

pub use dochub_http::{ALLOW_READ as ALLOW, HTML, MARKDOWN, TEXT};
/// The pages run no script and load nothing but their inline style and images from this
/// site (or inlined); the policy says so, as a second line of defence behind the escaping of
/// raw HTML. The search box submits to `/docs/search`.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Configuration, read once at the component's entry.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// The content root (`CONTENT_DIR`).
    pub content_dir: PathBuf,
    /// Whether and where the prebuilt index is read (`SERVE_PREBUILT`, `BUILD_DIR`).
    pub build: BuildMode,
    /// Who may read the docs.
    pub auth: AuthConfig,
    /// Where a copied build's check is kept between requests (the key-value store).
    pub memo: Option<Memo>,
}

pub use dochub_http::{Request as SiteRequest, Response as SiteResponse};

fn html_response(status: u16, html: String) -> SiteResponse {
    SiteResponse::new(status, HTML, html.into_bytes())
        .with_header("content-security-policy", CONTENT_SECURITY_POLICY)
}

pub(crate) fn text_response(status: u16, text: &str) -> SiteResponse {
    SiteResponse::text(status, text)
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
/// use dochub_render::site::{route, Route};
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
pub fn handle(config: &SiteConfig, req: &SiteRequest<'_>) -> SiteResponse {
    handle_accepting(config, req, None)
}

/// Answers a request with its `Accept` header: a page's URL answers its markdown twin when
/// [`crate::llms::prefers_markdown`], and says `Vary: Accept` either way.
pub fn handle_accepting(
    config: &SiteConfig,
    req: &SiteRequest<'_>,
    accept: Option<&str>,
) -> SiteResponse {
    if let Some(refused) = gate(config, req) {
        return refused;
    }
    let markdown = accept.is_some_and(crate::llms::prefers_markdown);
    let res = match respond(config, req, markdown) {
        Ok(res) => res,
        Err(e) => text_response(500, &e.to_string()),
    };
    strip(res, req.method.eq_ignore_ascii_case("HEAD"))
}

/// The 401 or 405 a request gets before any route looks at it, if it gets one (the docs
/// site and `/llms*.txt` alike).
pub(crate) fn gate(config: &SiteConfig, req: &SiteRequest<'_>) -> Option<SiteResponse> {
    let head = req.method.eq_ignore_ascii_case("HEAD");
    if !config.auth.allows(req.authorization) {
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

fn strip(res: SiteResponse, head: bool) -> SiteResponse {
    res.strip_for(if head { "HEAD" } else { "GET" })
}

/// Why a page could not be served at all.
#[derive(Debug, thiserror::Error)]
enum SiteError {
    #[error(transparent)]
    Content(#[from] ContentError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// The index no longer matches the content; the request is answered again from the tree.
    #[error("{0}")]
    Stale(String),
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
    req: &SiteRequest<'_>,
    markdown: bool,
) -> Result<SiteResponse, SiteError> {
    let route = route(req.path);
    if route == Route::Bare {
        return Ok(SiteResponse::redirect(
            301,
            with_query("/docs/".into(), req.query),
        ));
    }
    let root = ContentRoot::open(&config.content_dir)?;
    let (index, mut warning) = config.build.open_index(config.memo.as_ref())?;
    let index = match index {
        Some(index) => match index.check(&root, scope(&route))? {
            None => Some(index),
            Some(reason) => {
                warning = Some(reason);
                None
            }
        },
        None => None,
    };
    let site = Site {
        root: &root,
        index: index.as_ref(),
    };
    let res = match serve(&site, route.clone(), req, markdown) {
        Err(SiteError::Stale(reason)) => {
            warning = Some(reason);
            let live = Site {
                root: &root,
                index: None,
            };
            serve(&live, route, req, markdown)
        }
        other => other,
    }?;
    Ok(res.with_warning(warning.map(|w| format!("answering from the content tree: {w}"))))
}

/// The folders a route's answer depends on, checked against the index before it is used.
fn scope(route: &Route) -> Scope<'_> {
    match route {
        // The home page's cards count every subproject's pages.
        Route::Home => Scope::Everything,
        Route::Project { project, .. } => Scope::Project(project),
        Route::Subproject {
            project,
            subproject,
            ..
        }
        | Route::Page {
            project,
            subproject,
            ..
        } => Scope::Subproject(project, subproject),
        // Search checks every folder itself.
        Route::Search | Route::Bare | Route::NotFound => Scope::Outline,
    }
}

/// `markdown`: the request's `Accept` prefers markdown (a page then answers its twin).
fn serve(
    site: &Site<'_>,
    route: Route,
    req: &SiteRequest<'_>,
    markdown: bool,
) -> Result<SiteResponse, SiteError> {
    match route {
        Route::Home => site.home(),
        Route::Search => {
            let q = query_param(req.query, "q").unwrap_or_default();
            if q.trim().is_empty() {
                return Ok(SiteResponse::redirect(302, "/docs/".into()));
            }
            site.search(&q)
        }
        Route::Project { project, slash } => {
            if !slash {
                return Ok(match site.project_info(&project)? {
                    Some(_) => {
                        SiteResponse::redirect(301, with_query(project_href(&project), req.query))
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
                return Ok(match site.place(&project, &subproject)? {
                    Some(_) => SiteResponse::redirect(
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
        } => {
            let root = site.root;
            let stem = page.strip_suffix(".md").filter(|s| !s.is_empty());
            if let (Some(id), false) = (stem, slash) {
                // The markdown twin: the file's bytes, as `?format=raw` and `/api/raw` give them.
                return match root.raw(&project, &subproject, id)? {
                    Some(bytes) => Ok(SiteResponse::new(200, MARKDOWN, bytes)),
                    None => site.missing_page(&project, &subproject, id),
                };
            }
            if slash {
                // `/p/s/page/` and `/p/s/page.md/` name the page `page` when it exists.
                let id = stem.unwrap_or(&page);
                if root.raw(&project, &subproject, id)?.is_some() {
                    let href = format!(
                        "/docs/{}/{}/{}",
                        encode_segment(&project),
                        encode_segment(&subproject),
                        encode_segment(id)
                    );
                    return Ok(SiteResponse::redirect(301, with_query(href, req.query)));
                }
                return site.missing_page(&project, &subproject, &page);
            }
            let raw = query_param(req.query, "format").as_deref() == Some("raw");
            if page == "index" && !raw && root.raw(&project, &subproject, "index")?.is_some() {
                // The landing page has one address, the subproject's.
                return Ok(SiteResponse::redirect(
                    301,
                    subproject_href(&project, &subproject),
                ));
            }
            let res = site.page(&project, &subproject, &page, raw || markdown)?;
            // The answer depends on `Accept` (unless the query fixed it).
            Ok(if raw || res.status != 200 {
                res
            } else {
                res.with_header("vary", "Accept")
            })
        }
        Route::Bare | Route::NotFound => site.not_found("There is no page at this address."),
    }
}

/// One request's view of the content: the prebuilt index when it is current for the
/// request, else the tree itself.
struct Site<'a> {
    root: &'a ContentRoot,
    index: Option<&'a Index>,
}

/// What a project card and the sidebar need of a project.
struct ProjectInfo {
    id: String,
    name: String,
    description: String,
    subproject_count: usize,
    doc_count: usize,
}

/// What a subproject card needs.
struct SubprojectInfo {
    id: String,
    name: String,
    description: String,
    doc_count: usize,
}

/// A page of the current subproject: its listing data, and the page itself when the live
/// tree had to read it to list it.
struct PageInfo {
    id: String,
    title: String,
    summary: String,
    indexed: Option<IndexedPage>,
    page: Option<Page>,
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
    fn nav(&self, open: Option<(&str, &str, &[PageInfo])>) -> Result<Nav, ContentError> {
        let outline: Vec<SidebarProject> = match self.index {
            Some(index) => index
                .projects()
                .iter()
                .map(|p| SidebarProject {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    subprojects: p
                        .subprojects
                        .iter()
                        .map(|s| (s.id.clone(), s.name.clone()))
                        .collect(),
                })
                .collect(),
            None => self.root.sidebar()?,
        };
        let projects = outline
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
                            subproject: Named::new(sid, sname),
                            pages,
                        }
                    })
                    .collect();
                NavProject {
                    project: Named::new(p.id, p.name),
                    subprojects,
                }
            })
            .collect();
        Ok(Nav {
            projects,
            has_reports: self.root.has_reports()?,
        })
    }

    fn projects_info(&self) -> Result<Vec<ProjectInfo>, ContentError> {
        Ok(match self.index {
            Some(index) => index
                .projects()
                .iter()
                .map(|p| ProjectInfo {
                    id: p.id.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    subproject_count: p.subprojects.len(),
                    doc_count: p.doc_count,
                })
                .collect(),
            None => self
                .root
                .projects()?
                .into_iter()
                .map(|p| ProjectInfo {
                    id: p.id,
                    name: p.name,
                    description: p.description,
                    subproject_count: p.subproject_count,
                    doc_count: p.doc_count,
                })
                .collect(),
        })
    }

    /// A project's name, description and subprojects, or `None` when there is no such project.
    fn project_info(
        &self,
        id: &str,
    ) -> Result<Option<(Named, String, Vec<SubprojectInfo>)>, ContentError> {
        if let Some(index) = self.index {
            return Ok(index.project(id).map(|p| {
                let subs = p
                    .subprojects
                    .iter()
                    .map(|s| SubprojectInfo {
                        id: s.id.clone(),
                        name: s.name.clone(),
                        description: s.description.clone(),
                        doc_count: s.doc_count,
                    })
                    .collect();
                (Named::new(&p.id, &p.name), p.description.clone(), subs)
            }));
        }
        let (Some(project), Some(subprojects)) =
            (self.root.project(id)?, self.root.subprojects(id)?)
        else {
            return Ok(None);
        };
        let subs = subprojects
            .into_iter()
            .map(|s| SubprojectInfo {
                id: s.id,
                name: s.name,
                description: s.description,
                doc_count: s.doc_count,
            })
            .collect();
        Ok(Some((
            Named::new(project.id, project.name),
            project.description,
            subs,
        )))
    }

    /// A subproject's pages, sorted by id (the live tree reads them all to list their titles).
    fn pages(&self, project: &str, subproject: &str) -> Result<Vec<PageInfo>, SiteError> {
        if let Some(index) = self.index {
            let Some(sub) = index.subproject(project, subproject) else {
                return Ok(Vec::new());
            };
            return match index.pages(sub)? {
                Indexed::Fresh(pages) => Ok(pages
                    .into_iter()
                    .map(|p| PageInfo {
                        id: p.id.clone(),
                        title: p.title.clone(),
                        summary: p.summary.clone(),
                        indexed: Some(p),
                        page: None,
                    })
                    .collect()),
                Indexed::Stale(reason) => Err(SiteError::Stale(reason)),
            };
        }
        Ok(self
            .root
            .pages(project, subproject)?
            .into_iter()
            .map(|page| PageInfo {
                id: page.id.clone(),
                title: page.title().to_owned(),
                summary: page.summary().to_owned(),
                indexed: None,
                page: Some(page),
            })
            .collect())
    }

    /// The page's file and its markdown body (its title and summary are `info`'s); through the
    /// index the file is read and checked against its record, and the frontmatter the record
    /// was made from is not parsed again.
    fn read(
        &self,
        project: &str,
        subproject: &str,
        info: &PageInfo,
    ) -> Result<(Vec<u8>, String), SiteError> {
        if let Some(page) = &info.page {
            return Ok((page.raw.clone(), page.body().to_owned()));
        }
        let raw = self.root.raw(project, subproject, &info.id)?;
        if let Some(record) = &info.indexed {
            let path = format!("{project}/{subproject}/{}", info.id);
            if let Some(reason) = Index::verify(record, &path, raw.as_deref()) {
                return Err(SiteError::Stale(reason));
            }
        }
        let raw = raw.ok_or_else(|| {
            SiteError::Stale(format!("{project}/{subproject}/{} is gone", info.id))
        })?;
        let body = page_body(&raw);
        Ok((raw, body))
    }

    fn not_found(&self, message: &str) -> Result<SiteResponse, SiteError> {
        // A 404 keeps the sidebar when the tree can be read; it is still a 404 when not.
        let nav = self.nav(None).unwrap_or_default();
        Ok(html_response(404, not_found_page(&nav, message)?))
    }

    fn missing_page(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<SiteResponse, SiteError> {
        self.not_found(&format!(
            "There is no page “{page}” in “{project}/{subproject}”."
        ))
    }

    fn home(&self) -> Result<SiteResponse, SiteError> {
        let nav = self.nav(None)?;
        if let Some(page) = self.root.master_index()? {
            let rendered = render_body(page.body(), &["_master"]);
            let html = document_page(
                &nav,
                &Location::default(),
                page.title(),
                page.summary(),
                &rendered,
            )?;
            return Ok(html_response(200, html));
        }
        let cards: Vec<Card> = self
            .projects_info()?
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

    fn project(&self, id: &str) -> Result<SiteResponse, SiteError> {
        let Some((project, description, subprojects)) = self.project_info(id)? else {
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
            project: Some(project),
            ..Location::default()
        };
        let html = card_page(&nav, &here, &title, &description, &cards, "")?;
        Ok(html_response(200, html))
    }

    /// The project and subproject of a location, or `None` when either is missing.
    fn place(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<(Named, Named, String)>, ContentError> {
        if let Some(index) = self.index {
            let (Some(p), Some(s)) = (
                index.project(project),
                index.subproject(project, subproject),
            ) else {
                return Ok(None);
            };
            return Ok(Some((
                Named::new(&p.id, &p.name),
                Named::new(&s.id, &s.name),
                s.description.clone(),
            )));
        }
        let (Some(p), Some(s)) = (
            self.root.project(project)?,
            self.root.subproject(project, subproject)?,
        ) else {
            return Ok(None);
        };
        Ok(Some((
            Named::new(p.id, p.name),
            Named::new(s.id, s.name),
            s.description,
        )))
    }

    fn subproject(
        &self,
        project: &str,
        subproject: &str,
        markdown: bool,
    ) -> Result<SiteResponse, SiteError> {
        let Some((p, s, description)) = self.place(project, subproject)? else {
            return self.not_found(&format!(
                "There is no subproject “{subproject}” in “{project}”."
            ));
        };
        let pages = self.pages(project, subproject)?;
        if pages.is_empty() {
            return self.not_found(&format!("“{}” has no pages yet.", s.name));
        }
        let nav = self.nav(Some((project, subproject, &pages)))?;
        if let Some(info) = pages.iter().find(|page| page.id == "index") {
            let (raw, body) = self.read(project, subproject, info)?;
            if markdown {
                return Ok(SiteResponse::new(200, MARKDOWN, raw).with_header("vary", "Accept"));
            }
            let here = Location {
                project: Some(p),
                subproject: Some(s),
                page: Some(Named::new("index", &info.title)),
            };
            let rendered = render_body(&body, &[project, subproject]);
            let html = document_page(&nav, &here, &info.title, &info.summary, &rendered)?;
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
        let title = s.name.clone();
        let here = Location {
            project: Some(p),
            subproject: Some(s),
            page: None,
        };
        let html = card_page(&nav, &here, &title, &description, &cards, "")?;
        Ok(html_response(200, html))
    }

    fn page(
        &self,
        project: &str,
        subproject: &str,
        id: &str,
        raw: bool,
    ) -> Result<SiteResponse, SiteError> {
        if raw {
            return match self.root.raw(project, subproject, id)? {
                Some(bytes) => Ok(SiteResponse::new(200, MARKDOWN, bytes)),
                None => self.missing_page(project, subproject, id),
            };
        }
        // The sidebar lists the subproject's pages by title; the page itself is one of them.
        let pages = self.pages(project, subproject)?;
        let Some(info) = pages.iter().find(|page| page.id == id) else {
            if self.index.is_some() && self.root.raw(project, subproject, id)?.is_some() {
                return Err(SiteError::Stale(format!(
                    "{project}/{subproject}/{id} is not in the index"
                )));
            }
            return self.missing_page(project, subproject, id);
        };
        let (_, body) = self.read(project, subproject, info)?;
        let nav = self.nav(Some((project, subproject, &pages)))?;
        let Some((p, s)) = nav.find(project, subproject) else {
            return self.missing_page(project, subproject, id);
        };
        let here = Location {
            project: Some(p),
            subproject: Some(s),
            page: Some(Named::new(id, &info.title)),
        };
        let rendered = render_body(&body, &[project, subproject]);
        let html = document_page(&nav, &here, &info.title, &info.summary, &rendered)?;
        Ok(with_twin(html_response(200, html), &here))
    }

    fn search(&self, query: &str) -> Result<SiteResponse, SiteError> {
        let nav = self.nav(None)?;
        let found = match self.index {
            Some(index) => match index.search(self.root, query) {
                Ok(Indexed::Fresh(results)) => Ok(results),
                Ok(Indexed::Stale(reason)) => return Err(SiteError::Stale(reason)),
                Err(e) => Err(e),
            },
            None => self.root.search(query),
        };
        let html = match found {
            Ok(results) => {
                let hits: Vec<SearchHit> = results
                    .results
                    .into_iter()
                    .map(|hit| SearchHit {
                        path: hit.path,
                        title: hit.title,
                        excerpt: hit.excerpt,
                    })
                    .collect();
                let note = if hits.len() >= MAX_RESULTS {
                    format!(
                        "Only the first {MAX_RESULTS} matching pages are shown; a longer query narrows them down."
                    )
                } else {
                    String::new()
                };
                search_page(&nav, query.trim(), &hits, &note)?
            }
            Err(ContentError::QueryTooShort) => search_page(
                &nav,
                query.trim(),
                &[],
                &format!("Type at least {MIN_QUERY_CHARS} characters to search."),
            )?,
            Err(e) => return Err(e.into()),
        };
        Ok(html_response(200, html))
    }
}

/// Adds the `Link` header naming the page's markdown twin (the page's `<link rel="alternate">`
/// says the same).
fn with_twin(res: SiteResponse, here: &Location) -> SiteResponse {
    match crate::layout::markdown_href(here) {
        Some(href) => res.with_header(
            "link",
            &format!("<{href}>; rel=\"alternate\"; type=\"text/markdown\""),
        ),
        None => res,
    }
}

/// A subproject's pages for the sidebar: the landing page (`index`) first, then by id.
fn sidebar_pages(pages: &[PageInfo]) -> Vec<Named> {
    let mut out: Vec<Named> = pages
        .iter()
        .map(|page| Named::new(page.id.clone(), page.title.clone()))
        .collect();
    out.sort_by_key(|page| page.id != "index");
    out
}
