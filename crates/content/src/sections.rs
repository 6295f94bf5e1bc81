//! A page's body by section, and cuts of it that fit a budget of tokens: what agents read
//! instead of whole pages (`read_doc`'s `anchor` and `max_tokens`, `/api/raw?anchor=`,
//! `query_docs`).
//!
//! A section is a heading and what follows it up to the next heading of the same or a higher
//! level; its id is the one the rendered page gives the heading ([`crate::IdAllocator`], every
//! explicit `{#id}` reserved first), so an anchor from search or from the page's URL names it.
//!
//! **Tokens** are counted as UTF-8 bytes over [`BYTES_PER_TOKEN`], rounded up. Tokenizers of
//! current models average three and a half to four bytes a token on English prose and about
//! three on code, so a text within this count is within the budget in any of them.
//!
//! ```
//! use dochub_content::{cut, sections};
//! let body = "Intro.\n\n## Set up {#setup}\n\nRun it.\n\n### Details\n\nMore.\n\n## Use\n\nUse it.\n";
//! let found = sections(body);
//! let ids: Vec<&str> = found.iter().map(|s| s.id.as_str()).collect();
//! assert_eq!(ids, ["setup", "details", "use"]);
//! assert_eq!(&body[found[0].range()], "## Set up {#setup}\n\nRun it.\n\n### Details\n\nMore.\n\n");
//! assert_eq!(&body[found[0].own_range()], "## Set up {#setup}\n\nRun it.\n\n");
//! // A cut ends where a block starts, and says where to read on.
//! let part = cut(body, 0, 12);
//! assert_eq!((part.text, part.next), ("Intro.\n\n", Some(8)));
//! ```

use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::callout::markdown_options;
use crate::slug::{IdAllocator, heading_id_text};

/// Bytes counted as one token (see the module docs).
pub const BYTES_PER_TOKEN: usize = 3;

/// The tokens a text counts as: its UTF-8 bytes over [`BYTES_PER_TOKEN`], rounded up.
///
/// ```
/// assert_eq!(dochub_content::count_tokens("abcd"), 2);
/// assert_eq!(dochub_content::count_tokens(""), 0);
/// ```
pub fn count_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// One heading of a body and the section it opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// 1 for `#`, up to 6.
    pub level: u8,
    /// The id the rendered page gives the heading.
    pub id: String,
    /// The heading's text.
    pub title: String,
    /// Where the heading starts in the body.
    pub start: usize,
    /// Where the next heading of any level starts (or the body ends): the end of the text
    /// before its first subsection.
    pub own_end: usize,
    /// Where the next heading of the same or a higher level starts (or the body ends).
    pub end: usize,
}

impl Section {
    /// The whole section, subsections included.
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// The heading and its text up to its first subsection.
    pub fn own_range(&self) -> Range<usize> {
        self.start..self.own_end
    }
}

/// The headings of a markdown body (no frontmatter) in page order, each with its section.
pub fn sections(body: &str) -> Vec<Section> {
    struct Mark {
        level: u8,
        start: usize,
        explicit: Option<String>,
        title: String,
        id_text: String,
    }
    let mut marks: Vec<Mark> = Vec::new();
    let mut open = false;
    for (event, range) in Parser::new_ext(body, markdown_options()).into_offset_iter() {
        match &event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                open = true;
                marks.push(Mark {
                    level: *level as u8,
                    start: range.start,
                    explicit: id.as_ref().map(|id| id.to_string()),
                    title: String::new(),
                    id_text: String::new(),
                });
            }
            Event::End(TagEnd::Heading(_)) => open = false,
            _ if open => {
                if let Some(mark) = marks.last_mut() {
                    if let Some(text) = heading_id_text(&event) {
                        mark.id_text.push_str(text);
                    }
                    match &event {
                        Event::Text(t) | Event::Code(t) => mark.title.push_str(t),
                        Event::SoftBreak | Event::HardBreak => mark.title.push(' '),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    let mut ids = IdAllocator::default();
    for id in marks.iter().filter_map(|m| m.explicit.as_deref()) {
        ids.reserve(id);
    }
    let starts: Vec<(u8, usize)> = marks.iter().map(|m| (m.level, m.start)).collect();
    marks
        .into_iter()
        .enumerate()
        .map(|(i, mark)| {
            let later = &starts[i + 1..];
            let own_end = later.first().map_or(body.len(), |&(_, start)| start);
            let end = later
                .iter()
                .find(|&&(level, _)| level <= mark.level)
                .map_or(body.len(), |&(_, start)| start);
            Section {
                id: match &mark.explicit {
                    Some(id) => ids.explicit(id),
                    None => ids.automatic(mark.id_text.trim()),
                },
                title: mark.title.trim().to_owned(),
                level: mark.level,
                start: mark.start,
                own_end,
                end,
            }
        })
        .collect()
}

/// Where each top-level block of a markdown text starts (a paragraph, a list, a fenced code
/// block, a table, ...), in order: the places a cut may fall without splitting a block.
pub fn block_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(text, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    starts.push(range.start);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ if depth == 0 => starts.push(range.start),
            _ => {}
        }
    }
    starts
}

/// A part of a text that fits a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut<'a> {
    /// The text from the offset asked for, at most the budget's bytes long.
    pub text: &'a str,
    /// Where the rest starts, when there is more.
    pub next: Option<usize>,
}

