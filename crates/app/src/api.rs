//! The Tier 3 API (`/api/...`) as a pure function from a request to a
//! response, so the Spin component stays a page of glue and every route is
//! tested natively. Only `/api/health` needs the host (key-value store for the
//! start time, outbound Postgres): the component computes those two readings and
//! calls [`health_response`].
//!
//! ```
//! use dochub_app::api::{ApiConfig, handle};
//! use dochub_http::Request;
//! use dochub_index::Source;
//! use dochub_index::build::BuildMode;
//! use dochub_http::auth::AuthConfig;
//! let config = ApiConfig {
//!     source: Source { content_dir: "/no/such/dir".into(), build: BuildMode::Off, memo: None },
//!     auth: AuthConfig::new("development", ""),
//!     kept: None,
//! };
//! let req = Request { method: "GET", path: "/manifest", query: "", headers: &[] };
//! let res = handle(&config, &req, chrono::Utc::now());
//! assert_eq!(res.status, 500); // the content root is missing, and the body says so
//! ```

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use dochub_http::auth::{AuthConfig, BEARER_CHALLENGE};
use dochub_http::{ALLOW_READ as ALLOW, JSON, MARKDOWN, Request, Response, iso8601, query_param};
use percent_encoding::percent_decode_str;
use serde::{Deserialize, Serialize};

use dochub_content::{
    Catalog, CatalogError, ContentRoot, ManifestName, PagePath, is_valid_id, raw_url, to_json,
};
use dochub_index::Source;
use dochub_search::MAX_RESULTS;

use crate::agents::{self, AgentError, Ranking, ReadRequest, Scope, Versions};
use crate::kept::KeptAnswers;

/// Service name reported by the health check.
pub const SERVICE: &str = "dochub";

/// Configuration read once at the component's entry.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Where answers come from.
    pub source: Source,
    /// Who may call the protected routes.
    pub auth: AuthConfig,
    /// Raw pages and manifests kept between requests, by an instance that serves many
    /// ([`KeptAnswers`]).
    pub kept: Option<KeptAnswers>,
}

/// A resolved route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/api/health`
    Health,
    /// `/api/manifest`
    Manifest,
    /// `/api/manifest/:project`
    ProjectManifest(String),
    /// `/api/manifest/:project/:subproject`
    SubprojectManifest(String, String),
    /// `/api/raw/:project/:subproject/:page`
    Raw(String, String, String),
    /// `/api/search`
    Search,
    /// `/api/query`: the sections that best answer a question ([`crate::agents::query_docs`])
    Query,
    /// `/api/report/latest`
    LatestReport,
    /// Anything else.
    NotFound,
}

/// Resolves a path below `/api` (percent-encoded, as received). Each segment is
/// decoded on its own, so an encoded `/` stays inside its segment; ids that are
/// not valid are left for the content layer to refuse (it answers `None`).
///
/// ```
/// use dochub_app::api::{route, Route};
/// assert_eq!(route("/manifest/dochub/"), Route::ProjectManifest("dochub".into()));
/// assert_eq!(route("/raw/a/b/%2e%2e"), Route::Raw("a".into(), "b".into(), "..".into()));
/// assert_eq!(route("/raw/a/b"), Route::NotFound);
/// ```
pub fn route(path: &str) -> Route {
    let Some(rest) = path.strip_prefix('/') else {
        return Route::NotFound;
    };
    // One trailing slash is tolerated: `/api/manifest/` is `/api/manifest`.
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let mut segs = Vec::new();
    for raw in rest.split('/') {
        match percent_decode_str(raw).decode_utf8() {
            Ok(s) if !s.is_empty() => segs.push(s),
            _ => return Route::NotFound,
        }
    }
    let s: Vec<&str> = segs.iter().map(Cow::as_ref).collect();
    match s.as_slice() {
        ["health"] => Route::Health,
        ["manifest"] => Route::Manifest,
        ["manifest", p] => Route::ProjectManifest((*p).to_owned()),
        ["manifest", p, sp] => Route::SubprojectManifest((*p).to_owned(), (*sp).to_owned()),
        ["raw", p, sp, page] => Route::Raw((*p).to_owned(), (*sp).to_owned(), (*page).to_owned()),
        ["search"] => Route::Search,
        ["query"] => Route::Query,
        ["report", "latest"] => Route::LatestReport,
        _ => Route::NotFound,
    }
}

