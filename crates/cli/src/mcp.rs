//! `dochub mcp`: an MCP server on stdio (the official Rust SDK, `rmcp`) that turns an agent's tool
//! calls into hub and docs requests, directly or through one SSH connection.
//!
//! Tools: `send_message`, `reply_message`, `read_inbox`, `wait_for_messages`, `read_thread`,
//! `search_messages`, `list_machines`, `list_docs`, `read_doc`, `search_docs`. The machine's inbox is a resource too, `dochub://inbox/<machine>`
//! (its unread messages, read without acknowledging): a client that subscribes to it
//! (`resources/subscribe`) gets `notifications/resources/updated` whenever messages arrive while
//! the server runs, from the hub's event stream of that inbox.
//! Every docs page is also a resource, `dochub://docs/<project>/<subproject>/<page>`. The machine
//! is fixed by `--machine`: an agent can neither send as nor read the inbox of another machine.
//! A failure is a tool error carrying the reason; the server keeps serving. The stdio transport
//! is our own ([`stdio`]): it answers every request, malformed ones with JSON-RPC's error codes,
//! and reads no further while [`stdio::MAX_IN_FLIGHT`] requests wait for their answers.
//!
//! **`read_inbox` and `wait_for_messages` lose nothing.** It reads without acknowledging, returns the messages, and
//! acknowledges them (`POST /api/inbox/<machine>/ack {"through": <last id>}`) at the start of the
//! *next* `read_inbox` call, and only if the answer was written to stdout in full (a call the
//! client cancelled is answered by nobody, so its messages stay unread). By then the client has
//! provably received the answer and come back for more; if it dies first, the messages are
//! returned again in the next session: at least once, never zero times. A hub without the
//! acknowledgement route (404/405 on a probe acknowledging nothing) is read with `ack=true`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, InitializeRequestParams, InitializeResult,
    JsonRpcMessage, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, RequestId, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::client::{Ack, Client, ClientError, MailboxRead, Outgoing};
use dochub_hub::Importance;

mod stdio;

/// The URI prefix of docs pages as resources.
pub const RESOURCE_PREFIX: &str = "dochub://docs/";

/// The URI prefix of the inbox resource.
pub const INBOX_PREFIX: &str = "dochub://inbox/";

/// The longest pause before a subscription's event stream is opened again after a failure.
const FOLLOW_BACKOFF: std::time::Duration = std::time::Duration::from_secs(30);

/// Messages `read_inbox` returns when the agent does not say.
const DEFAULT_LIMIT: u32 = 20;

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(client: Client, machine: String) -> anyhow::Result<()> {
    let book = Arc::new(AckBook::default());
    let server = DochubMcp::new(client, machine, book.clone());
    let transport = Delivery {
        inner: stdio::StdioTransport::new(tokio::io::stdin(), tokio::io::stdout()),
        book,
    };
    let running = server.serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

/// The `read_inbox` answers waiting to be acknowledged.
#[derive(Default)]
struct AckBook {
    state: Mutex<AckState>,
}

#[derive(Default)]
struct AckState {
    /// Answers computed but not yet written: request id → last message id.
    answered: HashMap<RequestId, u64>,
    /// The highest last id of answers written to the client.
    delivered: Option<u64>,
}

impl AckBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, AckState> {
        // A panic elsewhere cannot leave the map half-updated: every update is one statement.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn answered(&self, id: RequestId, through: u64) {
        self.lock().answered.insert(id, through);
    }

    fn written(&self, id: &RequestId) {
        let mut state = self.lock();
        if let Some(through) = state.answered.remove(id) {
            state.delivered = Some(state.delivered.map_or(through, |d| d.max(through)));
        }
    }

    fn take_delivered(&self) -> Option<u64> {
        self.lock().delivered.take()
    }

    fn restore(&self, through: u64) {
        let mut state = self.lock();
        state.delivered = Some(state.delivered.map_or(through, |d| d.max(through)));
    }
}

