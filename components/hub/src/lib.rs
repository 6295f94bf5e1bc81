//! The `hub` Spin component: the message hub (`/api/send`, `/api/inbox/<machine>`, `/machines`).
//!
//! A thin adapter over [`dochub_hub`]: it reads the variables `environment` and `hub_tokens` once
//! per request, reads the body (at most 64 KiB), implements [`KeyValue`] over `wasi:keyvalue`
//! (store, atomics, batch) on the store labelled `default`, and hands the request to
//! [`dochub_hub::api::handle`].

// `#[http_component]` expands to the component's export glue, which is `unsafe` by nature.
#![allow(unsafe_code)]

use std::collections::HashMap;

use dochub_hub::api::{self, Body, MAX_BODY};
use dochub_hub::auth::HubAuth;
use dochub_hub::{Hub, KeyValue, StoreError, decode_counter};
use futures::StreamExt;
use http::StatusCode;
use spin_sdk::http::IncomingRequest;
use spin_sdk::http_component;
use spin_sdk::wit::wasi::keyvalue::{atomics, batch, store};

#[http_component]
async fn handle(req: IncomingRequest) -> http::Response<Vec<u8>> {
    let auth = HubAuth::new(&variable("environment"), &variable("hub_tokens"));
    let request = match read_request(req).await {
        Ok(request) => request,
        Err(response) => return response,
    };
    let bucket = match store::open("default") {
        Ok(bucket) => bucket,
        Err(e) => {
            let message = format!("cannot open the key-value store `default`: {e:?}");
            return api::error(StatusCode::INTERNAL_SERVER_ERROR, &message);
        }
    };
    api::handle(&Hub::new(WasiStore { bucket }), &auth, request)
}

fn variable(name: &str) -> String {
    spin_sdk::variables::get(name).unwrap_or_default()
}

/// The request as an [`http::Request`], its body read up to [`MAX_BODY`] bytes.
async fn read_request(
    req: IncomingRequest,
) -> Result<http::Request<Body>, http::Response<Vec<u8>>> {
    let bad = |what: &str| api::error(StatusCode::BAD_REQUEST, what);
    let method = http::Method::from_bytes(req.method().to_string().as_bytes())
        .map_err(|_| bad("invalid method"))?;
    let uri = req.path_with_query().unwrap_or_else(|| "/".to_owned());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(http::Uri::try_from(uri).map_err(|_| bad("invalid request target"))?);
    let mut declared_too_large = false;
    for (name, value) in req.headers().entries() {
        if name.eq_ignore_ascii_case("content-length") {
            let length = std::str::from_utf8(&value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            declared_too_large = length.is_some_and(|n| n > MAX_BODY as u64);
        }
        if let Ok(value) = http::HeaderValue::from_bytes(&value) {
            builder = builder.header(name, value);
        }
    }
    let body = if declared_too_large {
        Body::TooLarge
    } else {
        let mut stream = req.into_body_stream();
        let mut bytes = Vec::new();
        let mut too_large = false;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| bad(&format!("cannot read the request body: {e:?}")))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_BODY {
                too_large = true;
                break;
            }
        }
        if too_large {
            Body::TooLarge
        } else {
            Body::Bytes(bytes)
        }
    };
    builder
        .body(body)
        .map_err(|_| bad("invalid request headers"))
}

/// [`KeyValue`] over `wasi:keyvalue`.
struct WasiStore {
    bucket: store::Bucket,
}

fn store_error(e: store::Error) -> StoreError {
    StoreError(match e {
        store::Error::NoSuchStore => "no such store".to_owned(),
        store::Error::AccessDenied => "access denied".to_owned(),
        store::Error::Other(message) => message,
    })
}

impl KeyValue for WasiStore {
    type Cas = atomics::Cas;

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.bucket.get(key).map_err(store_error)
    }

    fn get_many(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        // Some hosts (Spin's SQLite store) return only the keys that exist: match by name. Some
        // providers fail batch reads outright (Spin's Redis store runs KEYS, not MGET): then one
        // read per key.
        let Ok(found) = batch::get_many(&self.bucket, keys) else {
            return keys.iter().map(|k| self.get(k)).collect();
        };
        let mut found: HashMap<String, Option<Vec<u8>>> = found.into_iter().collect();
        Ok(keys.iter().map(|k| found.remove(k).flatten()).collect())
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.bucket.set(key, value).map_err(store_error)
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        self.bucket.delete(key).map_err(store_error)
    }

    fn delete_many(&self, keys: &[String]) -> Result<(), StoreError> {
        batch::delete_many(&self.bucket, keys).map_err(store_error)
    }

    fn list_keys(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .bucket
                .list_keys(cursor.as_deref())
                .map_err(store_error)?;
            keys.extend(page.keys.into_iter().filter(|k| k.starts_with(prefix)));
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(keys),
            }
        }
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        atomics::increment(&self.bucket, key, delta).map_err(store_error)
    }

    fn counter(&self, key: &str) -> Result<i64, StoreError> {
        // A plain read where the encoding is known; an increment by 0 (a write) otherwise.
        match self.get(key)? {
            None => Ok(0),
            Some(bytes) => match decode_counter(&bytes) {
                Some(n) => Ok(n),
                None => self.increment(key, 0),
            },
        }
    }

    fn cas_begin(&self, key: &str) -> Result<(atomics::Cas, Option<Vec<u8>>), StoreError> {
        let cas = atomics::Cas::new(&self.bucket, key).map_err(store_error)?;
        let current = cas.current().map_err(store_error)?;
        Ok((cas, current))
    }

    fn cas_swap(&self, cas: atomics::Cas, value: &[u8]) -> Result<bool, StoreError> {
        match atomics::swap(cas, value) {
            Ok(()) => Ok(true),
            Err(atomics::CasError::CasFailed(_)) => Ok(false),
            Err(atomics::CasError::StoreError(e)) => Err(store_error(e)),
        }
    }
}
