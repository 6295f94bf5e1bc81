//! `dochub mcp`: an MCP server on stdio (the official Rust SDK, `rmcp`) that turns an agent's tool
//! calls into hub and docs requests, directly or through one SSH connection.
//!
//! The tools, their descriptions and schemas are `dochub_mcp`'s, the same the app serves at
//! `/mcp`: the hub's (`send_message`, `reply_message`, `read_inbox`, `wait_for_messages`,
//! `read_thread`, `search_messages`, `list_machines`) and the docs' (`query_docs`,
//! `search_docs`, `read_doc`, `list_docs`, each a request to the API). The machine's inbox is a
//! resource too, `dochub://inbox/<machine>`
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
//! acknowledges them (`POST /api/inbox/<machine>/ack {"ids": [...]}`, by id: a read filtered
//! by importance passes over older messages) at the start of the *next* read, and only if the
//! answer was written to stdout in full (a call the client cancelled is answered by nobody, so
//! its messages stay unread). The ids an agent passes in `ack` are acknowledged there too. By then the client has
//! provably received the answer and come back for more; if it dies first, the messages are
//! returned again in the next session: at least once, never zero times. A hub without the
//! acknowledgement route (404/405 on a probe acknowledging nothing) is read with `ack=true`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, JsonRpcMessage, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, RequestId, Resource, ResourceContents, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::Value;

use crate::client::{Ack, Client, ClientError, MailboxRead, Outgoing};
use dochub_hub::Importance;
use dochub_mcp::{
    DEFAULT_QUERY_TOKENS, DEFAULT_SEARCH_LIMIT, InboxRead, ListDocsArgs, NoArgs, QueryDocsArgs,
    ReadDocArgs, ReplyArgs, SearchArgs, SearchMessagesArgs, SendArgs, ThreadArgs,
};
pub use dochub_mcp::{INBOX_PREFIX, RESOURCE_PREFIX};

mod stdio;

/// The longest pause before a subscription's event stream is opened again after a failure.
const FOLLOW_BACKOFF: std::time::Duration = std::time::Duration::from_secs(30);

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
    /// Answers computed but not yet written: request id → the ids of their messages.
    answered: HashMap<RequestId, Vec<u64>>,
    /// The ids of messages in answers written to the client. By id, not through the highest:
    /// a read filtered by importance passes over older messages, which must stay unread.
    delivered: Vec<u64>,
}

impl AckBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, AckState> {
        // A panic elsewhere cannot leave the map half-updated: every update is one statement.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn answered(&self, id: RequestId, messages: Vec<u64>) {
        self.lock().answered.insert(id, messages);
    }

    fn written(&self, id: &RequestId) {
        let mut state = self.lock();
        if let Some(messages) = state.answered.remove(id) {
            state.delivered.extend(messages);
        }
    }

    fn take_delivered(&self) -> Vec<u64> {
        let mut delivered = std::mem::take(&mut self.lock().delivered);
        delivered.sort_unstable();
        delivered.dedup();
        delivered
    }

    fn restore(&self, messages: Vec<u64>) {
        self.lock().delivered.extend(messages);
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
}

impl DochubMcp {
    fn new(client: Client, machine: String, book: Arc<AckBook>) -> Self {
        DochubMcp {
            client,
            machine,
            book,
            mode: Arc::new(tokio::sync::Mutex::new(None)),
            follower: Arc::new(Mutex::new(None)),
            initialized: Arc::new(AtomicBool::new(false)),
        }
    }

