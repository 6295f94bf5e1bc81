//! `/mcp`: dochub's MCP server over the Streamable HTTP transport, as a plain function from a
//! request to a response. The tools and the protocol are `dochub_mcp`'s, the same that
//! `dochub mcp` serves on stdio; this module checks who is calling and answers the docs tools
//! from the catalog ([`agents`] for `read_doc`, `query_docs` and `search_docs`).
//!
//! Each request stands alone: nothing is kept between requests, so any instance answers any
//! request. The checks, in order:
//!
//! 1. `POST` only (`GET` would open a stream this server does not offer): 405 with `Allow`.
//! 2. An `Origin` other than the app's own (the scheme and authority of the request's URL):
//!    403, so that a page on another site cannot drive a local server (DNS rebinding).
//! 3. An `MCP-Protocol-Version` this server does not speak: 400.
//! 4. Who is calling. In production, the machine whose hub token is presented
//!    (`Authorization: Bearer`, `hub_tokens`); none or a wrong one: 401 with
//!    `WWW-Authenticate: Bearer`; a `machine` query parameter naming another machine: 403.
//!    In development, the machine the `machine` query parameter names; none: 400.
//! 5. A body over [`MAX_BODY`]: 413 with a JSON-RPC error.
//!
//! Tools: the docs tools, answered from the catalog, and, when the component reaches the hub
//! ([`HubApi`]), the hub's tools as the calling machine. A session id
//! (`Mcp-Session-Id`) is issued at `initialize` and kept by nothing: it only keys the sends
//! of its requests, so that a retried request is stored once.

use serde_json::{Value, json};

use dochub_content::{Catalog, CatalogError, ManifestName, PagePath, is_valid_id};
pub use dochub_http::Body;
use dochub_http::{Incoming, JSON, Response, iso8601, query_param};
use dochub_hub::MachineName;
use dochub_hub::auth::{Access, HubAuth};
use dochub_index::Source;
use dochub_mcp::rpc::{self, Exchange, RpcError, Server, ToolOutput, code};
use dochub_mcp::{
    DEFAULT_QUERY_TOKENS, DEFAULT_SEARCH_LIMIT, Family, ListDocsArgs, NoArgs, QueryDocsArgs,
    RESOURCE_PREFIX, ReadDocArgs, SearchArgs, arguments,
};

use crate::agents::{self, Ranking, ReadRequest, Scope, Versions};

mod hub;

pub use hub::HubApi;
use hub::{HubTools, json_output};

/// The largest request body read: a JSON-RPC message of a docs tool is a few hundred bytes.
pub const MAX_BODY: usize = 1024 * 1024;

/// Resources listed in one page of `resources/list`.
pub const RESOURCES_PER_PAGE: usize = 1000;

/// `WWW-Authenticate` of a 401 from `/mcp`.
pub const CHALLENGE: &str = "Bearer realm=\"dochub mcp\"";

/// What `/mcp` reads once per request.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// Where the docs come from.
    pub source: Source,
    /// The hub's tokens, each bound to a machine: who is calling, in production.
    pub auth: HubAuth,
}

fn rpc_error(status: u16, code: i64, message: &str) -> Response {
    Response::new(
        status,
        JSON,
        rpc::refusal(code, message).to_string().into_bytes(),
    )
}

