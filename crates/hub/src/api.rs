//! The hub's HTTP routes, independent of any host: the Spin component calls
//! [`check_before_body`] on the [`dochub_http::Request`], reads the body only when that passes,
//! then calls [`answer`] and sends back the [`dochub_http::Response`]: the request and response
//! types of every dochub route. So an anonymous or mistyped request is refused before a byte
//! of its body is read. The request's `path` is the whole path, which tells the hub's routes
//! apart.
//!
//! | Route | Method | Success |
//! |---|---|---|
//! | `/api/send` | POST JSON `{from,to,body}` (and `subject`, `importance`, `reply_to`), optional `Idempotency-Key` | 201, the stored message |
//! | `/api/inbox/<machine>?limit=&ack=&wait=&importance=` | GET | 200, `{"machine", "messages": [...]}` |
//! | `/api/messages/<machine>?limit=&before=&thread=&q=` | GET | 200, the mailbox, newest first |
//! | `/api/inbox/<machine>/events` | GET (`Accept: text/event-stream`) | 200, one event per message |
//! | `/api/inbox/<machine>/ack` | POST JSON `{"through": <id>}` or `{"ids": [<id>, ...]}` | 200, `{"machine", "acknowledged"}` |
//! | `/machines` | GET | 200, `[{"name", "last_seen"}]` |
//!
//! Errors are JSON `{"error": "..."}`: 400 bad input, 401 no valid token (production), 403 a
//! token acting for another machine, 404 unknown path or a `reply_to` not in the sender's
//! mailbox, 405 other methods (with `Allow`), 406 an
//! event stream for a client that does not accept `text/event-stream`, 413 a message body over
//! 64 KiB (or a request over [`MAX_REQUEST`]), 415 not JSON, 422 an `Idempotency-Key` the
//! sender already used for another recipient or body, 500 database or setting failure, 503
//! database busy (with `Retry-After`), 507 the recipient's inbox or the hub's list of machines
//! is full.
//!
//! A long-poll on an empty inbox and an event stream answer in two parts ([`Answer::Later`]):
//! the `200` head at once, then the body as [`crate::wait`] writes it.

use dochub_http::{JSON, Request, Response};
use http::StatusCode;
use serde::{Deserialize, Serialize};

use crate::HubError;
use crate::auth::{Access, CHALLENGE, HubAuth};
use crate::model::{IdempotencyKey, Importance, MAX_BODY, MachineName, SendRequest};
use crate::sql::Sql;
use crate::store::{
    Clock, DEFAULT_LIMIT, Hub, MAX_LIMIT, MAX_MAILBOX_LIMIT, MailboxQuery, search_words,
};
use crate::wait::{
    AsyncPause, Blocking, BlockingOut, BodyOut, Connect, EachLook, EventStream, Lookout, Pause,
    ThreadPause, WaitError, WaitingRead, finish_blocking,
};

/// The largest request body read: room for a 64 KiB message written entirely in `\uXXXX`
/// escapes (6 bytes each), plus the rest of the JSON.
pub const MAX_REQUEST: usize = 6 * MAX_BODY + 4096;

/// A request body as the host delivered it: read with [`MAX_REQUEST`] as its limit.
pub use dochub_http::Body;

