//! A page's markdown as plain text, in dochub's markdown dialect ([`crate::markdown_options`]): what
//! search scores and cuts excerpts from, for the live tree and the prebuilt index alike.

use pulldown_cmark::{Event, Tag, TagEnd};

use dochub_search::{Heading, PageFields, PageTerms};

use crate::callout::{Markdown, Piece};
use crate::frontmatter::ParsedPage;
use crate::slug::{IdAllocator, heading_id_text};

/// A page's markdown body as plain text, and the text of its headings: text and code kept,
/// markup, link targets, raw HTML tags, fence and callout markers dropped (a callout's own
/// title is text), whitespace collapsed.
///
/// ```
/// let (plain, headings) = dochub_content::plain_text("# Title {#t}\n\nSee [the *docs*](x.md).\n\n```sh\nspin up\n```\n");
/// assert_eq!(plain, "Title See the docs. spin up");
/// assert_eq!(headings, "Title");
/// let (plain, _) = dochub_content::plain_text("> [!NOTE]\n> Read this.\n\n:::tip[Speed tip]\nBuild once.\n:::\n");
/// assert_eq!(plain, "Read this. Speed tip Build once.");
/// ```
pub fn plain_text(markdown: &str) -> (String, String) {
    let body = plain_body(markdown);
    (body.plain, body.heading_text)
}

/// A page's markdown body as search keeps it ([`plain_body`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainBody {
    /// The body as plain text ([`plain_text`]).
    pub plain: String,
    /// The text of its headings ([`plain_text`]).
    pub heading_text: String,
    /// Its headings in page order: where each one's text is in `plain`, and the `id` the
    /// rendered page gives it.
    pub headings: Vec<Heading>,
}

/// A heading as the walk over the body finds it: where it starts and ends in the text before
/// whitespace is collapsed, its `{#id}`, and the text its id is made from.
struct HeadingMark {
    start: usize,
    end: usize,
    explicit: Option<String>,
    id_text: String,
}

/// [`plain_text`], with the body's headings.
///
/// ```
/// let body = dochub_content::plain_body("Intro.\n\n## Set up {#setup}\n\nRun it.\n\n## Use\n\n## Use\n");
/// assert_eq!(body.plain, "Intro. Set up Run it. Use Use");
/// let headings: Vec<(&str, &str)> = body.headings.iter().map(|h| (&body.plain[h.text.clone()], h.id.as_str())).collect();
/// assert_eq!(headings, [("Set up", "setup"), ("Use", "use"), ("Use", "use-1")]);
/// ```
pub fn plain_body(markdown: &str) -> PlainBody {
    let mut plain = String::with_capacity(markdown.len());
    let mut headings = String::new();
    let mut in_heading = false;
    let mut marks: Vec<HeadingMark> = Vec::new();
    let markdown = Markdown::new(markdown);
    for piece in markdown.pieces() {
        let event = match piece {
            Piece::Event(event) => event,
            Piece::CalloutStart { title, .. } => {
                plain.push(' ');
                plain.push_str(title.unwrap_or_default());
                plain.push(' ');
                continue;
            }
            Piece::CalloutEnd(_) => {
                plain.push(' ');
                continue;
            }
        };
        if in_heading && let (Some(t), Some(mark)) = (heading_id_text(&event), marks.last_mut()) {
            mark.id_text.push_str(t);
        }
        let text = match event {
            Event::Text(t) | Event::Code(t) => t.into_string(),
            // A tag inside a word (`H<sub>2</sub>O`) leaves it whole; a block of HTML does not.
            Event::InlineHtml(t) => strip_tags(&t, ""),
            Event::Html(t) => strip_tags(&t, " "),
            Event::SoftBreak | Event::HardBreak | Event::Rule => " ".to_owned(),
            Event::Start(Tag::Heading { id, .. }) => {
                in_heading = true;
                marks.push(HeadingMark {
                    start: plain.len(),
                    end: plain.len(),
                    explicit: id.map(|id| id.into_string()),
                    id_text: String::new(),
                });
                " ".to_owned()
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
                if let Some(mark) = marks.last_mut() {
                    mark.end = plain.len();
                }
                headings.push(' ');
                " ".to_owned()
            }
            Event::End(end) if is_block_end(end) => " ".to_owned(),
            _ => continue,
        };
        plain.push_str(&text);
        if in_heading {
            headings.push_str(&text);
        }
    }
    let mut bounds: Vec<usize> = marks.iter().flat_map(|m| [m.start, m.end]).collect();
    let plain = collapse_marked(&plain, &mut bounds);
    PlainBody {
        heading_text: collapse(&headings),
        headings: heading_ids(marks, &bounds),
        plain,
    }
}

