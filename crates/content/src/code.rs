//! Fenced code blocks as the renderer and the build's highlighter both see them: which
//! language a fence names, the code it holds, and the key a highlighted block is kept under.

use pulldown_cmark::{CodeBlockKind, Event, Tag, TagEnd};

use crate::callout::{Markdown, Piece};

/// The language a fence's info string names: its first word (```` ```rust,ignore ````, ```` ```rust {.x} ````
/// name `rust`); `None` when it names none.
///
/// ```
/// use dochub_content::fence_language;
/// assert_eq!(fence_language("rust,ignore"), Some("rust"));
/// assert_eq!(fence_language("  toml {.wide}"), Some("toml"));
/// assert_eq!(fence_language(""), None);
/// ```
pub fn fence_language(info: &str) -> Option<&str> {
    let word = info
        .trim_start()
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("");
    (!word.is_empty()).then_some(word)
}

/// One fenced code block that names a language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// The language, as [`fence_language`] reads it.
    pub language: String,
    /// The code, exactly as the renderer gets it.
    pub code: String,
}

impl CodeBlock {
    /// The key its highlighted form is kept under: a hash of the language and the code, so a
    /// block changed since the build finds nothing and is shown plain.
    pub fn key(&self) -> u64 {
        code_key(&self.language, &self.code)
    }
}

/// The key of a block of `code` in `language` (see [`CodeBlock::key`]).
pub fn code_key(language: &str, code: &str) -> u64 {
    let mut bytes = Vec::with_capacity(language.len() + 1 + code.len());
    bytes.extend_from_slice(language.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(code.as_bytes());
    twox_hash::XxHash3_64::oneshot(&bytes)
}

/// The fenced code blocks of a page body that name a language, in page order.
///
/// ```
/// let blocks = dochub_content::code_blocks("Text\n\n```rust\nfn main() {}\n```\n\n```\nplain\n```\n");
/// assert_eq!(blocks.len(), 1);
/// assert_eq!((blocks[0].language.as_str(), blocks[0].code.as_str()), ("rust", "fn main() {}\n"));
/// ```
pub fn code_blocks(body: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<CodeBlock> = None;
    // Through `Markdown`, so the blocks are those the renderer sees, callouts and all.
    let markdown = Markdown::new(body);
    for piece in markdown.pieces() {
        let Piece::Event(event) = piece else {
            continue;
        };
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                current = fence_language(&info).map(|language| CodeBlock {
                    language: language.to_owned(),
                    code: String::new(),
                });
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}