/// What the checks before routing decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// The route is `/api/health` with an allowed method: the caller builds the health response.
    Health,
    /// Answer with this response (401, 404, 405, or the route's own answer).
    Respond(Response),
}

/// [`handle_or_health`] for `/api/health` alone, for a component that answers nothing else:
/// [`Gate::Health`] for `GET` and `HEAD`, 405 for any other method.
pub fn health_gate(method: &str) -> Gate {
    if method == "GET" || method.eq_ignore_ascii_case("HEAD") {
        Gate::Health
    } else {
        Gate::Respond(method_not_allowed())
    }
}

fn method_not_allowed() -> Response {
    Response::json_error(405, "Method not allowed; use GET").with_header("allow", ALLOW)
}

/// Answers a request. For `/api/health` (allowed method) it returns
/// [`Gate::Health`] and leaves the readings to the caller.
pub fn handle_or_health(config: &ApiConfig, req: &Request<'_>, now: DateTime<Utc>) -> Gate {
    let route = route(req.path);
    let head = req.method.eq_ignore_ascii_case("HEAD");
    if route != Route::Health && !config.auth.allows(req.authorization()) {
        return Gate::Respond(
            Response::json_error(
                401,
                "Authentication required: send Authorization: Bearer <token>",
            )
            .with_header("www-authenticate", BEARER_CHALLENGE),
        );
    }
    if route == Route::NotFound {
        return Gate::Respond(strip(Response::json_error(404, "Not found"), head));
    }
    if route == Route::Health {
        return health_gate(req.method);
    }
    if !(req.method == "GET" || head) {
        return Gate::Respond(method_not_allowed());
    }
    let res = match dispatch(config, &route, req.query, now) {
        Ok(res) => res,
        Err(CatalogError::Query(e)) => Response::json_error(400, &e.to_string()),
        Err(e) => Response::json_error(500, &e.to_string()),
    };
    Gate::Respond(strip(res, head))
}

/// Answers every route but `/api/health`, which gets a 500 here (use
/// [`handle_or_health`] to serve it).
pub fn handle(config: &ApiConfig, req: &Request<'_>, now: DateTime<Utc>) -> Response {
    match handle_or_health(config, req, now) {
        Gate::Respond(res) => res,
        Gate::Health => Response::json_error(500, "health needs the host's readings"),
    }
}

fn strip(res: Response, head: bool) -> Response {
    res.strip_for(if head { "HEAD" } else { "GET" })
}

fn dispatch(
    config: &ApiConfig,
    route: &Route,
    query: &str,
    now: DateTime<Utc>,
) -> Result<Response, CatalogError> {
    if let Route::Raw(p, s, page) = route
        && !agent_read(query)
    {
        let read = || ContentRoot::raw_if_present(&config.source.content_dir, p, s, page);
        let found = match &config.kept {
            Some(kept) => kept
                .page(&format!("raw/{p}/{s}/{page}"), read)
                .map(|b| b.to_vec()),
            None => read(),
        };
        if let Some(bytes) = found {
            return Ok(raw_page(bytes));
        }
    }
    let read = || {
        config
            .source
            .read(|catalog| answer(catalog, route, query, now))
    };
    let manifest = matches!(
        route,
        Route::Manifest | Route::ProjectManifest(_) | Route::SubprojectManifest(..)
    );
    if let Some(kept) = config.kept.as_ref().filter(|_| manifest) {
        // Kept only when whole and without a warning: not a 404, nor a fallback to the tree.
        let mut not_kept = None;
        let kept = kept.answer(&format!("{route:?}"), || {
            let (res, warning) = read()?;
            if res.status == 200 && warning.is_none() {
                return Ok(Some(res.body));
            }
            not_kept = Some(res.with_warning(warning));
            Ok::<_, CatalogError>(None)
        })?;
        return Ok(match (kept, not_kept) {
            (Some(bytes), _) => json(bytes.to_vec()),
            (None, Some(res)) => res,
            (None, None) => unreachable!("an answer that is not kept is returned as read"),
        });
    }
    let (res, warning) = read()?;
    Ok(res.with_warning(warning))
}

fn raw_page(bytes: Vec<u8>) -> Response {
    Response::new(200, MARKDOWN, bytes)
}

fn json(bytes: Vec<u8>) -> Response {
    Response::new(200, JSON, bytes)
}

