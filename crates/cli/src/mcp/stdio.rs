//! The stdio transport of `dochub mcp`: one JSON-RPC message a line, as MCP's stdio transport
//! says, with the two promises rmcp's own stdio transport does not keep.
//!
//! - **Every request is answered.** A line that is not JSON (empty, invalid UTF-8, nested deeper
//!   than serde_json's 128 levels) gets `-32700` with `"id": null`; JSON that is no request
//!   object (a batch, a number, a wrong `jsonrpc`, an id that is neither string nor integer, an id
//!   already in flight) gets `-32600`; params that are not an object, or do not fit an MCP method
//!   the server knows, get `-32602` with the request's id. A line over [`MAX_MESSAGE_BYTES`] is
//!   skipped unread and answered with `-32600`. Notifications and responses are never answered,
//!   as JSON-RPC says, whatever is wrong with them.
//! - **Memory stays bounded.** At most [`MAX_IN_FLIGHT`] requests (and error replies) are between
//!   being read and being written back; while that many are, stdin is not read, so a client that
//!   pipelines without reading fills its own pipe, not our heap.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ErrorCode, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;
use tokio_util::bytes::{Bytes, BytesMut};
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder, FramedRead};

/// The longest message read, in bytes. No tool needs more (a hub message body is at most 64 KiB,
/// six times that with `\u` escapes), and it bounds what one line costs to parse.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// Requests read but not yet answered, at most; stdin waits while there are this many.
pub const MAX_IN_FLIGHT: usize = 32;

/// The request methods of the MCP schema a client sends to a server: a request naming one of
/// these whose params rmcp cannot read has invalid params, not an unknown method.
const MCP_REQUEST_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/templates/list",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// The server's side of stdio (or of any reader and writer).
pub struct StdioTransport<R, W> {
    lines: FramedRead<R, LineCodec>,
    out: Arc<tokio::sync::Mutex<W>>,
    flight: Arc<Flight>,
}

impl<R: AsyncRead, W: AsyncWrite> StdioTransport<R, W> {
    /// Reads requests from `read` and writes answers to `write`.
    pub fn new(read: R, write: W) -> Self {
        StdioTransport {
            lines: FramedRead::new(read, LineCodec::default()),
            out: Arc::new(tokio::sync::Mutex::new(write)),
            flight: Arc::new(Flight::default()),
        }
    }
}

