//! The WASIp3 floor: the same `200 ok` as `benches/floor`, from a `wasi:http/handler@0.3`
//! component, which Spin reuses across requests where it makes a WASIp2 component anew for each.

// `#[http_service]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use spin_sdk::http::{HeaderMap, HeaderValue, IntoResponse, Request, StatusCode};
use spin_sdk::http_service;

#[http_service]
async fn handle(_request: Request) -> impl IntoResponse {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("text/plain"));
    (StatusCode::OK, headers, String::from("ok"))
}