/// The checks of the request's head (1 to 4 of the module docs): the calling machine, or the
/// response that refuses the request. Made before the body is read.
pub fn admit(config: &McpConfig, incoming: &Incoming) -> Result<Caller, Response> {
    if incoming.method != "POST" {
        return Err(Response::json_error(
            405,
            "Method not allowed: POST JSON-RPC messages to /mcp (this server offers no stream to GET)",
        )
        .with_header("allow", "POST"));
    }
    if let Some(origin) = incoming.header("origin")
        && !same_origin(origin, incoming)
    {
        return Err(Response::json_error(
            403,
            "Forbidden: the request's Origin is not this server's own",
        ));
    }
    if let Some(version) = incoming.header("mcp-protocol-version")
        && !rpc::PROTOCOL_VERSIONS.contains(&version.trim())
    {
        let message = format!(
            "Unsupported MCP-Protocol-Version `{version}`; this server speaks {}",
            rpc::PROTOCOL_VERSIONS.join(", ")
        );
        return Err(rpc_error(400, code::INVALID_REQUEST, &message));
    }
    let named = query_param(&incoming.query, "machine").filter(|m| !m.is_empty());
    let named = match named.map(|m| MachineName::parse(&m, "machine")) {
        None => None,
        Some(Ok(name)) => Some(name),
        Some(Err(e)) => return Err(Response::json_error(400, &e.to_string())),
    };
    let machine = match config.auth.access(incoming.header("authorization")) {
        Access::Denied => Err(Response::json_error(
            401,
            "Authentication required: send Authorization: Bearer <the machine's hub token>",
        )
        .with_header("www-authenticate", CHALLENGE)),
        Access::Machine(machine) => match named {
            Some(other) if other != machine => Err(Response::json_error(
                403,
                &format!("this token is `{machine}`'s, not `{other}`'s"),
            )),
            _ => Ok(machine),
        },
        Access::Open => named.ok_or_else(|| {
            Response::json_error(
                400,
                "Say which machine is calling: /mcp?machine=<name> (letters, digits, `.`, `_`, `-`)",
            )
        }),
    }?;
    Ok(Caller {
        machine,
        authorization: incoming.header("authorization").map(str::to_owned),
        session: incoming
            .header("mcp-session-id")
            .filter(|id| is_session_id(id))
            .map(str::to_owned),
    })
}

/// Who is calling `/mcp`, as [`admit`] found.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The calling machine.
    pub machine: MachineName,
    /// Its `Authorization`, which the hub's tools pass on.
    authorization: Option<String>,
    /// The session it names, if any.
    session: Option<String>,
}

/// A session id as the transport allows it: 1 to 128 visible ASCII characters.
fn is_session_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Whether `origin` is the scheme and authority of the request's own URL.
fn same_origin(origin: &str, incoming: &Incoming) -> bool {
    let Some(url) = incoming.header("spin-full-url") else {
        return false;
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    origin
        .trim_end_matches('/')
        .eq_ignore_ascii_case(&format!("{scheme}://{authority}"))
}

/// Answers an admitted request's body (check 5, then the exchange); the hub's tools are
/// served when `hub` reaches the hub.
pub fn respond(
    config: &McpConfig,
    caller: &Caller,
    body: Body,
    hub: Option<&dyn HubApi>,
) -> Response {
    let Body::Bytes(bytes) = body else {
        let message = format!("Request body over {MAX_BODY} bytes");
        return rpc_error(413, code::INVALID_REQUEST, &message);
    };
    let mut server = McpServer {
        source: &config.source,
        caller,
        hub,
        request: None,
        warning: None,
    };
    let exchange = rpc::exchange(&bytes, &mut server);
    let mut res = match exchange {
        Exchange::Answer { status, body } => {
            Response::new(status, JSON, body.to_string().into_bytes())
        }
        Exchange::Accepted => Response::new(202, JSON, Vec::new()),
    };
    let opened = matches!(&server.request, Some((method, _)) if method == "initialize");
    if opened && res.status == 200 && caller.session.is_none() {
        res = res.with_header("mcp-session-id", &new_session_id());
    }
    res.with_warning(server.warning)
}

/// A session id no other session has: 122 random bits.
fn new_session_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The docs tools over the catalog, and the hub's when it is reached.
struct McpServer<'a> {
    source: &'a Source,
    caller: &'a Caller,
    hub: Option<&'a dyn HubApi>,
    /// The request being answered: its method and id.
    request: Option<(String, Value)>,
    /// Why the prebuilt index did not answer, for the log.
    warning: Option<String>,
}

