//! Reports what the host gives a guest, as JSON, so the host's tests can check it from outside.

// `#[http_component]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use serde_json::{Value, json};
use spin_sdk::http::{IntoResponse, Request, Response};
use spin_sdk::http_component;
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

#[http_component]
fn handle(req: Request) -> anyhow::Result<impl IntoResponse> {
    let path_info = req
        .header("spin-path-info")
        .and_then(|h| h.as_str())
        .unwrap_or("")
        .to_string();
    let query: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(req.query().as_bytes())
            .into_owned()
            .collect();
    let arg = |name: &str| query.get(name).cloned().unwrap_or_default();
    let body = match path_info.as_str() {
        "/headers" | "" => {
            let headers: serde_json::Map<String, Value> = req
                .headers()
                .map(|(k, v)| (k.to_string(), json!(v.as_str().unwrap_or(""))))
                .collect();
            json!({ "headers": headers, "uri": req.uri(), "method": req.method().to_string(), "body_len": req.body().len() })
        }
        "/env" => json!(std::env::vars().collect::<std::collections::BTreeMap<_, _>>()),
        "/file" => match std::fs::read_to_string(arg("path")) {
            Ok(text) => json!({ "ok": text }),
            Err(e) => json!({ "err": e.to_string() }),
        },
        "/write" => match std::fs::write(arg("path"), b"x") {
            Ok(()) => json!({ "ok": "written" }),
            Err(e) => json!({ "err": e.to_string() }),
        },
        "/variable" => match spin_sdk::variables::get(&arg("name")) {
            Ok(v) => json!({ "ok": v }),
            Err(e) => json!({ "err": e.to_string() }),
        },
        "/kv/open" => match store::open(&arg("label")) {
            Ok(_) => json!({ "ok": "opened" }),
            Err(e) => json!({ "err": format!("{e:?}") }),
        },
        "/kv/incr" => {
            let bucket = store::open("default")?;
            let delta: i64 = arg("delta").parse().unwrap_or(1);
            match atomics::increment(&bucket, &arg("key"), delta) {
                Ok(n) => json!({ "ok": n }),
                Err(e) => json!({ "err": format!("{e:?}") }),
            }
        }
        "/kv/cas" => {
            // Read, then swap in `value` only if nobody changed the key in between.
            let bucket = store::open("default")?;
            let cas =
                atomics::Cas::new(&bucket, &arg("key")).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            let seen = cas.current().map_err(|e| anyhow::anyhow!("{e:?}"))?;
            match atomics::swap(cas, arg("value").as_bytes()) {
                Ok(()) => {
                    json!({ "ok": "swapped", "seen": seen.map(|v| String::from_utf8_lossy(&v).into_owned()) })
                }
                Err(atomics::CasError::CasFailed(_)) => json!({ "err": "cas-failed" }),
                Err(atomics::CasError::StoreError(e)) => json!({ "err": format!("{e:?}") }),
            }
        }
        "/kv/get" => {
            let bucket = store::open("default")?;
            match bucket.get(&arg("key")) {
                Ok(v) => json!({ "ok": v.map(|v| String::from_utf8_lossy(&v).into_owned()) }),
                Err(e) => json!({ "err": format!("{e:?}") }),
            }
        }
        "/kv/set" => {
            let store = spin_sdk::key_value::Store::open_default()?;
            store.set(&arg("key"), arg("value").as_bytes())?;
            json!({ "ok": store.get_keys()? })
        }
        "/pg" => {
            let result = spin_sdk::pg3::Connection::open(&arg("url"))
                .and_then(|conn| conn.query("SELECT 1 + 1 AS two, 'hi'::text AS word", &[]));
            match result {
                Ok(rows) => json!({ "ok": format!("{:?}", rows.rows) }),
                Err(e) => json!({ "err": e.to_string() }),
            }
        }
        "/trap" => panic!("the probe was asked to fail"),
        other => return Ok(Response::new(404, format!("no probe at {other}"))),
    };
    Ok(Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(body.to_string())
        .build())
}
