//! Tier 1 component: `/` redirects to `/overview/`, which shows the landing page, and
//! `/overview/<id>` serves `<CONTENT_DIR>/_overviews/<id>.html`. The logic is in
//! `dochub-overview`; like every component it is entered and left through `dochub_http`
//! (settings that fail closed, the development `Host` check, headers, generic errors).
//! It serves two Spin routes (`/` and `/overview/...`), so it routes on the whole path.

// `#[http_component]` expands to the unsafe canonical-ABI export glue; this file writes none itself.
#![allow(unsafe_code)]

use dochub_http::auth::AuthConfig;
use dochub_http::spin::respond;
use dochub_http::{Settings, Surface, admit, finish, log_auth_config};
use dochub_overview::Config;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::{http_component, variables};

#[http_component]
fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let incoming = dochub_http::spin::incoming(&req);
    let settings = match admit(
        Surface::Overview,
        &incoming,
        Settings::read("auth_tokens", variables::get),
    ) {
        Ok(settings) => settings,
        Err(refusal) => return respond(out, Surface::Overview, &incoming, refusal),
    };
    let auth = AuthConfig::new(settings.environment.as_str(), &settings.tokens);
    log_auth_config(Surface::Overview, &incoming, "auth_tokens", &auth);
    let config = Config {
        content_dir: std::env::var("CONTENT_DIR")
            .unwrap_or_else(|_| "/content".to_owned())
            .into(),
        auth,
    };
    let reply = dochub_overview::respond(
        &config,
        &incoming.method,
        &incoming.full_path,
        incoming.header("authorization"),
    );
    let reply = finish(Surface::Overview, &incoming, Some(&settings), reply);
    respond(out, Surface::Overview, &incoming, reply);
}