fn answer(
    catalog: &dyn Catalog,
    route: &Route,
    query: &str,
    now: DateTime<Utc>,
) -> Result<Response, CatalogError> {
    let manifest = |name, missing| -> Result<Response, CatalogError> {
        Ok(match catalog.manifest(name, &iso8601(now))? {
            Some(bytes) => json(bytes),
            None => Response::json_error(404, missing),
        })
    };
    Ok(match route {
        Route::Manifest => manifest(ManifestName::Master, "Not found")?,
        Route::ProjectManifest(p) => manifest(ManifestName::Project(p), "Project not found")?,
        Route::SubprojectManifest(p, s) => {
            manifest(ManifestName::Subproject(p, s), "Subproject not found")?
        }
        Route::Raw(p, s, page) => match catalog.raw(p, s, page)? {
            Some(bytes) if agent_read(query) => {
                read_part(&bytes, &format!("{p}/{s}/{page}"), query)
            }
            Some(bytes) => raw_page(bytes),
            None => match moved(catalog, p, s, page)? {
                Some(new) => {
                    Response::redirect(301, raw_url(&new.project, &new.subproject, &new.page))
                }
                None => Response::json_error(404, "Document not found"),
            },
        },
        Route::Search => {
            let param = |name| query_param(query, name).filter(|v| !v.trim().is_empty());
            let (project, version) = (param("project"), param("version"));
            let limit = match param("limit").map(|given| given.trim().parse().map_err(|_| given)) {
                None => MAX_RESULTS,
                Some(Ok(n)) => n,
                Some(Err(given)) => return Ok(scope_error(AgentError::Limit(given))),
            };
            let scope = Scope {
                project: project.as_deref(),
                versions: Versions::parse(version.as_deref(), Versions::All),
            };
            let rank = match Ranking::parse(param("rank").as_deref()) {
                Ok(rank) => rank,
                Err(e) => return Ok(scope_error(e)),
            };
            let q = query_param(query, "q").unwrap_or_default();
            match agents::search_ranked(catalog, &q, &scope, limit, rank)? {
                Ok(found) => json(to_json(&found)?),
                Err(e) => scope_error(e),
            }
        }
        Route::Query => query_route(catalog, query)?,
        Route::LatestReport => match catalog.latest_report()? {
            Some(report) => json(report.bytes),
            None => Response::json_error(404, "No reports yet"),
        },
        Route::Health | Route::NotFound => Response::json_error(404, "Not found"),
    })
}

/// Whether a raw read asks for a part of the page (`anchor`, `max_tokens`, `offset`) rather
/// than its file as it is.
fn agent_read(query: &str) -> bool {
    ["anchor", "max_tokens", "offset"]
        .iter()
        .any(|name| query_param(query, name).is_some())
}

/// A section of a page, or a cut of it within a budget ([`agents::read_page`]). A cut says
/// where the rest starts in `dochub-next-offset` as well as in its last line.
fn read_part(raw: &[u8], path: &str, query: &str) -> Response {
    let anchor = query_param(query, "anchor").filter(|a| !a.is_empty());
    let read = (|| {
        let max_tokens = query_param(query, "max_tokens")
            .map(|given| agents::parse_budget(&given))
            .transpose()?;
        let offset = match query_param(query, "offset") {
            None => 0,
            Some(given) => given.trim().parse().map_err(|_| AgentError::Offset {
                given: given.clone(),
                len: raw.len(),
            })?,
        };
        agents::read_page(
            raw,
            path,
            &ReadRequest {
                anchor: anchor.as_deref(),
                max_tokens,
                offset,
            },
        )
    })();
    match read {
        Ok(answer) => {
            let next = answer.next_offset.map(|n| n.to_string());
            let res = raw_page(answer.text.into_bytes());
            match next {
                Some(next) => res.with_header("dochub-next-offset", &next),
                None => res,
            }
        }
        Err(e) => scope_error(e),
    }
}

/// `/api/query?q=&project=&version=&max_tokens=`: [`agents::query_docs`] as JSON.
fn query_route(catalog: &dyn Catalog, query: &str) -> Result<Response, CatalogError> {
    let param = |name| query_param(query, name).filter(|v| !v.trim().is_empty());
    let max_tokens = match param("max_tokens").map(|given| agents::parse_budget(&given)) {
        None => agents::DEFAULT_QUERY_TOKENS,
        Some(Ok(n)) => n,
        Some(Err(e)) => return Ok(Response::json_error(400, &e.to_string())),
    };
    let (project, version) = (param("project"), param("version"));
    let scope = Scope {
        project: project.as_deref(),
        versions: Versions::parse(version.as_deref(), Versions::Latest),
    };
    let q = query_param(query, "q").unwrap_or_default();
    Ok(match agents::query_docs(catalog, &q, &scope, max_tokens)? {
        Ok(answer) => json(to_json(&answer)?),
        Err(e) => scope_error(e),
    })
}

