//! The hub's tools at `/mcp`. Each is a request to the hub's own API ([`dochub_hub::api`]),
//! answered in-process by the component's [`HubApi`], as the calling machine and with its
//! token: so they check, store and refuse exactly as the routes `dochub mcp` reaches on stdio.
//!
//! Two things differ from stdio, where one process serves one session:
//! - **Reads acknowledge only what the agent names** (`ack`). A response over HTTP may be lost
//!   with no one the wiser, so a read marks nothing read; the next read marks the ids the
//!   agent passes, by id, so that a read filtered by importance never marks older messages it
//!   passed over.
//! - **A send is stored once per request.** With a session (`Mcp-Session-Id`, issued at
//!   `initialize`), the send's `Idempotency-Key` is derived from the session and the JSON-RPC
//!   id, which a client never reuses within a session: a transport's retry of the same request
//!   stores nothing more. Without one, a retried send may be stored twice, never zero times.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use dochub_http::{Body, Request, Response};
use dochub_hub::{Inbox, MAX_MAILBOX_LIMIT, MachineName, Outgoing};
use dochub_mcp::rpc::ToolOutput;
use dochub_mcp::{
    InboxRead, ReadArgs, ReplyArgs, SearchMessagesArgs, SendArgs, ThreadArgs, WaitArgs,
};

/// The hub, as `/mcp` reaches it: its HTTP API answered in-process.
pub trait HubApi {
    /// Answers `request` as the hub's route would, a long-poll waited out in full.
    fn answer(&self, request: &Request<'_>, body: Body) -> Response;
}

/// The hub's tools for one calling machine.
pub(super) struct HubTools<'a> {
    pub api: &'a dyn HubApi,
    pub machine: &'a MachineName,
    /// The caller's `Authorization`, passed on: in production the hub checks the token again.
    pub authorization: Option<&'a str>,
}

/// A hub answer that is not a success: what the agent is told.
type Refused = String;

