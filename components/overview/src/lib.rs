//! Tier 1 component: `/` redirects to `/overview/`, which shows the landing page, and
//! `/overview/<id>` serves `<CONTENT_DIR>/_overviews/<id>.html`. The logic is in `dochub-overview`.

// `#[http_component]` expands to the unsafe canonical-ABI export glue; this file writes none itself.
#![allow(unsafe_code)]

use dochub_content::auth::AuthConfig;
use dochub_overview::{Config, Reply};
use spin_sdk::http::{IncomingRequest, Response};
use spin_sdk::{http_component, variables};

#[http_component]
fn handle(req: IncomingRequest) -> Response {
    let method = req.method().to_string();
    let path_and_query = req.path_with_query().unwrap_or_default();
    let path = path_and_query
        .split_once('?')
        .map_or(path_and_query.as_str(), |(p, _)| p);
    let authorization = req
        .headers()
        .get("authorization")
        .into_iter()
        .next()
        .and_then(|v| String::from_utf8(v).ok());

    let reply = match config() {
        Ok(config) => dochub_overview::respond(&config, &method, path, authorization.as_deref()),
        Err(e) => Reply::internal_error(format!("configuration: {e}")),
    };
    if let Some(error) = &reply.error {
        eprintln!("overview: {method} {path}: {error}");
    }
    let mut res = Response::builder();
    res.status(reply.status);
    for (name, value) in reply.headers {
        res.header(name, value);
    }
    res.body(reply.body).build()
}

/// Configuration is read once here and passed down; the handler reads no environment.
/// A variable that cannot be read fails the request rather than opening the pages.
fn config() -> Result<Config, variables::Error> {
    let environment = variables::get("environment")?;
    let auth_tokens = variables::get("auth_tokens")?;
    let auth = AuthConfig::new(&environment, &auth_tokens);
    if auth.required() && auth.invalid_entries() > 0 {
        eprintln!(
            "overview: {} auth_tokens entries are not SHA-256 hex digests and are ignored",
            auth.invalid_entries()
        );
    }
    Ok(Config {
        content_dir: std::env::var("CONTENT_DIR")
            .unwrap_or_else(|_| "/content".to_owned())
            .into(),
        auth,
    })
}
