//! Tier 2 end to end: the real `docs.wasm` under the host, over HTTP, on `tests/fixtures/docs`.

use std::path::Path;

use dochub_tests::copy_tree;
use dochub_tests::{AppBuilder, TestApp, fixture};
use reqwest::redirect::Policy;
use reqwest::{Client, Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A client that shows redirects instead of following them.
fn client() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client")
}

/// A copy of `tests/fixtures/docs` in a temporary folder, with the `_overviews` folder the
/// overview component mounts (the host refuses a files mount whose source is missing).
fn content_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("docs"), dir.path());
    std::fs::create_dir_all(dir.path().join("_overviews")).expect("mkdir");
    dir
}

/// The app on a content tree; keep the tree alive as long as the app.
async fn start_on(content: &Path) -> TestApp {
    TestApp::builder()
        .content(content)
        .start()
        .await
        .expect("app starts")
}

async fn get(app: &TestApp, path: &str) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let res = client().get(app.url(path)).send().await.expect("request");
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.text().await.expect("body");
    (status, headers, body)
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The text between `start` and the next `end` in `html`.
fn region<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in page"));
    let rest = &html[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The labels of the breadcrumb trail, in order.
fn crumbs(html: &str) -> Vec<String> {
    let nav = region(html, r#"<nav class="breadcrumbs""#, "</nav>");
    nav.split("<li>")
        .skip(1)
        .map(|li| {
            let inner = &li[..li.find("</li>").unwrap_or(li.len())];
            // Strip the one tag around the label.
            let open = inner.find('>').map_or(0, |i| i + 1);
            let close = inner.rfind("</").unwrap_or(inner.len());
            inner[open..close].to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn routes_statuses_and_content_types() {
    let content = content_tree();
    let app = start_on(content.path()).await;

    // Home: no _master/index.md in this tree, so a card list of projects.
    let (status, headers, html) = get(&app, "/docs/").await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    assert!(
        html.contains(r#"<a href="/docs/alpha/"><span class="card-title">Alpha Project</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<a href="/docs/gamma/"><span class="card-title">gamma</span>"#));
    assert!(!html.contains(r#"href="/docs/reports/""#));

    // Slashless paths redirect to the slash form.
    for (path, to) in [
        ("/docs", "/docs/"),
        ("/docs/alpha", "/docs/alpha/"),
        ("/docs/alpha/guide", "/docs/alpha/guide/"),
        ("/docs/alpha/guide/install/", "/docs/alpha/guide/install"),
    ] {
        let (status, headers, _) = get(&app, path).await;
        assert_eq!(status, 301, "{path}");
        assert_eq!(header(&headers, "location"), to, "{path}");
    }

    // Project: card list of subprojects with names from _subproject.yaml.
    let (status, _, html) = get(&app, "/docs/alpha/").await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Alpha Project</h1>"));
    assert!(html.contains(r#"<span class="card-title">User Guide</span>"#));
    assert!(html.contains(r#"<span class="card-title">Reference</span>"#));

    // Subproject with index.md: rendered as the landing page.
    let (status, _, html) = get(&app, "/docs/alpha/guide/").await;
    assert_eq!(status, 200);
    assert!(
        html.contains(r#"<h1 id="guide-home">Guide home</h1>"#),
        "{html}"
    );
    // Subproject without: card list of its pages.
    let (status, _, html) = get(&app, "/docs/alpha/reference/").await;
    assert_eq!(status, 200);
    assert!(
        html.contains(r#"<a href="/docs/alpha/reference/api"><span class="card-title">API</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<span class="card-title">Command line</span>"#));

    // A page, rendered and raw.
    let (status, headers, html) = get(&app, "/docs/alpha/guide/install").await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), "text/html; charset=utf-8");
    assert!(html.contains("<title>Installing alpha · dochub</title>"));
    assert!(
        html.contains(r#"<meta name="description" content="Get alpha running on your machine.">"#),
        "{html}"
    );
    let res = client()
        .get(app.url("/docs/alpha/guide/install?format=raw"))
        .send()
        .await
        .expect("raw");
    assert_eq!(res.status(), 200);
    assert_eq!(
        header(res.headers(), "content-type"),
        "text/markdown; charset=utf-8"
    );
    let raw = res.bytes().await.expect("raw body");
    let on_disk = std::fs::read(fixture("docs").join("alpha/guide/install.md")).expect("fixture");
    assert_eq!(
        raw.as_ref(),
        on_disk.as_slice(),
        "raw is the file, frontmatter and all"
    );

    // 404s are HTML pages in the layout.
    for path in [
        "/docs/nope/",
        "/docs/beta/",
        "/docs/alpha/empty/",
        "/docs/alpha/nope/",
        "/docs/alpha/guide/nope",
        "/docs/alpha/guide/nope?format=raw",
        "/docs/alpha/guide/install/extra",
        "/docs/reports/",
    ] {
        let (status, headers, html) = get(&app, path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(
            header(&headers, "content-type"),
            "text/html; charset=utf-8",
            "{path}"
        );
        assert!(html.contains("<h1>Page not found</h1>"), "{path}");
        assert!(html.contains(r#"<nav class="sidebar""#), "{path}");
    }

    // HEAD: headers, no body; other methods: 405 with Allow.
    let res = client()
        .head(app.url("/docs/alpha/guide/install"))
        .send()
        .await
        .expect("head");
    assert_eq!(res.status(), 200);
    assert_eq!(
        header(res.headers(), "content-type"),
        "text/html; charset=utf-8"
    );
    assert!(res.bytes().await.expect("body").is_empty());
    for method in [Method::POST, Method::PUT, Method::DELETE] {
        let res = client()
            .request(method.clone(), app.url("/docs/alpha/"))
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 405, "{method}");
        assert_eq!(header(res.headers(), "allow"), "GET, HEAD", "{method}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn page_layout_sidebar_breadcrumbs_toc() {
    let content = content_tree();
    let app = start_on(content.path()).await;
    let (_, headers, html) = get(&app, "/docs/alpha/guide/install").await;
    assert!(header(&headers, "content-security-policy").contains("default-src 'none'"));

    // Header bar: brand, Home / API / Report, a search form that works without script.
    let bar = region(&html, "<header", "</header>");
    assert!(bar.contains(r#"class="brand""#));
    assert!(bar.contains(r#"<a href="/docs/">Home</a>"#));
    assert!(bar.contains(r#"<a href="/api/manifest">API</a>"#));
    assert!(bar.contains(r#"<a href="/api/report/latest">Report</a>"#));
    assert!(bar.contains(r#"action="/docs/search" method="get""#));
    assert!(bar.contains(r#"name="q""#));

    // Sidebar: every project, the current one open with its subprojects, the current
    // subproject's pages listed, the current page alone marked active.
    let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
    for project in ["Alpha Project", "Beta", "gamma"] {
        assert!(
            sidebar.contains(&format!(">{project}</a></summary>")),
            "{project}"
        );
    }
    assert!(sidebar.contains(r#"<details class="project" open>"#));
    assert_eq!(
        sidebar.matches(" open>").count(),
        1,
        "only the current project is open"
    );
    assert_eq!(sidebar.matches("active").count(), 1, "{sidebar}");
    assert!(sidebar.contains(r#"<a class="active" aria-current="page" href="/docs/alpha/guide/install">Installing alpha</a>"#));
    assert!(sidebar.contains(r#"<a href="/docs/alpha/guide/">Guide home</a>"#));
    assert!(
        !sidebar.contains("/docs/alpha/reference/api"),
        "other subprojects stay folded"
    );

    // Breadcrumbs and summary.
    assert_eq!(
        crumbs(&html),
        ["Home", "Alpha Project", "User Guide", "Installing alpha"]
    );
    assert!(html.contains(r#"<p class="summary">Get alpha running on your machine.</p>"#));

    // On this page: h2 and h3, with ids that resolve in the body.
    let toc = region(&html, r#"<aside class="toc""#, "</aside>");
    let entries: Vec<&str> = toc
        .split(r##"<a href="#"##)
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap_or(0)])
        .collect();
    assert_eq!(entries, ["download", "checksums", "configure-it", "run"]);
    for id in &entries {
        assert!(html.contains(&format!(r#" id="{id}">"#)), "{id}");
    }
    assert!(toc.contains(r##"<li class="toc-h3"><a href="#checksums">Checksums</a></li>"##));

    // Content: links between pages rewritten, code keeps its language, tables render.
    let content = region(&html, r#"<article class="content">"#, "</article>");
    assert!(
        content.contains(r##"<a href="/docs/alpha/reference/api#endpoints">API reference</a>"##)
    );
    assert!(content.contains(r#"<a href="/docs/alpha/guide/">the home page</a>"#));
    assert!(content.contains(r#"<code class="language-toml">"#));
    assert!(content.contains("<table>"));
    assert!(!content.contains("summary:"), "frontmatter is not rendered");

    // The landing page: its trail ends at the subproject, its sidebar link is active.
    let (_, _, html) = get(&app, "/docs/alpha/guide/").await;
    assert_eq!(crumbs(&html), ["Home", "Alpha Project", "User Guide"]);
    assert!(html.contains(
        r#"<a class="active" aria-current="page" href="/docs/alpha/guide/">Guide home</a>"#
    ));
    assert!(html.contains(r#"href="/docs/alpha/reference/api#endpoints""#));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn search_results_and_redirect() {
    let content = content_tree();
    let app = start_on(content.path()).await;
    for path in ["/docs/search?q=", "/docs/search", "/docs/search?q=++"] {
        let (status, headers, _) = get(&app, path).await;
        assert_eq!(status, 302, "{path}");
        assert_eq!(header(&headers, "location"), "/docs/", "{path}");
    }
    let (status, _, html) = get(&app, "/docs/search?q=Zanzibar").await;
    assert_eq!(status, 200);
    let results = region(&html, r#"<ol class="results">"#, "</ol>");
    assert!(
        results.contains(
            r#"<a href="/docs/alpha/guide/install#installing-alpha">Installing alpha</a>"#
        ),
        "{html}"
    );
    assert!(results.contains("<mark>zanzibar</mark>"));
    assert_eq!(results.matches("<li>").count(), 1);
    assert!(
        html.contains(r#"value="Zanzibar""#),
        "the search box keeps the query"
    );

    let (_, _, html) = get(&app, "/docs/search?q=endpoints").await;
    assert!(html.contains("3 pages match"), "{html}");

    let (status, _, html) = get(&app, "/docs/search?q=z").await;
    assert_eq!(status, 200);
    assert!(html.contains("Type at least 2 characters to search."));
    // Words no page holds (`this` would not count: it is a question word).
    let (_, _, html) = get(&app, "/docs/search?q=qwxz+vbnmk").await;
    assert!(html.contains("No pages match “qwxz vbnmk”."), "{html}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn script_in_titles_bodies_and_queries_is_escaped() {
    let content = content_tree();
    let app = start_on(content.path()).await;
    let (status, _, html) = get(&app, "/docs/alpha/guide/xss").await;
    assert_eq!(status, 200);
    // The one script is dochub's own page script.
    let html = html.replace(
        &format!("<script>{}</script>", dochub_http::page::SCRIPT),
        "",
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<div onclick"), "{html}");
    assert!(!html.contains(r#"href="javascript:"#), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert('body')&lt;/script&gt;"),
        "raw HTML shown as text"
    );
    assert!(
        html.contains(
            "<title>&#60;script&#62;alert(&#39;title&#39;)&#60;/script&#62; · dochub</title>"
        ),
        "{html}"
    );

    // The page title also appears in the sidebar and in search results: escaped there too.
    let (_, _, html) = get(&app, "/docs/search?q=alert").await;
    let html = html.replace(
        &format!("<script>{}</script>", dochub_http::page::SCRIPT),
        "",
    );
    assert!(!html.contains("<script"), "{html}");
    let (_, _, html) = get(&app, "/docs/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E").await;
    assert!(!html.contains("<script>alert(1)"), "{html}");
    let (_, _, html) = get(&app, "/docs/search?q=%22%3E%3Cscript%3Ex()%3C/script%3E").await;
    assert!(!html.contains("<script>x()"), "{html}");
    assert!(!html.contains(r#"value=""><"#), "{html}");
    app.stop().await;
}

/// Sends a request line exactly as written (HTTP clients normalise `..` away).
async fn raw_status(app: &TestApp, target: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(app.addr())
        .await
        .expect("connect");
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        app.addr()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.expect("read");
    let text = String::from_utf8_lossy(&response);
    assert!(!text.contains("top secret"), "{target}: {text}");
    text.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn traversal_attempts_are_404() {
    let content = content_tree();
    std::fs::write(content.path().join("secret.md"), "top secret").expect("write");
    std::fs::create_dir_all(content.path().join("_master")).expect("mkdir");
    std::fs::write(content.path().join("alpha/.hidden.md"), "top secret").expect("write");
    let app = start_on(content.path()).await;
    for target in [
        "/docs/alpha/guide/../../secret",
        "/docs/alpha/guide/%2e%2e/%2e%2e/secret",
        "/docs/alpha/guide/..%2f..%2fsecret",
        "/docs/alpha/guide/%2E%2E%2F%2E%2E%2Fsecret?format=raw",
        "/docs/alpha/..%2fguide/install",
        "/docs/alpha/guide/.hidden",
        "/docs/alpha/%2e/.hidden",
        "/docs/_master/x/index",
        "/docs/alpha/guide/%00",
        "/docs/alpha/guide/%ff%fe",
    ] {
        assert_eq!(raw_status(&app, target).await, 404, "{target}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn master_index_is_the_home_page() {
    let content = content_tree();
    std::fs::create_dir_all(content.path().join("_master")).expect("mkdir");
    std::fs::write(
        content.path().join("_master/index.md"),
        "---\ntitle: The hub\nsummary: All docs in one place.\n---\n# The hub\n\n## Projects\n\nStart with [alpha](../alpha/guide/index.md).\n",
    )
    .expect("write");
    let app = start_on(content.path()).await;
    let (status, _, html) = get(&app, "/docs/").await;
    assert_eq!(status, 200);
    assert!(html.contains(r#"<h1 id="the-hub">The hub</h1>"#), "{html}");
    assert!(html.contains(r#"<p class="summary">All docs in one place.</p>"#));
    assert!(html.contains(r##"<a href="#projects">Projects</a>"##));
    assert!(html.contains(r#"<a href="/docs/alpha/guide/">alpha</a>"#));
    assert_eq!(crumbs(&html), ["Home"]);
    // The _master directory is not a project.
    assert!(!html.contains("/docs/_master/"));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_markdown_renders() {
    let content = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(content.path().join("_overviews")).expect("mkdir");
    let dir = content.path().join("p/s");
    std::fs::create_dir_all(&dir).expect("mkdir");
    // Both as large as a page may be (`dochub_content::limits::MAX_PAGE_BYTES`, 256 KiB).
    let mut table = String::from("| a | b | c | d |\n|---|---|---|---|\n");
    for i in 0..5_000 {
        table.push_str(&format!("| {i} | <b>{i}</b> | `x` | **y** |\n"));
    }
    std::fs::write(dir.join("table.md"), &table).expect("write");
    let long: String = (0..8_000)
        .map(|i| format!("Line {i} of a long page.\n\n"))
        .collect();
    let limit = dochub_content::limits::MAX_PAGE_BYTES as usize;
    assert!(table.len() <= limit && long.len() <= limit);
    std::fs::write(dir.join("long.md"), long).expect("write");
    std::fs::write(
        dir.join("fence.md"),
        "# Fence\n\n```rust\nfn main() {\n    loop {}\n",
    )
    .expect("write");
    std::fs::write(dir.join("punct.md"), "# !!!\n\n## ???\n\n## ...\n").expect("write");
    std::fs::write(
        dir.join("html.md"),
        "<iframe src=\"https://example.com\"></iframe>\n<style>body{display:none}</style>\n",
    )
    .expect("write");
    let app = start_on(content.path()).await;

    let (status, _, html) = get(&app, "/docs/p/s/table").await;
    assert_eq!(status, 200);
    assert_eq!(html.matches("<tr>").count(), 5_001);
    let (status, _, html) = get(&app, "/docs/p/s/long").await;
    assert_eq!(status, 200);
    assert!(html.contains("Line 7999 of a long page."));
    let (status, _, html) = get(&app, "/docs/p/s/fence").await;
    assert_eq!(status, 200);
    assert!(html.contains(r#"<code class="language-rust">fn main() {"#));
    let (status, _, html) = get(&app, "/docs/p/s/punct").await;
    assert_eq!(status, 200);
    assert!(html.contains(r#"<h1 id="section">!!!</h1>"#), "{html}");
    let anchor = |id: &str| {
        format!(r##"<a class="anchor" href="#{id}" aria-label="Link to this section">#</a>"##)
    };
    assert!(html.contains(&format!(
        r#"<h2 id="section-1">???{}</h2>"#,
        anchor("section-1")
    )));
    assert!(html.contains(&format!(
        r#"<h2 id="section-2">...{}</h2>"#,
        anchor("section-2")
    )));
    let (status, _, html) = get(&app, "/docs/p/s/html").await;
    assert_eq!(status, 200);
    assert!(
        !html.contains("<iframe") && !html.contains("<style>body"),
        "{html}"
    );
    app.stop().await;
}

/// sha256("secret"), as `auth_tokens` holds it.
const SECRET_DIGEST: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

#[tokio::test(flavor = "multi_thread")]
async fn production_requires_a_token() {
    let content = content_tree();
    let app = TestApp::builder()
        .content(content.path())
        .variable("environment", "production")
        .variable("auth_tokens", SECRET_DIGEST)
        .start()
        .await
        .expect("app starts");
    let res = client()
        .get(app.url("/docs/"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 401);
    assert!(header(res.headers(), "www-authenticate").starts_with("Basic"));
    let res = client()
        .get(app.url("/docs/alpha/guide/install"))
        .bearer_auth("wrong")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 401);
    let res = client()
        .get(app.url("/docs/alpha/guide/install"))
        .bearer_auth("secret")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    // A browser sends the token as the Basic-auth password.
    let res = client()
        .get(app.url("/docs/alpha/guide/install?format=raw"))
        .basic_auth("reader", Some("secret"))
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    app.stop().await;
}

/// Decodes `%XX` escapes (as in a fragment the HTML writer percent-encoded).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every `href` of a page, unescaped.
fn hrefs(html: &str) -> Vec<String> {
    html.split(r#"href=""#)
        .skip(1)
        .filter_map(|rest| rest.find('"').map(|end| rest[..end].replace("&amp;", "&")))
        .collect()
}

/// The bundled documentation, crawled from `/docs/` like a reader clicking every link: every
/// page answers 200, and every link between pages (and every `#fragment` on one) lands.
#[tokio::test(flavor = "multi_thread")]
async fn bundled_docs_have_no_broken_links() {
    let app = TestApp::builder().start().await.expect("app starts");
    let mut queue = vec!["/docs/".to_owned()];
    let mut pages = std::collections::HashMap::new();
    let mut links = Vec::new();
    while let Some(path) = queue.pop() {
        if pages.contains_key(&path) {
            continue;
        }
        let (status, headers, html) = get(&app, &path).await;
        assert_eq!(status, 200, "{path}");
        let is_html = header(&headers, "content-type").starts_with("text/html");
        if is_html {
            for href in hrefs(&html) {
                let (target, fragment) = match href.split_once('#') {
                    Some(("", f)) => (path.clone(), Some(f.to_owned())),
                    Some((t, f)) => (t.to_owned(), Some(f.to_owned())),
                    None => (href.clone(), None),
                };
                if target.starts_with("/docs/") && !target.starts_with("/docs/search") {
                    queue.push(target.clone());
                    links.push((path.clone(), target, fragment));
                }
            }
        }
        pages.insert(path, if is_html { html } else { String::new() });
        assert!(pages.len() < 500, "the crawl should end");
    }
    assert!(
        pages.len() > 10,
        "the bundled docs have pages: {:?}",
        pages.keys()
    );
    let mut broken = Vec::new();
    let mut anchors = 0;
    for (from, to, fragment) in &links {
        if let Some(fragment) = fragment
            && !fragment.is_empty()
        {
            anchors += 1;
            let id = percent_decode(fragment);
            let html = &pages[to];
            if !html.contains(&format!(r#" id="{id}""#)) {
                broken.push(format!("{from} -> {to}#{fragment}"));
            }
        }
    }
    assert!(
        anchors > 20,
        "TOC entries and cross-links are checked: {anchors}"
    );
    assert!(broken.is_empty(), "links to missing anchors: {broken:#?}");
    app.stop().await;
}

/// The app on `content` reading the index in `build`, or (`None`) the tree alone.
fn with_build(content: &Path, build: Option<&Path>) -> AppBuilder {
    let app = TestApp::builder().content(content);
    match build {
        Some(build) => app.mount(build, "/prebuilt").env("BUILD_DIR", "/prebuilt"),
        None => app.env("SERVE_PREBUILT", "0"),
    }
}

async fn start_with_build(content: &Path, build: Option<&Path>) -> TestApp {
    with_build(content, build)
        .start()
        .await
        .expect("app starts")
}

/// Every docs address of a tree, some that do not exist, and searches.
fn docs_addresses(content: &Path) -> Vec<String> {
    let root = dochub_content::ContentRoot::open(content).expect("root");
    let mut out = vec!["/docs/".to_owned(), "/docs/nope/".to_owned()];
    for p in root.projects().expect("projects") {
        out.push(format!("/docs/{}/", p.id));
        for s in root.subprojects(&p.id).expect("subs").unwrap_or_default() {
            out.push(format!("/docs/{}/{}/", p.id, s.id));
            out.push(format!("/docs/{}/{}/nope", p.id, s.id));
            for id in root.page_ids(&p.id, &s.id).expect("pages") {
                out.push(format!("/docs/{}/{}/{}", p.id, s.id, id));
            }
        }
    }
    for q in [
        "the",
        "th",
        "quasar",
        "SERVICE",
        "%C3%BCber",
        "%E6%97%A5%E6%9C%AC",
        "x",
    ] {
        out.push(format!("/docs/search?q={q}"));
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_sidebar_and_search_from_the_index_match_the_tree() {
    let generated = tempfile::tempdir().expect("temp dir");
    let spec = dochub_content::corpus::Spec {
        projects: 3,
        subprojects: 2,
        pages: 6,
        page_bytes: 2000,
    };
    dochub_content::corpus::generate(generated.path(), &spec).expect("corpus");
    for content in [fixture("docs"), generated.path().to_path_buf()] {
        let build = tempfile::tempdir().expect("build dir");
        let root = dochub_content::ContentRoot::open(&content).expect("root");
        dochub_index::build::write_build(
            &root,
            build.path(),
            &dochub_http::iso8601(chrono::Utc::now()),
        )
        .expect("build");
        let live = start_with_build(&content, None).await;
        let pre = start_with_build(&content, Some(build.path())).await;
        let addresses = docs_addresses(&content);
        assert!(addresses.len() > 10);
        // The build highlights code blocks, the live tree shows them plain: compared
        // without the highlighting's tags (and so without any `</span>`).
        let plain = |html: &str| {
            let mut html = html.to_owned();
            for class in "kscnftgid".chars() {
                html = html.replace(&format!(r#"<span class="hl-{class}">"#), "");
            }
            let html = html.replace("</span>", "");
            // The build records git dates (the fixtures are in a work tree); the live tree
            // knows only frontmatter dates: the "Last updated" footer is left out.
            match (
                html.find(r#"<footer class="page-meta">"#),
                html.find("</footer>"),
            ) {
                (Some(start), Some(end)) if start < end => {
                    format!(
                        "{}{}",
                        html[..start]
                            .strip_suffix("\n      ")
                            .unwrap_or(&html[..start]),
                        &html[end + "</footer>".len()..]
                    )
                }
                _ => html,
            }
        };
        for address in addresses {
            let (l, p) = (get(&live, &address).await, get(&pre, &address).await);
            assert_eq!(l.0, p.0, "{address}");
            assert_eq!(plain(&l.2), plain(&p.2), "{address}");
        }
        live.stop().await;
        pre.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_page_shows_at_once_though_the_index_is_older() {
    let content = content_tree();
    let build = tempfile::tempdir().expect("build dir");
    let root = dochub_content::ContentRoot::open(content.path()).expect("root");
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .expect("build");
    // Edited while it runs: mounted in place (under `spin up` too), not copied at start.
    let app = with_build(content.path(), Some(build.path()))
        .direct_mounts()
        .start()
        .await
        .expect("app starts");
    std::fs::write(
        content.path().join("alpha/guide/brand-new.md"),
        "# Brand new page\n\nWith a wombat.\n",
    )
    .expect("write");
    let (status, _, html) = get(&app, "/docs/alpha/guide/brand-new").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains(r#"href="/docs/alpha/guide/brand-new">Brand new page</a>"#),
        "{html}"
    );
    let (_, _, html) = get(&app, "/docs/search?q=wombat").await;
    assert!(
        html.contains(r#"href="/docs/alpha/guide/brand-new#brand-new-page""#),
        "{html}"
    );
    app.stop().await;
}

/// The `<loc>`s of a sitemap.
fn sitemap_locs(xml: &str) -> Vec<String> {
    xml.split("<loc>")
        .skip(1)
        .map(|rest| rest[..rest.find("</loc>").expect("closed loc")].replace("&amp;", "&"))
        .collect()
}

/// `/robots.txt` and `/sitemap.xml` are routes of the docs component (spin.toml): in
/// development the sitemap names every docs page by its absolute URL, each of which answers;
/// `site_url` sets the origin; in production robots.txt refuses everything and the sitemap
/// needs the token.
#[tokio::test(flavor = "multi_thread")]
async fn robots_and_sitemap() {
    let content = content_tree();
    let app = start_on(content.path()).await;
    let (status, headers, robots) = get(&app, "/robots.txt").await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        "text/plain; charset=utf-8"
    );
    assert_eq!(
        robots,
        format!(
            "User-agent: *\nAllow: /\n\nSitemap: {}\n",
            app.url("/sitemap.xml")
        )
    );
    let (status, headers, xml) = get(&app, "/sitemap.xml").await;
    assert_eq!(status, 200, "{xml}");
    assert_eq!(
        header(&headers, "content-type"),
        "application/xml; charset=utf-8"
    );
    let locs = sitemap_locs(&xml);
    assert!(locs.contains(&app.url("/docs/")), "{xml}");
    assert!(
        locs.contains(&app.url("/docs/alpha/guide/install")),
        "{xml}"
    );
    for loc in &locs {
        let res = client().get(loc).send().await.expect("request");
        assert_eq!(res.status(), 200, "{loc}");
    }
    app.stop().await;

    let app = TestApp::builder()
        .content(content.path())
        .variable("site_url", "https://docs.example.com/")
        .start()
        .await
        .expect("app starts");
    let (_, _, robots) = get(&app, "/robots.txt").await;
    assert!(robots.ends_with("Sitemap: https://docs.example.com/sitemap.xml\n"));
    let (_, _, xml) = get(&app, "/sitemap.xml").await;
    assert!(
        sitemap_locs(&xml)
            .iter()
            .all(|loc| loc.starts_with("https://docs.example.com/docs/")),
        "{xml}"
    );
    app.stop().await;

    let app = TestApp::builder()
        .content(content.path())
        .variable("environment", "production")
        .variable("auth_tokens", SECRET_DIGEST)
        .start()
        .await
        .expect("app starts");
    let (status, _, robots) = get(&app, "/robots.txt").await;
    assert_eq!(status, 200);
    assert!(robots.contains("User-agent: *\nDisallow: /\n"), "{robots}");
    assert_eq!(get(&app, "/sitemap.xml").await.0, 401);
    let res = client()
        .get(app.url("/sitemap.xml"))
        .bearer_auth("secret")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    app.stop().await;
}
