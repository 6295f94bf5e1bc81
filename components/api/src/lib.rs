//! The `api` Spin component: Tier 3 of dochub (`/api/...`).
//!
//! A thin adapter over [`dochub_app::api`], entered and left through `dochub_http` (settings,
//! `Host` check, headers, generic errors) like every component: it reads the configuration,
//! passes the request to the library, and for `/api/health` takes the readings of
//! [`dochub_health_spin`]. `spin.toml` routes `/api/health` to the `health` component instead
//! (a WASIp2 one: see its crate doc); the api still answers it wherever a manifest sends it
//! here, as `spin-edge.toml` does.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`): the build written by `dochub build`; its index and
//!   manifests answer search and manifests while they match the content (else the tree is
//!   scanned and a warning logged); env `SERVE_PREBUILT` `0`/`false` turns that off, any
//!   other value makes a missing build an error;
//! - variables `environment`, `auth_tokens`, `allowed_hosts` (see `dochub_http`: unreadable or
//!   unknown values refuse every request); health's own in [`dochub_health_spin`].
//!
//! It is a WASIp3 component (spin-sdk 6), whose instance Spin v4 keeps for many requests; with
//! `--no-default-features --features wasip2` (or `edge`) a WASIp2 one, for hosts that run only
//! those. Both reach Spin's stores through `dochub-spin-imports`. A reused instance keeps the
//! build check's memo, for a second its settings (`dochub_http_wasip3::SETTINGS_LIFE`), and
//! where the mounts are a copy the raw pages and manifests it answered (`dochub_app::kept`).

// The handler macros expand to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

// spin-sdk's handler macros name the crate `spin_sdk`.
#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
extern crate spin_sdk_p3 as spin_sdk;

#[cfg(not(any(feature = "wasip3", feature = "wasip2")))]
compile_error!("build with the feature `wasip3` (the default) or `wasip2`");
#[cfg(all(feature = "wasip3", feature = "wasip2"))]
compile_error!(
    "`wasip2` and `edge` need `--no-default-features`: one component cannot link both spin-sdks"
);

use chrono::{DateTime, Utc};
use dochub_app::api::{ApiConfig, Gate, handle_or_health, health_response};
use dochub_app::kept::KeptAnswers;
use dochub_http::auth::AuthConfig;
use dochub_http::{Incoming, Response, Surface};
use dochub_index::{Memo, Source};

#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
#[spin_sdk::http_service]
async fn handle(req: spin_sdk::http::Request) -> dochub_http_wasip3::Answer {
    let now = Utc::now();
    let admitted = match dochub_http_wasip3::admit(Surface::Api, &req, "auth_tokens").await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal,
    };
    let environment = admitted.settings.environment.as_str();
    let kept = KEPT_ANSWERS.with(KeptAnswers::clone);
    let res = answer(
        &admitted.incoming,
        admitted.auth(),
        environment,
        now,
        Some(kept),
    );
    admitted.respond(res)
}

#[cfg(feature = "wasip2")]
#[spin_sdk::http_component]
fn handle(req: spin_sdk::http::IncomingRequest, out: spin_sdk::http::ResponseOutparam) {
    let now = Utc::now();
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Api, &req, out, "auth_tokens") else {
        return;
    };
    let environment = admitted.settings.environment.as_str();
    // An instance serves one request: nothing to keep.
    let res = answer(&admitted.incoming, admitted.auth(), environment, now, None);
    admitted.respond(res);
}

/// The answer to an admitted request.
fn answer(
    incoming: &Incoming,
    auth: AuthConfig,
    environment: &str,
    now: DateTime<Utc>,
    kept: Option<KeptAnswers>,
) -> Response {
    let config = ApiConfig {
        // A copied build (`spin up`'s default) is checked once, then remembered.
        source: Source::from_env(Some(CHECK_MEMO.with(Memo::clone))),
        auth,
        kept,
    };
    match handle_or_health(&config, &incoming.request(), now) {
        Gate::Respond(res) => res,
        Gate::Health => {
            let health = dochub_health_spin::health(env!("CARGO_PKG_VERSION"), environment, now);
            health_response(&health, &incoming.method)
        }
    }
}

thread_local! {
    /// The build check's memo, one for the instance's life: what it has read or saved is kept
    /// in memory too, which is safe because each key names one copy of one build, whose check
    /// never changes ([`Memo::key_value`]).
    static CHECK_MEMO: Memo = Memo::key_value("default");
}

#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
thread_local! {
    /// Raw pages and manifests this instance answered, kept where the mounts are a copy
    /// ([`KeptAnswers`]).
    static KEPT_ANSWERS: KeptAnswers = KeptAnswers::from_env();
}
