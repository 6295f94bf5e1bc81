//! Markdown to HTML: parser options, heading ids and outline, link rewriting, raw HTML escaping.

use std::collections::{HashMap, VecDeque};

use dochub_content::{
    CalloutKind, IdAllocator, Markdown, Piece, heading_id_text, is_html_comment as is_comment,
};
use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Tag, TagEnd, html};

use crate::links::{self, Rewrite};

/// The markdown dialect of dochub pages: the one search reads too
/// ([`dochub_content::markdown_options`]).
pub fn options() -> Options {
    dochub_content::markdown_options()
}

/// One entry of a page's outline: an h2 or h3 heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TocEntry {
    /// 2 or 3.
    pub level: u8,
    /// The heading's `id` attribute, unique within the page.
    pub id: String,
    /// The heading's plain text.
    pub text: String,
}

/// A rendered markdown page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The page body as HTML (frontmatter removed, raw HTML escaped).
    pub html: String,
    /// The h2/h3 outline, in page order.
    pub toc: Vec<TocEntry>,
    /// Plain text of the first h1, if the page has one.
    pub h1: Option<String>,
    /// Plain text of the first paragraph (empty when there is none): what describes a page
    /// without a summary.
    pub first_paragraph: String,
}

/// Returns the markdown body of a page file: the text after a leading YAML frontmatter block
/// (`---` on the first line, up to the next line that is `---` or `...`). A file whose first
/// line is not `---`, or whose block is never closed, has no frontmatter and is returned whole.
///
/// ```
/// let page = "---\ntitle: Hi\n---\n# Body\n";
/// assert_eq!(dochub_render::strip_frontmatter(page), "# Body\n");
/// assert_eq!(dochub_render::strip_frontmatter("# No frontmatter"), "# No frontmatter");
/// ```
pub fn strip_frontmatter(source: &str) -> &str {
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    dochub_content::split_frontmatter(text).map_or(source, |(_, body)| body)
}

/// Renders a page file (frontmatter and all) to HTML.
///
/// `base` names the content directory the file lives in (`["project", "subproject"]` for a
/// page, `["_master"]` for the hub home); relative links to other `.md` files are resolved
/// against it and rewritten to their `/docs/...` URLs.
///
/// Raw HTML in the markdown is escaped, never passed through: pages are written by people and
/// by agents alike, and a docs site behind a login must not run script that a page smuggled in.
/// HTML comments are dropped. Heading attributes keep `{#id}` and `{.class}` only, for the
/// same reason (`{onclick=...}` would be script too).
///
/// ```
/// let page = dochub_render::render_markdown("# Title\n\n## Setup\n\nSee [raw](../api/raw.md).", &["dochub", "docs"]);
/// assert!(page.html.contains(r##"<h2 id="setup">Setup<a class="anchor" href="#setup" aria-label="Link to this section">#</a></h2>"##));
/// assert!(page.html.contains(r#"href="/docs/dochub/api/raw""#));
/// assert_eq!(page.toc[0].id, "setup");
/// assert_eq!(page.h1.as_deref(), Some("Title"));
/// ```
pub fn render_markdown(source: &str, base: &[&str]) -> Rendered {
    render_body(strip_frontmatter(source), base)
}

/// Renders markdown that has no frontmatter (e.g. the body the content tree already split
/// off), exactly as [`render_markdown`] renders a page's body.
pub fn render_body(body: &str, base: &[&str]) -> Rendered {
    render_body_highlighted(body, base, &HashMap::new())
}

