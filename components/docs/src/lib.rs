//! The `docs` Spin component: Tier 2 of dochub (`/docs/...`), markdown rendered as a docs site,
//! and the docs for agents, `/llms.txt` and `/llms-full.txt`.
//!
//! A thin adapter over [`dochub_app::docs`] and [`dochub_app::llms`], entered and left
//! through `dochub_http` like every component: the settings and the development `Host` check
//! first, then the library, then the shared headers and generic error bodies. `/llms-full.txt`
//! is streamed into the response body as it is generated, so its size is not bounded by the
//! component's memory; a failure half-way drops the body without finishing it, which Spin
//! (wasmtime-wasi-http) turns into an aborted response rather than a complete-looking short one.
//!
//! `/robots.txt` and `/sitemap.xml` ([`dochub_app::crawl`]) are this component's too: the
//! sitemap lists the pages it serves.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`) and `SERVE_PREBUILT`: the prebuilt index, used for the
//!   sidebar, breadcrumbs, listings, search and `/llms.txt` while it matches the content (see
//!   `dochub_index::build::BuildMode`);
//! - variables `environment`, `auth_tokens` and `allowed_hosts` (see `dochub_http`: unreadable
//!   or unknown values refuse every request);
//! - variable `site_url`: the origin the absolute URLs of the sitemap, `/llms.txt` and an
//!   older version's `<link rel="canonical">` start with (empty: the request's own).
//! - variable `edit_url`: where each page's "Edit this page" leads, `{path}` standing for the
//!   page's file relative to the content root (empty: no link).

// `#[http_component]` expands to the canonical-ABI export glue, which is `unsafe` by nature;
// this file writes none itself.
#![allow(unsafe_code)]

use dochub_app::crawl;
use dochub_app::docs::{SiteConfig, handle_at};
use dochub_app::llms::{self, Answer, LlmsRoute};
use dochub_http::Surface;
use dochub_index::{Memo, Source};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::{http_component, variables};

#[http_component]
fn serve(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Docs, &req, out, "auth_tokens") else {
        return;
    };
    let config = SiteConfig {
        // A copied build (`spin up`'s default) is checked once, then remembered.
        source: Source::from_env(Some(Memo::key_value("default"))),
        auth: admitted.auth(),
        // Unreadable: no link, which opens nothing.
        edit_url: variables::get("edit_url").unwrap_or_default(),
    };
    let incoming = &admitted.incoming;
    let request = incoming.request();
    let component_route = incoming.header("spin-component-route").unwrap_or_default();
    let origin = || {
        let site_url = variables::get("site_url").unwrap_or_default();
        crawl::origin(&site_url, incoming.header("spin-full-url"))
    };
    let answer = match component_route {
        "/robots.txt" => Answer::Whole(crawl::robots(&config, &request, &origin())),
        "/sitemap.xml" => Answer::Whole(crawl::sitemap(&config, &request, &origin())),
        route => match LlmsRoute::from_component_route(route) {
            Some(route) => llms::handle(&config, route, &request, &origin()),
            None => Answer::Whole(handle_at(
                &config,
                &request,
                incoming.header("accept"),
                &origin(),
            )),
        },
    };
    match answer {
        // Through `finish` with its body: a 5xx body is replaced by a generic one there.
        Answer::Whole(res) => admitted.respond(res),
        Answer::Stream(res, text) => admitted.send(res, |w| {
            text.write_to(w).map(drop).map_err(|e| e.to_string())
        }),
    }
}
