//! Docs for agents, as the docs component serves them: `/llms.txt`, `/llms-full.txt`
//! (`?project=<id>` for one project; `?part=<n>` for one part of a text over
//! [`PART_BYTES`], which `/llms.txt` then links part by part), and the choice between a page's HTML and its markdown
//! twin by the `Accept` header ([`crate::negotiate::prefers_markdown`]; the twin itself is `/docs/.../<page>.md`,
//! see [`crate::docs`]).
//!
//! Why the docs component serves `/llms*.txt`: it already mounts the content tree and the
//! prebuilt index, it serves the markdown twins the files link to, and the files are the
//! docs site in another form; the api component's routes all live under `/api`. The two
//! routes are exact routes of the docs component in `spin.toml`; the component tells them
//! apart from `/docs/...` by `spin-component-route` (Spin v4.0.2 sets it to the route as
//! written, without a trailing `/...`: `crates/routes/src/lib.rs`, `raw_route_or_prefix`).
//!
//! Both are answered through the catalog ([`dochub_content::Catalog`]): `/llms.txt` from the
//! prebuilt index when it is current (one small file per subproject, no page read), else from
//! the tree; `/llms-full.txt` copied from the one `dochub build` wrote (`build/llms-full.txt`,
//! with the byte range of each project for `?project=`) while it belongs to the current
//! index, else read from the tree one page at a time. The index's never-stale-in-silence check
//! (the folders' times against the build's record, and for `llms-full.txt` also the build id
//! and `_master/index.md`) is the catalog's; a stale build is logged and the answer comes from
//! the tree. Either way
//! the text is streamed ([`FullText::write_to`]), so a tree of any size costs the component a
//! buffer, not the file: the component writes it into the response body as it goes and aborts
//! the body (the client sees an incomplete response, not a short file that looks whole) if
//! anything fails half-way. Both need the same token as `/docs` in production.
//!
//! ```
//! use dochub_app::negotiate::prefers_markdown;
//! assert!(prefers_markdown("text/markdown"));
//! assert!(prefers_markdown("text/markdown, text/html;q=0.9"));
//! assert!(!prefers_markdown("text/html,application/xhtml+xml,*/*;q=0.8"));
//! assert!(!prefers_markdown("*/*"));
//! ```

use dochub_content::CatalogError;
use dochub_content::llms::{FullText, PART_BYTES, llms_txt, part_note, split_parts};

use dochub_http::query_param;

use dochub_http::{Request, Response};

use crate::docs::{SiteConfig, gate, text_response};

/// Content type of both files: plain text (the convention's files are markdown, but served
/// as text so that browsers show them).
pub const LLMS_CONTENT_TYPE: &str = "text/plain; charset=utf-8";

/// The two routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmsRoute {
    /// `/llms.txt`
    Index,
    /// `/llms-full.txt`
    Full,
}

impl LlmsRoute {
    /// The route for a `spin-component-route` value; `None` for any other (e.g. `/docs`).
    ///
    /// ```
    /// use dochub_app::llms::LlmsRoute;
    /// assert_eq!(LlmsRoute::from_component_route("/llms.txt"), Some(LlmsRoute::Index));
    /// assert_eq!(LlmsRoute::from_component_route("/docs"), None);
    /// ```
    pub fn from_component_route(route: &str) -> Option<LlmsRoute> {
        match route {
            "/llms.txt" => Some(LlmsRoute::Index),
            "/llms-full.txt" => Some(LlmsRoute::Full),
            _ => None,
        }
    }
}

/// How to answer.
#[derive(Debug)]
pub enum Answer {
    /// A whole response.
    Whole(Response),
    /// Status and headers (empty body), then a body to stream with [`FullText::write_to`].
    Stream(Response, FullText),
}

/// Answers a request for `/llms.txt` or `/llms-full.txt`. `origin` is the site's scheme and
/// authority, which the links of `/llms.txt` start with ([`crate::crawl::origin`]).
pub fn handle(config: &SiteConfig, route: LlmsRoute, req: &Request<'_>, origin: &str) -> Answer {
    if let Some(refused) = gate(config, req) {
        return Answer::Whole(refused);
    }
    let head = req.method.eq_ignore_ascii_case("HEAD");
    let answer = match route {
        LlmsRoute::Index => index(config, origin).map(Answer::Whole),
        LlmsRoute::Full => full(config, req),
    };
    match answer {
        Ok(Answer::Stream(res, _)) if head => Answer::Whole(res),
        Ok(Answer::Whole(mut res)) => {
            if head {
                res.body.clear();
            }
            Answer::Whole(res)
        }
        Ok(stream) => stream,
        Err(e) => {
            let mut res = text_response(500, &e.to_string());
            if head {
                res.body.clear();
            }
            Answer::Whole(res)
        }
    }
}

fn index(config: &SiteConfig, origin: &str) -> Result<Response, CatalogError> {
    let (text, warning) = config.source.read(|catalog| {
        let parts = split_parts(&catalog.llms_entry_sizes(None)?, PART_BYTES).len();
        Ok::<_, CatalogError>(llms_txt(
            &catalog.site_intro()?,
            &catalog.llms_outline()?,
            parts,
            origin,
        ))
    })?;
    Ok(Response::new(200, LLMS_CONTENT_TYPE, text.into_bytes()).with_warning(warning))
}

fn full(config: &SiteConfig, req: &Request<'_>) -> Result<Answer, CatalogError> {
    let project = query_param(req.query, "project");
    let part = match query_param(req.query, "part") {
        None => None,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                return Ok(Answer::Whole(text_response(
                    400,
                    &format!("`part` is a number from 1, not “{n}”; /llms.txt lists the parts."),
                )));
            }
        },
    };
    let (found, warning) = config.source.read(|catalog| {
        if let Some(id) = &project
            && catalog.project(id)?.is_none()
        {
            return Ok(Found::NoProject);
        }
        let parts = split_parts(&catalog.llms_entry_sizes(project.as_deref())?, PART_BYTES);
        let count = parts.len();
        // One part: the whole text, as always. More: the one asked for (the first by default),
        // saying which it is; a whole text over the limit is never sent.
        let chosen = match part {
            None if count == 1 => None,
            Some(1) if count == 1 => None,
            n => {
                let n = n.unwrap_or(1);
                let Some(pages) = parts.get(n - 1) else {
                    return Ok(Found::NoPart(count));
                };
                Some((pages.clone(), part_note(n, count, project.as_deref())))
            }
        };
        catalog
            .llms_full(project.as_deref(), chosen)
            .map(Found::Text)
    })?;
    let text = match found {
        Found::Text(text) => text,
        Found::NoProject => {
            return Ok(Answer::Whole(text_response(
                404,
                &format!(
                    "There is no project “{}”; /llms.txt lists them.",
                    project.unwrap_or_default()
                ),
            )));
        }
        Found::NoPart(count) => {
            return Ok(Answer::Whole(text_response(
                404,
                &format!("The full text has {count} parts; /llms.txt lists them."),
            )));
        }
    };
    let head = Response::new(200, LLMS_CONTENT_TYPE, Vec::new()).with_warning(warning);
    Ok(Answer::Stream(head, text))
}

/// What `/llms-full.txt` found to answer.
enum Found {
    Text(FullText),
    NoProject,
    /// The part asked for is past the last of this many.
    NoPart(usize),
}
