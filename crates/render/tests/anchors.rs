//! The anchors search links to are the ids the rendered page carries: both come from
//! `dochub_content`'s one allocator, over the same text of each heading.

use dochub_content::plain_body;
use dochub_render::render_body;

/// The `id` attributes of the page's headings, in page order.
fn heading_ids(html: &str) -> Vec<String> {
    html.match_indices("<h")
        .filter_map(|(at, _)| {
            let tag = &html[at..];
            let level = tag.as_bytes().get(2)?;
            if !(b'1'..=b'6').contains(level) {
                return None;
            }
            let rest = tag.strip_prefix(&tag[..3])?.strip_prefix(" id=\"")?;
            Some(rest[..rest.find('"')?].to_owned())
        })
        .collect()
}

#[test]
fn every_section_anchor_is_an_id_of_the_rendered_page() {
    let body = "Intro.\n\n# Guide\n\n## Usage\n\ntext\n\n## Usage\n\ntext\n\n\
                ## Usage {#usage-1}\n\ntext\n\n## Über Größe\n\n### 日本語 テキスト\n\n\
                ## Custom {#my-id .wide}\n\n## `code` and <b>html</b> <!-- note -->\n\n\
                ## ?!\n\n#### Setext\nheading\n----\n\n> ## Quoted\n\n\
                :::tip[Tip]\n## In a callout\n:::\n\n## Usage\n";
    let plain = plain_body(body);
    let rendered = render_body(body, &["p", "s"]);
    let anchors: Vec<&str> = plain.headings.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(anchors, heading_ids(&rendered.html), "{}", rendered.html);
    // Repeats get suffixes that step around the author's `{#usage-1}`; the author's ids stay.
    assert_eq!(
        &anchors[..4],
        ["guide", "usage", "usage-2", "usage-1"],
        "{anchors:?}"
    );
    assert!(anchors.contains(&"über-größe") && anchors.contains(&"日本語-テキスト"));
    assert!(anchors.contains(&"my-id") && anchors.contains(&"section"));
    // Each section's text is the heading's plain text.
    let texts: Vec<&str> = plain
        .headings
        .iter()
        .map(|h| &plain.plain[h.text.clone()])
        .collect();
    assert!(
        texts.contains(&"Über Größe") && texts.contains(&"code and html"),
        "{texts:?}"
    );
}