/// A hub route, resolved from the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route<'a> {
    Send,
    Machines,
    Inbox(&'a str),
    Acknowledge(&'a str),
    Events(&'a str),
    Mailbox(&'a str),
}

impl<'a> Route<'a> {
    fn resolve(path: &'a str) -> Option<Route<'a>> {
        match path {
            "/api/send" => return Some(Route::Send),
            "/machines" => return Some(Route::Machines),
            _ => {}
        }
        if let Some(machine) = path.strip_prefix("/api/messages/") {
            return (!machine.is_empty() && !machine.contains('/'))
                .then_some(Route::Mailbox(machine));
        }
        let rest = path.strip_prefix("/api/inbox/")?;
        match rest.split('/').collect::<Vec<_>>()[..] {
            [machine] if !machine.is_empty() => Some(Route::Inbox(machine)),
            [machine, "ack"] if !machine.is_empty() => Some(Route::Acknowledge(machine)),
            [machine, "events"] if !machine.is_empty() => Some(Route::Events(machine)),
            _ => None,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Route::Send | Route::Acknowledge(_) => "POST",
            Route::Machines | Route::Inbox(_) | Route::Events(_) | Route::Mailbox(_) => "GET",
        }
    }
}

/// Everything decided from the request's head: the route (404), the method (405), the token
/// (401) and, for a route that reads JSON, the content type (415). `None`: read the body (at
/// most [`MAX_REQUEST`] bytes) and call [`handle`].
pub fn check_before_body(auth: &HubAuth, request: &Request<'_>) -> Option<Response> {
    let path = request.path;
    let Some(route) = Route::resolve(path) else {
        return Some(error(
            StatusCode::NOT_FOUND,
            &format!("no hub route for {path}"),
        ));
    };
    let method = route.method();
    if request.method != method {
        return Some(method_not_allowed(method));
    }
    if access(auth, request) == Access::Denied {
        return Some(unauthorized());
    }
    if method == "POST" && !is_json(request.header("content-type")) {
        return Some(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    None
}

/// Whether the request line asks to wait: a `GET` of an event stream, or of an inbox whose
/// query [`inbox_query`] reads with a `wait` above 0. It may still answer at once (mail
/// waiting, a refusal): this only lets a WASIp3 hub yield before such a request's first look,
/// so that the requests arriving with it can join its instance.
pub fn may_wait(method: &str, path: &str, query: &str) -> bool {
    if method != "GET" {
        return false;
    }
    match Route::resolve(path) {
        Some(Route::Events(_)) => true,
        Some(Route::Inbox(_)) => {
            inbox_query(query, std::time::Duration::MAX).is_ok_and(|read| !read.wait.is_zero())
        }
        _ => false,
    }
}

/// The answer to a hub request.
#[derive(Debug)]
pub enum Answer {
    /// The whole response.
    Now(Response),
    /// A long-poll on an empty inbox, or an event stream: send the head, then [`Later::run`].
    Later(Later),
}

/// A response whose body is written over time: its head (status `200` and headers, no body)
/// and the work that writes the body.
#[derive(Debug)]
pub struct Later {
    /// The response head; its body is empty.
    pub head: Response,
    work: Work,
}

#[derive(Debug)]
enum Work {
    Wait(WaitingRead),
    Stream(EventStream),
}

impl Later {
    /// Writes the body into `out`, waiting with `pause` and opening a connection with
    /// `connect` for each look at the store; it blocks while it waits (a WASIp2 instance,
    /// which serves this request alone, and native code). An error after the head is sent can
    /// only end the body early (the client sees an unfinished response and asks again).
    pub fn run<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        pause: &dyn Pause,
        out: &mut dyn std::io::Write,
    ) -> Result<(), WaitError> {
        finish_blocking(self.run_async(connect, &Blocking(pause), &EachLook, &mut BlockingOut(out)))
    }

    /// [`Later::run`] for a request that shares its instance with others (WASIp3): it yields
    /// while it waits and writes, and a long-poll learns of news from `lookout`.
    pub async fn run_async<S: Sql, C: Clock>(
        &self,
        connect: Connect<'_, S, C>,
        pause: &impl AsyncPause,
        lookout: &impl Lookout,
        out: &mut impl BodyOut,
    ) -> Result<(), WaitError> {
        match &self.work {
            Work::Wait(read) => read.run(connect, pause, lookout, out).await,
            Work::Stream(stream) => stream.run(connect, pause, out).await,
        }
    }
}

/// Answers one hub request whole: a long-poll or a stream is run to its end on this thread
/// ([`ThreadPause`]) into the body. Hosts that can stream call [`answer`].
pub fn handle<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: &Request<'_>,
    body: Body,
) -> Response {
    let connect = || Ok(hub.borrowed());
    handle_with(&connect, auth, request, body, &ThreadPause::default())
}

/// [`handle`] on a connection from `connect` for each look at the store, pausing with `pause`
/// in between: a caller on a pooled store lets its connection go while a long-poll waits.
pub fn handle_with<S: Sql, C: Clock>(
    connect: Connect<'_, S, C>,
    auth: &HubAuth,
    request: &Request<'_>,
    body: Body,
    pause: &dyn Pause,
) -> Response {
    if let Some(refusal) = check_before_body(auth, request) {
        return refusal;
    }
    let answered = match connect() {
        Ok(hub) => answer(&hub, auth, request, body),
        Err(e) => return hub_error(e),
    };
    match answered {
        Answer::Now(response) => response,
        Answer::Later(later) => {
            let mut body = Vec::new();
            match later.run(connect, pause, &mut body) {
                Ok(()) => Response { body, ..later.head },
                Err(WaitError::Hub(e)) => hub_error(e),
                Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
            }
        }
    }
}

/// Answers one hub request: at once, or with a head and a body to write over time.
pub fn answer<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: &Request<'_>,
    body: Body,
) -> Answer {
    if let Some(refusal) = check_before_body(auth, request) {
        return Answer::Now(refusal);
    }
    let path = request.path;
    Answer::Now(match Route::resolve(path) {
        Some(Route::Send) => send(hub, auth, request, body),
        Some(Route::Machines) => respond(hub.machines().map(|m| (StatusCode::OK, m))),
        Some(Route::Inbox(machine)) => return inbox(hub, auth, machine, request),
        Some(Route::Events(machine)) => return events(hub, auth, machine, request),
        Some(Route::Acknowledge(machine)) => acknowledge(hub, auth, machine, request, body),
        Some(Route::Mailbox(machine)) => mailbox(hub, auth, machine, request),
        None => error(StatusCode::NOT_FOUND, &format!("no hub route for {path}")),
    })
}

fn send<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    request: &Request<'_>,
    body: Body,
) -> Response {
    let access = access(auth, request);
    if access == Access::Denied {
        return unauthorized();
    }
    let key = match request.header("idempotency-key") {
        None => None,
        Some(value) => match IdempotencyKey::parse(value.as_bytes()) {
            Ok(key) => Some(key),
            Err(e) => return hub_error(e),
        },
    };
    let body = match json_body(request, body) {
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
    request: &Request<'_>,
) -> Answer {
    let access = access(auth, request);
    if access == Access::Denied {
        return Answer::Now(unauthorized());
    }
    let parsed = MachineName::parse(machine, "machine").and_then(|m| {
        let read = inbox_query(request.query, hub.limits().max_wait)?;
        Ok((m, read))
    });
    let (machine, read) = match parsed {
        Ok(p) => p,
        Err(e) => return Answer::Now(hub_error(e)),
    };
    if !access.may_act_as(&machine) {
        return Answer::Now(error(
            StatusCode::FORBIDDEN,
            &format!("this token may not read the inbox of `{machine}`"),
        ));
    }
    // A mistyped name in an anonymous peek must not become a machine that collects every
    // broadcast: only an authenticated or acknowledging read registers.
    let register = read.ack || matches!(access, Access::Machine(_));
    let inbox = match hub.inbox_at_least(&machine, read.importance, read.limit, read.ack, register)
    {
        Ok(inbox) => inbox,
        Err(e) => return Answer::Now(hub_error(e)),
    };
    if !inbox.messages.is_empty() || read.wait.is_zero() {
        return Answer::Now(respond(Ok((StatusCode::OK, inbox))));
    }
    Answer::Later(Later {
        head: json(StatusCode::OK, Vec::new()).with_header("cache-control", "no-store"),
        work: Work::Wait(WaitingRead {
            machine,
            limit: read.limit,
            ack: read.ack,
            wait: read.wait,
            importance: read.importance,
        }),
    })
}

fn mailbox<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    request: &Request<'_>,
) -> Response {
    let access = access(auth, request);
    if access == Access::Denied {
        return unauthorized();
    }
    let parsed =
        MachineName::parse(machine, "machine").and_then(|m| Ok((m, mailbox_query(request.query)?)));
    let (machine, query) = match parsed {
        Ok(p) => p,
        Err(e) => return hub_error(e),
    };
    if !access.may_act_as(&machine) {
        return error(
            StatusCode::FORBIDDEN,
            &format!("this token may not read the mailbox of `{machine}`"),
        );
    }
    respond(hub.mailbox(&machine, &query).map(|m| (StatusCode::OK, m)))
}

/// `limit` (default 50, clamped to 1..=200), `before` and `thread` (message ids: positive
/// integers) and `q` (words to search for); other parameters are ignored.
fn mailbox_query(query: &str) -> Result<MailboxQuery, HubError> {
    let mut read = MailboxQuery {
        limit: DEFAULT_LIMIT,
        ..MailboxQuery::default()
    };
    let id = |value: &str, what: &str| {
        value
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0 && value.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                HubError::Invalid(format!(
                    "`{what}` must be a message id (a positive integer), not `{value}`"
                ))
            })
    };
    for (key, value) in dochub_http::query_pairs(query) {
        match key.as_str() {
            "limit" => read.limit = parse_limit(&value)?.min(MAX_MAILBOX_LIMIT),
            "before" => read.before = Some(id(&value, "before")?),
            "thread" => read.thread = Some(id(&value, "thread")?),
            "q" => read.words = Some(search_words(&value)?),
            _ => {}
        }
    }
    Ok(read)
}

