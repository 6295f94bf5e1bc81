//! What a request costs before any work: the benches hold every route against this component,
//! which answers `200 ok` and does nothing else.

// `#[http_component]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use spin_sdk::http::{IntoResponse, Request, Response};
use spin_sdk::http_component;

#[http_component]
fn handle(_request: Request) -> impl IntoResponse {
    Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body("ok")
        .build()
}
