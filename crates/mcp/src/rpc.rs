//! The JSON-RPC exchange of MCP's Streamable HTTP transport, without state between requests:
//! one POSTed message in, one answer out. What a server does is a [`Server`]; everything
//! about the protocol (versions, methods, error codes, what is answered with 202) is here.
//!
//! ```
//! use dochub_mcp::rpc::{Exchange, Server, ToolOutput, exchange};
//! struct Nothing;
//! impl Server for Nothing {
//!     fn instructions(&self) -> String { "nothing".into() }
//!     fn tools(&self) -> Vec<serde_json::Value> { Vec::new() }
//!     fn call_tool(&mut self, _: &str, _: Option<&serde_json::Value>) -> Result<ToolOutput, dochub_mcp::rpc::RpcError> {
//!         Err(dochub_mcp::rpc::RpcError::invalid_params("no tools"))
//!     }
//! }
//! let Exchange::Answer { status, body } = exchange(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &mut Nothing) else { panic!() };
//! assert_eq!((status, body.to_string()), (200, r#"{"id":1,"jsonrpc":"2.0","result":{}}"#.to_owned()));
//! assert!(matches!(exchange(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &mut Nothing), Exchange::Accepted));
//! ```

use serde_json::{Value, json};

/// The protocol versions served, newest first.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// What a client that sends no `MCP-Protocol-Version` header speaks (the transport's rule).
pub const DEFAULT_HEADER_VERSION: &str = "2025-03-26";

/// JSON-RPC's error codes.
pub mod code {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's params are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP's: no resource at that URI.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// An error answer: a code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i64,
    /// What went wrong, for the client's user.
    pub message: String,
}

impl RpcError {
    /// -32602.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError {
            code: code::INVALID_PARAMS,
            message: message.into(),
        }
    }

    /// -32603.
    pub fn internal(message: impl Into<String>) -> Self {
        RpcError {
            code: code::INTERNAL_ERROR,
            message: message.into(),
        }
    }

    /// -32002.
    pub fn resource_not_found(message: impl Into<String>) -> Self {
        RpcError {
            code: code::RESOURCE_NOT_FOUND,
            message: message.into(),
        }
    }
}

/// What a tool call returns: its text, and whether it failed (a failure the model can read
/// and act on, not a protocol error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The answer.
    pub text: String,
    /// Whether it is an error.
    pub is_error: bool,
}

impl ToolOutput {
    /// A tool's answer.
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: false,
        }
    }

    /// A tool's failure, with the reason.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
        }
    }
}

/// What an MCP server does; the protocol around it is [`exchange`]'s.
pub trait Server {
    /// `initialize`'s `instructions`.
    fn instructions(&self) -> String;

    /// The tools `tools/list` lists, as MCP `Tool` objects ([`crate::ToolSpec::to_json`]).
    fn tools(&self) -> Vec<Value>;

    /// Runs a tool; an unknown tool or arguments that do not fit are [`RpcError`]s.
    fn call_tool(&mut self, name: &str, arguments: Option<&Value>) -> Result<ToolOutput, RpcError>;

    /// Told of each request before it is answered, with its method and id: a server that
    /// keys work by request (an idempotent send, a session opened) keeps them.
    fn request(&mut self, _method: &str, _id: &Value) {}

    /// `resources/list`: one page of resources and the cursor of the next.
    fn list_resources(
        &mut self,
        _cursor: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>), RpcError> {
        Ok((Vec::new(), None))
    }

    /// `resources/read`: the contents at `uri`.
    fn read_resource(&mut self, uri: &str) -> Result<Vec<Value>, RpcError> {
        Err(RpcError::resource_not_found(format!("no resource `{uri}`")))
    }
}

/// How an exchange ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Exchange {
    /// A JSON-RPC answer, with the HTTP status it goes out with (200, or 400 for a message
    /// that is not a request).
    Answer {
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC response.
        body: Value,
    },
    /// A notification or a response was taken: 202, no body.
    Accepted,
}

fn error_body(id: Value, error: &RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error.code, "message": error.message } })
}

