//! One request's passage through a component, the same in all four: [`Incoming`] is what the
//! host delivered, [`admit`] the checks before any routing (fail-closed settings, the
//! development `Host` check, the no-tokens log line), [`finish`] what every response gets on
//! its way out (generic 500 bodies with the detail logged under a request id, the security
//! headers, `Cache-Control`, the API's browser challenge).
//!
//! Log lines go to stderr, which Spin keeps as the component's log. No token, and no
//! `Authorization` value, is ever written there.

use std::hash::{BuildHasher, RandomState};

use crate::auth::{AuthConfig, BASIC_CHALLENGE};
use crate::host::{host_allowed, url_authority};
use crate::message::{self, HTML, Request, Response};
use crate::settings::{Environment, Settings, SettingsError};

/// Which family of routes a component serves; decides the error format and the headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `/api/...`: JSON, read by programs, and by browsers following the site's links.
    Api,
    /// `/docs/...`: HTML pages.
    Docs,
    /// `/` and `/overview/...`: HTML pages that run their own inline scripts.
    Overview,
    /// The hub: JSON, private state, never cached.
    Hub,
    /// `/mcp`: JSON-RPC answers to one caller, never cached.
    Mcp,
}

impl Surface {
    fn json(self) -> bool {
        matches!(self, Surface::Api | Surface::Hub | Surface::Mcp)
    }

    fn name(self) -> &'static str {
        match self {
            Surface::Api => "api",
            Surface::Docs => "docs",
            Surface::Overview => "overview",
            Surface::Hub => "hub",
            Surface::Mcp => "mcp",
        }
    }
}

/// `Content-Security-Policy` of every HTML page without one of its own: nothing loads.
pub const DEFAULT_CSP: &str = "default-src 'none'; base-uri 'none'; form-action 'none'; \
                               frame-ancestors 'none'";

/// `Cache-Control` of public documentation: short enough that an edit shows within minutes.
pub const PUBLIC_CACHE: &str = "public, max-age=300";

/// The header carrying the request id that the log lines of a request also carry.
pub const REQUEST_ID: &str = "x-request-id";

/// A request as the host delivered it.
#[derive(Debug, Clone, Default)]
pub struct Incoming {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The path below the component's route (`spin-path-info`), still percent-encoded.
    pub path: String,
    /// The path as the client sent it, without the query.
    pub full_path: String,
    /// The query without `?`, still encoded.
    pub query: String,
    /// Headers with lowercase names; values that are not UTF-8 are left out.
    pub headers: Vec<(String, String)>,
    /// A fresh id for this request's log lines and its `X-Request-Id`.
    pub request_id: String,
}

impl Incoming {
    /// Builds the request from the method, the path and query as sent, and the headers, which
    /// include Spin's `spin-path-info` and `spin-full-url`.
    pub fn new(method: &str, path_and_query: &str, headers: Vec<(String, String)>) -> Incoming {
        let (full_path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        let headers: Vec<(String, String)> = headers
            .into_iter()
            .map(|(name, value)| (name.to_ascii_lowercase(), value))
            .collect();
        let path = headers
            .iter()
            .find(|(name, _)| name == "spin-path-info")
            .map_or(full_path, |(_, value)| value.as_str())
            .to_owned();
        Incoming {
            method: method.to_owned(),
            path,
            full_path: full_path.to_owned(),
            query: query.to_owned(),
            headers,
            request_id: request_id(),
        }
    }

    /// The first value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        message::header(&self.headers, name)
    }

    /// The name the client used for this server (`host[:port]`), from `spin-full-url`.
    pub fn authority(&self) -> Option<&str> {
        self.header("spin-full-url").and_then(url_authority)
    }

    /// The request as the route functions take it.
    pub fn request(&self) -> Request<'_> {
        Request {
            method: &self.method,
            path: &self.path,
            query: &self.query,
            headers: &self.headers,
        }
    }

    /// Whether a browser is behind this request: a top-level navigation, a page asking for
    /// HTML, or credentials sent the Basic way (the browser's own prompt).
    pub fn from_browser(&self) -> bool {
        self.header("sec-fetch-mode") == Some("navigate")
            || self
                .header("accept")
                .is_some_and(|accept| accept.contains("text/html"))
            || self
                .header("authorization")
                .and_then(|value| value.split_whitespace().next())
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("basic"))
    }

    fn log(&self, surface: Surface, message: &str) {
        eprintln!(
            "{} [{}] {} {}: {message}",
            surface.name(),
            self.request_id,
            self.method,
            self.full_path.escape_debug()
        );
    }
}

