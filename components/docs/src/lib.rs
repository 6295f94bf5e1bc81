//! The `docs` Spin component: Tier 2 of dochub (`/docs/...`), markdown rendered as a docs site.
//!
//! A thin adapter over [`dochub_render::site`]: it reads the configuration once per request,
//! passes the request to the library and writes back what it answers.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`) and `SERVE_PREBUILT`: the prebuilt index, used for the
//!   sidebar, breadcrumbs, listings and search while it matches the content (see
//!   `dochub_content::prebuilt::BuildMode`);
//! - variables `environment` and `auth_tokens` (see `dochub_content::auth`).

// `#[http_component]` expands to the canonical-ABI export glue, which is `unsafe` by nature;
// this file writes none itself.
#![allow(unsafe_code)]

use dochub_content::auth::AuthConfig;
use dochub_content::prebuilt::BuildMode;
use dochub_render::site::{SiteConfig, SiteRequest, handle};
use spin_sdk::http::{Request, Response};
use spin_sdk::http_component;

#[http_component]
fn serve(req: Request) -> Response {
    let config = SiteConfig {
        content_dir: std::env::var("CONTENT_DIR")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "/content".into())
            .into(),
        build: BuildMode::from_settings(
            std::env::var("SERVE_PREBUILT").ok().as_deref(),
            std::env::var("BUILD_DIR").ok().as_deref(),
        ),
        auth: AuthConfig::new(&variable("environment"), &variable("auth_tokens")),
    };
    let method = req.method().to_string();
    // Spin gives the path below the route's prefix; without it, strip `/docs` ourselves.
    let path = match req.header("spin-path-info").and_then(|v| v.as_str()) {
        Some(p) => p.to_owned(),
        None => req
            .path()
            .strip_prefix("/docs")
            .unwrap_or(req.path())
            .to_owned(),
    };
    let res = handle(
        &config,
        &SiteRequest {
            method: &method,
            path: &path,
            query: req.query(),
            authorization: req.header("authorization").and_then(|v| v.as_str()),
        },
    );
    if let Some(warning) = &res.warning {
        eprintln!("docs: warning: {warning}");
    }
    let mut builder = Response::builder();
    builder.status(res.status);
    for (name, value) in res.headers {
        builder.header(name, value);
    }
    builder.body(res.body).build()
}

fn variable(name: &str) -> String {
    spin_sdk::variables::get(name).unwrap_or_default()
}