fn events<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    request: &Request<'_>,
) -> Answer {
    let access = access(auth, request);
    if access == Access::Denied {
        return Answer::Now(unauthorized());
    }
    if !accepts_event_stream(request.header("accept")) {
        return Answer::Now(error(
            StatusCode::NOT_ACCEPTABLE,
            "the inbox's events are sent as text/event-stream: accept it (Accept: \
             text/event-stream), or read GET /api/inbox/<machine> for JSON",
        ));
    }
    let machine = match MachineName::parse(machine, "machine") {
        Ok(m) => m,
        Err(e) => return Answer::Now(hub_error(e)),
    };
    let after = match stream_start(request) {
        Ok(after) => after,
        Err(e) => return Answer::Now(hub_error(e)),
    };
    if !access.may_act_as(&machine) {
        return Answer::Now(error(
            StatusCode::FORBIDDEN,
            &format!("this token may not read the inbox of `{machine}`"),
        ));
    }
    if matches!(access, Access::Machine(_))
        && let Err(e) = hub.seen(&machine)
    {
        return Answer::Now(hub_error(e));
    }
    Answer::Later(Later {
        head: Response::new(StatusCode::OK.as_u16(), "text/event-stream", Vec::new())
            .with_header("cache-control", "no-store")
            // Proxies that buffer responses (nginx) would hold the events back.
            .with_header("x-accel-buffering", "no"),
        work: Work::Stream(EventStream {
            machine,
            after,
            lifetime: hub.limits().max_wait,
        }),
    })
}