impl<R, W> StdioTransport<R, W>
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Writes an error reply of our own in the background; it holds a place in flight until
    /// written, so a flood of bad lines is bounded like one of requests.
    fn reply(&self, reply: Value) {
        self.flight.lock().replies += 1;
        let out = self.out.clone();
        let flight = self.flight.clone();
        tokio::spawn(async move {
            let _ = write_line(&out, &reply.to_string().into_bytes()).await;
            flight.lock().replies -= 1;
            flight.room.notify_waiters();
        });
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        let out = self.out.clone();
        let flight = self.flight.clone();
        async move {
            let written = match encode(&item) {
                Ok(line) => write_line(&out, &line).await,
                Err(e) => Err(std::io::Error::other(e)),
            };
            if let Some(id) = answers {
                flight.finish(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Cancel-safe, as rmcp polls it in a `select!`: waiting for room changes nothing, and
        // `FramedRead` keeps a partly read line for the next call.
        loop {
            self.flight.wait_for_room().await;
            let line = match self.lines.next().await? {
                Ok(Line::Text(line)) => line,
                Ok(Line::TooLong) => {
                    self.reply(error_reply(
                        None,
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "a message over {} MiB was skipped unread: that is the longest this server reads",
                            MAX_MESSAGE_BYTES / (1024 * 1024)
                        ),
                    ));
                    continue;
                }
                Err(_) => return None,
            };
            match read_message(&line) {
                Incoming::Message(message) => {
                    match &*message {
                        // The guard records the request in flight; an id already there is refused.
                        JsonRpcMessage::Request(request)
                            if !self.flight.begin(request.id.clone()) =>
                        {
                            self.reply(error_reply(
                                Some(&request.id),
                                ErrorCode::INVALID_REQUEST,
                                format!(
                                    "request id {} is already in use by a request not yet answered",
                                    request.id
                                ),
                            ));
                            continue;
                        }
                        // A cancelled request is answered by nobody: its place is free now.
                        JsonRpcMessage::Notification(n) => {
                            if let ClientNotification::CancelledNotification(c) = &n.notification
                                && let Some(id) = &c.params.request_id
                            {
                                self.flight.finish(id);
                            }
                        }
                        _ => {}
                    }
                    return Some(*message);
                }
                Incoming::Reply(reply) => self.reply(reply),
                Incoming::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out.lock().await.shutdown().await
    }
}

/// Requests and error replies between being read and being written.
#[derive(Default)]
struct Flight {
    state: Mutex<FlightState>,
    room: Notify,
}

#[derive(Default)]
struct FlightState {
    requests: HashSet<RequestId>,
    replies: usize,
}

impl Flight {
    fn lock(&self) -> std::sync::MutexGuard<'_, FlightState> {
        // Every update is one statement: a panic elsewhere cannot leave it half-done.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn wait_for_room(&self) {
        loop {
            let notified = self.room.notified();
            {
                let state = self.lock();
                if state.requests.len() + state.replies < MAX_IN_FLIGHT {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Records a request read; false when its id is already in flight.
    fn begin(&self, id: RequestId) -> bool {
        self.lock().requests.insert(id)
    }

    fn finish(&self, id: &RequestId) {
        if self.lock().requests.remove(id) {
            self.room.notify_waiters();
        }
    }
}

/// What one line is.
enum Incoming {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// No message: this error reply answers it.
    Reply(Value),
    /// A notification or response that cannot be read; JSON-RPC answers neither.
    Ignore,
}

fn read_message(line: &[u8]) -> Incoming {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Reply(error_reply(
                None,
                ErrorCode::PARSE_ERROR,
                format!("parse error: not a JSON message ({e})"),
            ));
        }
    };
    let object = match &value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Incoming::Reply(error_reply(
                None,
                ErrorCode::INVALID_REQUEST,
                "invalid request: MCP sends one message a line, not JSON-RPC batches".into(),
            ));
        }
        _ => {
            return Incoming::Reply(error_reply(
                None,
                ErrorCode::INVALID_REQUEST,
                "invalid request: a message is a JSON object".into(),
            ));
        }
    };
    let Some(method) = object.get("method") else {
        // A response to a request of ours: rmcp reads it, or nobody answers it.
        return serde_json::from_value(value)
            .map_or(Incoming::Ignore, |m| Incoming::Message(Box::new(m)));
    };
    let Some(raw_id) = object.get("id") else {
        return serde_json::from_value(value)
            .map_or(Incoming::Ignore, |m| Incoming::Message(Box::new(m)));
    };
    let id = request_id(raw_id);
    let invalid = |reason: String| {
        Incoming::Reply(error_reply(
            id.as_ref(),
            ErrorCode::INVALID_REQUEST,
            format!("invalid request: {reason}"),
        ))
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return invalid("`jsonrpc` must be \"2.0\"".into());
    }
    let Some(method) = method.as_str() else {
        return invalid("`method` must be a string".into());
    };
    let Some(id) = &id else {
        return invalid("`id` must be a string or an integer".into());
    };
    let invalid_params = |reason: String| {
        Incoming::Reply(error_reply(
            Some(id),
            ErrorCode::INVALID_PARAMS,
            format!("invalid params of `{method}`: {reason}"),
        ))
    };
    if let Some(params) = object.get("params")
        && !params.is_object()
    {
        return invalid_params("`params` must be an object".into());
    }
    let known = MCP_REQUEST_METHODS.contains(&method);
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        // rmcp reads a known method whose params do not fit as a custom request, which its
        // handler answers with "method not found".
        Ok(JsonRpcMessage::Request(r))
            if known && matches!(r.request, rmcp::model::ClientRequest::CustomRequest(_)) =>
        {
            invalid_params("they do not match the method's schema".into())
        }
        Ok(message) => Incoming::Message(Box::new(message)),
        Err(e) if known => invalid_params(e.to_string()),
        Err(e) => invalid(e.to_string()),
    }
}

/// A JSON-RPC id as MCP allows it: a string or an integer.
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(_) => serde_json::from_value(id.clone()).ok(),
        Value::Number(n) if n.is_i64() => serde_json::from_value(id.clone()).ok(),
        _ => None,
    }
}

/// An error reply; `"id": null` when the request's id could not be read, as JSON-RPC 2.0 says.
fn error_reply(id: Option<&RequestId>, code: ErrorCode, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code.0, "message": message },
    })
}

/// One message as a line; rmcp leaves out an unknown id, JSON-RPC 2.0 wants it null.
fn encode(item: &TxJsonRpcMessage<RoleServer>) -> serde_json::Result<Vec<u8>> {
    if let JsonRpcMessage::Error(e) = item
        && e.id.is_none()
    {
        let mut value = serde_json::to_value(item)?;
        if let Value::Object(o) = &mut value {
            o.insert("id".into(), Value::Null);
        }
        return serde_json::to_vec(&value);
    }
    serde_json::to_vec(item)
}