/// The stdio transport, telling the [`AckBook`] when an answer has been written and flushed.
struct Delivery<T> {
    inner: T,
    book: Arc<AckBook>,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Delivery<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let id = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            _ => None,
        };
        let sent = self.inner.send(item);
        let book = self.book.clone();
        async move {
            sent.await?;
            if let Some(id) = id {
                book.written(&id);
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// How this hub acknowledges reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckMode {
    /// Read, hand over, then `POST .../ack`.
    TwoStep,
    /// The hub has no acknowledgement route: `ack=true` on the read.
    OnRead,
}

/// The MCP server.
#[derive(Clone)]
pub struct DochubMcp {
    client: Client,
    machine: String,
    book: Arc<AckBook>,
    mode: Arc<tokio::sync::Mutex<Option<AckMode>>>,
    /// The subscription to the inbox resource, while there is one.
    follower: Arc<Mutex<Option<tokio::task::AbortHandle>>>,
    /// Whether `initialize` has been answered: a session has one.
    initialized: Arc<AtomicBool>,
    #[allow(dead_code)] // read by the code `#[tool_handler]` generates
    tool_router: ToolRouter<Self>,
}

/// How much a message matters, as tools take it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Can wait.
    Low,
    /// The default.
    Normal,
    /// Read before the normal ones.
    High,
    /// Read now.
    Urgent,
}

impl From<Level> for Importance {
    fn from(level: Level) -> Self {
        match level {
            Level::Low => Importance::Low,
            Level::Normal => Importance::Normal,
            Level::High => Importance::High,
            Level::Urgent => Importance::Urgent,
        }
    }
}

/// `send_message`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendArgs {
    /// The receiving machine's name (letters, digits, `.`, `_`, `-`), or `all` to broadcast to
    /// every registered machine. `list_machines` shows the names.
    pub to: String,
    /// The message text (UTF-8, at most 64 KiB).
    pub body: String,
    /// What it is about: one line of at most 200 characters, shown before the body.
    #[serde(default)]
    #[schemars(with = "String")]
    pub subject: Option<String>,
    /// How much it matters (default normal): urgent and high are what an agent filtering its
    /// inbox by importance sees.
    #[serde(default)]
    #[schemars(with = "Level")]
    pub importance: Option<Level>,
    /// The id of a message this machine sent or received that this one answers: it joins that
    /// message's thread. reply_message does this and picks the recipient for you.
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1))]
    pub reply_to: Option<u64>,
}

/// `reply_message`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReplyArgs {
    /// The id of the message to answer (one this machine received or sent).
    #[schemars(range(min = 1))]
    pub message_id: u64,
    /// The reply's text (UTF-8, at most 64 KiB).
    pub body: String,
}

/// `read_thread`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ThreadArgs {
    /// The thread: the `thread` field of any of its messages (the id of its first message).
    #[schemars(range(min = 1))]
    pub thread: u64,
}

/// `search_messages`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchMessagesArgs {
    /// Words to look for in subjects and bodies: every word must occur, in any order and case.
    pub query: String,
    /// How many messages to return at most, 1 to 200 (default 20), newest first.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 200), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<u32>,
}

// Optional arguments are absent when not given: their schemas say `integer` or `string`, not
// `["integer", "null"]`, which clients mapping tools onto a single-`type` dialect reject. A
// `null` sent anyway still reads as absent.

/// `read_inbox`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// How many messages to return at most, 1 to 500 (default 20).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 500), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<u32>,
    /// Only messages of this importance or above (default: all); the others stay unread.
    #[serde(default)]
    #[schemars(with = "Level")]
    pub importance: Option<Level>,
}

/// `wait_for_messages`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitArgs {
    /// How long to wait for a message when the inbox is empty, in seconds: 1 to 25 (default
    /// 20), under the time clients give a tool call.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 25), extend("default" = DEFAULT_WAIT_SECONDS))]
    pub timeout_seconds: Option<u32>,
    /// How many messages to return at most, 1 to 500 (default 20).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 500), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<u32>,
    /// Wake only for messages of this importance or above (default: any); the others stay
    /// unread.
    #[serde(default)]
    #[schemars(with = "Level")]
    pub importance: Option<Level>,
}

