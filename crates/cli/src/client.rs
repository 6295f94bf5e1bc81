//! The HTTP client of the docs API and the message hub: the one place that knows their routes,
//! sends the token and turns failures into one readable line. The CLI commands and the MCP
//! server both call it, directly or through an SSH tunnel.

use std::sync::Arc;
use std::time::Duration;

use dochub_content::encode_segment;
use dochub_hub::{Importance, Inbox};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::ssh::{SshError, SshTunnel};

/// How long one request may take; Spin hosts stop a request after about 30 s.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(35);

/// What went wrong talking to dochub. Each message is one line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing answered at the base URL.
    #[error("cannot connect to {url}: {reason} (is dochub running there? set --url or DOCHUB_URL)")]
    Connect {
        /// The URL that was tried.
        url: String,
        /// The underlying error.
        reason: String,
    },
    /// 401: no token, or a token the server does not accept.
    #[error("{path}: 401 Unauthorized: {message} (set DOCHUB_TOKEN to a valid token)")]
    Unauthorized {
        /// The request path.
        path: String,
        /// The server's error text.
        message: String,
    },
    /// 404: the path names nothing.
    #[error("{path}: 404 Not Found: {message}")]
    NotFound {
        /// The request path.
        path: String,
        /// The server's error text.
        message: String,
    },
    /// Any other error status.
    #[error("{path}: {status}: {message}")]
    Status {
        /// The request path.
        path: String,
        /// The status code.
        status: StatusCode,
        /// The server's error text.
        message: String,
    },
    /// The request failed after connecting (timeout, reset) or the answer was not what the
    /// route promises.
    #[error("{path}: {reason}")]
    Protocol {
        /// The request path.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The argument cannot name a docs path.
    #[error("{0}")]
    BadPath(String),
    /// The SSH tunnel could not be opened.
    #[error("ssh: {0}")]
    Ssh(#[from] SshError),
}

/// Where requests go.
#[derive(Clone)]
enum Base {
    /// Straight to this URL (no trailing slash).
    Direct(String),
    /// Through an SSH port forward, to the local end of the tunnel.
    Ssh(Arc<SshTunnel>),
}

/// A client of one dochub app (docs API and hub share the base URL).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Base,
    token: Option<String>,
}

pub use dochub_hub::Outgoing;

/// What a mailbox read asks for (`GET /api/messages/<machine>`).
#[derive(Debug, Clone, Default)]
pub struct MailboxRead<'a> {
    /// The most messages (the hub's default when `None`).
    pub limit: Option<u32>,
    /// Only messages older than this id.
    pub before: Option<u64>,
    /// Only this thread.
    pub thread: Option<u64>,
    /// Only messages holding every word of this text.
    pub search: Option<&'a str>,
}

/// What `POST /api/inbox/<machine>/ack` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    /// The hub marked this many messages read.
    Acknowledged(u64),
    /// The hub has no acknowledgement route (404/405): reads must use `ack=true`.
    Unsupported,
}

impl Client {
    /// A client that talks to `url` directly.
    pub fn direct(url: &str, token: Option<String>) -> Result<Client, ClientError> {
        let url = url.trim_end_matches('/');
        reqwest::Url::parse(url)
            .map_err(|e| ClientError::BadPath(format!("invalid URL `{url}`: {e}")))?;
        Ok(Client {
            http: http_client()?,
            base: Base::Direct(url.to_owned()),
            token,
        })
    }

    /// A client whose every request goes through `tunnel`.
    pub fn through_ssh(tunnel: SshTunnel, token: Option<String>) -> Result<Client, ClientError> {
        Ok(Client {
            http: http_client()?,
            base: Base::Ssh(Arc::new(tunnel)),
            token,
        })
    }

    /// The master, project or subproject manifest: `path` is ``, `<project>` or
    /// `<project>/<subproject>`.
    pub async fn manifest(&self, path: &str) -> Result<Value, ClientError> {
        let segments = split_path(path, 0..=2, "`<project>` or `<project>/<subproject>`")?;
        let mut route = String::from("/api/manifest");
        for s in &segments {
            route.push('/');
            route.push_str(&encode_segment(s));
        }
        self.json(Method::GET, &route, None, None).await
    }

    /// The raw markdown of `<project>/<subproject>/<page>`.
    pub async fn raw(&self, path: &str) -> Result<Vec<u8>, ClientError> {
        let s = split_path(path, 3..=3, "`<project>/<subproject>/<page>`")?;
        let route = dochub_content::raw_url(s[0], s[1], s[2]);
        let response = self.request(Method::GET, &route, None, None, true).await?;
        let bytes = response.bytes().await.map_err(|e| protocol(&route, e))?;
        Ok(bytes.to_vec())
    }