async fn write_line<W: AsyncWrite + Unpin>(
    out: &tokio::sync::Mutex<W>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// A line of input.
enum Line {
    Text(Bytes),
    /// Longer than [`MAX_MESSAGE_BYTES`]: dropped up to its end without keeping it.
    TooLong,
}

/// Newline-delimited frames of at most [`MAX_MESSAGE_BYTES`], with an over-long line reported
/// as a frame rather than an error (which would end the stream).
struct LineCodec(AnyDelimiterCodec);

impl Default for LineCodec {
    fn default() -> Self {
        LineCodec(AnyDelimiterCodec::new_with_max_length(
            b"\n".to_vec(),
            b"\n".to_vec(),
            MAX_MESSAGE_BYTES,
        ))
    }
}

impl LineCodec {
    fn frame(
        result: Result<Option<Bytes>, AnyDelimiterCodecError>,
    ) -> std::io::Result<Option<Line>> {
        match result {
            Ok(Some(line)) => Ok(Some(Line::Text(strip_cr(line)))),
            Ok(None) => Ok(None),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => Ok(Some(Line::TooLong)),
            Err(AnyDelimiterCodecError::Io(e)) => Err(e),
        }
    }
}

fn strip_cr(line: Bytes) -> Bytes {
    match line.last() {
        Some(b'\r') => line.slice(..line.len() - 1),
        _ => line,
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        Self::frame(self.0.decode(buf))
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> std::io::Result<Option<Line>> {
        Self::frame(self.0.decode_eof(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_of(line: &[u8]) -> Value {
        match read_message(line) {
            Incoming::Reply(v) => v,
            Incoming::Message(m) => panic!("read as a message: {m:?}"),
            Incoming::Ignore => panic!("ignored"),
        }
    }

    #[test]
    fn lines_that_are_not_json_are_parse_errors_with_a_null_id() {
        for line in [&b""[..], b"not json", b"\xff\xfe{}", b"{\"jsonrpc\":"] {
            let reply = reply_of(line);
            assert_eq!(reply["error"]["code"], -32700, "{reply}");
            assert_eq!(reply["id"], Value::Null);
        }
        let deep = "[".repeat(100_000);
        assert_eq!(reply_of(deep.as_bytes())["error"]["code"], -32700);
    }

    #[test]
    fn known_methods_with_params_that_do_not_fit_are_invalid_params() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":123}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1,2]}"#,
        ] {
            let reply = reply_of(line.as_bytes());
            assert_eq!(reply["error"]["code"], -32602, "{line}: {reply}");
            assert_eq!(reply["id"], 7);
        }
    }

    #[test]
    fn malformed_requests_are_invalid_requests() {
        for (line, id) in [
            (r#"[]"#, Value::Null),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
            (r#"5"#, Value::Null),
            (r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#, json!("a")),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":2,"method":7}"#, json!(2)),
        ] {
            let reply = reply_of(line.as_bytes());
            assert_eq!(reply["error"]["code"], -32600, "{line}: {reply}");
            assert_eq!(reply["id"], id, "{line}");
        }
    }

    #[test]
    fn good_messages_and_broken_notifications_pass_or_go_unanswered() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(read_message(ping), Incoming::Message(_)));
        let custom = br#"{"jsonrpc":"2.0","id":1,"method":"x/unknown","params":{}}"#;
        assert!(matches!(read_message(custom), Incoming::Message(_)));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#;
        assert!(matches!(read_message(note), Incoming::Ignore));
    }

    #[test]
    fn an_unknown_id_is_written_as_null() {
        let item = TxJsonRpcMessage::<RoleServer>::error(
            rmcp::ErrorData::invalid_request("x", None),
            None,
        );
        let line: Value = serde_json::from_slice(&encode(&item).unwrap()).unwrap();
        assert_eq!(line["id"], Value::Null);
        assert!(line.as_object().is_some_and(|o| o.contains_key("id")));
    }

    #[tokio::test]
    async fn an_over_long_line_is_answered_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
        let (out_write, out_read) = tokio::io::duplex(1 << 16);
        let mut transport = StdioTransport::new(std::io::Cursor::new(input), out_write);
        let message = transport
            .receive()
            .await
            .expect("the ping after the long line");
        assert!(matches!(message, JsonRpcMessage::Request(r) if r.id == RequestId::Number(3)));
        let mut lines = FramedRead::new(out_read, LineCodec::default());
        let Some(Ok(Line::Text(reply))) = lines.next().await else {
            panic!("no reply to the long line");
        };
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["error"]["code"], -32600);
        assert_eq!(reply["id"], Value::Null);
    }
}