/// How long `wait_for_messages` waits when the agent does not say.
const DEFAULT_WAIT_SECONDS: u32 = 20;

/// The longest `wait_for_messages` waits: the hub's default `hub_max_wait`, and under the 30 to
/// 60 s after which common MCP clients give up on a tool call.
const MAX_WAIT_SECONDS: u32 = 25;

/// `list_docs`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListDocsArgs {
    /// Empty or absent for all projects, `<project>` for its subprojects, or
    /// `<project>/<subproject>` for its pages.
    #[serde(default)]
    #[schemars(with = "String", extend("default" = ""))]
    pub path: Option<String>,
}

/// `read_doc`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadDocArgs {
    /// The page, `<project>/<subproject>/<page>`, as `list_docs` and `search_docs` give it.
    pub path: String,
}

/// `search_docs`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Text to look for, at least 2 characters; case-insensitive substring match.
    pub query: String,
}

#[tool_router]
impl DochubMcp {
    fn new(client: Client, machine: String, book: Arc<AckBook>) -> Self {
        DochubMcp {
            client,
            machine,
            book,
            mode: Arc::new(tokio::sync::Mutex::new(None)),
            follower: Arc::new(Mutex::new(None)),
            initialized: Arc::new(AtomicBool::new(false)),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Send a text message from this machine to another machine (or `all`) through the dochub message hub, optionally with a subject, an importance (low, normal, high, urgent) and reply_to (the id of a message it answers). Returns the stored message with its id and thread. The sender is always this machine. To answer a message, reply_message is simpler."
    )]
    async fn send_message(
        &self,
        Parameters(args): Parameters<SendArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let outgoing = Outgoing {
            from: &self.machine,
            to: &args.to,
            body: &args.body,
            subject: args.subject.as_deref(),
            importance: args.importance.map(Importance::from),
            reply_to: args.reply_to,
        };
        Ok(match self.send_once(&outgoing).await {
            Ok(message) => json_result(&message),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Answer a message this machine received (or sent): the reply goes to the other side of that message, joins its thread, and keeps its subject (as \"Re: ...\"). Returns the stored reply. Use it rather than send_message when answering."
    )]
    async fn reply_message(
        &self,
        Parameters(args): Parameters<ReplyArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let original = match self.client.message(&self.machine, args.message_id).await {
            Ok(Some(found)) => found.message,
            Ok(None) => {
                return Ok(error_text(format!(
                    "message {} is not in the mailbox of {}: reply to a message it sent or received (read_inbox, read_thread and search_messages show their ids)",
                    args.message_id, self.machine
                )));
            }
            Err(e) => return Ok(tool_error(e)),
        };
        let to = if original.from == self.machine {
            original.to.as_str()
        } else {
            original.from.as_str()
        };
        let subject = original.subject.as_deref().map(|s| {
            if s.starts_with("Re: ") {
                s.to_owned()
            } else {
                // Cut to the hub's 200 characters with the prefix.
                format!("Re: {}", s.chars().take(196).collect::<String>())
            }
        });
        let outgoing = Outgoing {
            from: &self.machine,
            to,
            body: &args.body,
            subject: subject.as_deref(),
            importance: None,
            reply_to: Some(original.id),
        };
        Ok(match self.send_once(&outgoing).await {
            Ok(message) => json_result(&message),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Read a whole conversation: every message of a thread in this machine's mailbox (sent and received, read or not), oldest first, as JSON {machine, messages}. The thread is the `thread` field of any of its messages. Reading acknowledges nothing."
    )]
    async fn read_thread(
        &self,
        Parameters(args): Parameters<ThreadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let read = MailboxRead {
            limit: Some(dochub_hub::MAX_MAILBOX_LIMIT as u32),
            thread: Some(args.thread),
            ..MailboxRead::default()
        };
        Ok(match self.client.mailbox(&self.machine, &read).await {
            Ok(mut thread) => {
                thread.messages.reverse();
                json_result(&thread)
            }
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Search this machine's mailbox (messages it sent or received, read or not, while the hub keeps them) for messages whose subject or body holds every word of the query, in any order and case. Returns JSON {machine, messages}, newest first. Use it to find what was agreed earlier; read a hit's conversation with read_thread."
    )]
    async fn search_messages(
        &self,
        Parameters(args): Parameters<SearchMessagesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=200).contains(&limit) {
            return Ok(error_text(format!(
                "`limit` must be from 1 to 200, not {limit}"
            )));
        }
        let read = MailboxRead {
            limit: Some(limit),
            search: Some(&args.query),
            ..MailboxRead::default()
        };
        Ok(match self.client.mailbox(&self.machine, &read).await {
            Ok(found) => json_result(&found),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Read this machine's unread messages from the dochub hub, oldest first, as JSON {machine, messages: [{id, from, to, body, timestamp, read}]}. The messages returned are marked read when you call read_inbox again, so call it again to get the next ones; an empty list means the inbox is empty."
    )]
    async fn read_inbox(
        &self,
        Parameters(args): Parameters<ReadArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=500).contains(&limit) {
            return Ok(error_text(format!(
                "`limit` must be from 1 to 500, not {limit}"
            )));
        }
        let importance = args.importance.map(Importance::from);
        Ok(
            match self
                .read_inbox_inner(limit, importance, context.id, None)
                .await
            {
                Ok(inbox) => json_result(&inbox),
                Err(e) => tool_error(e),
            },
        )
    }

    #[tool(
        description = "Wait until this machine has unread messages in the dochub hub, then return them as read_inbox does (oldest first, JSON {machine, messages}); returns an empty list if none arrives within timeout_seconds (1 to 25, default 20). Use it instead of calling read_inbox in a loop. The messages returned are marked read when you call read_inbox or wait_for_messages again."
    )]
    async fn wait_for_messages(
        &self,
        Parameters(args): Parameters<WaitArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let seconds = args.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        if !(1..=500).contains(&limit) {
            return Ok(error_text(format!(
                "`limit` must be from 1 to 500, not {limit}"
            )));
        }
        if !(1..=MAX_WAIT_SECONDS).contains(&seconds) {
            return Ok(error_text(format!(
                "`timeout_seconds` must be from 1 to {MAX_WAIT_SECONDS}, not {seconds}"
            )));
        }
        let wait = std::time::Duration::from_secs(seconds.into());
        Ok(
            match self
                .read_inbox_inner(
                    limit,
                    args.importance.map(Importance::from),
                    context.id,
                    Some(wait),
                )
                .await
            {
                Ok(inbox) => json_result(&inbox),
                Err(e) => tool_error(e),
            },
        )
    }

    #[tool(
        description = "List the machines registered with the dochub hub and when each was last seen, as JSON [{name, last_seen}]. Use the names as `to` in send_message."
    )]
    async fn list_machines(&self) -> Result<CallToolResult, ErrorData> {
        Ok(match self.client.machines().await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Browse the documentation: no path lists the projects; `<project>` lists its subprojects; `<project>/<subproject>` lists its pages with title, summary and references. Returns the manifest JSON. Read a page with read_doc."
    )]
    async fn list_docs(
        &self,
        Parameters(args): Parameters<ListDocsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let path = args.path.unwrap_or_default();
        Ok(match self.client.manifest(&path).await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Read one documentation page as markdown (with its YAML frontmatter). The path is `<project>/<subproject>/<page>` as list_docs or search_docs give it."
    )]
    async fn read_doc(
        &self,
        Parameters(args): Parameters<ReadDocArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.client.raw(&args.path).await {
            Ok(bytes) => CallToolResult::success(vec![ContentBlock::text(
                String::from_utf8_lossy(&bytes).into_owned(),
            )]),
            Err(e) => tool_error(e),
        })
    }

    #[tool(
        description = "Search all documentation pages (case-insensitive, at least 2 characters; the exact phrase first, then pages holding every word in any order). Returns JSON {query, results: [{path, title, excerpt, section?, anchor?}]}, best first, at most 50; `section` is the heading the match lies under and `anchor` its id on the page (both absent before the first heading); read a hit with read_doc."
    )]
    async fn search_docs(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.client.search(&args.query).await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }
}

