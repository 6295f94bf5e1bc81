//! What a WASIp3 Spin component (spin-sdk 6) needs at its edges, as `dochub-http-wasip2` gives
//! a WASIp2 one: the same checks and headers, for a handler that takes spin-sdk's request and
//! returns its response.
//!
//! Spin keeps such a component's instance for many requests (up to 128), and this crate keeps
//! the settings an instance read for [`SETTINGS_LIFE`] at most. `spin up` runs every variable
//! read in tokio's `block_in_place` (its environment provider), which lets the connection send
//! the response's head before the guest has written its body; Nagle then holds the body until
//! the client's delayed ACK, 40 ms later. Reading the settings once a second instead of three
//! times a request keeps that off nearly every request, and a changed setting (a token revoked
//! in Vault) still applies within a second.
#![deny(missing_docs)]

use std::cell::RefCell;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use spin_sdk_p3::http::{HeaderName, HeaderValue, Request, StatusCode};
use spin_sdk_p3::variables;

use dochub_http::auth::AuthConfig;
use dochub_http::{Incoming, Response, Settings, Surface, finish, log_auth_config};

/// What a handler returns: spin-sdk's response with the whole body.
pub type Answer = spin_sdk_p3::http::Response<Full<Bytes>>;

/// A request past the checks every component makes before routing: its head and the settings.
pub struct Admitted {
    surface: Surface,
    tokens_variable: &'static str,
    /// The request's head.
    pub incoming: Incoming,
    /// The settings, as this instance last read them ([`SETTINGS_LIFE`]).
    pub settings: Settings,
}

/// Reads the request's head and the settings (`environment`, the token list `tokens_variable`,
/// `allowed_hosts`; kept by the instance, see [`SETTINGS_LIFE`]) and makes [`dochub_http::admit`]'s checks. A refused request gets its answer as
/// the `Err`.
pub async fn admit(
    surface: Surface,
    req: &Request,
    tokens_variable: &'static str,
) -> Result<Admitted, Answer> {
    let incoming = incoming(req);
    let values = settings_values(tokens_variable).await;
    let settings = Settings::read(tokens_variable, |name| {
        match values.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => value.clone(),
            None => Err(format!("`{name}` was not read")),
        }
    });
    match dochub_http::admit(surface, &incoming, settings) {
        Ok(settings) => Ok(Admitted {
            surface,
            tokens_variable,
            incoming,
            settings,
        }),
        Err(refusal) => Err(answer(surface, &incoming, refusal)),
    }
}

/// How long an instance keeps the settings it read.
pub const SETTINGS_LIFE: Duration = Duration::from_secs(1);

/// The settings' variables as read, each a value or why there is none.
type SettingsValues = Vec<(&'static str, Result<String, String>)>;

thread_local! {
    /// The settings this instance read, when, and for which token variable.
    static KEPT_SETTINGS: RefCell<Option<(Instant, &'static str, SettingsValues)>> =
        const { RefCell::new(None) };
}

/// The settings' variables: those this instance read less than [`SETTINGS_LIFE`] ago, else read
/// now, and kept when every read succeeded (a failed read is tried again by the next request).
async fn settings_values(tokens_variable: &'static str) -> SettingsValues {
    let kept = KEPT_SETTINGS.with_borrow(|kept| match kept {
        Some((read_at, variable, values))
            if *variable == tokens_variable && read_at.elapsed() < SETTINGS_LIFE =>
        {
            Some(values.clone())
        }
        _ => None,
    });
    if let Some(values) = kept {
        return values;
    }
    let read_at = Instant::now();
    let mut values = Vec::with_capacity(3);
    for name in ["environment", tokens_variable, "allowed_hosts"] {
        let value = variables::get(name).await.map_err(|e| format!("{e:?}"));
        values.push((name, value));
    }
    if values.iter().all(|(_, value)| value.is_ok()) {
        KEPT_SETTINGS.set(Some((read_at, tokens_variable, values.clone())));
    }
    values
}

impl Admitted {
    /// The docs, API and overview token check for these settings; in production, a token
    /// list that lets nobody in is logged.
    pub fn auth(&self) -> AuthConfig {
        let auth = AuthConfig::new(self.settings.environment.as_str(), &self.settings.tokens);
        log_auth_config(self.surface, &self.incoming, self.tokens_variable, &auth);
        auth
    }

    /// `res` through [`dochub_http::finish`], as spin-sdk's response.
    pub fn respond(self, res: Response) -> Answer {
        let res = finish(self.surface, &self.incoming, Some(&self.settings), res);
        answer(self.surface, &self.incoming, res)
    }
}

/// The request's method, path, query and headers (a header that is not UTF-8 is left out, as
/// the WASIp2 form does).
fn incoming(req: &Request) -> Incoming {
    let headers = req
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect();
    let path_and_query = req.uri().path_and_query().map_or("/", |pq| pq.as_str());
    Incoming::new(req.method().as_str(), path_and_query, headers)
}

/// `res` as spin-sdk's response: the whole body with its `content-length`, so that the head
/// and the body reach the connection together (see `dochub-http-wasip2`); `HEAD` gets the head.
fn answer(surface: Surface, incoming: &Incoming, res: Response) -> Answer {
    let head = incoming.method.eq_ignore_ascii_case("HEAD");
    let body = if head { Vec::new() } else { res.body };
    let length = body.len();
    let mut answer = Answer::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = StatusCode::from_u16(res.status).unwrap_or_else(|_| {
        dochub_http::log(
            surface,
            incoming,
            &format!("error: invalid status {}", res.status),
        );
        StatusCode::INTERNAL_SERVER_ERROR
    });
    let headers = answer.headers_mut();
    for (name, value) in &res.headers {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(value)) => {
                headers.append(name, value);
            }
            _ => dochub_http::log(
                surface,
                incoming,
                &format!("error: cannot send the header `{}`", name.escape_debug()),
            ),
        }
    }
    if !head {
        headers.insert(
            HeaderName::from_static("content-length"),
            HeaderValue::from(length),
        );
    }
    answer
}
