//! The request and response shapes every route function takes and returns, so each
//! component's adapter is the same few lines.

/// The parts of a request a route function looks at (a body, for the routes that read one, is
/// read after the checks that need only these: [`crate::Body`]).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// HTTP method, e.g. `GET`.
    pub method: &'a str,
    /// Path below the route's prefix (`spin-path-info`), still percent-encoded; the hub, whose
    /// component serves several routes, is given the whole path.
    pub path: &'a str,
    /// Query string without `?`, still encoded.
    pub query: &'a str,
    /// Headers with lowercase names, as [`crate::Incoming`] holds them.
    pub headers: &'a [(String, String)],
}

impl<'a> Request<'a> {
    /// The first value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&'a str> {
        header(self.headers, name)
    }

    /// The `Authorization` header, if any.
    pub fn authorization(&self) -> Option<&'a str> {
        self.header("authorization")
    }
}

/// The first value of the header `name` (case-insensitive) among `headers`.
pub(crate) fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Methods the read-only routes answer.
pub const ALLOW_READ: &str = "GET, HEAD";
/// Content type of JSON bodies.
pub const JSON: &str = "application/json";
/// Content type of HTML pages.
pub const HTML: &str = "text/html; charset=utf-8";
/// Content type of raw markdown.
pub const MARKDOWN: &str = "text/markdown; charset=utf-8";
/// Content type of plain-text answers.
pub const TEXT: &str = "text/plain; charset=utf-8";

/// A response to write back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Headers, `Content-Type` included.
    pub headers: Vec<(&'static str, String)>,
    /// Body (empty for `HEAD` and redirects).
    pub body: Vec<u8>,
    /// Something the operator should hear about (e.g. a stale index); the component logs it,
    /// the client never sees it.
    pub warning: Option<String>,
}

impl Response {
    /// A response with a `Content-Type`.
    pub fn new(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response {
            status,
            headers: vec![("content-type", content_type.to_owned())],
            body,
            warning: None,
        }
    }

    /// A JSON error body `{"error": message}`.
    pub fn json_error(status: u16, message: &str) -> Response {
        let body = serde_json::json!({ "error": message })
            .to_string()
            .into_bytes();
        Response::new(status, JSON, body)
    }

    /// A bodiless redirect to `location`.
    pub fn redirect(status: u16, location: String) -> Response {
        Response {
            status,
            headers: vec![("location", location)],
            body: Vec::new(),
            warning: None,
        }
    }

    /// A plain-text body (a newline is added).
    pub fn text(status: u16, text: &str) -> Response {
        Response::new(status, TEXT, format!("{text}\n").into_bytes())
    }

    /// Drops the body when answering `HEAD`; the headers stay as `GET` would send them.
    pub fn strip_for(mut self, method: &str) -> Response {
        if method.eq_ignore_ascii_case("HEAD") {
            self.body.clear();
        }
        self
    }

    /// Sets a header, replacing any earlier value of the same name.
    pub fn set_header(&mut self, name: &'static str, value: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name, value.to_owned()));
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &'static str, value: &str) -> Response {
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Attaches a warning for the log (keeps an earlier one when `warning` is `None`).
    pub fn with_warning(mut self, warning: Option<String>) -> Response {
        if warning.is_some() {
            self.warning = warning;
        }
        self
    }

    /// The value of a header (first match, case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}