impl DochubMcp {
    /// Acknowledges what the last answer delivered, then reads (waiting up to `wait` for a
    /// message); the answer's messages are acknowledged by the next call, once delivered.
    async fn read_inbox_inner(
        &self,
        limit: u32,
        importance: Option<Importance>,
        id: RequestId,
        wait: Option<std::time::Duration>,
    ) -> Result<dochub_hub::Inbox, ClientError> {
        let mode = self.ack_mode().await?;
        if mode == AckMode::OnRead {
            return self
                .client
                .inbox_at_least(&self.machine, importance, limit, true, wait)
                .await;
        }
        if let Some(through) = self.book.take_delivered() {
            let acked = self.client.ack(&self.machine, through).await;
            if !matches!(acked, Ok(Ack::Acknowledged(_))) {
                self.book.restore(through);
                let why = match acked {
                    Err(e) => e.to_string(),
                    _ => "the hub no longer has the acknowledgement route".into(),
                };
                return Err(ClientError::Protocol {
                    path: format!("/api/inbox/{}/ack", self.machine),
                    reason: format!(
                        "cannot mark the messages returned last time read ({why}); nothing was lost: call read_inbox again"
                    ),
                });
            }
        }
        let inbox = self
            .client
            .inbox_at_least(&self.machine, importance, limit, false, wait)
            .await?;
        if let Some(last) = inbox.messages.iter().map(|m| m.message.id).max() {
            self.book.answered(id, last);
        }
        Ok(inbox)
    }