/// Where a stream starts: after `Last-Event-ID` (a reconnecting `EventSource` sends it), else
/// after `?after=`, else at the start of the inbox.
fn stream_start(request: &Request<'_>) -> Result<u64, HubError> {
    let id = |value: &str, what: &str| {
        value.trim().parse::<u64>().map_err(|_| {
            HubError::Invalid(format!(
                "{what} must be a message id (a non-negative integer), not `{value}`"
            ))
        })
    };
    if let Some(value) = request.header("last-event-id") {
        return id(visible_ascii(value).unwrap_or("?"), "`Last-Event-ID`");
    }
    match dochub_http::query_pairs(request.query)
        .into_iter()
        .find(|(key, _)| key == "after")
    {
        Some((_, value)) => id(&value, "`after`"),
        None => Ok(0),
    }
}

/// Whether an `Accept` header allows `text/event-stream` (no header allows anything).
fn accepts_event_stream(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return true;
    };
    let Some(accept) = visible_ascii(accept) else {
        return false;
    };
    accept.split(',').any(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        !refused && matches!(media.as_str(), "text/event-stream" | "text/*" | "*/*")
    })
}

fn acknowledge<S: Sql, C: Clock>(
    hub: &Hub<S, C>,
    auth: &HubAuth,
    machine: &str,
    request: &Request<'_>,
    body: Body,
) -> Response {
    #[derive(Deserialize)]
    struct Ack {
        through: Option<serde_json::Value>,
        ids: Option<serde_json::Value>,
    }
    #[derive(Serialize)]
    struct Acknowledged {
        machine: String,
        acknowledged: u64,
    }
    enum Which {
        Through(u64),
        Ids(Vec<u64>),
    }
    let access = access(auth, request);
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
    let body = match json_body(request, body) {
        Ok(body) => body,
        Err(response) => return *response,
    };
    let invalid = |message: &str| hub_error(HubError::Invalid(message.to_owned()));
    let which = match serde_json::from_slice::<Ack>(&body) {
        Ok(Ack {
            through: Some(through),
            ids: None,
        }) => match through.as_u64() {
            Some(n) => Which::Through(n),
            None => return invalid(ACK_THROUGH),
        },
        Ok(Ack {
            through: None,
            ids: Some(ids),
        }) => match serde_json::from_value::<Vec<u64>>(ids) {
            Ok(ids) => Which::Ids(ids),
            Err(_) => return invalid(ACK_IDS),
        },
        Ok(Ack { through: None, .. }) => return invalid(ACK_THROUGH),
        Ok(_) => {
            return invalid("give `through` or `ids`, not both");
        }
        Err(e) => {
            return invalid(&format!("the body is not a JSON object: {e}"));
        }
    };
    let marked = match which {
        Which::Through(through) => hub.acknowledge(&machine, through),
        Which::Ids(ids) => hub.acknowledge_ids(&machine, &ids),
    };
    respond(marked.map(|acknowledged| {
        (
            StatusCode::OK,
            Acknowledged {
                machine: machine.to_string(),
                acknowledged,
            },
        )
    }))
}

