//! Reports what the host gives a guest, as JSON, so the host's tests can check it from outside.

// `#[http_component]` expands to the component's export glue, which needs unsafe code.
#![allow(unsafe_code)]

use serde_json::{Value, json};
use spin_sdk::http::conversions::TryFromIncomingRequest;
use spin_sdk::http::{
    Fields, IncomingRequest, IntoResponse, OutgoingResponse, Request, Response, ResponseOutparam,
};
use spin_sdk::http_component;
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let path_info = incoming
        .headers()
        .get("spin-path-info")
        .into_iter()
        .next()
        .unwrap_or_default();
    if let Some(after_head) = path_info.strip_prefix(b"/head-then-") {
        return stuck_after_head(after_head, out);
    }
    let response = match Request::try_from_incoming_request(incoming).await {
        Ok(req) => reply(req).into_response(),
        Err(e) => Response::new(400, e.to_string()),
    };
    // As `#[http_component]` does for a handler that returns a whole response.
    let mut response = response;
    let body = std::mem::take(response.body_mut());
    let outgoing = OutgoingResponse::try_from(response).expect("a valid response head");
    if let Err(e) = out.set_with_body(outgoing, body).await {
        eprintln!("cannot send the response: {e}");
    }
}

/// Sends a 200 head and one line, then never finishes: `loop` spins in wasm, `sleep` waits in
/// a host call. Only the host's deadline ends them (Spin has none).
fn stuck_after_head(what: &[u8], out: ResponseOutparam) {
    let response = OutgoingResponse::new(Fields::new());
    let body = response.body().expect("a fresh response has a body");
    out.set(response);
    let stream = body.write().expect("a fresh body has a stream");
    stream
        .blocking_write_and_flush(b"started\n")
        .expect("the client reads");
    match what {
        b"loop" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        _ => std::thread::sleep(std::time::Duration::from_secs(3600)),
    }
}

fn reply(req: Request) -> anyhow::Result<impl IntoResponse> {
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
        "/kv/cas2" => {
            // Two compare-and-swaps of one key, both read before either swaps.
            let bucket = store::open("default")?;
            let key = arg("key");
            let a = atomics::Cas::new(&bucket, &key).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            let b = atomics::Cas::new(&bucket, &key).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            a.current().map_err(|e| anyhow::anyhow!("{e:?}"))?;
            b.current().map_err(|e| anyhow::anyhow!("{e:?}"))?;
            json!({ "a": swap_outcome(a, arg("a").as_bytes()), "b": swap_outcome(b, arg("b").as_bytes()) })
        }
        "/kv/swap-unread" => {
            // A swap whose handle never read the key.
            let bucket = store::open("default")?;
            let cas =
                atomics::Cas::new(&bucket, &arg("key")).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            json!({ "outcome": swap_outcome(cas, arg("value").as_bytes()) })
        }
        "/kv/get" => {
            let bucket = store::open("default")?;
            match bucket.get(&arg("key")) {
                Ok(v) => json!({
                    "ok": v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned()),
                    "bytes": v,
                }),
                Err(e) => json!({ "err": format!("{e:?}") }),
            }
        }
        "/sql" => sql(&arg("api"), &arg("db"), req.body()),
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
        // Memory kept between requests: a WASIp2 instance serves one request, so always 1.
        "/count" => {
            static SERVED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            json!({ "served": SERVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 })
        }
        "/trap" => panic!("the probe was asked to fail"),
        "/loop" => {
            // Never returns and never calls the host: only the host's deadline ends it.
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "/sleep" => {
            let ms: u64 = arg("ms").parse().unwrap_or(1000);
            std::thread::sleep(std::time::Duration::from_millis(ms));
            json!({ "slept_ms": ms })
        }
        "/pg/session" => pg_session(&arg("url"), req.body()),
        other => return Ok(Response::new(404, format!("no probe at {other}"))),
    };
    Ok(Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(body.to_string())
        .build())
}

/// `"swapped"`, or `"cas-failed: <value the fresh handle read>"`, or the store error.
fn swap_outcome(cas: atomics::Cas, value: &[u8]) -> Value {
    match atomics::swap(cas, value) {
        Ok(()) => json!("swapped"),
        Err(atomics::CasError::CasFailed(fresh)) => {
            let now = fresh.current().ok().flatten();
            json!(format!(
                "cas-failed: {}",
                now.map(|v| String::from_utf8_lossy(&v).into_owned())
                    .unwrap_or_else(|| "absent".into())
            ))
        }
        Err(atomics::CasError::StoreError(e)) => json!(format!("store-error: {e:?}")),
    }
}

