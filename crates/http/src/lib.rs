//! The HTTP layer the dochub components share, so that every fix lands in all of them:
//!
//! - [`Request`] / [`Response`]: what the route functions of the API, the docs site, the
//!   overview and the hub take and return, with the content types and `HEAD` handling;
//! - [`Body`] / [`BodyReader`]: a request body read up to a limit, as the hub and `/mcp` read
//!   theirs;
//! - [`query_param`] / [`query_pairs`]: one reading of query strings;
//! - [`Settings`] / [`Environment`]: the settings read first, failing closed — an
//!   `environment` other than `development` or `production`, or a variable the host cannot
//!   read, refuses every request with a 500 that says what to fix;
//! - [`auth::AuthConfig`]: the docs/API/overview token check (the hub binds tokens to
//!   machines in `dochub-hub`; both parse digests with `dochub-auth`);
//! - [`host_allowed`]: development answers only loopback `Host` names (DNS rebinding);
//! - [`admit`] and [`finish`]: the checks before routing and the headers after it (generic
//!   5xx bodies, request ids, `nosniff`, `Referrer-Policy`, CSP, `Cache-Control`);
//! - [`iso8601`]: the one time format;
//! - [`page`]: the script and dark-mode switch every generated HTML page shares.
//!
//! No Spin dependency: `dochub-http-wasip2` (spin-sdk 5) and `dochub-http-wasip3` (spin-sdk 6)
//! take a component's request through these checks and send its answer. They are two crates,
//! not two features, because one component cannot link both spin-sdks.
//!
//! ```
//! use dochub_http::{Environment, Incoming, Response, Settings, Surface, admit, finish};
//! let incoming = Incoming::new(
//!     "GET",
//!     "/api/manifest",
//!     vec![("spin-full-url".into(), "http://127.0.0.1:3000/api/manifest".into())],
//! );
//! let settings = Settings {
//!     environment: Environment::Development,
//!     tokens: String::new(),
//!     allowed_hosts: String::new(),
//! };
//! let settings = admit(Surface::Api, &incoming, Ok(settings)).unwrap();
//! let res = finish(Surface::Api, &incoming, Some(&settings), Response::json_error(404, "Not found"));
//! assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
//! ```
#![deny(missing_docs)]

pub mod auth;
mod body;
mod exchange;
mod host;
mod message;
pub mod page;
mod query;
mod settings;
mod time;

pub use body::{Body, BodyReader};
pub use exchange::{
    DEFAULT_CSP, Incoming, PUBLIC_CACHE, REQUEST_ID, Surface, admit, finish, log, log_auth_config,
};
pub use host::{host_allowed, url_authority};
pub use message::{ALLOW_READ, HTML, JSON, MARKDOWN, Request, Response, TEXT};
pub use query::{query_pairs, query_param};
pub use settings::{Environment, Settings, SettingsError};
pub use time::{iso8601, iso8601_millis};
