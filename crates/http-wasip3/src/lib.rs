//! What a WASIp3 Spin component (spin-sdk 6) needs at its edges, as `dochub-http-wasip2` gives
//! a WASIp2 one: the same checks and headers, for a handler that takes spin-sdk's request and
//! returns its response. Spin keeps such a component's instance for many requests, so nothing
//! here is read once and kept: the settings are read for every request, as a WASIp2 instance,
//! made for one request, reads them.
#![deny(missing_docs)]

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
    /// The settings, read once for this request.
    pub settings: Settings,
}

/// Reads the request's head and the settings (`environment`, the token list `tokens_variable`,
/// `allowed_hosts`) and makes [`dochub_http::admit`]'s checks. A refused request gets its answer as
/// the `Err`.
pub async fn admit(
    surface: Surface,
    req: &Request,
    tokens_variable: &'static str,
) -> Result<Admitted, Answer> {
    let incoming = incoming(req);
    let mut values = Vec::with_capacity(3);
    for name in ["environment", tokens_variable, "allowed_hosts"] {
        values.push((name, variables::get(name).await));
    }
    let settings = Settings::read(tokens_variable, |name| {
        match values.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => value.clone().map_err(|e| format!("{e:?}")),
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
