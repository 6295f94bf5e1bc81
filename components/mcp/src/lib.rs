//! The `mcp` Spin component: dochub's MCP server at `/mcp`, over MCP's Streamable HTTP
//! transport ([`dochub_app::mcp`]), entered and left through `dochub_http_wasip2`.
//!
//! A WASIp2 component, in `spin.toml` and `spin-edge.toml` alike: nothing is kept between
//! requests, so a fresh instance per request costs it nothing. In order: the settings
//! (`environment`, `hub_tokens`, `allowed_hosts`; unreadable or unknown: 500, never open) and
//! the development `Host` check; the request's head ([`dochub_app::mcp::admit`]: method,
//! `Origin`, protocol version, who is calling); only then the body, cut off after
//! [`MAX_BODY`] bytes; then the answer.
//!
//! Configuration: env `CONTENT_DIR` and `BUILD_DIR` as the api reads them (the docs tools
//! answer from the prebuilt index while it matches the content); variables `environment`,
//! `hub_tokens` (production: the token names the calling machine) and `allowed_hosts`.

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use dochub_app::mcp::{MAX_BODY, McpConfig, admit, respond};
use dochub_http::{Response, Surface, log};
use dochub_hub::auth::HubAuth;
use dochub_index::{Memo, Source};
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

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
    let machine = match admit(&config, &admitted.incoming) {
        Ok(machine) => machine,
        Err(refusal) => return admitted.respond(refusal),
    };
    let body = match dochub_http_wasip2::read_body(req, MAX_BODY) {
        Ok(body) => body,
        Err(e) => return admitted.respond(Response::json_error(400, &e)),
    };
    admitted.respond(respond(&config, &machine, body));
}

thread_local! {
    /// The build check's memo (see the api component): what a copied build was found to be.
    static CHECK_MEMO: Memo = Memo::key_value("default");
}
