//! The page layout: what a reader sees on each kind of page, checked by assertion and by
//! snapshot (refresh with `INSTA_UPDATE=always` or `cargo insta review` after a deliberate change).

use dochub_render::{
    Card, Location, Nav, NavItem, NavProject, NavSubproject, card_page, document_page,
    not_found_page, render_markdown, search_page,
};
use dochub_search::SearchHit;

fn nav() -> Nav {
    Nav {
        projects: vec![
            NavProject {
                project: NavItem::new("dochub", "dochub"),
                subprojects: vec![
                    NavSubproject {
                        subproject: NavItem::new("docs", "Documentation"),
                        pages: vec![
                            NavItem::new("index", "Overview"),
                            NavItem::new("rendering", "Rendering"),
                            NavItem::new("search", "Search"),
                        ],
                    },
                    NavSubproject {
                        subproject: NavItem::new("api", "API"),
                        pages: vec![NavItem::new("raw", "Raw pages")],
                    },
                ],
                versions: vec![],
            },
            NavProject {
                project: NavItem::new("other", "Other <Project>"),
                subprojects: vec![NavSubproject {
                    subproject: NavItem::new("guide", "Guide"),
                    pages: vec![],
                }],
                versions: vec![],
            },
        ],
        has_reports: true,
        ..Nav::default()
    }
}

fn at(project: &str, subproject: Option<&str>, page: Option<(&str, &str)>) -> Location {
    Location {
        project: Some(NavItem::new(project, project)),
        subproject: subproject.map(|s| NavItem::new(s, "Documentation")),
        page: page.map(|(id, title)| NavItem::new(id, title)),
    }
}

const PAGE: &str = "---\ntitle: Rendering\nsummary: How pages become HTML\n---\n\
# Rendering\n\nIntro with a [link](search.md#syntax).\n\n## Tables\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n\
### Wide tables\n\nText.\n\n## Code\n\n```rust\nfn main() {}\n```\n";

/// The page from `<body` on: snapshots leave out the stylesheet, which `stylesheet_rules` checks.
fn body(html: &str) -> &str {
    html.find("<body").map_or(html, |i| &html[i..])
}

/// Text between `start` and the next `end`, for checking one region of the page.
fn region<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in page"));
    let rest = &html[from..];
    let to = rest.find(end).unwrap_or(rest.len());
    &rest[..to]
}