impl McpServer<'_> {
    fn hub_tools(&self) -> Option<HubTools<'_>> {
        Some(HubTools {
            api: self.hub?,
            machine: &self.caller.machine,
            authorization: self.caller.authorization.as_deref(),
        })
    }

    /// The `Idempotency-Key` of a send by the request being answered, when it has a session.
    fn send_key(&self) -> Option<String> {
        let (_, id) = self.request.as_ref()?;
        Some(hub::send_key(self.caller.session.as_deref()?, id))
    }

    fn read<T>(
        &mut self,
        read: impl Fn(&dyn Catalog) -> Result<T, CatalogError>,
    ) -> Result<T, RpcError> {
        match self.source.read(read) {
            Ok((value, warning)) => {
                self.warning = self.warning.take().or(warning);
                Ok(value)
            }
            Err(e) => Err(RpcError::internal(e.to_string())),
        }
    }

    fn query_docs(&mut self, args: QueryDocsArgs) -> Result<ToolOutput, RpcError> {
        let Ok(max_tokens) =
            agents::parse_budget(&args.max_tokens.unwrap_or(DEFAULT_QUERY_TOKENS).to_string())
        else {
            return Ok(ToolOutput::error(format!(
                "`max_tokens` must be from {} to {}",
                agents::MIN_MAX_TOKENS,
                agents::MAX_MAX_TOKENS
            )));
        };
        let scope = Scope {
            project: args.scope.project(),
            versions: Versions::parse(args.scope.version(), Versions::Latest),
        };
        let answer =
            self.read(|catalog| agents::query_docs(catalog, &args.query, &scope, max_tokens))?;
        Ok(match answer {
            Ok(answer) => ToolOutput::ok(answer.text),
            Err(e) => ToolOutput::error(e.to_string()),
        })
    }

    fn search_docs(&mut self, args: SearchArgs) -> Result<ToolOutput, RpcError> {
        let limit = args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT) as usize;
        let scope = Scope {
            project: args.scope.project(),
            versions: Versions::parse(args.scope.version(), Versions::Latest),
        };
        let found = self.read(|catalog| {
            agents::search_ranked(catalog, &args.query, &scope, limit, Ranking::Section)
        })?;
        Ok(match found {
            Ok(found) => json_output(&found),
            Err(e) => ToolOutput::error(e.to_string()),
        })
    }

    fn read_doc(&mut self, args: ReadDocArgs) -> Result<ToolOutput, RpcError> {
        let Some(path) = page_path(&args.path) else {
            return Ok(ToolOutput::error(format!(
                "`{}` is not a page path: write `<project>/<subproject>/<page>` as list_docs, search_docs or query_docs give it",
                args.path
            )));
        };
        let max_tokens = match args.max_tokens {
            None => None,
            Some(n) => match agents::parse_budget(&n.to_string()) {
                Ok(n) => Some(n),
                Err(e) => return Ok(ToolOutput::error(e.to_string())),
            },
        };
        let raw = self.read(|catalog| catalog.raw(&path.project, &path.subproject, &path.page))?;
        let Some(raw) = raw else {
            return Ok(ToolOutput::error(format!(
                "no page `{}`: list_docs and search_docs give the paths",
                args.path
            )));
        };
        let read = ReadRequest {
            anchor: args.anchor.as_deref().filter(|a| !a.is_empty()),
            max_tokens,
            offset: usize::try_from(args.offset.unwrap_or(0)).unwrap_or(usize::MAX),
        };
        Ok(match agents::read_page(&raw, &args.path, &read) {
            Ok(answer) => ToolOutput::ok(answer.text),
            Err(e) => ToolOutput::error(e.to_string()),
        })
    }

    fn list_docs(&mut self, args: ListDocsArgs) -> Result<ToolOutput, RpcError> {
        let path = args.path.unwrap_or_default();
        let parts: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        let name = match parts.as_slice() {
            [] => ManifestName::Master,
            [p] => ManifestName::Project(p),
            [p, s] => ManifestName::Subproject(p, s),
            _ => {
                return Ok(ToolOutput::error(format!(
                    "`{path}` is not a project or a subproject: give none, `<project>` or `<project>/<subproject>`"
                )));
            }
        };
        let now = iso8601(chrono::Utc::now());
        let manifest = self.read(|catalog| catalog.manifest(name, &now))?;
        Ok(match manifest {
            Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(value) => json_output(&value),
                Err(e) => ToolOutput::error(format!("cannot read the manifest: {e}")),
            },
            None => ToolOutput::error(format!("no project or subproject `{path}`")),
        })
    }
}