    /// Sends with one idempotency key per logical send: the client's retry after a dropped
    /// connection reuses it, so a retried send is stored once.
    async fn send_once(&self, message: &Outgoing<'_>) -> Result<serde_json::Value, ClientError> {
        let key = format!("dochub-mcp-{}", uuid::Uuid::new_v4());
        self.client.send(message, &key).await
    }

    /// Probes the hub once, on the first read.
    async fn ack_mode(&self) -> Result<AckMode, ClientError> {
        let mut mode = self.mode.lock().await;
        if let Some(m) = *mode {
            return Ok(m);
        }
        let probed = if self.client.supports_ack(&self.machine).await? {
            AckMode::TwoStep
        } else {
            AckMode::OnRead
        };
        *mode = Some(probed);
        Ok(probed)
    }

    fn inbox_uri(&self) -> String {
        format!("{INBOX_PREFIX}{}", self.machine)
    }

    async fn resources(&self) -> Result<Vec<Resource>, ClientError> {
        let mut out = vec![
            Resource::new(self.inbox_uri(), format!("inbox of {}", self.machine))
                .with_title(format!("Unread messages of {}", self.machine))
                .with_description(
                    "This machine's unread messages, oldest first (reading does not mark them \
                     read). Subscribe to hear when messages arrive.",
                )
                .with_mime_type("application/json"),
        ];
        let master = self.client.manifest("").await?;
        for p in items(&master, "projects") {
            let Some(pid) = p.get("id").and_then(Value::as_str) else {
                continue;
            };
            let project = self.client.manifest(pid).await?;
            for s in items(&project, "subprojects") {
                let Some(sid) = s.get("id").and_then(Value::as_str) else {
                    continue;
                };
                let sub = self.client.manifest(&format!("{pid}/{sid}")).await?;
                for d in items(&sub, "documents") {
                    let Some(doc) = d.get("id").and_then(Value::as_str) else {
                        continue;
                    };
                    let path = format!("{pid}/{sid}/{doc}");
                    let title = d.get("title").and_then(Value::as_str).unwrap_or(doc);
                    let mut r = Resource::new(format!("{RESOURCE_PREFIX}{path}"), path.clone())
                        .with_title(title)
                        .with_mime_type("text/markdown");
                    if let Some(summary) = d.get("summary").and_then(Value::as_str)
                        && !summary.is_empty()
                    {
                        r = r.with_description(summary);
                    }
                    out.push(r);
                }
            }
        }
        Ok(out)
    }
}

