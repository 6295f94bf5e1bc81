//! The hub's HTTP routes, independent of any host: the Spin component calls
//! [`check_before_body`] on the request's head, reads the body only when that passes, then
//! calls [`handle`] and sends back the [`dochub_http::Response`], the one response type of
//! every dochub route. So an anonymous or mistyped request
//! is refused before a byte of its body is read.
//!
//! | Route | Method | Success |
//! |---|---|---|
//! | `/api/send` | POST JSON `{from,to,body}`, optional `Idempotency-Key` | 201, the stored message |
//! | `/api/inbox/<machine>?limit=&ack=` | GET | 200, `{"machine", "messages": [...]}` |
//! | `/api/inbox/<machine>/ack` | POST JSON `{"through": <id>}` | 200, `{"machine", "acknowledged"}` |
//! | `/machines` | GET | 200, `[{"name", "last_seen"}]` |
//!
//! Errors are JSON `{"error": "..."}`: 400 bad input, 401 no valid token (production), 403 a
//! token acting for another machine, 404 unknown path, 405 other methods (with `Allow`), 413 a
//! message body over 64 KiB (or a request over [`MAX_REQUEST`]), 415 not JSON, 422 an
//! `Idempotency-Key` the sender already used for another recipient or body, 500 database or
//! setting failure, 503 database busy (with `Retry-After`), 507 the recipient's inbox is full.

use dochub_http::{JSON, Response};
use http::{Method, StatusCode, header};
use serde::{Deserialize, Serialize};

use crate::HubError;
use crate::auth::{Access, CHALLENGE, HubAuth};
use crate::hub::{Clock, DEFAULT_LIMIT, Hub, MAX_LIMIT};
use crate::model::{IdempotencyKey, MAX_BODY, MachineName, SendRequest};
use crate::sql::Sql;

/// The largest request body read: room for a 64 KiB message written entirely in `\uXXXX`
/// escapes (6 bytes each), plus the rest of the JSON.
pub const MAX_REQUEST: usize = 6 * MAX_BODY + 4096;

/// A request body as the host delivered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body.
    Bytes(Vec<u8>),
    /// More than [`MAX_REQUEST`] bytes (the rest was not read).
    TooLarge,
}