/// The headings with their ids, as the rendered page gives them (every explicit id reserved
/// first), and their text's place in the collapsed plain text: `bounds` holds a start and an
/// end for each.
fn heading_ids(marks: Vec<HeadingMark>, bounds: &[usize]) -> Vec<Heading> {
    let mut ids = IdAllocator::default();
    for id in marks.iter().filter_map(|m| m.explicit.as_deref()) {
        ids.reserve(id);
    }
    marks
        .into_iter()
        .zip(bounds.chunks_exact(2))
        .map(|(mark, bounds)| {
            let id = match &mark.explicit {
                Some(id) => ids.explicit(id),
                None => ids.automatic(mark.id_text.trim()),
            };
            Heading {
                // A heading without text starts where it ends.
                text: bounds[0]..bounds[1].max(bounds[0]),
                id,
            }
        })
        .collect()
}

fn is_block_end(end: TagEnd) -> bool {
    !matches!(
        end,
        TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Link
            | TagEnd::Image
            | TagEnd::Superscript
            | TagEnd::Subscript
    )
}

/// Raw HTML without its tags, each replaced by `sep` (`<b>Text</b>` is `Text`).
fn strip_tags(html: &str, sep: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push_str(sep);
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// [`collapse`], moving each of `bounds` (alternately the start and the end of a span of
/// `text`, in ascending order) to the same place in the result: a start to the first
/// character at or after it, an end to just after the last character before it.
fn collapse_marked(text: &str, bounds: &mut [usize]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut next = 0;
    // Where the last word written ends in `out`.
    let mut last_end = 0;
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        // Where the word is in `text`: `split_whitespace` hands out slices of it.
        let at = word.as_ptr() as usize - text.as_ptr() as usize;
        while let Some(bound) = bounds.get_mut(next).filter(|b| **b < at + word.len()) {
            *bound = if *bound > at {
                // Within the word (never, for headings): the same offset into it.
                out.len() + (*bound - at)
            } else if next % 2 == 0 {
                out.len()
            } else {
                last_end
            };
            next += 1;
        }
        out.push_str(word);
        last_end = out.len();
    }
    for bound in bounds.iter_mut().skip(next) {
        *bound = out.len();
    }
    out
}

/// Whitespace runs as one space, none at the ends.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// What search ranks a page on: its fields as plain text, with their terms counted
/// ([`PageTerms::new`]).
pub fn page_terms(id: &str, page: &ParsedPage) -> PageTerms {
    page_analysis(id, page).0
}

/// [`page_terms`], and the body's headings ([`plain_body`]): what a hit names its section by.
pub fn page_analysis(id: &str, page: &ParsedPage) -> (PageTerms, Vec<Heading>) {
    let body = plain_body(&page.body);
    let terms = PageTerms::new(PageFields {
        id,
        title: &page.title,
        headings: &body.heading_text,
        summary: &page.summary,
        plain: body.plain,
    });
    (terms, body.headings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_page;

    #[test]
    fn plain_text_drops_markup_and_keeps_words() {
        let (plain, headings) = plain_text(
            "Intro <span class=\"x\">inline</span> text.\n\n## Set **up**\n\n- [x] done\n- item with `code`\n\n| a | b |\n|---|---|\n| c | d |\n\n![alt text](img.png)\n\n<div>\nblock html\n</div>\n\n~~~toml\nkey = 1\n~~~\n",
        );
        assert_eq!(
            plain,
            "Intro inline text. Set up done item with code a b c d alt text block html key = 1"
        );
        assert_eq!(headings, "Set up");
    }

    #[test]
    fn page_terms_count_each_field() {
        let page = parse_page(
            "key-value",
            b"---\ntitle: Key Value Store\nsummary: Store data\n---\n# Using it\n\nThe store keeps a key.\n",
        );
        let t = page_terms("key-value", &page);
        assert_eq!(t.plain, "Using it The store keeps a key.");
        assert_eq!(t.lengths, [3, 2, 2, 8]);
        let store = t.terms.iter().find(|(term, _)| term == "store").unwrap();
        assert_eq!(store.1, [1, 0, 0, 2]);
        let key = t.terms.iter().find(|(term, _)| term == "key").unwrap();
        assert_eq!(key.1, [1, 0, 1, 1]);
    }

    #[test]
    fn headings_lie_in_the_plain_text() {
        let body = plain_body(
            "  Lead\n\n#   Spaced   *out*  \n\n## \n\nText\n\n## Café {#cafe}\n## Café\n\nSetext\ntitle\n===\n",
        );
        assert_eq!(body.plain, "Lead Spaced out Text Café Café Setext title");
        let headings: Vec<(&str, &str)> = body
            .headings
            .iter()
            .map(|h| (&body.plain[h.text.clone()], h.id.as_str()))
            .collect();
        // An empty heading has an empty span where it stands, and the fallback id.
        assert_eq!(
            headings,
            [
                ("Spaced out", "spaced-out"),
                ("", "section"),
                ("Café", "cafe"),
                ("Café", "café"),
                ("Setext title", "setexttitle"),
            ]
        );
        assert_eq!(body.headings[1].text, 16..16);
        // No headings, or nothing but headings.
        assert!(plain_body("just text").headings.is_empty());
        let only = plain_body("# A\n# A");
        assert_eq!(only.plain, "A A");
        let spans: Vec<_> = only.headings.iter().map(|h| h.text.clone()).collect();
        assert_eq!(spans, [0..1, 2..3]);
    }
}
