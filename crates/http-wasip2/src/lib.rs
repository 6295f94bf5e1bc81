//! What a WASIp2 Spin component (spin-sdk 5) needs at its edges: the host's request in, our
//! response out. Every component starts with [`admit`] and ends with [`Admitted::respond`] or
//! [`Admitted::send`], so all four read the request (path info, query, headers), check it and
//! write the response the same way.
#![deny(missing_docs)]

use std::io::{self, Write};

use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use spin_sdk::variables;
use wasi::io::streams::{OutputStream, StreamError};

/// Bytes asked of the request body at a time.
const READ_CHUNK: u64 = 64 * 1024;

use dochub_http::auth::AuthConfig;
use dochub_http::{
    Body, BodyReader, Incoming, Response, Settings, Surface, finish, log_auth_config,
};

/// Bytes gathered before a write: a page goes out as one chunk, a long stream in 64 KiB ones.
const BUFFER: usize = 64 * 1024;

/// A request past the checks every component makes before routing, holding what its answer
/// needs: the request's head, the settings, and where the response goes.
pub struct Admitted {
    surface: Surface,
    tokens_variable: &'static str,
    out: ResponseOutparam,
    /// The request's head.
    pub incoming: Incoming,
    /// The settings, read once for this request.
    pub settings: Settings,
}

/// Reads the request's head and the settings (`environment`, the token list `tokens_variable`,
/// `allowed_hosts`) and makes [`dochub_http::admit`]'s checks. A refused request is answered here,
/// and `None` returned.
pub fn admit(
    surface: Surface,
    req: &IncomingRequest,
    out: ResponseOutparam,
    tokens_variable: &'static str,
) -> Option<Admitted> {
    let incoming = incoming(req);
    match dochub_http::admit(
        surface,
        &incoming,
        Settings::read(tokens_variable, variables::get),
    ) {
        Ok(settings) => Some(Admitted {
            surface,
            tokens_variable,
            out,
            incoming,
            settings,
        }),
        Err(refusal) => {
            respond(out, surface, &incoming, refusal);
            None
        }
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

    /// Sends `res` whole, through [`dochub_http::finish`].
    pub fn respond(self, res: Response) {
        let res = finish(self.surface, &self.incoming, Some(&self.settings), res);
        respond(self.out, self.surface, &self.incoming, res);
    }

    /// Sends `head` through [`dochub_http::finish`], then the body `write` produces (nothing for
    /// `HEAD`); a failure half-way aborts the response rather than ending it short.
    pub fn send(self, head: Response, write: impl FnOnce(&mut dyn Write) -> Result<(), String>) {
        let head = finish(self.surface, &self.incoming, Some(&self.settings), head);
        send(self.out, self.surface, &self.incoming, head, write);
    }
}

/// The request's body, up to `max` bytes ([`BodyReader`]: a `content-length` over `max` is
/// believed without reading anything); `Err` when the client's body breaks off.
pub fn read_body(req: IncomingRequest, max: usize) -> Result<Body, String> {
    let declared = req.headers().get("content-length");
    let declared = declared.first().and_then(|v| std::str::from_utf8(v).ok());
    let mut body = BodyReader::new(max, declared);
    if !body.wants_more() {
        return Ok(body.finish());
    }
    let incoming = req
        .consume()
        .map_err(|()| "the request body was already taken".to_owned())?;
    let stream = incoming
        .stream()
        .map_err(|()| "the request body is not readable".to_owned())?;
    while body.wants_more() {
        match stream.blocking_read(READ_CHUNK) {
            Ok(chunk) => body.add(&chunk),
            Err(StreamError::Closed) => break,
            Err(e) => return Err(format!("the request body broke off: {e:?}")),
        }
    }
    drop(stream);
    Ok(body.finish())
}

/// The request's method, path, query and headers (the body is left unread: a component
/// that wants it streams it afterwards, checks first).
fn incoming(req: &IncomingRequest) -> Incoming {
    let headers = req
        .headers()
        .entries()
        .into_iter()
        .filter_map(|(name, value)| Some((name, String::from_utf8(value).ok()?)))
        .collect();
    Incoming::new(
        &req.method().to_string(),
        &req.path_with_query().unwrap_or_else(|| "/".to_owned()),
        headers,
    )
}

/// Sends `res` whole.
fn respond(out: ResponseOutparam, surface: Surface, incoming: &Incoming, res: Response) {
    send(out, surface, incoming, res, |_| Ok(()));
}

/// Sends `res`, then whatever more of the body `write` produces (nothing for `HEAD`); the body
/// is finished only when everything was written. A failure half-way drops the body unfinished,
/// which Spin (wasmtime-wasi-http) turns into an aborted response, not a short complete one.
///
/// A body that fits in [`BUFFER`] goes out whole, with a `content-length`. Chunked, its last
/// chunk could reach the connection in a write of its own, which then waits for the client's
/// delayed ACK of the first (40 ms on Linux: Nagle's algorithm, as neither Spin nor
/// `dochub-host` sets `TCP_NODELAY`). Under `spin up` v4.0.2 that happened to most keep-alive
/// requests that read the key-value store: its calls (`block_in_place`) move the guest to
/// another thread while the connection's task flushes what the guest has written so far.
fn send(
    out: ResponseOutparam,
    surface: Surface,
    incoming: &Incoming,
    res: Response,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) {
    let log = |message: &str| dochub_http::log(surface, incoming, message);
    let head = incoming.method.eq_ignore_ascii_case("HEAD");
    let mut writer = BodyWriter {
        unsent: Some(Unsent {
            out,
            status: res.status,
            headers: res
                .headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone().into_bytes()))
                .collect(),
        }),
        unset: None,
        body: None,
        declared: None,
        handed: 0,
        client_left: false,
        log: &log,
    };
    let mut sink = io::BufWriter::with_capacity(BUFFER, &mut writer);
    let result = if head {
        Ok(())
    } else {
        sink.write_all(&res.body)
            .map_err(|e| e.to_string())
            .and_then(|()| write(&mut sink))
    };
    // Unless the buffer overflowed into the body already, what it holds is the whole body.
    let (writer, rest) = sink.into_parts();
    let rest = rest.unwrap_or_else(|panicked| panicked.into_inner());
    let whole = !head && result.is_ok() && writer.body.is_none();
    let started = writer
        .start(whole.then_some(rest.len()))
        .map_err(|e| e.to_string());
    let written = result.and(started).and_then(|()| {
        writer
            .write_all(&rest)
            .and_then(|()| writer.flush())
            .map_err(|e| e.to_string())
    });
    writer.respond();
    let client_left = writer.client_left;
    let Some((body, stream)) = writer.body.take() else {
        if let Err(e) = written {
            log(&format!("error: cannot send the response: {e}"));
        }
        return;
    };
    drop(stream);
    match written {
        Ok(()) => {
            if let Err(e) = OutgoingBody::finish(body, None) {
                log(&format!("error: cannot finish the response: {e:?}"));
            }
        }
        Err(e) => {
            // Dropped unfinished: the host aborts the response instead of ending it cleanly.
            if client_left {
                // The client had what it needed (often the head alone) and hung up.
                log("the client closed the connection before the whole body was sent");
            } else {
                log(&format!("error: response body cut short: {e}"));
            }
            drop(body);
        }
    }
}