/// A hub route, resolved from the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route<'a> {
    Send,
    Machines,
    Inbox(&'a str),
    Acknowledge(&'a str),
}

impl<'a> Route<'a> {
    fn resolve(path: &'a str) -> Option<Route<'a>> {
        match path {
            "/api/send" => return Some(Route::Send),
            "/machines" => return Some(Route::Machines),
            _ => {}
        }
        let rest = path.strip_prefix("/api/inbox/")?;
        match rest.split('/').collect::<Vec<_>>()[..] {
            [machine] if !machine.is_empty() => Some(Route::Inbox(machine)),
            [machine, "ack"] if !machine.is_empty() => Some(Route::Acknowledge(machine)),
            _ => None,
        }
    }

    fn method(self) -> (Method, &'static str) {
        match self {
            Route::Send | Route::Acknowledge(_) => (Method::POST, "POST"),
            Route::Machines | Route::Inbox(_) => (Method::GET, "GET"),
        }
    }
}

/// Everything decided from the request's head: the route (404), the method (405), the token
/// (401) and, for a route that reads JSON, the content type (415). `None`: read the body (at
/// most [`MAX_REQUEST`] bytes) and call [`handle`].
pub fn check_before_body<B>(auth: &HubAuth, request: &http::Request<B>) -> Option<Response> {
    let path = request.uri().path();
    let Some(route) = Route::resolve(path) else {
        return Some(error(
            StatusCode::NOT_FOUND,
            &format!("no hub route for {path}"),
        ));
    };
    let (method, allow) = route.method();
    if request.method() != method {
        return Some(method_not_allowed(allow));
    }
    if access(auth, request) == Access::Denied {
        return Some(unauthorized());
    }
    if method == Method::POST && !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    None
}

/// Answers one hub request.
pub fn handle<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> Response {
    if let Some(refusal) = check_before_body(auth, &request) {
        return refusal;
    }
    let path = request.uri().path().to_owned();
    match Route::resolve(&path) {
        Some(Route::Send) => send(hub, auth, request),
        Some(Route::Machines) => respond(hub.machines().map(|m| (StatusCode::OK, m))),
        Some(Route::Inbox(machine)) => inbox(hub, auth, machine, &request),
        Some(Route::Acknowledge(machine)) => acknowledge(hub, auth, machine, request),
        None => error(StatusCode::NOT_FOUND, &format!("no hub route for {path}")),
    }
}

fn send<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: http::Request<Body>,
) -> Response {
    let access = access(auth, &request);
    if access == Access::Denied {
        return unauthorized();
    }
    let key = match request.headers().get("idempotency-key") {
        None => None,
        Some(value) => match IdempotencyKey::parse(value.as_bytes()) {
            Ok(key) => Some(key),
            Err(e) => return hub_error(e),
        },
    };
    let body = match json_body(request) {
        Ok(body) => body,
        Err(response) => return *response,
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
    respond(
        hub.send(&send, key.as_ref())
            .map(|m| (StatusCode::CREATED, m)),
    )
}

fn inbox<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    request: &http::Request<Body>,
) -> Response {
    let access = access(auth, request);
    if access == Access::Denied {
        return unauthorized();
    }
    let query = request.uri().query().unwrap_or("");
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
    // A mistyped name in an anonymous peek must not become a machine that collects every
    // broadcast: only an authenticated or acknowledging read registers.
    let register = ack || matches!(access, Access::Machine(_));
    respond(
        hub.inbox(&machine, limit, ack, register)
            .map(|i| (StatusCode::OK, i)),
    )
}

fn acknowledge<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    request: http::Request<Body>,
) -> Response {
    #[derive(Deserialize)]
    struct Ack {
        through: Option<serde_json::Value>,
    }
    #[derive(Serialize)]
    struct Acknowledged {
        machine: String,
        acknowledged: u64,
    }
    let access = access(auth, &request);
    if access == Access::Denied {
        return unauthorized();
    }
    let machine = match MachineName::parse(machine, "machine") {
        Ok(m) => m,
        Err(e) => return hub_error(e),
    };
    if !access.may_act_as(&machine) {
        return error(
            StatusCode::FORBIDDEN,
            &format!("this token may not acknowledge the inbox of `{machine}`"),
        );
    }
    let body = match json_body(request) {
        Ok(body) => body,
        Err(response) => return *response,
    };
    let through = match serde_json::from_slice::<Ack>(&body) {
        Ok(Ack {
            through: Some(serde_json::Value::Number(n)),
        }) if n.as_u64().is_some() => n.as_u64().unwrap_or_default(),
        Ok(_) => {
            return hub_error(HubError::Invalid(
                "`through` must be the id (a non-negative integer) of the last message to mark read"
                    .to_owned(),
            ));
        }
        Err(e) => {
            return hub_error(HubError::Invalid(format!(
                "the body is not a JSON object: {e}"
            )));
        }
    };
    respond(hub.acknowledge(&machine, through).map(|acknowledged| {
        (
            StatusCode::OK,
            Acknowledged {
                machine: machine.to_string(),
                acknowledged,
            },
        )
    }))
}

/// The body of a request that must be JSON: 415 for another content type, 413 when too large.
fn json_body(request: http::Request<Body>) -> Result<Vec<u8>, Box<Response>> {
    if !is_json(request.headers().get(header::CONTENT_TYPE)) {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        )));
    }
    match request.into_body() {
        Body::Bytes(b) if b.len() <= MAX_REQUEST => Ok(b),
        _ => Err(Box::new(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than {MAX_REQUEST} bytes (a message body may hold \
                 64 KiB of UTF-8)"
            ),
        ))),
    }
}

