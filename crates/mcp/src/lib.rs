//! dochub's MCP server, defined once: the tools with their descriptions, input schemas and
//! annotations ([`tools`]), the server's instructions, and the JSON-RPC exchange of MCP's
//! Streamable HTTP transport ([`rpc`]). `dochub mcp` serves these tools on stdio (through the
//! official Rust SDK), and the app serves them at `/mcp`; neither defines a tool of its own.
//! This crate knows nothing of Spin, files or the network.
//!
//! ```
//! let tools = dochub_mcp::tools();
//! let query = tools.iter().find(|t| t.name == "query_docs").unwrap();
//! assert!(query.read_only);
//! assert_eq!(query.to_json()["annotations"]["readOnlyHint"], true);
//! ```
#![deny(missing_docs)]

mod hub;
pub mod rpc;
mod tools;

pub use hub::{InboxRead, not_in_mailbox, reply_to, search_limit};

pub use tools::{
    DEFAULT_LIMIT, DEFAULT_QUERY_TOKENS, DEFAULT_SEARCH_LIMIT, DEFAULT_WAIT_SECONDS, DocsScope,
    Family, Level, ListDocsArgs, MAX_WAIT_SECONDS, NoArgs, QueryDocsArgs, ReadArgs, ReadDocArgs,
    ReplyArgs, SearchArgs, SearchMessagesArgs, SendArgs, ThreadArgs, ToolSpec, WaitArgs, arguments,
    input_schema, tool, tools,
};

/// The URI prefix of docs pages as resources.
pub const RESOURCE_PREFIX: &str = "dochub://docs/";

/// The URI prefix of a machine's inbox as a resource.
pub const INBOX_PREFIX: &str = "dochub://inbox/";

/// What `initialize` tells the model about this server, for `machine`; `hub` says whether the
/// hub's tools are served.
pub fn instructions(machine: &str, hub: bool) -> String {
    let docs = format!(
        "Answer questions from the docs with query_docs (the sections that answer, within a \
         token budget); find pages with search_docs, read a page or one section of it with \
         read_doc (path and anchor), browse with list_docs, or read pages as resources \
         ({RESOURCE_PREFIX}<project>/<subproject>/<page>)."
    );
    if hub {
        format!(
            "dochub: documentation and a message hub. You are machine `{machine}`: \
             send_message sends as it, read_inbox reads its inbox, wait_for_messages waits for \
             the next messages. {docs}"
        )
    } else {
        format!("dochub: documentation, for machine `{machine}`. {docs}")
    }
}
