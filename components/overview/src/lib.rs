//! Tier 1 component: `/` redirects to `/overview/`, which shows the landing page, and
//! `/overview/<id>` serves `<CONTENT_DIR>/_overviews/<id>.html`. The logic is in
//! `dochub-overview`; like every component it is entered and left through `dochub_http`
//! (settings that fail closed, the development `Host` check, headers, generic errors).
//! It serves two Spin routes (`/` and `/overview/...`), so it routes on the whole path.

// `#[http_component]` expands to the unsafe canonical-ABI export glue; this file writes none itself.
#![allow(unsafe_code)]

use dochub_http::Surface;
use dochub_overview::Config;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http::spin::admit(Surface::Overview, &req, out, "auth_tokens")
    else {
        return;
    };
    let config = Config {
        content_dir: std::env::var("CONTENT_DIR")
            .unwrap_or_else(|_| "/content".to_owned())
            .into(),
        auth: admitted.auth(),
    };
    let incoming = &admitted.incoming;
    let reply = dochub_overview::respond(
        &config,
        &incoming.method,
        &incoming.full_path,
        incoming.header("authorization"),
    );
    admitted.respond(reply);
}