const ACK_THROUGH: &str =
    "`through` must be the id (a non-negative integer) of the last message to mark read";
const ACK_IDS: &str = "`ids` must be a list of message ids (non-negative integers) to mark read";

/// The body of a request that must be JSON: 415 for another content type, 413 when too large.
fn json_body(request: &Request<'_>, body: Body) -> Result<Vec<u8>, Box<Response>> {
    if !is_json(request.header("content-type")) {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        )));
    }
    match body {
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

/// What an inbox read asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct InboxQuery {
    limit: usize,
    ack: bool,
    wait: std::time::Duration,
    importance: Importance,
}

/// `limit` (default 50; a number outside 1..=500 is clamped into it), `ack` (true/false, 1/0,
/// yes/no, on/off in any case; bare `ack` is true; default false), `wait` (seconds, a
/// decimal number from 0, clamped to `max_wait`; default 0) and `importance` (the least a
/// message returned has; default all); other parameters are ignored.
fn inbox_query(query: &str, max_wait: std::time::Duration) -> Result<InboxQuery, HubError> {
    let mut read = InboxQuery {
        limit: DEFAULT_LIMIT,
        ack: false,
        wait: std::time::Duration::ZERO,
        importance: Importance::Low,
    };
    for (key, value) in dochub_http::query_pairs(query) {
        match key.as_str() {
            "limit" => read.limit = parse_limit(&value)?,
            "ack" => {
                read.ack = match value.to_ascii_lowercase().as_str() {
                    "" | "true" | "1" | "yes" | "on" => true,
                    "false" | "0" | "no" | "off" => false,
                    _ => {
                        return Err(HubError::Invalid(format!(
                            "`ack` must be true or false (or 1/0, yes/no, on/off), not `{value}`"
                        )));
                    }
                };
            }
            "wait" => read.wait = parse_wait(&value, max_wait)?,
            "importance" => read.importance = Importance::parse(&value, "importance")?,
            _ => {}
        }
    }
    Ok(read)
}

