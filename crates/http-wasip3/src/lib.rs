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
use spin_sdk_p3::http::{HeaderMap, HeaderName, HeaderValue, Request, StatusCode};
use spin_sdk_p3::variables;
use spin_sdk_p3::wasip3::http::types;
use spin_sdk_p3::wasip3::http_compat::BodyWriter;

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

    /// `head` (its body is ignored) through [`dochub_http::finish`], as a response whose body
    /// the returned [`BodyStream`] writes over time. A `HEAD` request is answered with
    /// [`Admitted::respond`] instead, which sends the head alone.
    pub fn stream(self, head: Response) -> (types::Response, BodyStream) {
        let head = finish(self.surface, &self.incoming, Some(&self.settings), head);
        let status = status(self.surface, &self.incoming, head.status);
        let mut headers = HeaderMap::new();
        copy_headers(self.surface, &self.incoming, &head.headers, &mut headers);
        let fields = types::Fields::new();
        for (name, value) in &headers {
            if fields.append(name.as_str(), value.as_bytes()).is_err() {
                dochub_http::log(
                    self.surface,
                    &self.incoming,
                    &format!("error: cannot send the header `{}`", name.as_str()),
                );
            }
        }
        let (writer, contents, trailers) = BodyWriter::new();
        let (response, _sent) = types::Response::new(fields, Some(contents), trailers);
        // The status was checked above: a valid one is always taken.
        let _ = response.set_status_code(status.as_u16());
        (response, BodyStream(writer))
    }
}

/// The body of a response written over time ([`Admitted::stream`]). Dropped without
/// [`BodyStream::finish`], the response ends as failed: the client sees it cut short, never
/// a shorter complete one.
pub struct BodyStream(BodyWriter);

impl BodyStream {
    /// Writes all of `bytes`; it returns once the host has taken them, and fails once the
    /// client is gone.
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let unwritten = self.0.stream_writer.write_all(bytes.to_vec()).await;
        if unwritten.is_empty() {
            Ok(())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the client is gone",
            ))
        }
    }

    /// Ends the body: complete after `Ok`, failed (cut short) after `Err`.
    pub async fn finish(self, outcome: Result<(), String>) {
        let BodyWriter {
            stream_writer,
            result_writer,
            ..
        } = self.0;
        drop(stream_writer);
        let result = outcome
            .map(|()| None)
            .map_err(|e| types::ErrorCode::InternalError(Some(e)));
        // A reader that is gone has nothing left to tell.
        let _ = result_writer.write(result).await;
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
    *answer.status_mut() = status(surface, incoming, res.status);
    copy_headers(surface, incoming, &res.headers, answer.headers_mut());
    if !head {
        answer.headers_mut().insert(
            HeaderName::from_static("content-length"),
            HeaderValue::from(length),
        );
    }
    answer
}

/// `status` as spin-sdk's; an invalid one is logged and answered as `500`.
fn status(surface: Surface, incoming: &Incoming, status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or_else(|_| {
        dochub_http::log(
            surface,
            incoming,
            &format!("error: invalid status {status}"),
        );
        StatusCode::INTERNAL_SERVER_ERROR
    })
}

/// `from` into `headers`; a header that cannot be sent is logged and left out.
fn copy_headers(
    surface: Surface,
    incoming: &Incoming,
    from: &[(&'static str, String)],
    headers: &mut HeaderMap,
) {
    for (name, value) in from {
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
}