#[test]
fn document_page_layout() {
    let rendered = render_markdown(PAGE, &["dochub", "docs"]);
    let here = at("dochub", Some("docs"), Some(("rendering", "Rendering")));
    let html = document_page(
        &nav(),
        &here,
        "Rendering",
        "How pages become HTML",
        &rendered,
    )
    .expect("renders");

    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Rendering · dochub</title>"));
    // No external resources: the links are the inline icon and the page's own markdown twin;
    // no fonts or URLs.
    assert_eq!(html.matches("<link").count(), 2);
    assert!(html.contains(r#"<link rel="icon" href="data:image/svg+xml,"#));
    // A URL holds no raw space (HTML validators reject it): the icon's is percent-encoded.
    let start = r#"<link rel="icon" href=""#;
    let icon = &region(&html, start, r#"">"#)[start.len()..];
    assert!(!icon.contains(char::is_whitespace), "{icon}");
    assert!(html.contains(
        r#"<link rel="alternate" type="text/markdown" href="/docs/dochub/docs/rendering.md">"#
    ));
    // One script, the page script (dark mode and copy buttons), whose hash the policy names.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains(&format!("<script>{}</script>", dochub_http::page::SCRIPT)));
    assert!(!html.contains(r#"="http"#) && !html.contains("https://"));

    // Header: brand, nav links, a search form that works without script.
    let header = region(&html, "<header", "</header>");
    assert!(header.contains(r#"class="brand""#));
    for link in ["/docs/", "/api/manifest", "/api/report/latest"] {
        assert!(header.contains(&format!(r#"href="{link}""#)), "{link}");
    }
    assert!(header.contains(r#"<form class="search" action="/docs/search" method="get""#));
    assert!(header.contains(r#"name="q""#));
    // A form has a submit button (WCAG H32), named for screen readers.
    let form = region(header, "<form", "</form>");
    assert!(
        form.contains(r#"<button type="submit" aria-label="Search">"#),
        "{form}"
    );

    // Sidebar: the current project is open, its current subproject lists its pages, the
    // current page alone is active; other projects are closed and list no pages.
    let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
    assert_eq!(sidebar.matches(r#"class="active""#).count(), 1);
    assert!(sidebar.contains(
        r#"<a class="active" aria-current="page" href="/docs/dochub/docs/rendering">Rendering</a>"#
    ));
    assert!(sidebar.contains(r#"<a href="/docs/dochub/docs/">Overview</a>"#));
    assert!(sidebar.contains(r#"<details class="project" open>"#));
    assert!(sidebar.contains(r#"<details class="project">"#));
    assert!(
        !sidebar.contains("/docs/dochub/api/raw"),
        "only the current subproject's pages"
    );
    assert!(
        sidebar.contains("Other &#60;Project&#62;") || sidebar.contains("Other &lt;Project&gt;")
    );

    // Breadcrumbs and summary.
    let crumbs = region(&html, r#"<nav class="breadcrumbs""#, "</nav>");
    assert!(crumbs.contains(r#"<a href="/docs/">Home</a>"#));
    assert!(crumbs.contains(r#"<a href="/docs/dochub/">dochub</a>"#));
    assert!(crumbs.contains(r#"<a href="/docs/dochub/docs/">Documentation</a>"#));
    assert!(crumbs.contains(r#"<span aria-current="page">Rendering</span>"#));
    assert!(html.contains(r#"<p class="summary">How pages become HTML</p>"#));

    // TOC lists h2 and h3.
    let toc = region(&html, r#"<aside class="toc""#, "</aside>");
    assert!(toc.contains("On this page"));
    assert!(toc.contains(r##"<li class="toc-h2"><a href="#tables">Tables</a></li>"##));
    assert!(toc.contains(r##"<li class="toc-h3"><a href="#wide-tables">Wide tables</a></li>"##));
    assert!(toc.contains(r##"<a href="#code">Code</a>"##));

    // The markdown's own h1 is used; no second title.
    assert_eq!(html.matches("<h1").count(), 1);
    assert!(html.contains(r#"href="/docs/dochub/docs/search#syntax""#));

    insta::assert_snapshot!("document_page", body(&html));
}

#[test]
fn document_without_h1_gets_the_title() {
    let rendered = render_markdown("Just text.\n", &["dochub", "docs"]);
    let here = at("dochub", Some("docs"), Some(("search", "Search")));
    let html = document_page(&nav(), &here, "Search", "", &rendered).expect("renders");
    assert!(html.contains("<h1>Search</h1>"));
    assert!(!html.contains(r#"class="summary""#));
    assert!(
        !html.contains(r#"<aside class="toc""#),
        "no outline, no panel"
    );
}

#[test]
fn landing_page_marks_the_index_link() {
    let rendered = render_markdown("# Overview\n", &["dochub", "docs"]);
    let here = at("dochub", Some("docs"), Some(("index", "Overview")));
    let html = document_page(&nav(), &here, "Overview", "", &rendered).expect("renders");
    let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
    assert!(sidebar.contains(
        r#"<a class="active" aria-current="page" href="/docs/dochub/docs/">Overview</a>"#
    ));
    // The trail ends at the subproject: the landing page is the subproject.
    let crumbs = region(&html, r#"<nav class="breadcrumbs""#, "</nav>");
    assert!(crumbs.contains(r#"<span aria-current="page">Documentation</span>"#));
    assert!(!crumbs.contains("Overview"));
}

#[test]
fn titles_and_summaries_are_escaped() {
    let rendered = render_markdown("Body.\n", &["dochub", "docs"]);
    let here = at(
        "dochub",
        Some("docs"),
        Some(("x", "<script>alert(1)</script>")),
    );
    let html = document_page(
        &nav(),
        &here,
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(2)>",
        &rendered,
    )
    .expect("renders");
    assert!(!html.contains("<script>alert(1)"), "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
}

#[test]
fn project_card_list() {
    let cards = vec![
        Card {
            href: "/docs/dochub/docs/".into(),
            title: "Documentation".into(),
            description: "How dochub works".into(),
            meta: "3 pages".into(),
        },
        Card {
            href: "/docs/dochub/api/".into(),
            title: "API".into(),
            description: String::new(),
            meta: "1 page".into(),
        },
    ];
    let here = Location {
        project: Some(NavItem::new("dochub", "dochub")),
        ..Location::default()
    };
    let html = card_page(
        &nav(),
        &here,
        "dochub",
        "The docs service",
        &cards,
        "No subprojects.",
    )
    .expect("renders");
    let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
    assert!(sidebar.contains(r#"<summary><a href="/docs/dochub/" class="active""#));
    let crumbs = region(&html, r#"<nav class="breadcrumbs""#, "</nav>");
    assert!(crumbs.contains(r#"<span aria-current="page">dochub</span>"#));
    assert!(html.contains(r#"<li class="card"><a href="/docs/dochub/docs/">"#));
    assert!(html.contains(r#"<span class="card-meta">3 pages</span>"#));
    insta::assert_snapshot!("project_cards", body(&html));
}

#[test]
fn home_card_list() {
    let cards = vec![Card {
        href: "/docs/dochub/".into(),
        title: "dochub".into(),
        description: "Docs".into(),
        meta: "2 subprojects · 4 pages".into(),
    }];
    let html = card_page(
        &nav(),
        &Location::default(),
        "Projects",
        "",
        &cards,
        "No projects yet.",
    )
    .expect("renders");
    assert!(html.contains(r#"<a class="sidebar-home active""#));
    let crumbs = region(&html, r#"<nav class="breadcrumbs""#, "</nav>");
    assert!(crumbs.contains(r#"<a href="/docs/">Home</a>"#));
    assert!(crumbs.contains(r#"<span aria-current="page">Projects</span>"#));
    assert!(!html.contains(r#"<details class="project" open>"#));

    let empty = card_page(
        &nav(),
        &Location::default(),
        "Projects",
        "",
        &[],
        "No projects yet.",
    )
    .expect("renders");
    assert!(empty.contains(r#"<p class="empty">No projects yet.</p>"#));
}

#[test]
fn search_results() {
    let hits = vec![
        SearchHit {
            path: "dochub/docs/search".into(),
            title: "Search".into(),
            excerpt: "…the search endpoint matches <b>any</b> Search text…".into(),
            section: None,
            anchor: None,
        },
        SearchHit {
            path: "dochub/api/raw".into(),
            title: "Raw <pages>".into(),
            excerpt: "no match in this excerpt".into(),
            section: Some("Über <script>".into()),
            anchor: Some("über-script".into()),
        },
    ];
    let html = search_page(&nav(), "search", &hits, "").expect("renders");
    assert!(html.contains(r#"<a href="/docs/dochub/docs/search">Search</a>"#));
    // A hit under a heading links to it and names it, escaped.
    assert!(html.contains(
        r#"<a href="/docs/dochub/api/raw#%C3%BCber-script">Raw &#60;pages&#62;</a> <span class="section">› Über &#60;script&#62;</span>"#
    ), "{html}");
    assert!(html.contains("<mark>search</mark>"));
    assert!(html.contains("<mark>Search</mark>"));
    assert!(!html.contains("<b>any</b>"), "excerpt text is escaped");
    assert!(!html.contains("Raw <pages>"));
    assert!(
        html.contains(r#"value="search""#),
        "the box keeps the query"
    );
    assert!(html.contains("2 pages match"));
    insta::assert_snapshot!("search_results", body(&html));
}

#[test]
fn search_query_is_escaped() {
    let query = "\"><script>alert(1)</script>";
    let html = search_page(&nav(), query, &[], "").expect("renders");
    assert!(!html.contains("<script>alert(1)"), "{html}");
    assert!(!html.contains(r#"value=""><"#));
    assert!(html.contains("No pages match"));
    let noted = search_page(&nav(), "a", &[], "Type at least 2 characters.").expect("renders");
    assert!(noted.contains(r#"<p class="note">Type at least 2 characters.</p>"#));
}

#[test]
fn not_found() {
    let html = not_found_page(&nav(), "No page “x” in dochub/docs.").expect("renders");
    assert!(html.contains("<title>Page not found · dochub</title>"));
    assert!(html.contains("<h1>Page not found</h1>"));
    assert!(
        html.contains(r#"<nav class="sidebar""#),
        "404s keep the layout"
    );
    assert!(!html.contains(r#"class="active""#));
    insta::assert_snapshot!("not_found", body(&html));
}

#[test]
fn stylesheet_rules() {
    let html = not_found_page(&nav(), "x").expect("renders");
    let css = region(&html, "<style>", "</style>");
    assert!(css.contains("--sidebar-w: 280px;"));
    assert!(css.contains("width: var(--sidebar-w);"));
    assert!(css.contains(".container { max-width: 800px; }"));
    assert!(css.contains("position: fixed; top: calc(var(--header-h) + 24px); right: 16px;"));
    let narrow = region(css, "@media (max-width: 1199px)", "}\n}");
    assert!(narrow.contains(".toc { display: none; }"));
    assert!(css.contains(".sidebar a.active {\n  border-left-color: var(--accent);"));
    assert!(
        !css.contains("@import") && !css.contains("url("),
        "no external resources"
    );
}

/// The content of the page's `<meta name="description">`.
fn description(html: &str) -> &str {
    region(html, r#"<meta name="description" content=""#, r#"">"#)
        .trim_start_matches(r#"<meta name="description" content=""#)
}

#[test]
fn every_page_describes_itself_to_search_engines() {
    let here = at("dochub", Some("docs"), Some(("intro", "Intro")));
    let rendered = render_markdown(
        "# Intro\n\nThe hub passes\nmessages between `machines`.\n\nMore.\n",
        &["dochub", "docs"],
    );
    // The summary when there is one, else the first paragraph, on one line.
    let html = document_page(&nav(), &here, "Intro", "Start here.", &rendered).unwrap();
    assert_eq!(description(&html), "Start here.");
    let html = document_page(&nav(), &here, "Intro", "", &rendered).unwrap();
    assert_eq!(
        description(&html),
        "The hub passes messages between machines."
    );
    // Neither: the title.
    let bare = render_markdown("# Intro\n", &["dochub", "docs"]);
    let html = document_page(&nav(), &here, "Intro", "", &bare).unwrap();
    assert_eq!(description(&html), "Intro");
    // Long text is cut as a search excerpt is, escaped, and never splits a character.
    let long = format!("<b>“Wörds”</b> {}", "naïve ".repeat(60));
    let html = document_page(&nav(), &here, "Intro", &long, &rendered).unwrap();
    let described = description(&html);
    assert!(described.starts_with("&#60;b&#62;"), "{described}");
    assert!(described.ends_with('…'), "{described}");
    assert!(described.chars().count() < 200, "{described}");
    // Lists name what they list; search says what was searched.
    let cards = vec![Card {
        href: "/docs/dochub/".into(),
        title: "dochub".into(),
        description: String::new(),
        meta: String::new(),
    }];
    let html = card_page(&nav(), &Location::default(), "Projects", "", &cards, "").unwrap();
    assert_eq!(description(&html), "Projects: dochub");
    let html = search_page(&nav(), "key value", &[], "").unwrap();
    assert_eq!(
        description(&html),
        "Documentation pages matching “key value”."
    );
}

#[test]
fn previous_and_next_follow_the_subprojects_order() {
    let rendered = render_markdown("# Rendering\n\nText.\n", &["dochub", "docs"]);
    let page_at = |id: &str, title: &str| {
        let here = at("dochub", Some("docs"), Some((id, title)));
        document_page(&nav(), &here, title, "", &rendered).expect("renders")
    };
    let middle = page_at("rendering", "Rendering");
    let pager = region(&middle, r#"<nav class="pager""#, "</nav>");
    assert!(
        pager.contains(r#"<a class="pager-previous" rel="prev" href="/docs/dochub/docs/"><span class="pager-label">Previous</span><span class="pager-title">Overview</span></a>"#),
        "{pager}"
    );
    assert!(
        pager.contains(r#"<a class="pager-next" rel="next" href="/docs/dochub/docs/search"><span class="pager-label">Next</span><span class="pager-title">Search</span></a>"#),
        "{pager}"
    );
    // The first page has no previous, the last no next; neither crosses into another
    // subproject.
    let first = page_at("index", "Overview");
    assert!(!first.contains(r#"rel="prev""#));
    assert!(first.contains(r#"rel="next" href="/docs/dochub/docs/rendering""#));
    let last = page_at("search", "Search");
    assert!(last.contains(r#"rel="prev" href="/docs/dochub/docs/rendering""#));
    assert!(!last.contains(r#"rel="next""#));
    // A page alone in its subproject, and card pages, have no pager at all.
    let here = at("dochub", Some("api"), Some(("raw", "Raw pages")));
    let alone = document_page(&nav(), &here, "Raw pages", "", &rendered).unwrap();
    assert!(!alone.contains(r#"class="pager""#));
    let cards = card_page(&nav(), &at("dochub", None, None), "dochub", "", &[], "none").unwrap();
    assert!(!cards.contains(r#"class="pager""#));
}

#[test]
fn headings_link_to_themselves() {
    let rendered = render_markdown(
        "# Title\n\n## Set up \"it\"\n\n### Then {#custom-id}\n",
        &["dochub", "docs"],
    );
    // The page's title needs no link to itself.
    assert!(
        rendered.html.contains(r#"<h1 id="title">Title</h1>"#),
        "{}",
        rendered.html
    );
    assert!(rendered.html.contains(
        r##"<h2 id="set-up-it">Set up "it"<a class="anchor" href="#set-up-it" aria-label="Link to this section">#</a></h2>"##
    ), "{}", rendered.html);
    assert!(rendered.html.contains(
        r##"<h3 id="custom-id">Then<a class="anchor" href="#custom-id" aria-label="Link to this section">#</a></h3>"##
    ), "{}", rendered.html);
    // The outline keeps the heading's own text.
    assert_eq!(rendered.toc[0].text, "Set up \"it\"");
}

#[test]
fn every_page_carries_the_theme_script_and_switch() {
    let rendered = render_markdown("# T\n", &["dochub", "docs"]);
    let pages = [
        document_page(&nav(), &Location::default(), "T", "", &rendered).unwrap(),
        card_page(&nav(), &Location::default(), "Projects", "", &[], "none").unwrap(),
        search_page(&nav(), "q", &[], "").unwrap(),
        not_found_page(&nav(), "gone").unwrap(),
    ];
    for html in pages {
        let script = format!("<script>{}</script>", dochub_http::page::SCRIPT);
        assert!(html.contains(&script));
        assert_eq!(html.matches("<script").count(), 1);
        assert!(html.contains(r#"<button type="button" id="theme-switch""#));
        assert!(html.contains(r#"<meta name="color-scheme" content="light dark">"#));
    }
}

#[test]
fn the_sidebar_of_a_huge_subproject_lists_the_pages_around_the_one_shown() {
    let pages: Vec<NavItem> = (0..20_000)
        .map(|i| NavItem::new(format!("p{i:05}"), format!("Page {i}")))
        .collect();
    let nav = Nav {
        projects: vec![NavProject {
            project: NavItem::new("big", "Big"),
            subprojects: vec![NavSubproject {
                subproject: NavItem::new("s", "Documentation"),
                pages,
            }],
            versions: vec![],
        }],
        has_reports: false,
        ..Nav::default()
    };
    let rendered = render_markdown("# Page 12345\n", &["big", "s"]);
    let here = at("big", Some("s"), Some(("p12345", "Page 12345")));
    let html = document_page(&nav, &here, "Page 12345", "", &rendered).expect("renders");
    let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
    let listed = sidebar.matches(r#"href="/docs/big/s/p"#).count();
    assert_eq!(listed, dochub_render::MAX_SIDEBAR_PAGES);
    assert!(sidebar.contains(r#"href="/docs/big/s/p12345""#));
    assert!(
        sidebar.contains(r#"<a href="/docs/big/s/">All 20000 pages</a>"#),
        "{sidebar}"
    );
    // The pager still leads to both neighbours.
    assert!(html.contains(r#"rel="prev" href="/docs/big/s/p12344""#));
    assert!(html.contains(r#"rel="next" href="/docs/big/s/p12346""#));
    assert!(html.len() < 60_000, "{} bytes", html.len());
}
