//! The hub's HTTP routes, independent of any host: the Spin component turns its request into an
//! [`http::Request`], calls [`handle`] and sends back the [`http::Response`].
//!
//! | Route | Method | Success |
//! |---|---|---|
//! | `/api/send` | POST, `Content-Type: application/json`, at most 64 KiB | 201, the stored message |
//! | `/api/inbox/<machine>?limit=&ack=` | GET | 200, `{"machine", "messages": [...]}` |
//! | `/machines` | GET | 200, `[{"name", "last_seen"}]` |
//!
//! Errors are JSON `{"error": "..."}`: 400 bad input, 401 no valid token (production), 403 a
//! token acting for another machine, 404 unknown path, 405 other methods (with `Allow`), 413 body
//! over 64 KiB, 415 not JSON, 500 store failure, 503 store too contended (with `Retry-After`).

use http::{Method, StatusCode, header};
use serde::Serialize;

use crate::HubError;
use crate::auth::{Access, CHALLENGE, HubAuth};
use crate::hub::{Clock, DEFAULT_LIMIT, Hub, MAX_LIMIT};
use crate::kv::KeyValue;
use crate::model::{MachineName, SendRequest};

/// The largest request body `/api/send` accepts: 64 KiB.
pub const MAX_BODY: usize = 64 * 1024;

/// A request body as the host delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body.
    Bytes(Vec<u8>),
    /// More than [`MAX_BODY`] bytes (the rest was not read).
    TooLarge,
}

/// Answers one hub request.
pub fn handle<S: KeyValue, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> http::Response<Vec<u8>> {
    let path = request.uri().path();
    if path == "/api/send" {
        if request.method() != Method::POST {
            return method_not_allowed("POST");
        }
        return send(hub, auth, request);
    }
    if path == "/machines" {
        if request.method() != Method::GET {
            return method_not_allowed("GET");
        }
        return match access(auth, &request) {
            Access::Denied => unauthorized(),
            _ => respond(hub.machines().map(|m| (StatusCode::OK, m))),
        };
    }
    if let Some(machine) = path.strip_prefix("/api/inbox/")
        && !machine.is_empty()
        && !machine.contains('/')
    {
        if request.method() != Method::GET {
            return method_not_allowed("GET");
        }
        return inbox(
            hub,
            auth,
            machine,
            request.uri().query().unwrap_or(""),
            &request,
        );
    }
    error(StatusCode::NOT_FOUND, &format!("no hub route for {path}"))
}

fn send<S: KeyValue, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> http::Response<Vec<u8>> {
    let access = access(auth, &request);
    if access == Access::Denied {
        return unauthorized();
    }
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    let body = match request.into_body() {
        Body::Bytes(b) if b.len() <= MAX_BODY => b,
        _ => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is larger than 64 KiB",
            );
        }
    };
    let send = match SendRequest::from_json(&body) {
        Ok(send) => send,
        Err(e) => return hub_error(e),
    };
    if !access.may_act_as(&send.from) {
        return error(
            StatusCode::FORBIDDEN,
            &format!("this token may not send as `{}`", send.from),
        );
    }
    respond(hub.send(&send).map(|m| (StatusCode::CREATED, m)))
}

fn inbox<S: KeyValue, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    query: &str,
    request: &http::Request<Body>,
) -> http::Response<Vec<u8>> {
    let access = access(auth, request);
    if access == Access::Denied {
        return unauthorized();
    }
    let parsed = MachineName::parse(machine, "machine").and_then(|m| {
        let (limit, ack) = inbox_query(query)?;
        Ok((m, limit, ack))
    });
    let (machine, limit, ack) = match parsed {
        Ok(p) => p,
        Err(e) => return hub_error(e),
    };
    if !access.may_act_as(&machine) {
        return error(
            StatusCode::FORBIDDEN,
            &format!("this token may not read the inbox of `{machine}`"),
        );
    }
    respond(hub.inbox(&machine, limit, ack).map(|i| (StatusCode::OK, i)))
}

/// `limit` (1 to 500, default 50) and `ack` (`true`/`false`/`1`/`0`, default false); other
/// parameters are ignored.
fn inbox_query(query: &str) -> Result<(usize, bool), HubError> {
    let mut limit = DEFAULT_LIMIT;
    let mut ack = false;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        match &*key {
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_LIMIT).contains(n))
                    .ok_or_else(|| {
                        HubError::Invalid(format!(
                            "`limit` must be an integer from 1 to {MAX_LIMIT}, not `{value}`"
                        ))
                    })?;
            }
            "ack" => {
                ack = match &*value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => {
                        return Err(HubError::Invalid(format!(
                            "`ack` must be true or false, not `{value}`"
                        )));
                    }
                };
            }
            _ => {}
        }
    }
    Ok((limit, ack))
}

fn access(auth: &HubAuth, request: &http::Request<Body>) -> Access {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    auth.access(header)
}

fn is_json(content_type: Option<&http::HeaderValue>) -> bool {
    let Some(value) = content_type.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

fn respond<T: Serialize>(result: Result<(StatusCode, T), HubError>) -> http::Response<Vec<u8>> {
    match result {
        Ok((status, value)) => match serde_json::to_vec(&value) {
            Ok(body) => json(status, body),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        Err(e) => hub_error(e),
    }
}

fn hub_error(e: HubError) -> http::Response<Vec<u8>> {
    let status = match e {
        HubError::Invalid(_) => StatusCode::BAD_REQUEST,
        HubError::Busy => StatusCode::SERVICE_UNAVAILABLE,
        HubError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut response = error(status, &e.to_string());
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    }
    response
}

fn method_not_allowed(allow: &'static str) -> http::Response<Vec<u8>> {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("method not allowed; use {allow}"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, http::HeaderValue::from_static(allow));
    response
}

fn unauthorized() -> http::Response<Vec<u8>> {
    let mut response = error(
        StatusCode::UNAUTHORIZED,
        "a valid hub token is required: Authorization: Bearer <token>",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static(CHALLENGE),
    );
    response
}

/// A JSON error response `{"error": message}`.
pub fn error(status: StatusCode, message: &str) -> http::Response<Vec<u8>> {
    let body = serde_json::json!({ "error": message })
        .to_string()
        .into_bytes();
    json(status, body)
}

fn json(status: StatusCode, body: Vec<u8>) -> http::Response<Vec<u8>> {
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}