/// Runs a JSON list of `{"sql", "params"}` on ONE connection and reports each result.
/// Parameters: integer, float (real), string (text), null, `{"blob": [bytes]}`.
/// `api=2` uses `fermyon:spin/sqlite@2.0.0`, anything else `spin:sqlite/sqlite@3.0.0`.
fn sql(api: &str, db: &str, body: &[u8]) -> Value {
    use spin_sdk::{sqlite, sqlite3};
    let statements: Vec<Value> = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return json!({ "err": format!("bad body: {e}") }),
    };
    let db = if db.is_empty() { "default" } else { db };
    let params = |s: &Value| -> Vec<sqlite3::Value> {
        s["params"]
            .as_array()
            .map(|p| p.iter().map(to_sql3).collect())
            .unwrap_or_default()
    };
    if api == "2" {
        let conn = match sqlite::Connection::open(db) {
            Ok(c) => c,
            Err(e) => return json!({ "err": format!("{e:?}") }),
        };
        let results: Vec<Value> = statements
            .iter()
            .map(|s| {
                let p: Vec<sqlite::Value> = params(s).into_iter().map(to_sql2).collect();
                match conn.execute(s["sql"].as_str().unwrap_or(""), &p) {
                    Ok(r) => json!({
                        "columns": r.columns,
                        "rows": r.rows.iter().map(|row| row.values.iter().map(|v| from_sql3(&to_sql3_from2(v))).collect::<Vec<_>>()).collect::<Vec<_>>(),
                    }),
                    Err(e) => json!({ "err": format!("{e:?}") }),
                }
            })
            .collect();
        return json!({ "results": results });
    }
    let conn = match sqlite3::Connection::open(db) {
        Ok(c) => c,
        Err(e) => return json!({ "err": format!("{e:?}") }),
    };
    let results: Vec<Value> = statements
        .iter()
        .map(|s| match conn.execute(s["sql"].as_str().unwrap_or(""), &params(s)) {
            Ok(r) => json!({
                "columns": r.columns,
                "rows": r.rows.iter().map(|row| row.values.iter().map(from_sql3).collect::<Vec<_>>()).collect::<Vec<_>>(),
                "changes": conn.changes(),
                "last_insert_rowid": conn.last_insert_rowid(),
            }),
            Err(e) => json!({ "err": format!("{e:?}") }),
        })
        .collect();
    json!({ "results": results })
}

fn to_sql3(v: &Value) -> spin_sdk::sqlite3::Value {
    use spin_sdk::sqlite3::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Number(n) => match n.as_i64() {
            Some(i) => V::Integer(i),
            None => V::Real(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => V::Text(s.clone()),
        Value::Object(o) => V::Blob(
            o.get("blob")
                .and_then(Value::as_array)
                .map(|b| b.iter().map(|x| x.as_u64().unwrap_or(0) as u8).collect())
                .unwrap_or_default(),
        ),
        other => V::Text(other.to_string()),
    }
}

fn from_sql3(v: &spin_sdk::sqlite3::Value) -> Value {
    use spin_sdk::sqlite3::Value as V;
    match v {
        V::Integer(i) => json!(i),
        V::Real(r) => json!({ "real": r }),
        V::Text(t) => json!(t),
        V::Blob(b) => json!({ "blob": b }),
        V::Null => Value::Null,
    }
}

fn to_sql2(v: spin_sdk::sqlite3::Value) -> spin_sdk::sqlite::Value {
    use spin_sdk::sqlite::Value as V2;
    use spin_sdk::sqlite3::Value as V;
    match v {
        V::Integer(i) => V2::Integer(i),
        V::Real(r) => V2::Real(r),
        V::Text(t) => V2::Text(t),
        V::Blob(b) => V2::Blob(b),
        V::Null => V2::Null,
    }
}

fn to_sql3_from2(v: &spin_sdk::sqlite::Value) -> spin_sdk::sqlite3::Value {
    use spin_sdk::sqlite::Value as V2;
    use spin_sdk::sqlite3::Value as V;
    match v {
        V2::Integer(i) => V::Integer(*i),
        V2::Real(r) => V::Real(*r),
        V2::Text(t) => V::Text(t.clone()),
        V2::Blob(b) => V::Blob(b.clone()),
        V2::Null => V::Null,
    }
}

/// Runs a JSON list of `{"sql", "params", "query"}` on ONE PostgreSQL connection (a session):
/// `query: true` returns rows, else the affected-row count. Parameters: integer (int64),
/// string (text), null, `{"blob": [bytes]}` (binary).
fn pg_session(url: &str, body: &[u8]) -> Value {
    use spin_sdk::pg3::{Connection, DbValue, ParameterValue};
    let statements: Vec<Value> = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return json!({ "err": format!("bad body: {e}") }),
    };
    let conn = match Connection::open(url) {
        Ok(c) => c,
        Err(e) => return json!({ "err": e.to_string() }),
    };
    let results: Vec<Value> = statements
        .iter()
        .map(|s| {
            let params: Vec<ParameterValue> = s["params"]
                .as_array()
                .map(|p| {
                    p.iter()
                        .map(|v| match v {
                            Value::Number(n) => ParameterValue::Int64(n.as_i64().unwrap_or(0)),
                            Value::String(t) => ParameterValue::Str(t.clone()),
                            Value::Object(o) => ParameterValue::Binary(
                                o.get("blob")
                                    .and_then(Value::as_array)
                                    .map(|b| {
                                        b.iter().map(|x| x.as_u64().unwrap_or(0) as u8).collect()
                                    })
                                    .unwrap_or_default(),
                            ),
                            _ => ParameterValue::DbNull,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let sql = s["sql"].as_str().unwrap_or("");
            if s["query"].as_bool().unwrap_or(false) {
                match conn.query(sql, &params) {
                    Ok(rows) => json!({ "rows": rows.rows.iter().map(|r| r.iter().map(|v| match v {
                        DbValue::Int64(i) => json!(i),
                        DbValue::Int32(i) => json!(i),
                        DbValue::Str(t) => json!(t),
                        DbValue::Binary(b) => json!({ "blob": b }),
                        DbValue::DbNull => Value::Null,
                        other => json!(format!("{other:?}")),
                    }).collect::<Vec<_>>()).collect::<Vec<_>>() }),
                    Err(e) => json!({ "err": e.to_string() }),
                }
            } else {
                match conn.execute(sql, &params) {
                    Ok(n) => json!({ "affected": n }),
                    Err(e) => json!({ "err": e.to_string() }),
                }
            }
        })
        .collect();
    json!({ "results": results })
}