impl HubTools<'_> {
    fn call(
        &self,
        method: &str,
        path: &str,
        query: &str,
        payload: Option<Value>,
        key: Option<&str>,
    ) -> Result<Value, Refused> {
        let mut headers = Vec::new();
        if let Some(authorization) = self.authorization {
            headers.push(("authorization".to_owned(), authorization.to_owned()));
        }
        if payload.is_some() {
            headers.push(("content-type".to_owned(), "application/json".to_owned()));
        }
        if let Some(key) = key {
            headers.push(("idempotency-key".to_owned(), key.to_owned()));
        }
        let request = Request {
            method,
            path,
            query,
            headers: &headers,
        };
        let body = payload.map(|p| p.to_string().into_bytes());
        let response = self
            .api
            .answer(&request, Body::Bytes(body.unwrap_or_default()));
        let value: Result<Value, _> = serde_json::from_slice(&response.body);
        match value {
            Ok(value) if (200..300).contains(&response.status) => Ok(value),
            Ok(value) => Err(format!(
                "the hub answered {}: {}",
                response.status,
                value["error"].as_str().unwrap_or("no reason given")
            )),
            Err(_) => Err(format!(
                "the hub answered {} with a body that is not JSON",
                response.status
            )),
        }
    }

    fn inbox_path(&self) -> String {
        format!("/api/inbox/{}", self.machine)
    }

    fn mailbox(&self, query: &str) -> Result<Inbox, Refused> {
        let path = format!("/api/messages/{}", self.machine);
        let value = self.call("GET", &path, query, None, None)?;
        serde_json::from_value(value).map_err(|e| format!("the hub's mailbox reads wrong: {e}"))
    }

    fn send(&self, outgoing: &Outgoing<'_>, key: Option<&str>) -> ToolOutput {
        let payload = match serde_json::to_value(outgoing) {
            Ok(payload) => payload,
            Err(e) => return ToolOutput::error(format!("cannot encode the message: {e}")),
        };
        output(self.call("POST", "/api/send", "", Some(payload), key))
    }

    pub fn send_message(&self, args: SendArgs, key: Option<&str>) -> ToolOutput {
        let outgoing = Outgoing {
            from: self.machine.as_str(),
            to: &args.to,
            body: &args.body,
            subject: args.subject.as_deref(),
            importance: args.importance.map(Into::into),
            reply_to: args.reply_to,
        };
        self.send(&outgoing, key)
    }

    pub fn reply_message(&self, args: ReplyArgs, key: Option<&str>) -> ToolOutput {
        let before = args.message_id.saturating_add(1);
        let original = match self.mailbox(&format!("limit=1&before={before}")) {
            Ok(found) => found
                .messages
                .into_iter()
                .map(|m| m.message)
                .find(|m| m.id == args.message_id),
            Err(e) => return ToolOutput::error(e),
        };
        let Some(original) = original else {
            let why = dochub_mcp::not_in_mailbox(args.message_id, self.machine.as_str());
            return ToolOutput::error(why);
        };
        let (to, subject) = dochub_mcp::reply_to(&original, self.machine.as_str());
        let outgoing = Outgoing {
            from: self.machine.as_str(),
            to,
            body: &args.body,
            subject: subject.as_deref(),
            importance: None,
            reply_to: Some(original.id),
        };
        self.send(&outgoing, key)
    }

    pub fn read_thread(&self, args: ThreadArgs) -> ToolOutput {
        let query = format!("limit={MAX_MAILBOX_LIMIT}&thread={}", args.thread);
        match self.mailbox(&query) {
            Ok(mut thread) => {
                // Oldest first, as a conversation reads.
                thread.messages.reverse();
                json_output(&thread)
            }
            Err(e) => ToolOutput::error(e),
        }
    }

    pub fn search_messages(&self, args: SearchMessagesArgs) -> ToolOutput {
        let limit = match dochub_mcp::search_limit(&args) {
            Ok(limit) => limit,
            Err(e) => return ToolOutput::error(e),
        };
        let words = utf8_percent_encode(&args.query, NON_ALPHANUMERIC);
        match self.mailbox(&format!("limit={limit}&q={words}")) {
            Ok(found) => json_output(&found),
            Err(e) => ToolOutput::error(e),
        }
    }

    pub fn read_inbox(&self, args: ReadArgs) -> ToolOutput {
        match InboxRead::of_read(args) {
            Ok(read) => self.read(&read),
            Err(e) => ToolOutput::error(e),
        }
    }

    pub fn wait_for_messages(&self, args: WaitArgs) -> ToolOutput {
        match InboxRead::of_wait(args) {
            Ok(read) => self.read(&read),
            Err(e) => ToolOutput::error(e),
        }
    }

    /// Marks what the agent names read (always asked, even for none: it registers the
    /// machine, so broadcasts reach it), then reads without marking.
    fn read(&self, read: &InboxRead) -> ToolOutput {
        let ack_path = format!("{}/ack", self.inbox_path());
        let acked = self.call(
            "POST",
            &ack_path,
            "",
            Some(json!({ "ids": read.ack })),
            None,
        );
        if let Err(e) = acked {
            return ToolOutput::error(format!(
                "cannot mark the messages in `ack` read ({e}); nothing was read or lost: call again"
            ));
        }
        let mut query = format!("limit={}", read.limit);
        if let Some(importance) = read.importance {
            query.push_str(&format!("&importance={}", importance.as_str()));
        }
        if let Some(wait) = read.wait {
            query.push_str(&format!("&wait={}", wait.as_secs()));
        }
        output(self.call("GET", &self.inbox_path(), &query, None, None))
    }

    pub fn list_machines(&self) -> ToolOutput {
        output(self.call("GET", "/machines", "", None, None))
    }
}

/// The `Idempotency-Key` of a send made by request `id` of `session`: the same for a retry of
/// that request, another for any other request.
pub(super) fn send_key(session: &str, id: &Value) -> String {
    let digest = Sha256::digest(format!("{session}\n{id}").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("mcp-{hex}")
}

fn output(answer: Result<Value, Refused>) -> ToolOutput {
    match answer {
        Ok(value) => json_output(&value),
        Err(e) => ToolOutput::error(e),
    }
}

pub(super) fn json_output(value: &impl serde::Serialize) -> ToolOutput {
    match serde_json::to_string_pretty(value) {
        Ok(text) => ToolOutput::ok(text),
        Err(e) => ToolOutput::error(format!("cannot encode the answer: {e}")),
    }
}
