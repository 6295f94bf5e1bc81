//! The `docs` Spin component: Tier 2 of dochub (`/docs/...`), markdown rendered as a docs site,
//! and the docs for agents, `/llms.txt` and `/llms-full.txt`.
//!
//! A thin adapter over [`dochub_render::site`] and [`dochub_render::llms`], entered and left
//! through `dochub_http` like every component: the settings and the development `Host` check
//! first, then the library, then the shared headers and generic error bodies. `/llms-full.txt`
//! is streamed into the response body as it is generated, so its size is not bounded by the
//! component's memory; a failure half-way drops the body without finishing it, which Spin
//! (wasmtime-wasi-http) turns into an aborted response rather than a complete-looking short one.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`) and `SERVE_PREBUILT`: the prebuilt index, used for the
//!   sidebar, breadcrumbs, listings, search and `/llms.txt` while it matches the content (see
//!   `dochub_content::prebuilt::BuildMode`);
//! - variables `environment`, `auth_tokens` and `allowed_hosts` (see `dochub_http`: unreadable
//!   or unknown values refuse every request).

// `#[http_component]` expands to the canonical-ABI export glue, which is `unsafe` by nature;
// this file writes none itself.
#![allow(unsafe_code)]

use std::io::{self, Write};

use dochub_content::prebuilt::BuildMode;
use dochub_http::auth::AuthConfig;
use dochub_http::{Incoming, Response, Settings, Surface, admit, finish, log_auth_config};
use dochub_render::llms::{self, Answer, LlmsRoute};
use dochub_render::site::{SiteConfig, handle_accepting};
use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use spin_sdk::{http_component, variables};

/// Bytes per write into the response body: WASI's `blocking-write-and-flush` takes at most 4096.
const WRITE_CHUNK: usize = 4096;
/// Bytes gathered before a write, so a page becomes a few writes, not one per line.
const BUFFER: usize = 64 * 1024;

#[http_component]
fn serve(req: IncomingRequest, out: ResponseOutparam) {
    let incoming = dochub_http::spin::incoming(&req);
    let settings = match admit(
        Surface::Docs,
        &incoming,
        Settings::read("auth_tokens", variables::get),
    ) {
        Ok(settings) => settings,
        Err(refusal) => return send(out, &incoming, refusal, |_| Ok(())),
    };
    let auth = AuthConfig::new(settings.environment.as_str(), &settings.tokens);
    log_auth_config(Surface::Docs, &incoming, "auth_tokens", &auth);
    let config = SiteConfig {
        content_dir: env("CONTENT_DIR")
            .unwrap_or_else(|| "/content".into())
            .into(),
        build: BuildMode::from_settings(
            env("SERVE_PREBUILT").as_deref(),
            env("BUILD_DIR").as_deref(),
        ),
        auth,
    };
    let request = incoming.request();
    let llms_route = incoming
        .header("spin-component-route")
        .and_then(LlmsRoute::from_component_route);
    let answer = match llms_route {
        Some(route) => llms::handle(&config, route, &request),
        None => Answer::Whole(handle_accepting(
            &config,
            &request,
            incoming.header("accept"),
        )),
    };
    match answer {
        Answer::Whole(res) => {
            // Through `finish` with its body: a 5xx body is replaced by a generic one there.
            let res = finish(Surface::Docs, &incoming, Some(&settings), res);
            send(out, &incoming, res, |_| Ok(()));
        }
        Answer::Stream(res, text) => {
            let res = finish(Surface::Docs, &incoming, Some(&settings), res);
            send(out, &incoming, res, |w| {
                text.write_to(w).map(drop).map_err(|e| e.to_string())
            });
        }
    }
}

/// Sends `res`, then whatever more of the body `write` produces (nothing for `HEAD`); the body
/// is finished only when everything was written.
fn send(
    out: ResponseOutparam,
    incoming: &Incoming,
    res: Response,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) {
    let log = |message: &str| dochub_http::log(Surface::Docs, incoming, message);
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
    out.set(response);
    let Ok(stream) = body.write() else {
        log("error: the response body is not writable");
        return;
    };
    let written = {
        let mut sink = io::BufWriter::with_capacity(
            BUFFER,
            BodyWriter(|chunk: &[u8]| {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|e| io::Error::other(format!("{e:?}")))
            }),
        );
        let result = if head {
            Ok(())
        } else {
            sink.write_all(&res.body)
                .map_err(|e| e.to_string())
                .and_then(|()| write(&mut sink))
        };
        result.and_then(|()| sink.flush().map_err(|e| e.to_string()))
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
            log(&format!("error: response body cut short: {e}"));
            drop(body);
        }
    }
}

/// An [`io::Write`] over a function that writes at most [`WRITE_CHUNK`] bytes at once.
struct BodyWriter<F: FnMut(&[u8]) -> io::Result<()>>(F);

impl<F: FnMut(&[u8]) -> io::Result<()>> Write for BodyWriter<F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(WRITE_CHUNK);
        (self.0)(&buf[..n])?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
