//! Tier 1 component: `/` redirects to `/overview/`, which shows the landing page, and
//! `/overview/<id>` serves `<CONTENT_DIR>/_overviews/<id>.html`. The logic is in
//! `dochub-overview`; like every component it is entered and left through `dochub_http`
//! (settings that fail closed, the development `Host` check, headers, generic errors).
//! It serves two Spin routes (`/` and `/overview/...`), so it routes on the whole path.
//!
//! It is a WASIp3 component (spin-sdk 6), whose instance Spin v4 keeps for many requests; with
//! `--no-default-features --features wasip2` (or `edge`) a WASIp2 one, for hosts that run only
//! those.

// The handler macros expand to the unsafe canonical-ABI export glue; this file writes none itself.
#![allow(unsafe_code)]

use dochub_http::auth::AuthConfig;
use dochub_http::{Incoming, Response};
use dochub_overview::{Config, KeptPages};

/// The answer to an admitted request, whichever kind of component took it. `kept` is the
/// instance's kept pages where an instance serves many requests (WASIp3).
fn answer(incoming: &Incoming, auth: AuthConfig, kept: Option<KeptPages>) -> Response {
    let config = Config {
        content_dir: std::env::var("CONTENT_DIR")
            .unwrap_or_else(|_| "/content".to_owned())
            .into(),
        auth,
        kept,
    };
    dochub_overview::respond(
        &config,
        &incoming.method,
        &incoming.full_path,
        incoming.header("authorization"),
    )
}

#[cfg(not(any(feature = "wasip3", feature = "wasip2")))]
compile_error!("build with the feature `wasip3` (the default) or `wasip2`");
#[cfg(all(feature = "wasip3", feature = "wasip2"))]
compile_error!(
    "`wasip2` and `edge` need `--no-default-features`: one component cannot link both spin-sdks"
);

// spin-sdk's macros name the crate `spin_sdk`.
#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
extern crate spin_sdk_p3 as spin_sdk;

#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
mod wasip3 {
    use dochub_http::Surface;
    use dochub_http_wasip3::{Answer, admit};
    use dochub_overview::KeptPages;
    use spin_sdk::http::Request;
    use spin_sdk::http_service;

    thread_local! {
        /// What this instance keeps across the requests it serves ([`KeptPages`]).
        static KEPT_PAGES: KeptPages = KeptPages::new();
    }

    #[http_service]
    async fn handle(req: Request) -> Answer {
        let admitted = match admit(Surface::Overview, &req, "auth_tokens").await {
            Ok(admitted) => admitted,
            Err(refusal) => return refusal,
        };
        let kept = KEPT_PAGES.with(KeptPages::clone);
        let reply = super::answer(&admitted.incoming, admitted.auth(), Some(kept));
        admitted.respond(reply)
    }
}

#[cfg(feature = "wasip2")]
mod wasip2 {
    use dochub_http::Surface;
    use spin_sdk::http::{IncomingRequest, ResponseOutparam};
    use spin_sdk::http_component;

    #[http_component]
    fn handle(req: IncomingRequest, out: ResponseOutparam) {
        let Some(admitted) = dochub_http_wasip2::admit(Surface::Overview, &req, out, "auth_tokens")
        else {
            return;
        };
        // A WASIp2 instance serves one request: nothing to keep, and a `stat` more to pay.
        let reply = super::answer(&admitted.incoming, admitted.auth(), None);
        admitted.respond(reply);
    }
}
