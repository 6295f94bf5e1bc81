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
use dochub_http::auth::AuthConfig;
use dochub_http::spin::{respond, send};
use dochub_http::{Settings, Surface, admit, finish, log_auth_config};
use dochub_index::{Memo, Source};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::{http_component, variables};

#[http_component]
fn serve(req: IncomingRequest, out: ResponseOutparam) {
    let incoming = dochub_http::spin::incoming(&req);
    let settings = match admit(
        Surface::Docs,
        &incoming,
        Settings::read("auth_tokens", variables::get),
    ) {
        Ok(settings) => settings,
        Err(refusal) => return respond(out, Surface::Docs, &incoming, refusal),
    };
    let auth = AuthConfig::new(settings.environment.as_str(), &settings.tokens);
    log_auth_config(Surface::Docs, &incoming, "auth_tokens", &auth);
    let config = SiteConfig {
        // A copied build (`spin up`'s default) is checked once, then remembered.
        source: Source::from_env(Some(Memo::key_value("default"))),
        auth,
        // Unreadable: no link, which opens nothing.
        edit_url: variables::get("edit_url").unwrap_or_default(),
    };
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
        Answer::Whole(res) => {
            // Through `finish` with its body: a 5xx body is replaced by a generic one there.
            let res = finish(Surface::Docs, &incoming, Some(&settings), res);
            respond(out, Surface::Docs, &incoming, res);
        }
        Answer::Stream(res, text) => {
            let res = finish(Surface::Docs, &incoming, Some(&settings), res);
            send(out, Surface::Docs, &incoming, res, |w| {
                text.write_to(w).map(drop).map_err(|e| e.to_string())
            });
        }
    }
}