    async fn send_message(&self, args: SendArgs) -> Result<CallToolResult, ErrorData> {
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

    async fn reply_message(&self, args: ReplyArgs) -> Result<CallToolResult, ErrorData> {
        let original = match self.client.message(&self.machine, args.message_id).await {
            Ok(Some(found)) => found.message,
            Ok(None) => {
                let why = dochub_mcp::not_in_mailbox(args.message_id, &self.machine);
                return Ok(error_text(why));
            }
            Err(e) => return Ok(tool_error(e)),
        };
        let (to, subject) = dochub_mcp::reply_to(&original, &self.machine);
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

    async fn read_thread(&self, args: ThreadArgs) -> Result<CallToolResult, ErrorData> {
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

    async fn search_messages(&self, args: SearchMessagesArgs) -> Result<CallToolResult, ErrorData> {
        let limit = match dochub_mcp::search_limit(&args) {
            Ok(limit) => limit,
            Err(e) => return Ok(error_text(e)),
        };
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

    /// `read_inbox` and `wait_for_messages`, their arguments checked.
    async fn read(
        &self,
        read: Result<InboxRead, String>,
        id: RequestId,
    ) -> Result<CallToolResult, ErrorData> {
        let read = match read {
            Ok(read) => read,
            Err(e) => return Ok(error_text(e)),
        };
        Ok(match self.read_inbox_inner(read, id).await {
            Ok(inbox) => json_result(&inbox),
            Err(e) => tool_error(e),
        })
    }

    async fn list_machines(&self) -> Result<CallToolResult, ErrorData> {
        Ok(match self.client.machines().await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }

    async fn list_docs(&self, args: ListDocsArgs) -> Result<CallToolResult, ErrorData> {
        let path = args.path.unwrap_or_default();
        Ok(match self.client.manifest(&path).await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }

    async fn read_doc(&self, args: ReadDocArgs) -> Result<CallToolResult, ErrorData> {
        let anchor = args.anchor.as_deref().filter(|a| !a.is_empty());
        let read = async {
            if anchor.is_none() && args.max_tokens.is_none() && args.offset.is_none() {
                // The file as it is.
                let bytes = self.client.raw(&args.path).await?;
                return Ok(String::from_utf8_lossy(&bytes).into_owned());
            }
            let part = self
                .client
                .raw_part(&args.path, anchor, args.max_tokens, args.offset);
            part.await
        };
        Ok(match read.await {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => tool_error(e),
        })
    }

    async fn search_docs(&self, args: SearchArgs) -> Result<CallToolResult, ErrorData> {
        let search = self.client.search_in(
            &args.query,
            args.scope.project(),
            args.scope.version(),
            args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
        );
        Ok(match search.await {
            Ok(v) => json_result(&v),
            Err(e) => tool_error(e),
        })
    }

    async fn query_docs(&self, args: QueryDocsArgs) -> Result<CallToolResult, ErrorData> {
        let query = self.client.query_docs(
            &args.query,
            args.scope.project(),
            args.scope.version(),
            args.max_tokens.unwrap_or(DEFAULT_QUERY_TOKENS),
        );
        Ok(match query.await {
            Ok(answer) => match answer.get("text").and_then(Value::as_str) {
                Some(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                None => error_text("the hub's /api/query answered without `text`".into()),
            },
            Err(e) => tool_error(e),
        })
    }

    /// Runs the tool `name` (each defined in `dochub_mcp`) with the call's arguments.
    async fn call(
        &self,
        name: &str,
        args: Option<&Value>,
        id: RequestId,
    ) -> Result<CallToolResult, ErrorData> {
        fn parse<T: for<'de> Deserialize<'de>>(args: Option<&Value>) -> Result<T, ErrorData> {
            dochub_mcp::arguments(args).map_err(|e| ErrorData::invalid_params(e, None))
        }
        match name {
            "send_message" => self.send_message(parse(args)?).await,
            "reply_message" => self.reply_message(parse(args)?).await,
            "read_thread" => self.read_thread(parse(args)?).await,
            "search_messages" => self.search_messages(parse(args)?).await,
            "read_inbox" => self.read(InboxRead::of_read(parse(args)?), id).await,
            "wait_for_messages" => self.read(InboxRead::of_wait(parse(args)?), id).await,
            "list_machines" => {
                parse::<NoArgs>(args)?;
                self.list_machines().await
            }
            "list_docs" => self.list_docs(parse(args)?).await,
            "read_doc" => self.read_doc(parse(args)?).await,
            "search_docs" => self.search_docs(parse(args)?).await,
            "query_docs" => self.query_docs(parse(args)?).await,
            _ => Err(ErrorData::invalid_params(
                format!("tool not found: `{name}`; tools/list names them"),
                None,
            )),
        }
    }
}

/// Every tool as rmcp describes it, from `dochub_mcp`'s one definition.
fn listed_tools() -> Vec<Tool> {
    dochub_mcp::tools()
        .iter()
        .filter_map(|spec| serde_json::from_value(spec.to_json()).ok())
        .collect()
}

impl DochubMcp {
    /// Acknowledges what the last answers delivered and what the agent names in `ack`, then
    /// reads (waiting up to `wait` for a message); the answer's messages are acknowledged by
    /// the next call, once delivered.
    async fn read_inbox_inner(
        &self,
        read: InboxRead,
        id: RequestId,
    ) -> Result<dochub_hub::Inbox, ClientError> {
        let mode = self.ack_mode().await?;
        if mode == AckMode::OnRead {
            return self
                .client
                .inbox_at_least(&self.machine, read.importance, read.limit, true, read.wait)
                .await;
        }
        let delivered = self.book.take_delivered();
        let mut ids: Vec<u64> = delivered.iter().chain(&read.ack).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        for chunk in ids.chunks(dochub_hub::MAX_LIMIT) {
            let acked = self.client.ack_ids(&self.machine, chunk).await;
            if !matches!(acked, Ok(Ack::Acknowledged(_))) {
                self.book.restore(delivered);
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
            .inbox_at_least(&self.machine, read.importance, read.limit, false, read.wait)
            .await?;
        let returned: Vec<u64> = inbox.messages.iter().map(|m| m.message.id).collect();
        if !returned.is_empty() {
            self.book.answered(id, returned);
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
        .with_instructions(dochub_mcp::instructions(&self.machine, true))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(listed_tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        listed_tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(Value::Object);
        let result = self.call(&request.name, args.as_ref(), context.id).await?;
        Ok(result.into())
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
