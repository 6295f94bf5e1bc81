//! The `mcp` Spin component: dochub's MCP server at `/mcp`, over MCP's Streamable HTTP
//! transport ([`dochub_app::mcp`]), entered and left through `dochub_http_wasip2`.
//!
//! A WASIp2 component, in `spin.toml` and `spin-edge.toml` alike (there built with `edge`,
//! which leaves SQLite out): nothing is kept between requests, so a fresh instance per
//! request costs it nothing. In order: the settings
//! (`environment`, `hub_tokens`, `allowed_hosts`; unreadable or unknown: 500, never open) and
//! the development `Host` check; the request's head ([`dochub_app::mcp::admit`]: method,
//! `Origin`, protocol version, who is calling); only then the body, cut off after
//! [`MAX_BODY`] bytes; then the answer.
//!
//! The hub's tools are the hub's API called in-process ([`SpinHub`]), on the store the hub
//! component uses (`dochub_hub_spin`), with its limits: a message sent here is the same row a
//! `POST /api/send` stores. A `wait_for_messages` blocks this instance, which serves nothing
//! else, for at most 25 s.
//!
//! Configuration: env `CONTENT_DIR` and `BUILD_DIR` as the api reads them (the docs tools
//! answer from the prebuilt index while it matches the content); variables `environment`,
//! `hub_tokens` (production: the token names the calling machine), `allowed_hosts`, and the
//! hub's own (`hub_database_url`, `hub_max_*`, `hub_retention_days`) as the hub reads them.

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use std::cell::OnceCell;

use dochub_app::mcp::{HubApi, MAX_BODY, McpConfig, admit, respond};
use dochub_http::{Body, Request, Response, Surface, log};
use dochub_hub::auth::HubAuth;
use dochub_hub::wait::ThreadPause;
use dochub_hub::{Hub, HubError, Limits, SystemClock, api};
use dochub_hub_spin::{Connector, HubStore};
use dochub_index::{Memo, Source};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;
use spin_sdk::variables;

#[http_component]
fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Mcp, &req, out, "hub_tokens") else {
        return;
    };
    let auth = HubAuth::new(
        admitted.settings.environment.as_str(),
        &admitted.settings.tokens,
    );
    if auth.required() && auth.no_tokens() {
        log(
            Surface::Mcp,
            &admitted.incoming,
            "no tokens are configured (`hub_tokens` is empty): every request gets 401",
        );
    }
    let config = McpConfig {
        source: Source::from_env(Some(CHECK_MEMO.with(Memo::clone))),
        auth,
    };
    let caller = match admit(&config, &admitted.incoming) {
        Ok(caller) => caller,
        Err(refusal) => return admitted.respond(refusal),
    };
    let body = match dochub_http_wasip2::read_body(req, MAX_BODY) {
        Ok(body) => body,
        Err(e) => return admitted.respond(Response::json_error(400, &e)),
    };
    let hub = SpinHub {
        auth: config.auth.clone(),
        store: OnceCell::new(),
    };
    admitted.respond(respond(&config, &caller, body, Some(&hub)));
}

/// The hub as the hub component serves it, on the store this deployment configures: the
/// same settings, the same API, opened the same way. A tool that makes two hub requests (a
/// read and its acknowledgement, a reply and the message it answers) reads the settings and
/// opens SQLite once.
struct SpinHub {
    auth: HubAuth,
    store: OnceCell<Result<(Limits, Connector), Response>>,
}

impl SpinHub {
    fn open() -> Result<(Limits, Connector), Response> {
        let limits = Limits::from_variables(|name| variables::get(name).unwrap_or_default())
            .map_err(|e| Response::json_error(500, &e.to_string()))?;
        let connector = HubStore::configured()
            .connector()
            .map_err(|e| Response::json_error(503, &e).with_header("retry-after", "1"))?;
        Ok((limits, connector))
    }
}

impl HubApi for SpinHub {
    fn answer(&self, request: &Request<'_>, body: Body) -> Response {
        let (limits, connector) = match self.store.get_or_init(SpinHub::open) {
            Ok(store) => store,
            Err(refusal) => return refusal.clone(),
        };
        let connect = || {
            connector()
                .map(|db| Hub::with_clock(db, SystemClock, *limits))
                .map_err(HubError::Unavailable)
        };
        // The instance serves this request alone: a wait may block it.
        api::handle_with(&connect, &self.auth, request, body, &ThreadPause::default())
    }
}

thread_local! {
    /// The build check's memo (see the api component): what a copied build was found to be.
    static CHECK_MEMO: Memo = Memo::key_value("default");
}
