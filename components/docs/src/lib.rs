//! The `docs` Spin component: Tier 2 of dochub (`/docs/...`), markdown rendered as a docs site.
//!
//! A thin adapter over [`dochub_render::site`], entered and left through `dochub_http` like
//! every component: the settings and the development `Host` check first, then the library, then
//! the shared headers and generic error bodies.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`) and `SERVE_PREBUILT`: the prebuilt index, used for the
//!   sidebar, breadcrumbs, listings and search while it matches the content (see
//!   `dochub_content::prebuilt::BuildMode`);
//! - variables `environment`, `auth_tokens` and `allowed_hosts` (see `dochub_http`: unreadable
//!   or unknown values refuse every request).

// `#[http_component]` expands to the canonical-ABI export glue, which is `unsafe` by nature;
// this file writes none itself.
#![allow(unsafe_code)]

use dochub_content::prebuilt::BuildMode;
use dochub_http::auth::AuthConfig;
use dochub_http::{Settings, Surface, admit, finish, log_auth_config};
use dochub_render::site::{SiteConfig, handle};
use spin_sdk::http::{IncomingRequest, Response};
use spin_sdk::{http_component, variables};

#[http_component]
fn serve(req: IncomingRequest) -> Response {
    let incoming = dochub_http::spin::incoming(&req);
    let settings = match admit(
        Surface::Docs,
        &incoming,
        Settings::read("auth_tokens", variables::get),
    ) {
        Ok(settings) => settings,
        Err(refusal) => return dochub_http::spin::outgoing(refusal),
    };
    let auth = AuthConfig::new(settings.environment.as_str(), &settings.tokens);
    log_auth_config(Surface::Docs, &incoming, "auth_tokens", &auth);
    let config = SiteConfig {
        content_dir: env("CONTENT_DIR")
            .unwrap_or_else(|| "/content".into())
            .into(),
        build: BuildMode::from_settings(
            env("SERVE_PREBUILT").as_deref(),
            env("BUILD_DIR").as_deref(),
        ),
        auth,
    };
    let res = handle(&config, &incoming.request());
    dochub_http::spin::outgoing(finish(Surface::Docs, &incoming, Some(&settings), res))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