/// Seconds to wait: digits with an optional fraction (`10`, `0.5`), clamped to `max_wait`.
fn parse_wait(value: &str, max_wait: std::time::Duration) -> Result<std::time::Duration, HubError> {
    let plain = !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && value.bytes().filter(|&b| b == b'.').count() <= 1
        && value.bytes().any(|b| b.is_ascii_digit());
    let seconds = value.parse::<f64>().ok().filter(|s| plain && s.is_finite());
    match seconds {
        Some(seconds) => Ok(std::time::Duration::from_secs_f64(
            seconds.min(max_wait.as_secs_f64()),
        )),
        None => Err(HubError::Invalid(format!(
            "`wait` must be a number of seconds from 0 to {} (more is cut to {0}), not `{value}`",
            max_wait.as_secs()
        ))),
    }
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

fn access(auth: &HubAuth, request: &Request<'_>) -> Access {
    auth.access(request.authorization().and_then(visible_ascii))
}

fn is_json(content_type: Option<&str>) -> bool {
    let Some(value) = content_type.and_then(visible_ascii) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// A header value as text, when it is all visible ASCII (and tabs), as HTTP's header values
/// are: another reads as none, so a stray byte never passes for a token, JSON or an event
/// stream.
fn visible_ascii(value: &str) -> Option<&str> {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        .then_some(value)
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
        HubError::NotFound(_) => StatusCode::NOT_FOUND,
        HubError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        HubError::InboxFull(_) | HubError::MachinesFull(_) => StatusCode::INSUFFICIENT_STORAGE,
        HubError::KeyReused(_) => StatusCode::UNPROCESSABLE_ENTITY,
        HubError::Busy | HubError::Unavailable(_) | HubError::StoreFailed(..) => {
            StatusCode::SERVICE_UNAVAILABLE
        }
        HubError::Config(_) | HubError::Unprepared(_) | HubError::Store(_) => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
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
    fn only_streams_and_reads_with_a_wait_may_wait() {
        for (method, path, query, expected) in [
            ("GET", "/api/inbox/ci", "wait=25", true),
            ("GET", "/api/inbox/ci", "limit=5&wait=0.5&ack", true),
            ("GET", "/api/inbox/ci/events", "", true),
            ("GET", "/api/inbox/ci", "wait=0", false),
            ("GET", "/api/inbox/ci", "wait=25&wait=0", false),
            ("GET", "/api/inbox/ci", "wait=soon", false),
            ("GET", "/api/inbox/ci", "wait=25&limit=many", false),
            ("GET", "/api/inbox/ci", "", false),
            ("HEAD", "/api/inbox/ci", "wait=25", false),
            ("POST", "/api/inbox/ci/ack", "wait=25", false),
            ("GET", "/api/messages/ci", "wait=25", false),
            ("GET", "/api/inbox/", "wait=25", false),
        ] {
            assert_eq!(
                may_wait(method, path, query),
                expected,
                "{method} {path}?{query}"
            );
        }
    }

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

    const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(25);

    #[test]
    fn ack_takes_the_usual_spellings() {
        for q in ["ack", "ack=", "ack=TRUE", "ack=1", "ack=Yes", "ack=on"] {
            assert!(inbox_query(q, MAX_WAIT).unwrap().ack, "{q}");
        }
        for q in ["", "ack=false", "ack=0", "ack=NO", "ack=Off", "other=1"] {
            let read = inbox_query(q, MAX_WAIT).unwrap();
            assert_eq!((read.limit, read.ack), (DEFAULT_LIMIT, false), "{q}");
        }
        assert!(inbox_query("ack=maybe", MAX_WAIT).is_err());
    }

    #[test]
    fn wait_is_seconds_clamped_to_the_maximum() {
        for (value, ms) in [
            ("0", 0),
            ("1", 1000),
            ("0.25", 250),
            ("25", 25_000),
            ("9999", 25_000),
        ] {
            assert_eq!(
                parse_wait(value, MAX_WAIT).unwrap().as_millis(),
                ms,
                "{value}"
            );
        }
        for bad in [
            "", "-1", "abc", "1e3", "inf", "NaN", ".", "1.2.3", " 5", "+5",
        ] {
            let err = parse_wait(bad, MAX_WAIT).unwrap_err().to_string();
            assert!(err.contains("from 0 to 25"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn event_streams_need_an_accept_that_allows_them() {
        let accepts = |v: &str| accepts_event_stream(Some(v));
        assert!(accepts_event_stream(None));
        for ok in [
            "text/event-stream",
            "*/*",
            "text/*",
            "application/json, text/event-stream;q=0.5",
        ] {
            assert!(accepts(ok), "{ok}");
        }
        for refused in ["application/json", "text/html", "text/event-stream;q=0"] {
            assert!(!accepts(refused), "{refused}");
        }
    }

    #[test]
    fn a_header_value_that_is_not_visible_ascii_reads_as_none() {
        assert!(is_json(Some("application/json;\tcharset=utf-8")));
        assert!(!is_json(Some("application/json; charset=\u{e9}")));
        assert!(!accepts_event_stream(Some(
            "text/event-stream, text/\u{e9}"
        )));
        assert!(!accepts_event_stream(Some("text/event-stream\r")));
    }
}
