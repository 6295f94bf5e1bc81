//! The tools: each one's name, description, input schema (from its arguments' type) and
//! annotations, and the arguments as a server takes them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use dochub_hub::Importance;

/// Messages `read_inbox` returns when the agent does not say.
pub const DEFAULT_LIMIT: u32 = 20;
/// How long `wait_for_messages` waits when the agent does not say.
pub const DEFAULT_WAIT_SECONDS: u32 = 20;
/// The longest `wait_for_messages` waits: the hub's default `hub_max_wait`, and under the 30 s
/// after which edge hosts end a request and common MCP clients give up on a tool call.
pub const MAX_WAIT_SECONDS: u32 = 25;
/// Hits `search_docs` returns when the agent does not say.
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
/// `query_docs`' budget when the agent does not say.
pub const DEFAULT_QUERY_TOKENS: u32 = 2_000;

/// Which side of dochub a tool works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The documentation: reads only.
    Docs,
    /// The message hub, as the calling machine.
    Hub,
}

/// One tool as `tools/list` describes it.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Its name.
    pub name: &'static str,
    /// What it does and when to use it, for the model.
    pub description: &'static str,
    /// The JSON schema of its arguments.
    pub input_schema: Map<String, Value>,
    /// Whether it changes nothing.
    pub read_only: bool,
    /// Its side of dochub.
    pub family: Family,
}

impl ToolSpec {
    /// The tool as MCP's `Tool` object: `name`, `description`, `inputSchema`, `annotations`.
    pub fn to_json(&self) -> Value {
        let mut annotations = json!({ "readOnlyHint": self.read_only, "openWorldHint": false });
        if !self.read_only {
            // Sending adds; nothing a tool does deletes or overwrites.
            annotations["destructiveHint"] = json!(false);
        }
        json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": annotations,
        })
    }
}

/// The JSON schema of a tool's arguments, as MCP wants it: JSON Schema 2020-12, an object at
/// the root, without the type's own title and description.
pub fn input_schema<T: JsonSchema>() -> Map<String, Value> {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut object = match serde_json::to_value(schema) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    };
    object.remove("title");
    object.remove("description");
    object
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    object
}