#[tool_handler]
impl ServerHandler for DochubMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("dochub", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "dochub: documentation and a message hub. You are machine `{}`: send_message sends as it, read_inbox reads its inbox, wait_for_messages waits for the next messages. Browse docs with list_docs, search_docs and read_doc, or read pages as resources ({RESOURCE_PREFIX}<project>/<subproject>/<page>).",
            self.machine
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.initialized.swap(true, Ordering::SeqCst) {
            return Err(ErrorData::invalid_request(
                "this session is already initialized: `initialize` is sent once, first",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.resources()
            .await
            .map(ListResourcesResult::with_all_items)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    // `resources/subscribe` is what clients of the 2025-11-25 protocol (the one `initialize`
    // negotiates) send; rmcp marks it legacy only for the handshake-free 2026 protocol.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if request.uri != self.inbox_uri() {
            return Err(ErrorData::invalid_params(
                format!(
                    "only this machine's inbox, {}, can be subscribed to; docs pages do not \
                     change while the server runs",
                    self.inbox_uri()
                ),
                None,
            ));
        }
        let mut follower = self.follower.lock().unwrap_or_else(|e| e.into_inner());
        if follower.as_ref().is_none_or(|f| f.is_finished()) {
            let task = tokio::spawn(follow(
                self.client.clone(),
                self.machine.clone(),
                request.uri,
                context.peer.clone(),
            ));
            *follower = Some(task.abort_handle());
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(task) = self
            .follower
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri == self.inbox_uri() {
            return match self.client.inbox(&self.machine, 500, false, None).await {
                Ok(inbox) => {
                    let text = serde_json::to_string_pretty(&inbox)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    let contents = ResourceContents::text(text, request.uri.clone())
                        .with_mime_type("application/json");
                    Ok(ReadResourceResult::new(vec![contents]).into())
                }
                Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
            };
        }
        let Some(path) = request.uri.strip_prefix(RESOURCE_PREFIX) else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "`{}` is not a dochub resource: URIs start with {RESOURCE_PREFIX}, or are {}",
                    request.uri,
                    self.inbox_uri()
                ),
                None,
            ));
        };
        match self.client.raw(path).await {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let contents = ResourceContents::text(text, request.uri.clone())
                    .with_mime_type("text/markdown");
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(e @ (ClientError::NotFound { .. } | ClientError::BadPath(_))) => {
                Err(ErrorData::resource_not_found(e.to_string(), None))
            }
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }
}

/// Follows the inbox's event stream and tells the client `uri` was updated whenever messages
/// arrive (once per batch that arrives together). The stream starts with the unread messages,
/// so a client that read the inbox and then subscribed hears of one that came in between. A stream that ends (the hub ends each after
/// `hub_max_wait`) or fails is opened again after the last id seen, after a pause that doubles
/// up to 30 s while the hub cannot be reached. Ends when the client is gone.
async fn follow(client: Client, machine: String, uri: String, peer: Peer<RoleServer>) {
    let mut after = 0;
    let mut pause = std::time::Duration::from_secs(1);
    loop {
        let mut stream = match client.events(&machine, after).await {
            Ok(stream) => stream,
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(FOLLOW_BACKOFF);
                continue;
            }
        };
        pause = std::time::Duration::from_secs(1);
        let mut pending = String::new();
        while let Ok(Some(chunk)) = stream.chunk().await {
            pending.push_str(&String::from_utf8_lossy(&chunk));
            let mut newest = None;
            while let Some(end) = pending.find("\n\n") {
                let event: String = pending.drain(..end + 2).collect();
                newest = event
                    .lines()
                    .find_map(|line| line.strip_prefix("id: ")?.trim().parse::<u64>().ok())
                    .or(newest);
            }
            if let Some(id) = newest.filter(|&id| id > after) {
                after = id;
                let updated = ResourceUpdatedNotificationParam::new(uri.clone());
                if peer.notify_resource_updated(updated).await.is_err() {
                    return;
                }
            }
        }
    }
}

fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn json_result(v: &impl serde::Serialize) -> CallToolResult {
    match serde_json::to_string_pretty(v) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => error_text(format!("cannot encode the answer: {e}")),
    }
}

fn tool_error(e: ClientError) -> CallToolResult {
    error_text(e.to_string())
}

fn error_text(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