/// `limit` (default 50; a number outside 1..=500 is clamped into it) and `ack` (true/false,
/// 1/0, yes/no, on/off in any case; bare `ack` is true; default false); other parameters are
/// ignored.
fn inbox_query(query: &str) -> Result<(usize, bool), HubError> {
    let mut limit = DEFAULT_LIMIT;
    let mut ack = false;
    for (key, value) in dochub_http::query_pairs(query) {
        match key.as_str() {
            "limit" => limit = parse_limit(&value)?,
            "ack" => {
                ack = match value.to_ascii_lowercase().as_str() {
                    "" | "true" | "1" | "yes" | "on" => true,
                    "false" | "0" | "no" | "off" => false,
                    _ => {
                        return Err(HubError::Invalid(format!(
                            "`ack` must be true or false (or 1/0, yes/no, on/off), not `{value}`"
                        )));
                    }
                };
            }
            _ => {}
        }
    }
    Ok((limit, ack))
}

/// An integer, clamped into 1..=500 however large or negative it is.
fn parse_limit(value: &str) -> Result<usize, HubError> {
    let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(HubError::Invalid(format!(
            "`limit` must be an integer (it is clamped to 1..={MAX_LIMIT}), not `{value}`"
        )));
    }
    if value.starts_with('-') {
        return Ok(1);
    }
    Ok(digits
        .parse::<usize>()
        .map_or(MAX_LIMIT, |n| n.clamp(1, MAX_LIMIT)))
}

fn access<B>(auth: &HubAuth, request: &http::Request<B>) -> Access {
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

fn respond<T: Serialize>(result: Result<(StatusCode, T), HubError>) -> Response {
    match result {
        Ok((status, value)) => match serde_json::to_vec(&value) {
            Ok(body) => json(status, body),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        Err(e) => hub_error(e),
    }
}

fn hub_error(e: HubError) -> Response {
    let status = match e {
        HubError::Invalid(_) => StatusCode::BAD_REQUEST,
        HubError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        HubError::InboxFull(_) => StatusCode::INSUFFICIENT_STORAGE,
        HubError::KeyReused(_) => StatusCode::UNPROCESSABLE_ENTITY,
        HubError::Busy => StatusCode::SERVICE_UNAVAILABLE,
        HubError::Config(_) | HubError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let response = error(status, &e.to_string());
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return response.with_header("retry-after", "1");
    }
    response
}

fn method_not_allowed(allow: &'static str) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("method not allowed; use {allow}"),
    )
    .with_header("allow", allow)
}

fn unauthorized() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "a valid hub token is required: Authorization: Bearer <token>",
    )
    .with_header("www-authenticate", CHALLENGE)
}

/// A JSON error response `{"error": message}`.
pub fn error(status: StatusCode, message: &str) -> Response {
    Response::json_error(status.as_u16(), message)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    Response::new(status.as_u16(), JSON, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_clamped_and_must_be_a_number() {
        for (value, expected) in [
            ("1", 1),
            ("50", 50),
            ("500", 500),
            ("0", 1),
            ("-5", 1),
            ("501", 500),
            ("+7", 7),
            ("99999999999999999999999", 500),
        ] {
            assert_eq!(parse_limit(value).unwrap(), expected, "{value}");
        }
        for bad in ["", "abc", "1.5", "-", "5x", " 5"] {
            assert!(parse_limit(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ack_takes_the_usual_spellings() {
        for q in ["ack", "ack=", "ack=TRUE", "ack=1", "ack=Yes", "ack=on"] {
            assert_eq!(inbox_query(q).unwrap(), (DEFAULT_LIMIT, true), "{q}");
        }
        for q in ["", "ack=false", "ack=0", "ack=NO", "ack=Off", "other=1"] {
            assert_eq!(inbox_query(q).unwrap(), (DEFAULT_LIMIT, false), "{q}");
        }
        assert!(inbox_query("ack=maybe").is_err());
    }
}
