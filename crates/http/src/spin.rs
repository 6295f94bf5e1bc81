//! What a Spin component needs at its edges (feature `spin`): the host's request in, our
//! response out. Every component starts and ends with these, so all four read the request
//! (path info, query, headers) and write the response the same way.

use std::io::{self, Write};

use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use wasi::io::streams::{OutputStream, StreamError};

use crate::exchange::{Incoming, Surface};
use crate::message::Response;

/// Bytes gathered before a write: a page goes out as one chunk, a long stream in 64 KiB ones.
const BUFFER: usize = 64 * 1024;

/// The request's method, path, query and headers (the body is left unread: a component
/// that wants it streams it afterwards, checks first).
pub fn incoming(req: &IncomingRequest) -> Incoming {
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
pub fn respond(out: ResponseOutparam, surface: Surface, incoming: &Incoming, res: Response) {
    send(out, surface, incoming, res, |_| Ok(()));
}

/// Sends `res`, then whatever more of the body `write` produces (nothing for `HEAD`); the body
/// is finished only when everything was written. A failure half-way drops the body unfinished,
/// which Spin (wasmtime-wasi-http) turns into an aborted response, not a short complete one.
pub fn send(
    out: ResponseOutparam,
    surface: Surface,
    incoming: &Incoming,
    res: Response,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) {
    let log = |message: &str| crate::log(surface, incoming, message);
    let head = incoming.method.eq_ignore_ascii_case("HEAD");
    let headers: Vec<(String, Vec<u8>)> = res
        .headers
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone().into_bytes()))
        .collect();
    let fields = match Fields::from_list(&headers) {
        Ok(fields) => fields,
        Err(e) => {
            log(&format!("error: cannot send the response headers: {e:?}"));
            Fields::new()
        }
    };
    let response = OutgoingResponse::new(fields);
    if response.set_status_code(res.status).is_err() {
        log(&format!("error: invalid status {}", res.status));
    }
    let Ok(body) = response.body() else {
        log("error: the response body was already taken");
        return;
    };
    let Ok(stream) = body.write() else {
        log("error: the response body is not writable");
        return;
    };
    let mut writer = BodyWriter {
        stream: &stream,
        unsent: Some((out, response)),
        client_left: false,
    };
    let written = {
        let mut sink = io::BufWriter::with_capacity(BUFFER, &mut writer);
        let result = if head {
            Ok(())
        } else {
            sink.write_all(&res.body)
                .map_err(|e| e.to_string())
                .and_then(|()| write(&mut sink))
        };
        result.and_then(|()| sink.flush().map_err(|e| e.to_string()))
    };
    writer.respond();
    let client_left = writer.client_left;
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

/// An [`io::Write`] into the response body that sets the response once the first chunk is
/// written. Head and first chunk then reach the connection together: sent apart, the body's
/// segment waits (Nagle's algorithm) for the client's delayed ACK of the head, 40 ms on Linux,
/// as neither Spin nor `dochub-host` sets `TCP_NODELAY`.
struct BodyWriter<'a> {
    stream: &'a OutputStream,
    unsent: Option<(ResponseOutparam, OutgoingResponse)>,
    /// The stream reported the connection closed.
    client_left: bool,
}

impl BodyWriter<'_> {
    fn failed(&mut self, e: StreamError) -> io::Error {
        self.client_left |= matches!(e, StreamError::Closed);
        io::Error::other(format!("{e:?}"))
    }

    /// Sets the response, if it is not set yet.
    fn respond(&mut self) {
        if let Some((out, response)) = self.unsent.take() {
            out.set(response);
        }
    }
}

impl Write for BodyWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let permit = loop {
            let permit = self.stream.check_write().map_err(|e| self.failed(e))?;
            if permit > 0 {
                break permit;
            }
            // The body's buffer is full; it drains only once the response is set.
            self.respond();
            self.stream.subscribe().block();
        };
        let n = buf.len().min(usize::try_from(permit).unwrap_or(usize::MAX));
        self.stream.write(&buf[..n]).map_err(|e| self.failed(e))?;
        self.respond();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.respond();
        self.stream.blocking_flush().map_err(|e| self.failed(e))
    }
}