/// The answer to a body that cannot be read as a request (too large, say).
pub fn refusal(code: i64, message: &str) -> Value {
    error_body(
        Value::Null,
        &RpcError {
            code,
            message: message.to_owned(),
        },
    )
}

/// Answers one POSTed body.
pub fn exchange(body: &[u8], server: &mut dyn Server) -> Exchange {
    let bad = |status, id: Value, code, message: &str| Exchange::Answer {
        status,
        body: error_body(
            id,
            &RpcError {
                code,
                message: message.to_owned(),
            },
        ),
    };
    let message: Value = match serde_json::from_slice(body) {
        Ok(message) => message,
        Err(e) => {
            return bad(
                400,
                Value::Null,
                code::PARSE_ERROR,
                &format!("Parse error: {e}"),
            );
        }
    };
    let Value::Object(message) = message else {
        let why = if message.is_array() {
            "Invalid Request: batches are not supported; send one message per request"
        } else {
            "Invalid Request: a JSON-RPC message is an object"
        };
        return bad(400, Value::Null, code::INVALID_REQUEST, why);
    };
    let id = message.get("id").cloned();
    let valid_id = matches!(id, None | Some(Value::String(_) | Value::Number(_)));
    if message.get("jsonrpc") != Some(&json!("2.0")) || !valid_id {
        let id = id.filter(|_| valid_id).unwrap_or(Value::Null);
        return bad(
            400,
            id,
            code::INVALID_REQUEST,
            "Invalid Request: `jsonrpc` must be \"2.0\" and `id` a string or a number",
        );
    }
    let method = match message.get("method") {
        Some(Value::String(method)) => method.as_str(),
        Some(_) => {
            let id = id.unwrap_or(Value::Null);
            return bad(
                400,
                id,
                code::INVALID_REQUEST,
                "Invalid Request: `method` must be a string",
            );
        }
        // A response to something the server asked: this server asks nothing, so it is noted.
        None if message.contains_key("result") || message.contains_key("error") => {
            return Exchange::Accepted;
        }
        None => {
            let id = id.unwrap_or(Value::Null);
            return bad(
                400,
                id,
                code::INVALID_REQUEST,
                "Invalid Request: no `method`",
            );
        }
    };
    let Some(id) = id else {
        // A notification: nothing to answer, whatever it is.
        return Exchange::Accepted;
    };
    let params = message.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return Exchange::Answer {
            status: 200,
            body: error_body(id, &RpcError::invalid_params("`params` must be an object")),
        };
    }
    server.request(method, &id);
    let result = answer(method, params, server);
    Exchange::Answer {
        status: 200,
        body: match result {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(e) => error_body(id, &e),
        },
    }
}