/// Every tool, hub tools first.
pub fn tools() -> Vec<ToolSpec> {
    let spec = |name, description, input_schema, read_only, family| ToolSpec {
        name,
        description,
        input_schema,
        read_only,
        family,
    };
    use Family::{Docs, Hub};
    vec![
        spec(
            "send_message",
            "Send a text message from this machine to another machine (or `all`) through the dochub message hub, optionally with a subject, an importance (low, normal, high, urgent) and reply_to (the id of a message it answers). Returns the stored message with its id and thread. The sender is always this machine. To answer a message, reply_message is simpler.",
            input_schema::<SendArgs>(),
            false,
            Hub,
        ),
        spec(
            "reply_message",
            "Answer a message this machine received (or sent): the reply goes to the other side of that message, joins its thread, and keeps its subject (as \"Re: ...\"). Returns the stored reply. Use it rather than send_message when answering.",
            input_schema::<ReplyArgs>(),
            false,
            Hub,
        ),
        spec(
            "read_thread",
            "Read a whole conversation: every message of a thread in this machine's mailbox (sent and received, read or not), oldest first, as JSON {machine, messages}. The thread is the `thread` field of any of its messages. Reading acknowledges nothing.",
            input_schema::<ThreadArgs>(),
            true,
            Hub,
        ),
        spec(
            "search_messages",
            "Search this machine's mailbox (messages it sent or received, read or not, while the hub keeps them) for messages whose subject or body holds every word of the query, in any order and case. Returns JSON {machine, messages}, newest first. Use it to find what was agreed earlier; read a hit's conversation with read_thread.",
            input_schema::<SearchMessagesArgs>(),
            true,
            Hub,
        ),
        spec(
            "read_inbox",
            "Read this machine's unread messages from the dochub hub, oldest first, as JSON {machine, messages: [{id, from, to, body, timestamp, read}]}; an empty list means the inbox is empty. Reading marks nothing read, so no message is lost when an answer is: pass the ids you got as `ack` in your next read_inbox or wait_for_messages call, which marks them read before it reads (until then they are returned again). dochub mcp on stdio also marks what it returned at your next call by itself.",
            input_schema::<ReadArgs>(),
            false,
            Hub,
        ),
        spec(
            "wait_for_messages",
            "Wait until this machine has unread messages in the dochub hub, then return them as read_inbox does (oldest first, JSON {machine, messages}); returns an empty list if none arrives within timeout_seconds (1 to 25, default 20). Use it instead of calling read_inbox in a loop, passing as `ack` the ids of the messages the last call returned: they are marked read first, else they are returned again at once (dochub mcp on stdio also marks them by itself).",
            input_schema::<WaitArgs>(),
            false,
            Hub,
        ),
        spec(
            "list_machines",
            "List the machines registered with the dochub hub and when each was last seen, as JSON [{name, last_seen}]. Use the names as `to` in send_message.",
            input_schema::<NoArgs>(),
            true,
            Hub,
        ),
        spec(
            "query_docs",
            "Answer a question from the documentation in one call: returns the sections (a heading and its text) that best answer it, best first, each headed by a line `--- <project>/<subproject>/<page>#<anchor> (<page title> › <section>) ---`, together within max_tokens (default 2000). Ask in plain words (\"how do I configure the key-value store?\"). Without `version`, a project with versions answers from its latest only; with it, only from that version. Tokens are counted as UTF-8 bytes divided by 3, rounded up, which is more than any common tokenizer counts, so the answer fits. Use read_doc with a path and anchor to read more of one section.",
            input_schema::<QueryDocsArgs>(),
            true,
            Docs,
        ),
        spec(
            "search_docs",
            "Search the documentation pages (case-insensitive; the words of a question such as \"how do I\" are left out; other endings of a word match). Returns JSON {query, results: [{path, title, excerpt, section?, anchor?}]}, `limit` of them (1 to 50, default 10), ranked by each page's best-matching section: `section` is that section's heading, `anchor` its id on the page, and the excerpt is from it. Without `version`, a project with versions answers from its latest only; with it, only from that version. Read a hit with read_doc (path, and anchor for just that section), or ask query_docs for the text itself.",
            input_schema::<SearchArgs>(),
            true,
            Docs,
        ),
        spec(
            "read_doc",
            "Read one documentation page as markdown (the whole file, with its YAML frontmatter), or with `anchor` only the section under that heading (up to the next heading of the same or a higher level). With max_tokens (100 to 100000) the text is cut where a block ends so that it counts at most that many tokens (UTF-8 bytes divided by 3, rounded up), and its last line says which offset to read on from. The path is `<project>/<subproject>/<page>` as list_docs, search_docs or query_docs give it.",
            input_schema::<ReadDocArgs>(),
            true,
            Docs,
        ),
        spec(
            "list_docs",
            "Browse the documentation: no path lists the projects; `<project>` lists its subprojects; `<project>/<subproject>` lists its pages with title, summary and references. Returns the manifest JSON. Read a page with read_doc.",
            input_schema::<ListDocsArgs>(),
            true,
            Docs,
        ),
    ]
}

/// The tool of this name.
pub fn tool(name: &str) -> Option<ToolSpec> {
    tools().into_iter().find(|t| t.name == name)
}

/// A tool's arguments from a call's `arguments` (absent: none), or why they are refused.
pub fn arguments<T: for<'de> Deserialize<'de>>(arguments: Option<&Value>) -> Result<T, String> {
    let value = arguments.cloned().unwrap_or_else(|| json!({}));
    serde_json::from_value(value).map_err(|e| format!("invalid arguments: {e}"))
}

/// A tool without arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct NoArgs {}

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

// Optional arguments are absent when not given: their schemas say `integer` or `string`, not
// `["integer", "null"]`, which clients mapping tools onto a single-`type` dialect reject. A
// `null` sent anyway still reads as absent.

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
    /// The ids of messages an earlier read_inbox or wait_for_messages returned that you have
    /// now: they are marked read before this call reads, and never returned again. Ids not
    /// in the inbox (read already, or never there) are passed over. At most 500.
    #[serde(default)]
    #[schemars(with = "Vec<u64>", length(max = 500))]
    pub ack: Option<Vec<u64>>,
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
    /// The ids of messages an earlier read_inbox or wait_for_messages returned that you have
    /// now: they are marked read before this call reads, and never returned again. Ids not
    /// in the inbox (read already, or never there) are passed over. At most 500.
    #[serde(default)]
    #[schemars(with = "Vec<u64>", length(max = 500))]
    pub ack: Option<Vec<u64>>,
}

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
    /// The page, `<project>/<subproject>/<page>`, as list_docs, search_docs and query_docs
    /// give it.
    pub path: String,
    /// Only the section under the heading with this id (the `anchor` search_docs and
    /// query_docs give, or the `#...` of the page's URL).
    #[serde(default)]
    #[schemars(with = "String")]
    pub anchor: Option<String>,
    /// At most this many tokens (100 to 100000; tokens are UTF-8 bytes divided by 3, rounded
    /// up): the text is cut where a block ends, and its last line says where to read on.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 100, max = 100000))]
    pub max_tokens: Option<u32>,
    /// Where to start, in bytes of the page (or of the section, with `anchor`): the offset a
    /// cut text's last line names. Default 0.
    #[serde(default)]
    #[schemars(with = "u64", extend("default" = 0))]
    pub offset: Option<u64>,
}

