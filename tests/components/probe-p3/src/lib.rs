//! A WASIp3 guest for the host's tests: `/p3/echo` answers what it was sent, `/p3/count` how
//! many requests its instance has served (memory an instance keeps between requests),
//! `/p3/sleep?ms=N` waits without holding the instance, `/p3/trap` fails, `/p3/variable?name=N`
//! reads a variable through `spin:variables@3.0.0`.

// `#[http_service]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use spin_sdk::http::body::IncomingBodyExt;
use spin_sdk::http::{HeaderMap, HeaderValue, IntoResponse, Request, StatusCode};
use spin_sdk::http_service;

static SERVED: AtomicU64 = AtomicU64::new(0);

#[http_service]
async fn handle(request: Request) -> impl IntoResponse {
    let served = SERVED.fetch_add(1, Ordering::Relaxed) + 1;
    let path_info = request
        .headers()
        .get("spin-path-info")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let answer = match path_info.as_str() {
        "/count" => serde_json::json!({ "served": served }),
        "/echo" => {
            let method = request.method().to_string();
            let uri = request.uri().to_string();
            match request.into_body().bytes().await {
                Ok(body) => serde_json::json!({
                    "method": method,
                    "uri": uri,
                    "body": String::from_utf8_lossy(&body),
                }),
                Err(e) => serde_json::json!({ "err": format!("{e:?}") }),
            }
        }
        "/trap" => panic!("the probe was asked to fail"),
        "/variable" => {
            let name = request
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("name="))
                .unwrap_or_default()
                .to_owned();
            match spin_sdk::variables::get(&name).await {
                Ok(value) => serde_json::json!({ "ok": value }),
                Err(e) => serde_json::json!({ "err": format!("{e:?}") }),
            }
        }
        "/sleep" => {
            let ms = request
                .uri()
                .query()
                .and_then(|q| q.strip_prefix("ms="))
                .and_then(|ms| ms.parse().ok())
                .unwrap_or(1000);
            spin_sdk::time::sleep(std::time::Duration::from_millis(ms)).await;
            serde_json::json!({ "slept_ms": ms, "served": served })
        }
        _ => return (StatusCode::NOT_FOUND, HeaderMap::new(), String::new()),
    };
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    (StatusCode::OK, headers, answer.to_string())
}