/// The response before it is created: its headers are final only once it is known whether
/// the whole body fits in one write.
struct Unsent {
    out: ResponseOutparam,
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
}

/// An [`io::Write`] into the response body. The response is created on the first write (or
/// by [`BodyWriter::start`] with the whole body's length) and set once the first chunk is
/// written: head and first chunk then reach the connection together, where sent apart the body
/// would wait for the client's delayed ACK of the head.
struct BodyWriter<'a> {
    unsent: Option<Unsent>,
    /// Created, not yet set.
    unset: Option<(ResponseOutparam, OutgoingResponse)>,
    body: Option<(OutgoingBody, OutputStream)>,
    /// The `content-length` sent, when the whole body was known.
    declared: Option<u64>,
    /// Bytes the stream has taken.
    handed: u64,
    /// The stream reported the connection closed.
    client_left: bool,
    log: &'a dyn Fn(&str),
}

impl BodyWriter<'_> {
    /// Creates the response, with `content_length` when the whole body is known.
    fn start(&mut self, content_length: Option<usize>) -> io::Result<()> {
        let Some(Unsent {
            out,
            status,
            mut headers,
        }) = self.unsent.take()
        else {
            return Ok(());
        };
        if let Some(length) = content_length {
            headers.push(("content-length".to_owned(), length.to_string().into_bytes()));
            self.declared = u64::try_from(length).ok();
        }
        let fields = Fields::from_list(&headers).unwrap_or_else(|e| {
            (self.log)(&format!("error: cannot send the response headers: {e:?}"));
            Fields::new()
        });
        let response = OutgoingResponse::new(fields);
        if response.set_status_code(status).is_err() {
            (self.log)(&format!("error: invalid status {status}"));
        }
        let body = response
            .body()
            .map_err(|()| io::Error::other("the response body was already taken"))?;
        let stream = body
            .write()
            .map_err(|()| io::Error::other("the response body is not writable"))?;
        self.unset = Some((out, response));
        self.body = Some((body, stream));
        Ok(())
    }

    /// Sets the response, if it is not set yet.
    fn respond(&mut self) {
        set_response(&mut self.unset);
    }
}

fn set_response(unset: &mut Option<(ResponseOutparam, OutgoingResponse)>) {
    if let Some((out, response)) = unset.take() {
        out.set(response);
    }
}

fn stream_error(client_left: &mut bool, e: StreamError) -> io::Error {
    *client_left |= matches!(e, StreamError::Closed);
    io::Error::other(format!("{e:?}"))
}

impl Write for BodyWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.start(None)?;
        let Some((_, stream)) = &self.body else {
            return Err(io::Error::other("the response has no body"));
        };
        let permit = loop {
            let permit = stream
                .check_write()
                .map_err(|e| stream_error(&mut self.client_left, e))?;
            if permit > 0 {
                break permit;
            }
            // The body's buffer is full; it drains only once the response is set.
            set_response(&mut self.unset);
            stream.subscribe().block();
        };
        let n = buf.len().min(usize::try_from(permit).unwrap_or(usize::MAX));
        stream
            .write(&buf[..n])
            .map_err(|e| stream_error(&mut self.client_left, e))?;
        self.handed += n as u64;
        self.respond();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.start(None)?;
        self.respond();
        let Some((_, stream)) = &self.body else {
            return Err(io::Error::other("the response has no body"));
        };
        match stream.blocking_flush() {
            // The host lets go of a body of known length once it holds every byte, so a flush
            // after the last write may find the stream closed with nothing lost.
            Err(StreamError::Closed) if self.declared == Some(self.handed) => Ok(()),
            result => result.map_err(|e| stream_error(&mut self.client_left, e)),
        }
    }
}
