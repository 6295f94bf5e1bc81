//! Tier 1 of dochub: the registry of overview pages, the hub landing page, and the request
//! handling behind `/` and `/overview/...`, as plain Rust with no Spin dependency.
//!
//! ```
//! use dochub_overview::{find, respond, Config, OVERVIEWS};
//!
//! assert_eq!(find("architecture").map(|o| o.title), Some("System Architecture"));
//! assert_eq!(OVERVIEWS.len(), 3);
//!
//! // The repository's bundled content; development: no token needed.
//! let config = Config::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../content"));
//! let reply = respond(&config, "GET", "/", None);
//! assert_eq!((reply.status, reply.header("location")), (302, Some("/overview/")));
//!
//! let landing = respond(&config, "GET", "/overview/", None);
//! assert!(String::from_utf8(landing.body).unwrap().contains("href=\"/overview/architecture\""));
//!
//! // A docs tree without `_overviews/` has a landing page that says so.
//! let plain = respond(&Config::open("/no/overviews/here"), "GET", "/overview/", None);
//! assert!(String::from_utf8(plain.body).unwrap().contains("There are no overview pages yet"));
//! ```
#![deny(missing_docs)]

mod check;
mod kept;
mod pages;
mod registry;
mod serve;

pub use check::{CheckError, CheckReport, check_dir};
pub use dochub_http::HTML;
pub use kept::{KEPT_MAX_BYTES, KeptPages, SETTLED};
pub use pages::{RenderError, error_page, landing_page};
pub use registry::{IdError, MAX_ID_LEN, OVERVIEWS, Overview, find, validate_id};
pub use serve::{CSP, Config, LANDING_PATH, OWN_PAGES_CSP, internal_error, respond};