fn answer(
    method: &str,
    params: Option<&Value>,
    server: &mut dyn Server,
) -> Result<Value, RpcError> {
    let param = |name: &str| params.and_then(|p| p.get(name));
    match method {
        "initialize" => {
            let Some(Value::String(asked)) = param("protocolVersion") else {
                return Err(RpcError::invalid_params("`protocolVersion` is required"));
            };
            let version = PROTOCOL_VERSIONS
                .iter()
                .find(|v| *v == asked)
                .unwrap_or(&PROTOCOL_VERSIONS[0]);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {
                    "tools": { "listChanged": false },
                    "resources": { "listChanged": false, "subscribe": false },
                },
                "serverInfo": { "name": "dochub", "version": env!("CARGO_PKG_VERSION") },
                "instructions": server.instructions(),
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({ "tools": server.tools() })),
        "tools/call" => {
            let Some(Value::String(name)) = param("name") else {
                return Err(RpcError::invalid_params(
                    "`name` is required: the tool to call",
                ));
            };
            if let Some(arguments) = param("arguments").filter(|a| !a.is_object() && !a.is_null()) {
                return Err(RpcError::invalid_params(format!(
                    "`arguments` must be an object, not {arguments}"
                )));
            }
            let output = server.call_tool(name, param("arguments").filter(|a| a.is_object()))?;
            Ok(json!({
                "content": [{ "type": "text", "text": output.text }],
                "isError": output.is_error,
            }))
        }
        "resources/list" => {
            let cursor = param("cursor").and_then(Value::as_str);
            let (resources, next) = server.list_resources(cursor)?;
            let mut result = json!({ "resources": resources });
            if let Some(next) = next {
                result["nextCursor"] = json!(next);
            }
            Ok(result)
        }
        "resources/templates/list" => Ok(json!({ "resourceTemplates": [] })),
        "resources/read" => {
            let Some(Value::String(uri)) = param("uri") else {
                return Err(RpcError::invalid_params("`uri` is required"));
            };
            Ok(json!({ "contents": server.read_resource(uri)? }))
        }
        other => Err(RpcError {
            code: code::METHOD_NOT_FOUND,
            message: format!("Method not found: `{other}`"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl Server for Echo {
        fn instructions(&self) -> String {
            "echo".into()
        }

        fn tools(&self) -> Vec<Value> {
            vec![json!({"name": "echo"})]
        }

        fn call_tool(
            &mut self,
            name: &str,
            arguments: Option<&Value>,
        ) -> Result<ToolOutput, RpcError> {
            match name {
                "echo" => Ok(ToolOutput::ok(
                    arguments.map(Value::to_string).unwrap_or_default(),
                )),
                _ => Err(RpcError::invalid_params(format!("unknown tool `{name}`"))),
            }
        }
    }

    fn answer_of(body: &str) -> (u16, Value) {
        match exchange(body.as_bytes(), &mut Echo) {
            Exchange::Answer { status, body } => (status, body),
            Exchange::Accepted => (202, Value::Null),
        }
    }

    #[test]
    fn initialize_answers_the_version_asked_when_served_else_the_newest() {
        let (status, body) = answer_of(
            r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        assert_eq!(status, 200);
        assert_eq!(body["id"], "a");
        assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(body["result"]["instructions"], "echo");
        let (_, body) = answer_of(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
        );
        assert_eq!(body["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
    }

    #[test]
    fn errors_have_their_codes() {
        for (body, status, code, id) in [
            ("{", 400, code::PARSE_ERROR, Value::Null),
            ("[]", 400, code::INVALID_REQUEST, Value::Null),
            ("3", 400, code::INVALID_REQUEST, Value::Null),
            (
                r#"{"id":1,"method":"ping"}"#,
                400,
                code::INVALID_REQUEST,
                json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                400,
                code::INVALID_REQUEST,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":7}"#,
                400,
                code::INVALID_REQUEST,
                json!(2),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
                200,
                code::METHOD_NOT_FOUND,
                json!(3),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"zz"}}"#,
                200,
                code::INVALID_PARAMS,
                json!(4),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}"#,
                200,
                code::INVALID_PARAMS,
                json!(5),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":3}}"#,
                200,
                code::INVALID_PARAMS,
                json!(6),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#,
                200,
                code::INVALID_PARAMS,
                json!(7),
            ),
        ] {
            let (got_status, answer) = answer_of(body);
            assert_eq!(got_status, status, "{body}");
            assert_eq!(answer["error"]["code"], code, "{body}");
            assert_eq!(answer["id"], id, "{body}");
            assert_eq!(answer["jsonrpc"], "2.0", "{body}");
        }
    }

    #[test]
    fn notifications_and_responses_are_accepted() {
        assert_eq!(
            answer_of(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).0,
            202
        );
        assert_eq!(
            answer_of(r#"{"jsonrpc":"2.0","method":"anything/else"}"#).0,
            202
        );
        assert_eq!(answer_of(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#).0, 202);
    }

    #[test]
    fn tools_are_listed_and_called() {
        let (_, body) = answer_of(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert_eq!(body["result"]["tools"][0]["name"], "echo");
        let (_, body) = answer_of(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}"#,
        );
        assert_eq!(body["result"]["content"][0]["text"], r#"{"a":1}"#);
        assert_eq!(body["result"]["isError"], false);
    }
}
