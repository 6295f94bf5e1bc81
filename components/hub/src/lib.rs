//! The `hub` Spin component: the message hub (`/api/send`, `/api/inbox/<machine>`,
//! `/api/inbox/<machine>/ack`, `/api/inbox/<machine>/events`, `/api/messages/<machine>`,
//! `/machines`).
//!
//! A thin adapter over [`dochub_hub`]. In order, so that nothing is read that need not be:
//! the settings (`environment`, `hub_tokens`, `allowed_hosts`; unreadable or unknown: 500,
//! never open) and the development `Host` check; the route, method, token and content type
//! from the request's head ([`api::check_before_body`]); only then the body, streamed and cut
//! off after [`MAX_REQUEST`] bytes; then the hub's own variables ([`Limits::VARIABLES`]), and
//! the store `hub_database_url` chooses ([`HubStore`]: Spin's SQLite database `default`, or
//! PostgreSQL when it is set), opened as the hub's `Sql` by [`HubStore::open`]. Every response
//! leaves through [`dochub_http::finish`] (request id, headers, generic 5xx).
//!
//! It is a WASIp3 component (spin-sdk 6), whose instance Spin v4 keeps for up to 128 requests
//! and gives up to 16 at once. Such an instance keeps, for a second, the hub's variables, and
//! on SQLite, for as long as it lives, one connection, which all its requests share: a request
//! no longer opens the file, reads its schema and compiles its statements anew, nor, as the
//! last connection to close, checkpoints the write-ahead log and deletes it for the next
//! request to make again. PostgreSQL connections still come from Spin's pool for each request
//! and each look of a wait, so that open streams do not hold the pool. Sharing is safe because
//! the hub's work on the store is synchronous: between a transaction's `BEGIN` and its end
//! nothing yields, so no other request of the instance runs on the connection in between. A
//! request answered with a server error drops the connection (its state is not known); the
//! next opens another. A long-poll or a stream waits without blocking the instance
//! ([`AsyncPause`]).
//!
//! With `--no-default-features --features wasip2` (or `edge`) it is a WASIp2 component, for
//! hosts that run only those: an instance per request, which opens the store for it.

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

use dochub_http::{BodyReader, Incoming, Request, Response, Surface, log};
use dochub_hub::api::{self, Answer, Body, MAX_REQUEST};
use dochub_hub::auth::HubAuth;
use dochub_hub::{Hub, HubError, Limits, SystemClock};
use dochub_hub_spin::HubStore;
use futures::{Stream, StreamExt};
use http::StatusCode;

#[cfg(feature = "wasip2")]
mod wasip2;
#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
mod wasip3;

#[cfg(feature = "wasip2")]
#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest, out: spin_sdk::http::ResponseOutparam) {
    wasip2::handle(req, out).await;
}

#[cfg(all(feature = "wasip3", not(feature = "wasip2")))]
#[spin_sdk::http_service]
async fn handle(
    req: spin_sdk::http::Request,
) -> Result<spin_sdk::wasip3::http::types::Response, spin_sdk::wasip3::http::types::ErrorCode> {
    wasip3::handle(req).await
}

/// The hub's own check of the token settings: hub tokens are bound to machines, so
/// `Admitted::auth` does not apply. A production list that lets nobody in is logged.
fn hub_auth(incoming: &Incoming, settings: &dochub_http::Settings) -> HubAuth {
    let auth = HubAuth::new(settings.environment.as_str(), &settings.tokens);
    if auth.required() && auth.no_tokens() {
        log(
            Surface::Hub,
            incoming,
            "no tokens are configured (`hub_tokens` is empty): every request gets 401",
        );
    } else if auth.required() && auth.invalid_entries() > 0 {
        let count = auth.invalid_entries();
        log(
            Surface::Hub,
            incoming,
            &format!("{count} entries of `hub_tokens` are not `machine=<sha256 hex>`; ignored"),
        );
    }
    auth
}

/// The request as the hub's routes take it, refused already when its route, method, token or
/// content type is wrong: what can be decided before the body is read.
fn admitted_request<'a>(incoming: &'a Incoming, auth: &HubAuth) -> Result<Request<'a>, Response> {
    // One component serves several routes of the hub; the whole path tells them apart.
    let request = Request {
        path: &incoming.full_path,
        ..incoming.request()
    };
    match api::check_before_body(auth, &request) {
        Some(refusal) => Err(refusal),
        None => Ok(request),
    }
}

/// The body, read up to [`MAX_REQUEST`] bytes from the chunks of the stream `open` opens:
/// a declared or actual length beyond it stops the reading there ([`Body::TooLarge`],
/// answered 413); a declared one, before the stream is opened.
async fn read_body<S, C, E>(
    request: &Request<'_>,
    open: impl FnOnce() -> S,
) -> Result<Body, Box<Response>>
where
    S: Stream<Item = Result<C, E>>,
    C: AsRef<[u8]>,
    E: std::fmt::Debug,
{
    let mut body = BodyReader::new(MAX_REQUEST, request.header("content-length"));
    if !body.wants_more() {
        return Ok(body.finish());
    }
    let mut chunks = std::pin::pin!(open());
    while body.wants_more()
        && let Some(chunk) = chunks.next().await
    {
        let chunk = chunk.map_err(|e| {
            Box::new(api::error(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {e:?}"),
            ))
        })?;
        body.add(chunk.as_ref());
    }
    Ok(body.finish())
}

fn unavailable(message: &str) -> Response {
    api::error(StatusCode::SERVICE_UNAVAILABLE, message).with_header("retry-after", "1")
}

fn config_error(e: &HubError) -> Response {
    api::error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
}