/// [`render_body`], with the highlighted form of its fenced code blocks: `highlighted` maps a
/// block's key ([`dochub_content::code_key`] of its language and code) to the inside of its
/// `<code>` element, as `dochub build` wrote it (trusted HTML). A block that is not there is
/// shown plain, escaped, as `render_body` shows every block.
pub fn render_body_highlighted(
    body: &str,
    base: &[&str],
    highlighted: &HashMap<u64, String>,
) -> Rendered {
    let markdown = Markdown::new(body);
    let mut events = escape_raw_html(markdown.pieces(), base);
    if !highlighted.is_empty() {
        events = with_highlighted_code(events, highlighted);
    }

    let first_paragraph = first_paragraph(&events);
    let mut ids = IdAllocator::default();
    for event in &events {
        if let Event::Start(Tag::Heading { id: Some(id), .. }) = event {
            ids.reserve(id);
        }
    }

    let mut toc = Vec::new();
    let mut h1 = None;
    let mut events = events.into_iter();
    // Events go straight to the HTML writer; only a heading's own events wait in `pending`
    // until its text, and so its id, is known.
    let mut pending: VecDeque<Event<'_>> = VecDeque::new();
    let stream = std::iter::from_fn(|| {
        if let Some(event) = pending.pop_front() {
            return Some(event);
        }
        let event = events.next()?;
        let Event::Start(Tag::Heading {
            level, id, classes, ..
        }) = event
        else {
            return Some(event);
        };
        let mut text = String::new();
        // The id from the same text, by the same allocator, as search's anchors.
        for event in events.by_ref() {
            if let Event::End(TagEnd::Heading(_)) = event {
                break;
            }
            if let Some(t) = heading_id_text(&event) {
                text.push_str(t);
            }
            pending.push_back(event);
        }
        let text = text.trim().to_owned();
        let id = match id {
            Some(id) => ids.explicit(&id),
            None => ids.automatic(&text),
        };
        if level != HeadingLevel::H1 {
            pending.push_back(Event::Html(CowStr::from(anchor(&id))));
        }
        pending.push_back(Event::End(TagEnd::Heading(level)));
        match level {
            HeadingLevel::H1 if h1.is_none() => h1 = Some(text),
            HeadingLevel::H2 | HeadingLevel::H3 => toc.push(TocEntry {
                level: if level == HeadingLevel::H2 { 2 } else { 3 },
                id: id.clone(),
                text,
            }),
            _ => {}
        }
        Some(Event::Start(Tag::Heading {
            level,
            id: Some(CowStr::from(id)),
            classes,
            attrs: Vec::new(),
        }))
    });
    let mut html = String::with_capacity(body.len() * 3 / 2);
    html::push_html(&mut html, stream);
    Rendered {
        html,
        toc,
        h1,
        first_paragraph,
    }
}

/// Replaces each fenced code block whose highlighted form is known with that form.
fn with_highlighted_code<'a>(
    events: Vec<Event<'a>>,
    highlighted: &HashMap<u64, String>,
) -> Vec<Event<'a>> {
    let mut out = Vec::with_capacity(events.len());
    let mut events = events.into_iter();
    while let Some(event) = events.next() {
        let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) = event else {
            out.push(event);
            continue;
        };
        let mut inner = Vec::new();
        let mut code = String::new();
        for event in events.by_ref() {
            if let Event::End(TagEnd::CodeBlock) = event {
                break;
            }
            if let Event::Text(text) = &event {
                code.push_str(text);
            }
            inner.push(event);
        }
        let html = dochub_content::fence_language(&info)
            .and_then(|language| highlighted.get(&dochub_content::code_key(language, &code)));
        match html {
            Some(html) => {
                // The class the HTML writer gives a plain block: the info string's first word.
                let mut block = String::from("<pre><code");
                if let Some(class) = info.split(' ').next().filter(|c| !c.is_empty()) {
                    block.push_str(r#" class="language-"#);
                    // Writing to a `String` cannot fail.
                    let _ = pulldown_cmark_escape::escape_html(&mut block, class);
                    block.push('"');
                }
                block.push('>');
                block.push_str(html);
                block.push_str("</code></pre>\n");
                out.push(Event::Html(CowStr::from(block)));
            }
            None => {
                out.push(Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))));
                out.extend(inner);
                out.push(Event::End(TagEnd::CodeBlock));
            }
        }
    }
    out
}