/// `<project>/<subproject>/<page>`, each a valid id.
fn page_path(path: &str) -> Option<PagePath> {
    let mut parts = path.trim_matches('/').split('/');
    let (Some(p), Some(s), Some(page), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    [p, s, page]
        .into_iter()
        .all(is_valid_id)
        .then(|| PagePath::new(p, s, page))
}

impl Server for McpServer<'_> {
    fn instructions(&self) -> String {
        dochub_mcp::instructions(self.caller.machine.as_str(), self.hub.is_some())
    }

    fn tools(&self) -> Vec<Value> {
        dochub_mcp::tools()
            .iter()
            .filter(|t| t.family == Family::Docs || self.hub.is_some())
            .map(|t| t.to_json())
            .collect()
    }

    fn request(&mut self, method: &str, id: &Value) {
        self.request = Some((method.to_owned(), id.clone()));
    }

    fn call_tool(&mut self, name: &str, args: Option<&Value>) -> Result<ToolOutput, RpcError> {
        let invalid = RpcError::invalid_params;
        let unknown = || {
            invalid(format!(
                "Unknown tool `{name}`; tools/list names the tools served here"
            ))
        };
        match name {
            "query_docs" => return self.query_docs(arguments(args).map_err(invalid)?),
            "search_docs" => return self.search_docs(arguments(args).map_err(invalid)?),
            "read_doc" => return self.read_doc(arguments(args).map_err(invalid)?),
            "list_docs" => return self.list_docs(arguments(args).map_err(invalid)?),
            _ => {}
        }
        let key = self.send_key();
        let hub = self.hub_tools().ok_or_else(unknown)?;
        Ok(match name {
            "send_message" => hub.send_message(arguments(args).map_err(invalid)?, key.as_deref()),
            "reply_message" => hub.reply_message(arguments(args).map_err(invalid)?, key.as_deref()),
            "read_thread" => hub.read_thread(arguments(args).map_err(invalid)?),
            "search_messages" => hub.search_messages(arguments(args).map_err(invalid)?),
            "read_inbox" => hub.read_inbox(arguments(args).map_err(invalid)?),
            "wait_for_messages" => hub.wait_for_messages(arguments(args).map_err(invalid)?),
            "list_machines" => {
                arguments::<NoArgs>(args).map_err(invalid)?;
                hub.list_machines()
            }
            _ => return Err(unknown()),
        })
    }

    fn list_resources(
        &mut self,
        cursor: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>), RpcError> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| RpcError::invalid_params(format!("unknown cursor `{c}`")))?,
        };
        let pages = self.read(|catalog| {
            let mut pages = Vec::new();
            for project in catalog.outline()? {
                for (sub, _) in &project.subprojects {
                    for page in catalog.pages(&project.id, sub)? {
                        let path = format!("{}/{sub}/{}", project.id, page.id);
                        pages.push((path, page.title.clone(), page.summary.clone()));
                    }
                }
            }
            Ok(pages)
        })?;
        let end = (start + RESOURCES_PER_PAGE).min(pages.len());
        let listed = pages
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|(path, title, summary)| {
                let mut resource = json!({
                    "uri": format!("{RESOURCE_PREFIX}{path}"),
                    "name": path,
                    "title": title,
                    "mimeType": "text/markdown",
                });
                if !summary.is_empty() {
                    resource["description"] = json!(summary);
                }
                resource
            })
            .collect();
        Ok((listed, (end < pages.len()).then(|| end.to_string())))
    }

    fn read_resource(&mut self, uri: &str) -> Result<Vec<Value>, RpcError> {
        let not_found = || {
            RpcError::resource_not_found(format!(
                "no resource `{uri}`: docs pages are {RESOURCE_PREFIX}<project>/<subproject>/<page>"
            ))
        };
        let path = uri
            .strip_prefix(RESOURCE_PREFIX)
            .and_then(page_path)
            .ok_or_else(not_found)?;
        let raw = self.read(|catalog| catalog.raw(&path.project, &path.subproject, &path.page))?;
        let raw = raw.ok_or_else(not_found)?;
        Ok(vec![json!({
            "uri": uri,
            "mimeType": "text/markdown",
            "text": String::from_utf8_lossy(&raw),
        })])
    }
}
