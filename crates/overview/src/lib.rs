//! Tier 1 of dochub: the registry of overview pages, the hub landing page, and the request
//! handling behind `/` and `/overview/...`, as plain Rust with no Spin dependency.
//!
//! ```
//! use dochub_overview::{find, respond, Config, OVERVIEWS};
//!
//! assert_eq!(find("architecture").map(|o| o.title), Some("System Architecture"));
//! assert_eq!(OVERVIEWS.len(), 3);
//!
//! let config = Config::open("/content"); // development: no token needed
//! let reply = respond(&config, "GET", "/", None);
//! assert_eq!((reply.status, reply.header("location")), (302, Some("/overview/")));
//!
//! let landing = respond(&config, "GET", "/overview/", None);
//! assert!(String::from_utf8(landing.body).unwrap().contains("href=\"/overview/architecture\""));
//! ```
#![deny(missing_docs)]

mod check;
mod pages;
mod registry;
mod serve;

pub use check::{CheckError, CheckReport, check_dir};
pub use pages::{RenderError, error_page, landing_page};
pub use registry::{IdError, MAX_ID_LEN, OVERVIEWS, Overview, find, validate_id};
pub use serve::{CSP, Config, HTML, LANDING_PATH, Reply, respond};