/// The checks before routing. `settings` is what [`Settings::read`] gave; `Err` is the
/// response to send (already finished).
pub fn admit(
    surface: Surface,
    incoming: &Incoming,
    settings: Result<Settings, SettingsError>,
) -> Result<Settings, Response> {
    let settings = match settings {
        Ok(settings) => settings,
        Err(e) => {
            incoming.log(surface, &format!("refusing to serve: {e}"));
            let message = format!("dochub is misconfigured: {e}");
            let res = if surface.json() {
                Response::json_error(500, &message)
            } else {
                Response::text(500, &message)
            };
            return Err(headers(surface, incoming, None, res));
        }
    };
    if settings.environment == Environment::Development {
        let allowed = incoming
            .authority()
            .is_some_and(|authority| host_allowed(authority, &settings.allowed_hosts));
        if !allowed {
            incoming.log(
                surface,
                &format!(
                    "403: Host `{}` is not a loopback name (development answers only those and \
                     the names in the variable `allowed_hosts`)",
                    incoming.authority().unwrap_or("").escape_debug()
                ),
            );
            let message = "This development server answers only requests addressed to \
                           localhost, 127.0.0.1 or [::1] (or a name listed in the variable \
                           `allowed_hosts`).";
            let res = if surface.json() {
                Response::json_error(403, message)
            } else {
                Response::text(403, message)
            };
            return Err(finish(surface, incoming, Some(&settings), res));
        }
    }
    Ok(settings)
}

/// Logs what an auth configuration lets nobody in with (production only): no tokens at all,
/// or entries that are not digests. Counts only; tokens are never logged.
pub fn log_auth_config(surface: Surface, incoming: &Incoming, variable: &str, auth: &AuthConfig) {
    if !auth.required() {
        return;
    }
    if auth.invalid_entries() > 0 {
        incoming.log(
            surface,
            &format!(
                "{} entries of `{variable}` are not SHA-256 hex digests and are ignored",
                auth.invalid_entries()
            ),
        );
    }
    if auth.no_tokens() {
        incoming.log(
            surface,
            &format!("no tokens are configured (`{variable}` is empty): every request gets 401"),
        );
    }
}

/// Logs a line about this request under its id.
pub fn log(surface: Surface, incoming: &Incoming, message: &str) {
    incoming.log(surface, message);
}

/// What every response gets on its way out.
///
/// - A 500 body is replaced by a generic one naming the request id; what it said, and the
///   response's warning, go to the log under that id. The other 5xx a component answers on
///   purpose are for the client to act on (503 busy, retry; 507 that inbox is full) and keep
///   their words.
/// - `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Request-Id`; HTML
///   without a policy of its own gets [`DEFAULT_CSP`].
/// - `Cache-Control`, unless the route set one: `no-store` for the hub, anything answered under
///   auth (production) and every error; [`PUBLIC_CACHE`] for public documentation.
/// - A 401 from `/api` (the API and the hub) to a browser challenges with Basic, as `/docs/`
///   does, so the browser asks for the token instead of showing JSON.
pub fn finish(
    surface: Surface,
    incoming: &Incoming,
    settings: Option<&Settings>,
    mut res: Response,
) -> Response {
    if let Some(warning) = res.warning.take() {
        incoming.log(surface, &format!("warning: {warning}"));
    }
    if res.status == 500 {
        let detail = String::from_utf8_lossy(&res.body);
        incoming.log(
            surface,
            &format!("{}: {}", res.status, detail.trim().escape_debug()),
        );
        let message = format!(
            "Internal error; the server log has the details under request id {}",
            incoming.request_id
        );
        let generic = if surface.json() {
            Response::json_error(res.status, &message)
        } else {
            Response::text(res.status, &message)
        };
        let content_type = generic.header("content-type").unwrap_or("").to_owned();
        res.set_header("content-type", &content_type);
        res.body = generic.body;
    }
    if surface.json()
        && res.status == 401
        && incoming.from_browser()
        && res.header("www-authenticate").is_some()
    {
        res.set_header("www-authenticate", BASIC_CHALLENGE);
    }
    headers(surface, incoming, settings, res)
}

fn headers(
    surface: Surface,
    incoming: &Incoming,
    settings: Option<&Settings>,
    mut res: Response,
) -> Response {
    res.set_header("x-content-type-options", "nosniff");
    res.set_header("referrer-policy", "no-referrer");
    res.set_header(REQUEST_ID, &incoming.request_id);
    let html = res
        .header("content-type")
        .is_some_and(|t| t.starts_with(HTML.split(';').next().unwrap_or(HTML)));
    if html && res.header("content-security-policy").is_none() {
        res.set_header("content-security-policy", DEFAULT_CSP);
    }
    if res.header("cache-control").is_none() {
        let open = settings.is_some_and(|s| s.environment == Environment::Development);
        let private = matches!(surface, Surface::Hub | Surface::Mcp);
        let cache = if private || !open || res.status >= 400 {
            "no-store"
        } else {
            PUBLIC_CACHE
        };
        res.set_header("cache-control", cache);
    }
    if incoming.method.eq_ignore_ascii_case("HEAD") {
        res.body.clear();
    }
    res
}

