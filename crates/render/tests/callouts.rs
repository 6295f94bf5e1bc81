//! Callouts as a reader gets them: every form and kind of one page, checked by snapshot
//! (refresh with `INSTA_UPDATE=always` or `cargo insta review` after a deliberate change).

use dochub_render::{Location, Nav, NavItem, document_page, render_markdown};

const PAGE: &str = "---\ntitle: Callouts\n---\n# Callouts\n\n\
> [!NOTE]\n> A note from GitHub, with `code`.\n\n\
> [!TIP]\n> A tip.\n\n\
> [!IMPORTANT]\n> Important.\n\n\
> [!WARNING]\n> A warning\nwith a lazy line.\n\n\
> [!CAUTION]\n> Caution.\n\n\
> [!NOTE] not an alert: text after the marker\n\n\
:::note\nA directive note.\n:::\n\n\
:::tip[Speed tip]\nBuild once, serve many.\n:::\n\n\
:::info\nInfo, with a list:\n- one\n- two\n:::\n\n\
:::warning\n```toml\n:::\nstays code\n```\n:::\n\n\
::::danger[Outer]\n:::caution\nNested.\n:::\n::::\n\n\
:::tip[<script>alert(1)</script>]\nHostile title.\n:::\n\n\
:::foo\nUnknown kinds stay text.\n:::\n";

#[test]
fn every_callout_form() {
    let rendered = render_markdown(PAGE, &["dochub", "docs"]);
    insta::assert_snapshot!(rendered.html);
}

#[test]
fn callouts_in_the_page_layout() {
    let rendered = render_markdown(PAGE, &["dochub", "docs"]);
    let here = Location {
        project: Some(NavItem::new("dochub", "dochub")),
        subproject: Some(NavItem::new("docs", "Docs")),
        page: Some(NavItem::new("callouts", "Callouts")),
    };
    let html = document_page(&Nav::default(), &here, "Callouts", "", &rendered).expect("renders");
    // The description is the first paragraph's text, no `[!NOTE]`.
    assert!(
        html.contains(r#"<meta name="description" content="A note from GitHub, with code.">"#),
        "{html}"
    );
    assert!(!html.contains("<script>alert"), "title escaped");
    assert_eq!(
        html.matches(r#"<aside class="callout callout-"#).count(),
        12
    );
    let css = &html[html.find("<style>").expect("style")..];
    assert!(css.contains(".content .callout-title {"), "{css}");
}
