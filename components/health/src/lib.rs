//! The `health` Spin component: `/api/health` in `spin.toml`, with the same answer the `api`
//! gives there ([`dochub_health_spin`]), entered and left through `dochub_http_wasip2`.
//!
//! Why a component of its own: health reads the key-value store at every request (that read is
//! the store's probe), and Spin v4.0.2 runs every key-value call in tokio's `block_in_place`.
//! After one, a WASIp3 component's response often reaches the connection before its body does:
//! the head leaves alone, and Nagle's algorithm holds the body until the client's delayed ACK,
//! 40 ms later (one answer in six when nothing follows the read). The api is a WASIp3
//! component; this one is WASIp2, which writes the body before it sets the response, so its
//! answers leave whole whatever the threads do.
//!
//! Variables: `environment`, `auth_tokens` and `allowed_hosts` (the api's settings, so that both
//! refuse and answer alike), `database_url` and `hub_database_url`.

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use chrono::Utc;
use dochub_app::api::{Gate, health_gate, health_response};
use dochub_http::Surface;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
fn handle(req: IncomingRequest, out: ResponseOutparam) {
    let now = Utc::now();
    let Some(admitted) = dochub_http_wasip2::admit(Surface::Api, &req, out, "auth_tokens") else {
        return;
    };
    let method = admitted.incoming.method.clone();
    let res = match health_gate(&method) {
        Gate::Respond(res) => res,
        Gate::Health => {
            let environment = admitted.settings.environment.as_str();
            let health = dochub_health_spin::health(env!("CARGO_PKG_VERSION"), environment, now);
            health_response(&health, &method)
        }
    };
    admitted.respond(res);
}