/// 64 random bits as 16 hex digits. `RandomState` is seeded from the system's randomness
/// (WASI's `random` under Spin), and each request runs in a fresh instance.
fn request_id() -> String {
    format!("{:016x}", RandomState::new().hash_one(0u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incoming(headers: &[(&str, &str)]) -> Incoming {
        Incoming::new(
            "GET",
            "/api/raw/a/b/c?x=1",
            headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    fn dev() -> Settings {
        Settings {
            environment: Environment::Development,
            tokens: String::new(),
            allowed_hosts: String::new(),
        }
    }

    #[test]
    fn answers_for_the_client_to_act_on_keep_their_words() {
        let inc = incoming(&[]);
        for (status, message) in [(503, "the hub is busy; retry"), (507, "the inbox is full")] {
            let res = finish(
                Surface::Hub,
                &inc,
                Some(&dev()),
                Response::json_error(status, message),
            );
            assert_eq!(res.status, status);
            assert!(String::from_utf8_lossy(&res.body).contains(message));
        }
    }

    #[test]
    fn server_errors_are_generic_and_carry_the_request_id() {
        let inc = incoming(&[("Spin-Path-Info", "/raw/a/b/c")]);
        assert_eq!(inc.path, "/raw/a/b/c");
        let res = finish(
            Surface::Api,
            &inc,
            Some(&dev()),
            Response::json_error(500, "cannot read `/content/a/b/c.md`"),
        );
        let body = String::from_utf8(res.body.clone()).unwrap();
        assert!(!body.contains("/content"), "{body}");
        assert!(body.contains(&inc.request_id));
        assert_eq!(res.header(REQUEST_ID), Some(inc.request_id.as_str()));
        assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(res.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(res.header("cache-control"), Some("no-store"));
        assert_eq!(inc.request_id.len(), 16);
        assert_ne!(inc.request_id, incoming(&[]).request_id);
    }

    #[test]
    fn caching_follows_who_may_read() {
        let ok = || Response::new(200, HTML, b"<p>".to_vec());
        let inc = incoming(&[]);
        let res = finish(Surface::Docs, &inc, Some(&dev()), ok());
        assert_eq!(res.header("cache-control"), Some(PUBLIC_CACHE));
        assert_eq!(res.header("content-security-policy"), Some(DEFAULT_CSP));
        let prod = Settings {
            environment: Environment::Production,
            ..dev()
        };
        let res = finish(Surface::Docs, &inc, Some(&prod), ok());
        assert_eq!(res.header("cache-control"), Some("no-store"));
        let res = finish(Surface::Hub, &inc, Some(&dev()), ok());
        assert_eq!(res.header("cache-control"), Some("no-store"));
    }

    #[test]
    fn browsers_get_a_basic_challenge_from_the_api() {
        let unauthorized = || {
            Response::json_error(401, "token required")
                .with_header("www-authenticate", "Bearer realm=\"dochub\"")
        };
        for headers in [
            &[("sec-fetch-mode", "navigate")][..],
            &[("accept", "text/html,application/xhtml+xml")][..],
            &[("authorization", "Basic Og==")][..],
        ] {
            let res = finish(Surface::Api, &incoming(headers), None, unauthorized());
            assert_eq!(res.header("www-authenticate"), Some(BASIC_CHALLENGE));
        }
        let res = finish(Surface::Api, &incoming(&[]), None, unauthorized());
        assert_eq!(
            res.header("www-authenticate"),
            Some("Bearer realm=\"dochub\"")
        );
    }

    #[test]
    fn refusals_say_what_to_fix() {
        let inc = incoming(&[("spin-full-url", "http://127.0.0.1:3000/api/manifest")]);
        let res = admit(
            Surface::Api,
            &inc,
            Err(SettingsError::UnknownEnvironment("prod".into())),
        )
        .unwrap_err();
        assert_eq!(res.status, 500);
        let body = String::from_utf8(res.body).unwrap();
        assert!(body.contains("`development` or `production`"), "{body}");
        assert!(admit(Surface::Api, &inc, Ok(dev())).is_ok());
        let rebound = incoming(&[("spin-full-url", "http://evil.example:3000/api/manifest")]);
        assert_eq!(
            admit(Surface::Docs, &rebound, Ok(dev()))
                .unwrap_err()
                .status,
            403
        );
        let prod = Settings {
            environment: Environment::Production,
            ..dev()
        };
        assert!(admit(Surface::Docs, &rebound, Ok(prod)).is_ok());
    }
}