/// The part of `text` from `offset` that fits in `max_bytes`: up to the last block start
/// that fits ([`block_starts`]); when the first block alone is too long, up to the last line
/// end that fits, else the last character that fits. It always moves on (at least one
/// character) while `max_bytes` holds one. `offset` past the end, or not at a character
/// boundary, reads from the next boundary.
pub fn cut(text: &str, offset: usize, max_bytes: usize) -> Cut<'_> {
    let offset = text.ceil_char_boundary(offset.min(text.len()));
    let rest = &text[offset..];
    if rest.len() <= max_bytes {
        return Cut {
            text: rest,
            next: None,
        };
    }
    let limit = text.floor_char_boundary(offset + max_bytes);
    let at_block = block_starts(text)
        .into_iter()
        .filter(|&start| start > offset && start <= limit)
        .max();
    let end = at_block
        .or_else(|| {
            text[offset..limit]
                .rfind('\n')
                .map(|i| offset + i + 1)
                .filter(|&end| end > offset)
        })
        .unwrap_or_else(|| {
            if limit > offset {
                limit
            } else {
                // Not even one character fits: give one anyway, so a reader always moves on.
                text.ceil_char_boundary(offset + 1)
            }
        });
    Cut {
        text: &text[offset..end],
        next: Some(end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plain_body;

    #[test]
    fn ids_match_what_search_and_the_page_give() {
        let body = "# Title\n\n## Use {#usage}\n\ntext\n\n## Usage\n\n## `code` and *more*\n\n\
                    ## Use\n\n## Use\n\nSetext\n------\n\n## <span>Hi</span>\n\n## ?!\n";
        let ours: Vec<String> = sections(body).into_iter().map(|s| s.id).collect();
        let search: Vec<String> = plain_body(body)
            .headings
            .into_iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(ours, search);
        assert_eq!(ours[2], "usage-1");
    }

    #[test]
    fn sections_end_at_a_heading_of_the_same_or_a_higher_level() {
        let body = "## A\n\na\n\n### B\n\nb\n\n# C\n\nc\n\n## D\n";
        let found = sections(body);
        let text: Vec<&str> = found.iter().map(|s| &body[s.range()]).collect();
        assert_eq!(
            text,
            [
                "## A\n\na\n\n### B\n\nb\n\n",
                "### B\n\nb\n\n",
                "# C\n\nc\n\n## D\n",
                "## D\n"
            ]
        );
        assert_eq!(found[2].title, "C");
        assert_eq!(found[2].level, 1);
        // A `#` inside a code block is no heading.
        assert!(sections("```sh\n# comment\n```\n").is_empty());
    }

    #[test]
    fn cuts_fall_between_blocks_and_never_exceed_the_budget() {
        let text = "Para one.\n\n```sh\nline 1\nline 2\n```\n\nPara two is longer.\n";
        let part = cut(text, 0, 30);
        assert_eq!(part.text, "Para one.\n\n");
        let part = cut(text, 11, 30);
        assert_eq!(part.text, "```sh\nline 1\nline 2\n```\n\n");
        assert_eq!(part.next, Some(36));
        assert_eq!(cut(text, 36, 100).next, None);
        // One block longer than the budget: cut at a line, then at a character.
        let part = cut(text, 11, 14);
        assert_eq!(part.text, "```sh\nline 1\n");
        let long = "é".repeat(10);
        let part = cut(&long, 0, 5);
        assert_eq!((part.text, part.next), ("éé", Some(4)));
        // Every cut moves on, even with no room.
        assert_eq!(cut(&long, 0, 0).text, "é");
        // An offset inside a character starts at the next one.
        assert_eq!(cut(&long, 1, 100).text, "é".repeat(9));
        assert_eq!(cut(&long, 999, 10).text, "");
    }

    #[test]
    fn reading_on_from_each_cut_gives_back_the_whole_text() {
        let text =
            "# T\n\nIntro.\n\n- a\n- b\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnd.\n";
        for budget in [1, 5, 12, 20, 200] {
            let mut whole = String::new();
            let mut offset = 0;
            loop {
                let part = cut(text, offset, budget);
                assert!(part.text.len() <= budget.max(4), "{budget}");
                whole.push_str(part.text);
                match part.next {
                    Some(next) => offset = next,
                    None => break,
                }
            }
            assert_eq!(whole, text, "{budget}");
        }
    }
}