/// The link to a heading that shows when the reader points at it (the style hides it
/// otherwise). Written here, after raw HTML was escaped, from the heading's id.
fn anchor(id: &str) -> String {
    let mut href = String::from("#");
    let mut html = String::from(r#"<a class="anchor" href=""#);
    // Writing to a `String` cannot fail.
    let _ = pulldown_cmark_escape::escape_href(&mut href, id);
    let _ = pulldown_cmark_escape::escape_html(&mut html, &href);
    html.push_str(r#"" aria-label="Link to this section">#</a>"#);
    html
}

/// The text of the first paragraph, its line breaks as spaces.
fn first_paragraph(events: &[Event<'_>]) -> String {
    let mut text = String::new();
    let start = events
        .iter()
        .position(|e| matches!(e, Event::Start(Tag::Paragraph)));
    for event in start.map_or(&[][..], |at| &events[at + 1..]) {
        match event {
            Event::End(TagEnd::Paragraph) => break,
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            _ => {}
        }
    }
    text
}

/// The start of a callout: an `<aside>` with its title, escaped (titles are plain text).
/// `role="note"`: a callout is part of the text around it, not a complementary landmark.
fn callout_start(kind: CalloutKind, title: Option<&str>) -> String {
    let mut html = format!(
        "<aside class=\"callout callout-{}\" role=\"note\">\n<p class=\"callout-title\">",
        kind.name()
    );
    // Writing to a `String` cannot fail.
    let _ = pulldown_cmark_escape::escape_html(&mut html, title.unwrap_or(kind.title()));
    html.push_str("</p>\n");
    html
}

/// Turns raw HTML into text (which the HTML writer escapes), drops comments, rewrites link
/// destinations, and writes callouts as `<aside>`s. An HTML block becomes a paragraph of its
/// escaped source.
fn escape_raw_html<'a>(pieces: impl Iterator<Item = Piece<'a>>, base: &[&str]) -> Vec<Event<'a>> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for piece in pieces {
        let event = match piece {
            Piece::Event(event) => event,
            Piece::CalloutStart { kind, title } => {
                out.push(Event::Html(CowStr::from(callout_start(kind, title))));
                continue;
            }
            Piece::CalloutEnd(_) => {
                out.push(Event::Html(CowStr::from("</aside>\n")));
                continue;
            }
        };
        match event {
            Event::Start(Tag::HtmlBlock) => block = Some(String::new()),
            Event::End(TagEnd::HtmlBlock) => {
                let raw = block.take().unwrap_or_default();
                if !is_comment(&raw) {
                    out.push(Event::Start(Tag::Paragraph));
                    out.push(Event::Text(CowStr::from(raw.trim_end().to_owned())));
                    out.push(Event::End(TagEnd::Paragraph));
                }
            }
            Event::Html(raw) => match block.as_mut() {
                Some(buffer) => buffer.push_str(&raw),
                None if is_comment(&raw) => {}
                None => out.push(Event::Text(raw)),
            },
            Event::InlineHtml(raw) if is_comment(&raw) => {}
            Event::InlineHtml(raw) => out.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = match links::rewrite(&dest_url, base) {
                    Rewrite::Keep => dest_url,
                    Rewrite::To(new) => CowStr::from(new),
                };
                out.push(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = if links::is_unsafe(&dest_url) {
                    CowStr::from("#")
                } else {
                    dest_url
                };
                out.push(Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }));
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: [&str; 2] = ["proj", "sub"];

    fn render(md: &str) -> Rendered {
        render_markdown(md, &BASE)
    }

    #[test]
    fn frontmatter_is_stripped() {
        let page = render("---\ntitle: T\nsummary: S\n---\n# Heading\n\nBody\n");
        assert!(!page.html.contains("title:"), "{}", page.html);
        assert!(!page.html.contains("<hr"), "{}", page.html);
        assert!(page.html.contains("<p>Body</p>"));
    }

    #[test]
    fn frontmatter_variants() {
        assert_eq!(strip_frontmatter("---\r\na: 1\r\n---\r\nx"), "x");
        assert_eq!(strip_frontmatter("\u{feff}---\na: 1\n...\nx"), "x");
        assert_eq!(strip_frontmatter("---\na: 1\n---"), "");
        // Never closed: not frontmatter, the text stays.
        assert_eq!(strip_frontmatter("---\na: 1\n"), "---\na: 1\n");
        // A thematic break later in the file is not frontmatter.
        assert_eq!(strip_frontmatter("x\n---\ny"), "x\n---\ny");
    }

    #[test]
    fn dialect_features() {
        let page = render(
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~\n\n- [x] done\n- [ ] todo\n\nNote[^1].\n\n[^1]: The note.\n",
        );
        assert!(page.html.contains("<table>"), "{}", page.html);
        assert!(page.html.contains("<del>gone</del>"));
        assert!(
            page.html
                .contains(r#"<input disabled="" type="checkbox" checked=""/>"#)
        );
        assert!(page.html.contains(r#"class="footnote-definition""#));
    }

    #[test]
    fn code_blocks_keep_their_language() {
        let page = render("```rust\nfn main() {}\n```\n");
        assert!(
            page.html
                .contains(r#"<pre><code class="language-rust">fn main() {}"#),
            "{}",
            page.html
        );
    }

    #[test]
    fn heading_ids_and_outline() {
        let page = render(
            "# Title\n## Install\n### From source {#source}\n## Install\n#### Deep\n## ?!\n## Source\n",
        );
        let ids: Vec<_> = page.toc.iter().map(|e| (e.level, e.id.as_str())).collect();
        assert_eq!(
            ids,
            [
                (2, "install"),
                (3, "source"),
                (2, "install-1"),
                (2, "section"),
                (2, "source-1")
            ]
        );
        assert_eq!(page.h1.as_deref(), Some("Title"));
        assert!(page.html.contains(r#"<h1 id="title">Title</h1>"#));
        let anchored = |id: &str| {
            format!(r##"<a class="anchor" href="#{id}" aria-label="Link to this section">#</a>"##)
        };
        assert!(
            page.html
                .contains(&format!(r#"<h4 id="deep">Deep{}</h4>"#, anchored("deep")))
        );
        assert!(page.html.contains(&format!(
            r#"<h3 id="source">From source{}</h3>"#,
            anchored("source")
        )));
    }

    #[test]
    fn heading_text_includes_code_and_links() {
        let page = render("## The `raw` [endpoint](x.md)\n");
        assert_eq!(page.toc[0].text, "The raw endpoint");
        assert_eq!(page.toc[0].id, "the-raw-endpoint");
        assert!(
            page.html
                .contains(r#"<a href="/docs/proj/sub/x">endpoint</a>"#)
        );
    }

    #[test]
    fn heading_attributes_other_than_id_and_class_are_dropped() {
        let page = render("## Click {.note onclick=alert(1)}\n");
        assert!(!page.html.contains("onclick"), "{}", page.html);
        assert!(page.html.contains(r#"class="note""#), "{}", page.html);
    }

    #[test]
    fn raw_html_is_escaped() {
        let page = render(
            "<script>alert(1)</script>\n\nText with <b onclick=\"x()\">inline</b> html.\n\n<div>\nblock\n</div>\n",
        );
        assert!(!page.html.contains("<script"), "{}", page.html);
        assert!(!page.html.contains("<b "), "{}", page.html);
        assert!(!page.html.contains("<div"), "{}", page.html);
        assert!(page.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            page.html
                .contains("&lt;b onclick=\"x()\"&gt;inline&lt;/b&gt;")
        );
    }

    #[test]
    fn html_comments_are_dropped() {
        let page = render("<!-- a note for editors -->\n\nText <!-- inline --> here.\n");
        assert!(!page.html.contains("editors"), "{}", page.html);
        assert!(!page.html.contains("inline"), "{}", page.html);
        assert!(page.html.contains("Text"));
    }

    #[test]
    fn script_links_are_neutralised() {
        let page =
            render("[x](javascript:alert(1)) ![y](javascript:alert(2)) <javascript:alert(3)>\n");
        assert!(
            !page.html.contains("javascript:alert(1)\""),
            "{}",
            page.html
        );
        assert!(!page.html.contains("src=\"javascript"), "{}", page.html);
        assert!(!page.html.contains("href=\"javascript"), "{}", page.html);
    }

    #[test]
    fn links_between_pages() {
        let page = render(
            "[a](other.md) [b](other.md#usage) [c](../api/raw.md) [d](https://x.org/y.md)\n",
        );
        assert!(page.html.contains(r#"href="/docs/proj/sub/other""#));
        assert!(page.html.contains(r##"href="/docs/proj/sub/other#usage""##));
        assert!(page.html.contains(r#"href="/docs/proj/api/raw""#));
        assert!(page.html.contains(r#"href="https://x.org/y.md""#));
    }

    #[test]
    fn callouts_render_as_asides() {
        let page = render(
            "> [!WARNING]\n> Back up first.\n\n:::tip[Speed tip]\nBuild **once**.\n:::\n\n> plain\n",
        );
        assert_eq!(
            page.html,
            "<aside class=\"callout callout-warning\" role=\"note\">\n<p class=\"callout-title\">Warning</p>\n\
             <p>Back up first.</p>\n</aside>\n\
             <aside class=\"callout callout-tip\" role=\"note\">\n<p class=\"callout-title\">Speed tip</p>\n\
             <p>Build <strong>once</strong>.</p>\n</aside>\n\
             <blockquote>\n<p>plain</p>\n</blockquote>\n"
        );
        for kind in CalloutKind::ALL {
            let page = render(&format!(":::{}\nx\n:::\n", kind.name()));
            let open = format!(
                "<aside class=\"callout callout-{}\" role=\"note\">\n<p class=\"callout-title\">{}</p>",
                kind.name(),
                kind.title()
            );
            assert!(page.html.starts_with(&open), "{}", page.html);
        }
    }

    #[test]
    fn callout_markers_never_show() {
        let page = render(
            "Intro.\n\n> [!NOTE]\n> Alert text.\n\n:::danger\n- one\n- two\n:::\n\n::: info Custom\nx\n:::\n",
        );
        assert!(!page.html.contains("[!"), "{}", page.html);
        assert!(!page.html.contains(":::"), "{}", page.html);
        assert_eq!(page.html.matches("<aside").count(), 3);
        assert_eq!(page.html.matches("</aside>").count(), 3);
        // The list ends inside its callout.
        assert!(
            page.html.contains("<li>two</li>\n</ul>\n</aside>"),
            "{}",
            page.html
        );
        // A description starting in a callout has its text, not its markers.
        let page = render("> [!TIP]\n> Start here.\n");
        assert_eq!(page.first_paragraph, "Start here.");
        let page = render(":::note[Read me]\nFirst words.\n:::\n");
        assert_eq!(page.first_paragraph, "First words.");
    }

    #[test]
    fn callout_titles_are_escaped() {
        let page = render(":::tip[<script>alert(1)</script>]\nx\n:::\n");
        assert!(!page.html.contains("<script"), "{}", page.html);
        assert!(
            page.html
                .contains("<p class=\"callout-title\">&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
            "{}",
            page.html
        );
        let page = render(":::note[\"quoted\" & <b>]\nx\n:::\n");
        assert!(
            page.html
                .contains(">&quot;quoted&quot; &amp; &lt;b&gt;</p>"),
            "{}",
            page.html
        );
    }

    #[test]
    fn directive_text_in_code_and_unknown_kinds_stays() {
        let page = render("```md\n:::note\nx\n:::\n```\n\n:::foo\ny\n:::\n");
        assert!(
            page.html
                .contains("<pre><code class=\"language-md\">:::note\nx\n:::\n</code></pre>"),
            "{}",
            page.html
        );
        assert!(page.html.contains("<p>:::foo\ny\n:::</p>"), "{}", page.html);
        assert!(!page.html.contains("<aside"), "{}", page.html);
    }

    #[test]
    fn bad_input_renders() {
        // Unclosed fence: the rest of the page is code, no panic.
        let page = render("# T\n\n```rust\nfn x() {\n");
        assert!(page.html.contains("language-rust"));

        // Punctuation-only headings get fallback ids.
        let page = render("## ...\n## ---\n## !!!\n");
        let ids: Vec<_> = page.toc.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["section", "section-1", "section-2"]);

        // Enormous table.
        let mut table = String::from("|");
        for c in 0..200 {
            table.push_str(&format!(" c{c} |"));
        }
        table.push_str("\n|");
        table.push_str(&"---|".repeat(200));
        table.push('\n');
        for r in 0..2000 {
            table.push('|');
            for c in 0..200 {
                table.push_str(&format!(" {r}.{c} |"));
            }
            table.push('\n');
        }
        let page = render(&table);
        assert_eq!(page.html.matches("<tr>").count(), 2001);

        // 10,000 lines with a heading every ten.
        let mut long = String::new();
        for i in 0..10_000 {
            if i % 10 == 0 {
                long.push_str("## Same heading\n");
            } else {
                long.push_str(&format!("Line {i} with *emphasis* and `code`.\n"));
            }
        }
        let page = render(&long);
        assert_eq!(page.toc.len(), 1000);
        assert_eq!(page.toc[999].id, "same-heading-999");

        // Deep nesting.
        let nested = ">".repeat(5000) + " deep\n";
        render(&nested);
        let list: String = (0..2000)
            .map(|i| format!("{}- item\n", "  ".repeat(i)))
            .collect();
        render(&list);
    }
}