    /// Part of a page as `read_doc` reads it: the section under `anchor`, cut to `max_tokens`
    /// from `offset` (`/api/raw/...?anchor=&max_tokens=&offset=`).
    pub async fn raw_part(
        &self,
        path: &str,
        anchor: Option<&str>,
        max_tokens: Option<u32>,
        offset: Option<u64>,
    ) -> Result<String, ClientError> {
        let s = split_path(path, 3..=3, "`<project>/<subproject>/<page>`")?;
        let max_tokens = max_tokens.map(|n| n.to_string());
        // Always an offset, so that the API reads a part rather than the file as it is.
        let offset = offset.unwrap_or(0).to_string();
        let params = encode_query(&[
            ("anchor", anchor),
            ("max_tokens", max_tokens.as_deref()),
            ("offset", Some(&offset)),
        ]);
        let route = format!("{}?{params}", dochub_content::raw_url(s[0], s[1], s[2]));
        let response = self.request(Method::GET, &route, None, None, true).await?;
        let bytes = response.bytes().await.map_err(|e| protocol(&route, e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Search results kept to a project, a version (absent: each project's latest) and a
    /// number of hits, as `search_docs` asks for them.
    pub async fn search_in(
        &self,
        query: &str,
        project: Option<&str>,
        version: Option<&str>,
        limit: u32,
    ) -> Result<Value, ClientError> {
        let limit = limit.to_string();
        let params = encode_query(&[
            ("q", Some(query)),
            ("project", project),
            ("version", Some(version.unwrap_or("latest"))),
            ("limit", Some(&limit)),
            ("rank", Some("section")),
        ]);
        self.json(Method::GET, &format!("/api/search?{params}"), None, None)
            .await
    }

    /// The sections that best answer a question (`/api/query`).
    pub async fn query_docs(
        &self,
        query: &str,
        project: Option<&str>,
        version: Option<&str>,
        max_tokens: u32,
    ) -> Result<Value, ClientError> {
        let max_tokens = max_tokens.to_string();
        let params = encode_query(&[
            ("q", Some(query)),
            ("project", project),
            ("version", version),
            ("max_tokens", Some(&max_tokens)),
        ]);
        self.json(Method::GET, &format!("/api/query?{params}"), None, None)
            .await
    }

    /// Search results, as the API returns them.
    pub async fn search(&self, query: &str) -> Result<Value, ClientError> {
        let q: String = url::form_urlencoded::byte_serialize(query.as_bytes()).collect();
        let route = format!("/api/search?q={q}");
        self.json(Method::GET, &route, None, None).await
    }

    /// The latest agent report.
    pub async fn latest_report(&self) -> Result<Value, ClientError> {
        self.json(Method::GET, "/api/report/latest", None, None)
            .await
    }

    /// Sends a message; `key` makes retries of one logical send store it once.
    pub async fn send(&self, message: &Outgoing<'_>, key: &str) -> Result<Value, ClientError> {
        let payload = serde_json::to_value(message).map_err(|e| ClientError::Protocol {
            path: "/api/send".into(),
            reason: format!("cannot encode the message: {e}"),
        })?;
        self.json(Method::POST, "/api/send", Some(payload), Some(key))
            .await
    }

    /// A machine's mailbox, newest first: what it sent and received, read or not.
    pub async fn mailbox(
        &self,
        machine: &str,
        read: &MailboxRead<'_>,
    ) -> Result<Inbox, ClientError> {
        // The serializer is not `Send`: it must not live across an await.
        let query = {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            if let Some(limit) = read.limit {
                query.append_pair("limit", &limit.to_string());
            }
            if let Some(before) = read.before {
                query.append_pair("before", &before.to_string());
            }
            if let Some(thread) = read.thread {
                query.append_pair("thread", &thread.to_string());
            }
            if let Some(search) = read.search {
                query.append_pair("q", search);
            }
            query.finish()
        };
        let route = format!("/api/messages/{}?{query}", encode_segment(machine));
        let response = self.request(Method::GET, &route, None, None, true).await?;
        decode(&route, response).await
    }

    /// The message `id` of `machine`'s mailbox, if it holds it: the newest message below
    /// `id + 1`.
    pub async fn message(
        &self,
        machine: &str,
        id: u64,
    ) -> Result<Option<dochub_hub::InboxMessage>, ClientError> {
        let read = MailboxRead {
            limit: Some(1),
            before: id.checked_add(1),
            ..MailboxRead::default()
        };
        let mailbox = self.mailbox(machine, &read).await?;
        Ok(mailbox.messages.into_iter().find(|m| m.message.id == id))
    }

    /// Reads an inbox, oldest first; with `ack` the hub marks what it returns read at once.
    /// With `wait`, an empty inbox is held until a message arrives or the wait ends (the hub
    /// cuts it to its `hub_max_wait`).
    pub async fn inbox(
        &self,
        machine: &str,
        limit: u32,
        ack: bool,
        wait: Option<Duration>,
    ) -> Result<Inbox, ClientError> {
        self.inbox_at_least(machine, None, limit, ack, wait).await
    }

    /// [`Client::inbox`] keeping to messages of `importance` or above.
    pub async fn inbox_at_least(
        &self,
        machine: &str,
        importance: Option<Importance>,
        limit: u32,
        ack: bool,
        wait: Option<Duration>,
    ) -> Result<Inbox, ClientError> {
        let mut route = format!(
            "/api/inbox/{}?limit={limit}&ack={ack}",
            encode_segment(machine)
        );
        if let Some(wait) = wait {
            route += &format!("&wait={}", wait.as_secs_f64());
        }
        if let Some(importance) = importance {
            route += &format!("&importance={}", importance.as_str());
        }
        // An acknowledging read is not repeated: the first may have claimed messages whose
        // answer was lost, and a second would not return them.
        let timeout = wait.map(|w| w + REQUEST_TIMEOUT);
        let response = self
            .request_with(Method::GET, &route, None, None, !ack, timeout)
            .await?;
        decode(&route, response).await
    }

    /// Opens the event stream of `machine`'s inbox (Server-Sent Events), starting after message
    /// `after`. The hub ends a stream after `hub_max_wait`; the caller opens the next.
    pub async fn events(
        &self,
        machine: &str,
        after: u64,
    ) -> Result<reqwest::Response, ClientError> {
        let route = format!(
            "/api/inbox/{}/events?after={after}",
            encode_segment(machine)
        );
        self.request(Method::GET, &route, None, None, true).await
    }

    /// Marks every message of `machine`'s inbox up to `through` read.
    pub async fn ack(&self, machine: &str, through: u64) -> Result<Ack, ClientError> {
        self.acknowledge(machine, serde_json::json!({ "through": through }))
            .await
    }

    /// Marks these messages read, and no other: what a read filtered by importance returned,
    /// which may have passed over older messages that must stay unread.
    pub async fn ack_ids(&self, machine: &str, ids: &[u64]) -> Result<Ack, ClientError> {
        self.acknowledge(machine, serde_json::json!({ "ids": ids }))
            .await
    }

    async fn acknowledge(&self, machine: &str, payload: Value) -> Result<Ack, ClientError> {
        let route = format!("/api/inbox/{}/ack", encode_segment(machine));
        match self.json(Method::POST, &route, Some(payload), None).await {
            Ok(v) => Ok(Ack::Acknowledged(
                v.get("acknowledged").and_then(Value::as_u64).unwrap_or(0),
            )),
            Err(ClientError::NotFound { .. }) => Ok(Ack::Unsupported),
            Err(ClientError::Status { status, .. }) if status == StatusCode::METHOD_NOT_ALLOWED => {
                Ok(Ack::Unsupported)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the hub has the two-step acknowledgement, probed with an acknowledgement of
    /// nothing (`through: 0`, ids are positive). A 400 means the route exists but wants a
    /// positive id: it is there all the same.
    pub async fn supports_ack(&self, machine: &str) -> Result<bool, ClientError> {
        match self.ack(machine, 0).await {
            Ok(Ack::Acknowledged(_)) => Ok(true),
            Ok(Ack::Unsupported) => Ok(false),
            Err(ClientError::Status { status, .. }) if status == StatusCode::BAD_REQUEST => {
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// The registered machines.
    pub async fn machines(&self) -> Result<Value, ClientError> {
        self.json(Method::GET, "/machines", None, None).await
    }

    async fn json(
        &self,
        method: Method,
        route: &str,
        body: Option<Value>,
        key: Option<&str>,
    ) -> Result<Value, ClientError> {
        let response = self.request(method, route, body, key, true).await?;
        decode(route, response).await
    }

    /// Sends one request and returns a 2xx response. Over SSH, a request that fails before an
    /// answer arrives is sent once more through a fresh connection when `retry` allows it (every
    /// route is safe to repeat but an acknowledging read; sends carry an idempotency key).
    async fn request(
        &self,
        method: Method,
        route: &str,
        body: Option<Value>,
        key: Option<&str>,
        retry: bool,
    ) -> Result<reqwest::Response, ClientError> {
        self.request_with(method, route, body, key, retry, None)
            .await
    }

    /// [`Client::request`] with a timeout of its own (a long-poll outlasts the usual one).
    async fn request_with(
        &self,
        method: Method,
        route: &str,
        body: Option<Value>,
        key: Option<&str>,
        retry: bool,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, ClientError> {
        let (base, tunnel) = match &self.base {
            Base::Direct(url) => (url.clone(), None),
            Base::Ssh(t) => (t.base_url().await?, Some(t)),
        };
        let first = self
            .attempt(&base, &method, route, &body, key, timeout)
            .await;
        let response = match (first, tunnel) {
            (Err(e), Some(tunnel)) if retry => {
                let base = tunnel.reconnect(&e.to_string()).await?;
                self.attempt(&base, &method, route, &body, key, timeout)
                    .await
                    .map_err(|e| transport_error(&base, route, e))?
            }
            (first, _) => first.map_err(|e| transport_error(&base, route, e))?,
        };
        check_status(route, response).await
    }

    async fn attempt(
        &self,
        base: &str,
        method: &Method,
        route: &str,
        body: &Option<Value>,
        key: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<reqwest::Response, reqwest::Error> {
        let mut request = self.http.request(method.clone(), format!("{base}{route}"));
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        request.send().await
    }
}

fn http_client() -> Result<reqwest::Client, ClientError> {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("dochub/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ClientError::Protocol {
            path: String::new(),
            reason: format!("cannot set up the HTTP client: {e}"),
        })
}

/// Splits `a/b/c` into non-empty segments, `count` of them.
fn split_path<'a>(
    path: &'a str,
    count: std::ops::RangeInclusive<usize>,
    expected: &str,
) -> Result<Vec<&'a str>, ClientError> {
    let path = path.trim_matches('/');
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    if !count.contains(&segments.len()) || segments.iter().any(|s| s.is_empty()) {
        return Err(ClientError::BadPath(format!(
            "`{path}` is not a docs path: expected {expected}"
        )));
    }
    Ok(segments)
}

fn transport_error(base: &str, route: &str, e: reqwest::Error) -> ClientError {
    if e.is_connect() {
        ClientError::Connect {
            url: base.to_owned(),
            reason: root_cause(&e),
        }
    } else {
        protocol(route, e)
    }
}

fn protocol(route: &str, e: reqwest::Error) -> ClientError {
    let reason = if connection_lost(&e) {
        format!(
            "the connection to dochub was lost before the answer was complete ({}); retry",
            root_cause(&e)
        )
    } else {
        root_cause(&e)
    };
    ClientError::Protocol {
        path: route.to_owned(),
        reason,
    }
}

/// Whether the server or the link went away mid-answer (a killed host, a dropped tunnel), as
/// opposed to an answer that came whole but wrong.
fn connection_lost(e: &reqwest::Error) -> bool {
    if e.is_timeout() {
        return false;
    }
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        cause = c.source();
    }
    // hyper's own words for a connection closed mid-message, which carry no io::Error.
    let text = root_cause(e);
    e.is_body() || text.contains("connection closed before message completed")
}

/// The innermost error's text: reqwest's own is "error sending request for url (...)".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    if e.to_string().contains("timed out") || cause.to_string().contains("timed out") {
        return "timed out".into();
    }
    cause.to_string()
}

async fn check_status(
    route: &str,
    response: reqwest::Response,
) -> Result<reqwest::Response, ClientError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| one_line(&text));
    let path = route.split('?').next().unwrap_or(route).to_owned();
    Err(match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized { path, message },
        StatusCode::NOT_FOUND => ClientError::NotFound { path, message },
        _ => ClientError::Status {
            path,
            status,
            message,
        },
    })
}

/// A body shown in an error: one line, at most 200 characters.
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line
    }
}

async fn decode<T: serde::de::DeserializeOwned>(
    route: &str,
    response: reqwest::Response,
) -> Result<T, ClientError> {
    let bytes = response.bytes().await.map_err(|e| protocol(route, e))?;
    serde_json::from_slice(&bytes).map_err(|e| ClientError::Protocol {
        path: route.to_owned(),
        reason: format!("the answer is not the expected JSON: {e}"),
    })
}

/// A query string of the pairs that have a value.
fn encode_query(pairs: &[(&str, Option<&str>)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        if let Some(value) = value {
            query.append_pair(name, value);
        }
    }
    query.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_paths_are_checked() {
        assert_eq!(split_path("", 0..=2, "x").unwrap(), Vec::<&str>::new());
        assert_eq!(split_path("a/b/", 0..=2, "x").unwrap(), ["a", "b"]);
        assert!(split_path("a/b/c", 0..=2, "x").is_err());
        assert!(split_path("a//c", 3..=3, "x").is_err());
        assert_eq!(split_path("/a/b/c", 3..=3, "x").unwrap(), ["a", "b", "c"]);
    }

    #[test]
    fn error_bodies_become_one_short_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        assert_eq!(one_line(&"x".repeat(300)).chars().count(), 201);
    }
}