/// Which pages a docs search or question keeps to: the same two arguments on both tools.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct DocsScope {
    /// Only this project's pages (its id, as list_docs gives it).
    #[serde(default)]
    #[schemars(with = "String")]
    pub project: Option<String>,
    /// Only this version of a project that has versions (e.g. `v3`); default: each one's
    /// latest.
    #[serde(default)]
    #[schemars(with = "String")]
    pub version: Option<String>,
}

impl DocsScope {
    /// The project, when one is named.
    pub fn project(&self) -> Option<&str> {
        self.project.as_deref().filter(|p| !p.is_empty())
    }

    /// The version, when one is named.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| !v.is_empty())
    }
}

/// `search_docs`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for: words or a question, at least 2 characters.
    pub query: String,
    /// The project and version.
    #[serde(flatten)]
    pub scope: DocsScope,
    /// How many hits to return at most, 1 to 50 (default 10).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 50), extend("default" = DEFAULT_SEARCH_LIMIT))]
    pub limit: Option<u32>,
}

/// `query_docs`' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryDocsArgs {
    /// The question, in plain words.
    pub query: String,
    /// The project and version.
    #[serde(flatten)]
    pub scope: DocsScope,
    /// The most tokens the answer may count, 100 to 100000 (default 2000; tokens are UTF-8
    /// bytes divided by 3, rounded up).
    #[serde(default)]
    #[schemars(with = "u32", range(min = 100, max = 100000), extend("default" = DEFAULT_QUERY_TOKENS))]
    pub max_tokens: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_without_nullable_types() {
        for tool in tools() {
            let json = tool.to_json();
            assert_eq!(json["inputSchema"]["type"], "object", "{}", tool.name);
            let text = json["inputSchema"].to_string();
            assert!(!text.contains("\"type\":["), "{}: {text}", tool.name);
            assert!(json["inputSchema"].get("title").is_none(), "{}", tool.name);
        }
    }

    #[test]
    fn docs_tools_read_only() {
        for tool in tools().iter().filter(|t| t.family == Family::Docs) {
            assert!(tool.read_only, "{}", tool.name);
            assert_eq!(tool.to_json()["annotations"]["readOnlyHint"], true);
        }
        let required = tool("read_doc").unwrap().input_schema["required"].clone();
        assert_eq!(required, json!(["path"]));
    }

    #[test]
    fn the_scope_is_flattened_into_both_docs_tools() {
        for name in ["search_docs", "query_docs"] {
            let schema = tool(name).unwrap().input_schema;
            assert_eq!(schema["properties"]["project"]["type"], "string", "{name}");
            assert_eq!(schema["properties"]["version"]["type"], "string", "{name}");
            assert_eq!(schema["required"], json!(["query"]), "{name}");
        }
        let args: QueryDocsArgs =
            arguments(Some(&json!({"query": "q", "version": "v2", "project": ""}))).unwrap();
        assert_eq!(
            (args.scope.version(), args.scope.project()),
            (Some("v2"), None)
        );
    }

    #[test]
    fn arguments_are_checked() {
        let args: ReadDocArgs = arguments(Some(&json!({"path": "a/b/c", "offset": null}))).unwrap();
        assert_eq!((args.path.as_str(), args.offset), ("a/b/c", None));
        let e = arguments::<ReadDocArgs>(Some(&json!({"anchor": "x"}))).unwrap_err();
        assert_eq!(e, "invalid arguments: missing field `path`");
        assert!(arguments::<NoArgs>(None).is_ok());
    }
}
