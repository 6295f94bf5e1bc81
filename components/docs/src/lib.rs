//! The `docs` Spin component: Tier 2 of dochub (`/docs/...`), markdown rendered as a docs site,
//! and the docs for agents, `/llms.txt` and `/llms-full.txt`.
//!
//! A thin adapter over [`dochub_render::site`] and [`dochub_render::llms`]: it reads the
//! configuration once per request, passes the request to the library and writes back what it
//! answers. `/llms-full.txt` is streamed into the response body as it is generated, so its
//! size is not bounded by the component's memory; a failure half-way drops the body without
//! finishing it, which Spin (wasmtime-wasi-http) turns into an aborted response rather than
//! a complete-looking short one.
//!
//! Configuration:
//! - env `CONTENT_DIR` (default `/content`): the content root;
//! - env `BUILD_DIR` (default `/build`) and `SERVE_PREBUILT`: the prebuilt index, used for the
//!   sidebar, breadcrumbs, listings, search and `/llms.txt` while it matches the content (see
//!   `dochub_content::prebuilt::BuildMode`);
//! - variables `environment` and `auth_tokens` (see `dochub_content::auth`).

// `#[http_component]` expands to the canonical-ABI export glue, which is `unsafe` by nature;
// this file writes none itself.
#![allow(unsafe_code)]

use std::io::{self, Write};

use dochub_content::auth::AuthConfig;
use dochub_content::prebuilt::BuildMode;
use dochub_render::llms::{self, Answer, LlmsRoute};
use dochub_render::site::{SiteConfig, SiteRequest, SiteResponse, handle_accepting};
use spin_sdk::http::{Fields, OutgoingBody, OutgoingResponse, Request, ResponseOutparam};
use spin_sdk::http_component;

/// Bytes per write into the response body: WASI's `blocking-write-and-flush` takes at most 4096.
const WRITE_CHUNK: usize = 4096;
/// Bytes gathered before a write, so a page becomes a few writes, not one per line.
const BUFFER: usize = 64 * 1024;

#[http_component]
fn serve(req: Request, out: ResponseOutparam) {
    let config = SiteConfig {
        content_dir: std::env::var("CONTENT_DIR")
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| "/content".into())
            .into(),
        build: BuildMode::from_settings(
            std::env::var("SERVE_PREBUILT").ok().as_deref(),
            std::env::var("BUILD_DIR").ok().as_deref(),
        ),
        auth: AuthConfig::new(&variable("environment"), &variable("auth_tokens")),
    };
    let method = req.method().to_string();
    let header = |name: &str| req.header(name).and_then(|v| v.as_str());
    let llms_route = header("spin-component-route").and_then(LlmsRoute::from_component_route);
    // Spin gives the path below the route's prefix; without it, strip `/docs` ourselves.
    let path = match header("spin-path-info") {
        Some(p) => p.to_owned(),
        None => req
            .path()
            .strip_prefix("/docs")
            .unwrap_or(req.path())
            .to_owned(),
    };
    let site_req = SiteRequest {
        method: &method,
        path: &path,
        query: req.query(),
        authorization: header("authorization"),
    };
    let answer = match llms_route {
        Some(route) => llms::handle(&config, route, &site_req),
        None => Answer::Whole(handle_accepting(&config, &site_req, header("accept"))),
    };
    match answer {
        Answer::Whole(mut res) => {
            let body = std::mem::take(&mut res.body);
            send(out, &res, |w| w.write_all(&body).map_err(|e| e.to_string()));
        }
        Answer::Stream(res, text) => {
            send(out, &res, |w| {
                text.write_to(w).map(drop).map_err(|e| e.to_string())
            });
        }
    }
}

/// Sends the head of `res`, then the body `write` produces; the body is finished only when
/// `write` succeeds.
fn send(
    out: ResponseOutparam,
    res: &SiteResponse,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) {
    if let Some(warning) = &res.warning {
        eprintln!("docs: warning: {warning}");
    }
    let headers: Vec<(String, Vec<u8>)> = res
        .headers
        .iter()
        .map(|(name, value)| ((*name).to_owned(), value.clone().into_bytes()))
        .collect();
    let fields = match Fields::from_list(&headers) {
        Ok(fields) => fields,
        Err(e) => {
            eprintln!("docs: error: cannot send the response headers: {e:?}");
            Fields::new()
        }
    };
    let response = OutgoingResponse::new(fields);
    if response.set_status_code(res.status).is_err() {
        eprintln!("docs: error: invalid status {}", res.status);
    }
    let Ok(body) = response.body() else {
        eprintln!("docs: error: the response body was already taken");
        return;
    };
    out.set(response);
    let Ok(stream) = body.write() else {
        eprintln!("docs: error: the response body is not writable");
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
        write(&mut sink).and_then(|()| sink.flush().map_err(|e| e.to_string()))
    };
    drop(stream);
    match written {
        Ok(()) => {
            if let Err(e) = OutgoingBody::finish(body, None) {
                eprintln!("docs: error: cannot finish the response: {e:?}");
            }
        }
        Err(e) => {
            // Dropped unfinished: the host aborts the response instead of ending it cleanly.
            eprintln!("docs: error: response body cut short: {e}");
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

fn variable(name: &str) -> String {
    spin_sdk::variables::get(name).unwrap_or_default()
}