/// An agent's request that cannot be answered: 404 for a project that does not exist, else 400.
fn scope_error(e: AgentError) -> Response {
    let status = match e {
        AgentError::UnknownProject(_) | AgentError::NoSuchAnchor { .. } => 404,
        _ => 400,
    };
    Response::json_error(status, &e.to_string())
}

/// Where the page at an address that is no page moved, if one lists it in `redirect_from`
/// (ids that could name no page are never looked up).
fn moved(
    catalog: &dyn Catalog,
    project: &str,
    subproject: &str,
    page: &str,
) -> Result<Option<PagePath>, CatalogError> {
    if ![project, subproject, page].into_iter().all(is_valid_id) {
        return Ok(None);
    }
    catalog.redirect(&PagePath::new(project, subproject, page))
}

/// The health check's database reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Database {
    /// `SELECT 1` succeeded.
    Connected,
    /// A database is configured and `SELECT 1` failed.
    Disconnected,
    /// No database is configured.
    Unknown,
}

/// One store's reading in the health check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreReading {
    /// What backs it: `sqlite`, `postgres` or `key-value`; `none` when nothing is configured.
    pub kind: String,
    /// `ok`, `failed`, or `unconfigured` (a store the deployment chose not to have).
    pub status: String,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StoreReading {
    /// A store that answered.
    pub fn ok(kind: &str) -> Self {
        Self::read(kind, Ok(()))
    }

    /// The reading of a probe of a store of `kind`.
    pub fn read(kind: &str, probe: Result<(), String>) -> Self {
        let (status, error) = match probe {
            Ok(()) => ("ok", None),
            Err(e) => ("failed", Some(e)),
        };
        StoreReading {
            kind: kind.into(),
            status: status.into(),
            error,
        }
    }

    /// A store the deployment does not have, and why.
    pub fn unconfigured(why: &str) -> Self {
        StoreReading {
            kind: "none".into(),
            status: "unconfigured".into(),
            error: Some(why.into()),
        }
    }

    fn failed(&self) -> bool {
        self.status == "failed"
    }
}

/// The stores the app keeps state in, each probed on every health check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stores {
    /// The hub's messages: SQLite `default`, or PostgreSQL at `hub_database_url`.
    pub hub: StoreReading,
    /// The key-value store `default` (the app's first start, the build check's memo).
    pub key_value: StoreReading,
}

/// The health status (spec 2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Health {
    /// `healthy`, or `degraded` when a configured database is unreachable or a store fails.
    pub status: String,
    /// [`SERVICE`].
    pub service: String,
    /// The component's version.
    pub version: String,
    /// Seconds since the app first started, to the millisecond.
    pub uptime: f64,
    /// The database reading.
    pub database: Database,
    /// The `environment` variable.
    pub environment: String,
    /// Now, ISO 8601 UTC with milliseconds.
    pub timestamp: String,
    /// Every store, probed (beyond the interface's fields).
    pub stores: Stores,
}

impl Health {
    /// Builds the status from the readings; `started` is the app's first start.
    pub fn new(
        version: &str,
        started: DateTime<Utc>,
        database: Database,
        stores: Stores,
        environment: &str,
        now: DateTime<Utc>,
    ) -> Health {
        let uptime_ms = (now - started).num_milliseconds().max(0);
        let failing = stores.hub.failed() || stores.key_value.failed();
        Health {
            status: if database == Database::Disconnected || failing {
                "degraded"
            } else {
                "healthy"
            }
            .into(),
            service: SERVICE.into(),
            version: version.into(),
            uptime: uptime_ms as f64 / 1000.0,
            database,
            environment: environment.into(),
            timestamp: iso8601(now),
            stores,
        }
    }
}

/// The `/api/health` response (always 200; `HEAD` gets no body).
pub fn health_response(health: &Health, method: &str) -> Response {
    let body = match serde_json::to_vec(health) {
        Ok(b) => b,
        Err(e) => return Response::json_error(500, &e.to_string()),
    };
    strip(
        Response::new(200, JSON, body).with_header("cache-control", "no-store"),
        method.eq_ignore_ascii_case("HEAD"),
    )
}
