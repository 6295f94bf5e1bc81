//! A page's markdown as plain text, in dochub's markdown dialect ([`markdown_options`]): what
//! search scores and cuts excerpts from, for the live tree and the prebuilt index alike.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use dochub_search::{PageFields, PageTerms};

use crate::frontmatter::ParsedPage;

/// The markdown dialect of dochub pages, in one place: CommonMark plus tables, footnotes,
/// strikethrough, task lists and heading attributes (`# Title {#id .class}`).
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// A page's markdown body as plain text, and the text of its headings: text and code kept,
/// markup, link targets, raw HTML tags and fence markers dropped, whitespace collapsed.
///
/// ```
/// let (plain, headings) = dochub_content::plain_text("# Title {#t}\n\nSee [the *docs*](x.md).\n\n```sh\nspin up\n```\n");
/// assert_eq!(plain, "Title See the docs. spin up");
/// assert_eq!(headings, "Title");
/// ```
pub fn plain_text(markdown: &str) -> (String, String) {
    let mut plain = String::with_capacity(markdown.len());
    let mut headings = String::new();
    let mut in_heading = false;
    for event in Parser::new_ext(markdown, markdown_options()) {
        let text = match event {
            Event::Text(t) | Event::Code(t) => t.into_string(),
            // A tag inside a word (`H<sub>2</sub>O`) leaves it whole; a block of HTML does not.
            Event::InlineHtml(t) => strip_tags(&t, ""),
            Event::Html(t) => strip_tags(&t, " "),
            Event::SoftBreak | Event::HardBreak | Event::Rule => " ".to_owned(),
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                " ".to_owned()
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
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
    (collapse(&plain), collapse(&headings))
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
    let (plain, headings) = plain_text(&page.body);
    PageTerms::new(PageFields {
        id,
        title: &page.title,
        headings: &headings,
        summary: &page.summary,
        plain,
    })
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
}
