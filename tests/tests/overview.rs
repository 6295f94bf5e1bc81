//! Tier 1 end to end: `/` and `/overview/...` served by the real overview component under the host.

use dochub_http::auth::token_digest;
use dochub_overview::OVERVIEWS;
use dochub_tests::{TestApp, fixture, repo_root};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HTML: &str = "text/html; charset=utf-8";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

fn content_type(res: &reqwest::Response) -> &str {
    res.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// Sends `GET <target>` exactly as written (reqwest would normalise `..` away) and returns
/// the status code and body.
async fn raw_get(app: &TestApp, target: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(app.addr()).await.unwrap();
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        app.addr()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {response:?}"));
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn root_redirects_to_the_landing_page() {
    let app = TestApp::builder().start().await.unwrap();
    let res = no_redirects().get(app.url("/")).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::FOUND);
    assert_eq!(res.headers()[LOCATION], "/overview/");

    // Followed, it lands on the landing page.
    let res = reqwest::get(app.url("/")).await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.url().path(), "/overview/");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn landing_page_has_a_card_for_every_overview_docs_and_api() {
    let app = TestApp::builder().start().await.unwrap();
    for path in ["/overview/", "/overview"] {
        let res = reqwest::get(app.url(path)).await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        assert_eq!(content_type(&res), HTML, "{path}");
        let html = res.text().await.unwrap();
        for o in OVERVIEWS {
            let card = format!(r#"<a class="card t1" href="/overview/{}">"#, o.id);
            assert!(html.contains(&card), "{path}: no card for {}", o.id);
            assert!(html.contains(&o.title.replace('&', "&#38;")), "{}", o.title);
        }
        for card in [
            r#"<a class="card t2" href="/docs/">"#,
            r#"<a class="card t3" href="/api/manifest">"#,
            r#"<a class="card t3" href="/api/health">"#,
        ] {
            assert!(html.contains(card), "{path}: no card {card}");
        }
        for tier in ["Tier 1", "Tier 2", "Tier 3"] {
            assert!(html.contains(tier), "{path}: {tier} not explained");
        }
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn overviews_are_served_byte_for_byte() {
    let app = TestApp::builder().start().await.unwrap();
    for o in OVERVIEWS {
        let file = repo_root()
            .join("content/_overviews")
            .join(format!("{}.html", o.id));
        let expected = std::fs::read(&file).unwrap();
        let res = reqwest::get(app.url(&format!("/overview/{}", o.id)))
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{}", o.id);
        assert_eq!(content_type(&res), HTML, "{}", o.id);
        assert_eq!(res.bytes().await.unwrap(), expected, "{}", o.id);

        // A query string changes nothing; HEAD has the headers and no body.
        let res = reqwest::get(app.url(&format!("/overview/{}?x=1", o.id)))
            .await
            .unwrap();
        assert_eq!(res.bytes().await.unwrap(), expected, "{}?x=1", o.id);
        let res = reqwest::Client::new()
            .head(app.url(&format!("/overview/{}", o.id)))
            .send()
            .await
            .unwrap();
        assert_eq!((res.status().as_u16(), content_type(&res)), (200, HTML));
        assert!(res.bytes().await.unwrap().is_empty());
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_ids_are_an_html_404() {
    let app = TestApp::builder().start().await.unwrap();
    for path in [
        "/overview/nope",
        "/overview/Architecture",
        "/overview/architecture.html",
        "/overview/architecture/",
        "/overview/architecture/extra",
        "/overview/-",
    ] {
        let res = reqwest::get(app.url(path)).await.unwrap();
        assert_eq!(res.status(), 404, "{path}");
        assert_eq!(content_type(&res), HTML, "{path}");
        let body = res.text().await.unwrap();
        assert!(body.contains("Page not found"), "{path}: {body}");
        assert!(body.contains(r#"href="/overview/""#), "{path}: no way back");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_registered_id_without_its_file_is_a_404() {
    // This tree has architecture.html and content-pipeline.html, not auth-deployment.html, and
    // an unregistered notes.html.
    let dir = fixture("overview-partial");
    let app = TestApp::builder().content(&dir).start().await.unwrap();

    let res = reqwest::get(app.url("/overview/auth-deployment"))
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(content_type(&res), HTML);

    // The fixture's files, not the repository's, are the ones served.
    for id in ["architecture", "content-pipeline"] {
        let res = reqwest::get(app.url(&format!("/overview/{id}")))
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "{id}");
        let expected = std::fs::read(dir.join(format!("_overviews/{id}.html"))).unwrap();
        assert_eq!(res.bytes().await.unwrap(), expected, "{id}");
    }

    // A file without a registry entry is not served.
    let res = reqwest::get(app.url("/overview/notes")).await.unwrap();
    assert_eq!(res.status(), 404);

    // The landing page has a card for each overview whose file is there, and only those.
    let landing = reqwest::get(app.url("/overview/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (id, shown) in [
        ("architecture", true),
        ("content-pipeline", true),
        ("auth-deployment", false),
        ("notes", false),
    ] {
        let card = format!(r#"<a class="card t1" href="/overview/{id}">"#);
        assert_eq!(landing.contains(&card), shown, "card for {id}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn traversal_in_the_id_is_a_404() {
    let dir = fixture("overview-partial");
    let app = TestApp::builder().content(&dir).start().await.unwrap();
    let secret = std::fs::read_to_string(dir.join("secret.html")).unwrap();
    for target in [
        "/overview/../secret",
        "/overview/..%2Fsecret",
        "/overview/..%2f..%2fsecret",
        "/overview/%2e%2e%2fsecret",
        "/overview/%2E%2E/secret",
        "/overview/..%5Csecret",
        "/overview/.%2Farchitecture",
        "/overview//architecture",
        "/overview/architecture%2F..%2Fsecret",
        "/overview/%00architecture",
    ] {
        let (status, body) = raw_get(&app, target).await;
        assert_eq!(status, 404, "{target}");
        assert!(!body.contains(secret.trim()), "{target} leaked the file");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn only_get_and_head_are_allowed() {
    let app = TestApp::builder().start().await.unwrap();
    let client = no_redirects();
    for path in ["/", "/overview/", "/overview/architecture"] {
        for method in [
            reqwest::Method::POST,
            reqwest::Method::PUT,
            reqwest::Method::DELETE,
        ] {
            let res = client
                .request(method.clone(), app.url(path))
                .body("x")
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 405, "{method} {path}");
            assert_eq!(res.headers()["allow"], "GET, HEAD", "{method} {path}");
        }
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn production_asks_for_a_token_on_every_route() {
    let app = TestApp::builder()
        .variable("environment", "production")
        .variable("auth_tokens", &token_digest("overview-secret"))
        .start()
        .await
        .unwrap();
    let client = no_redirects();
    for path in [
        "/",
        "/overview/",
        "/overview/architecture",
        "/overview/nope",
    ] {
        let res = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 401, "{path}");
        assert!(
            res.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Basic "),
            "{path}: a browser must be asked for the token"
        );
        let res = client
            .get(app.url(path))
            .bearer_auth("wrong")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401, "{path} with a wrong token");
    }
    let res = client
        .get(app.url("/overview/architecture"))
        .bearer_auth("overview-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // A browser sends the token as the Basic password.
    let res = client
        .get(app.url("/"))
        .basic_auth("anyone", Some("overview-secret"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 302);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn overviews_and_landing_page_reference_nothing_external() {
    let app = TestApp::builder().start().await.unwrap();
    let mut pages = vec![(
        "landing page".to_owned(),
        reqwest::get(app.url("/overview/"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )];
    let notfound = reqwest::get(app.url("/overview/nope")).await.unwrap();
    pages.push(("404 page".to_owned(), notfound.text().await.unwrap()));
    for o in OVERVIEWS {
        let path = repo_root().join(format!("content/_overviews/{}.html", o.id));
        pages.push((o.id.to_owned(), std::fs::read_to_string(path).unwrap()));
    }
    for (name, html) in &pages {
        let problems = external_references(html);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
    }
    app.stop().await;
}

/// Everything in `html` that would load or link something outside the page: a resource
/// attribute (`src`, `srcset`, `poster`, `data`, `<link href>`, `xlink:href`/`href` on SVG
/// `<image>`/`<use>`) that is not a `data:` URL or a `#fragment`, a CSS `url()` likewise, any
/// `@import`, and any `http(s)://` or `//host` link. `xmlns` attributes may only name W3C
/// namespaces.
fn external_references(html: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let inline = |v: &str| {
        let v = v.trim().to_ascii_lowercase();
        v.starts_with("data:") || v.starts_with('#')
    };
    let remote = |v: &str| {
        let v = v.trim().to_ascii_lowercase();
        v.starts_with("http:") || v.starts_with("https:") || v.starts_with("//")
    };
    for tag in tags(html) {
        for (name, value) in &tag.attrs {
            let resource = matches!(name.as_str(), "src" | "srcset" | "poster" | "data")
                || (name == "href" && matches!(tag.name.as_str(), "link" | "image" | "use"))
                || name == "xlink:href";
            if resource && !inline(value) {
                problems.push(format!("<{} {name}={value:?}> loads a resource", tag.name));
            } else if name == "xmlns" || name.starts_with("xmlns:") {
                if !value.starts_with("http://www.w3.org/") {
                    problems.push(format!("<{} {name}={value:?}>", tag.name));
                }
            } else if remote(value) {
                problems.push(format!("<{} {name}={value:?}> points outside", tag.name));
            }
            if name == "style" {
                problems.extend(css_problems(value));
            }
        }
    }
    // Style sheets (and anything else) in the text: url() and @import.
    problems.extend(css_problems(html));
    problems
}

fn css_problems(css: &str) -> Vec<String> {
    let lower = css.to_ascii_lowercase();
    let mut problems = Vec::new();
    if lower.contains("@import") {
        problems.push("@import".to_owned());
    }
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        let end = rest.find(')').unwrap_or(rest.len());
        let value = rest[..end].trim().trim_matches(['"', '\'']);
        if !(value.starts_with("data:") || value.starts_with('#')) {
            problems.push(format!("url({value})"));
        }
    }
    problems
}

struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
}

/// The start tags of `html` with their attributes (names lowercased), skipping comments,
/// doctype and end tags. Enough HTML for hand-written pages: quoted and unquoted values.
fn tags(html: &str) -> Vec<Tag> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix("!--") {
            rest = after.find("-->").map_or("", |j| &after[j + 3..]);
            continue;
        }
        if rest.starts_with(['!', '/', '?']) {
            continue;
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        let mut s = &rest[name_end..];
        let mut attrs = Vec::new();
        loop {
            s = s.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            if s.is_empty() || s.starts_with('>') {
                break;
            }
            let n_end = s
                .find(|c: char| c.is_whitespace() || c == '=' || c == '>')
                .unwrap_or(s.len());
            let attr = s[..n_end].to_ascii_lowercase();
            s = s[n_end..].trim_start();
            let mut value = String::new();
            if let Some(v) = s.strip_prefix('=') {
                let v = v.trim_start();
                if let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') {
                    let body = &v[1..];
                    let end = body.find(q).unwrap_or(body.len());
                    value = body[..end].to_owned();
                    s = body.get(end + 1..).unwrap_or("");
                } else {
                    let end = v
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .unwrap_or(v.len());
                    value = v[..end].to_owned();
                    s = &v[end..];
                }
            }
            attrs.push((attr, value));
        }
        rest = s;
        out.push(Tag { name, attrs });
    }
    out
}

#[test]
fn the_reference_check_catches_what_it_should() {
    let bad = r#"<!doctype html><html><head>
        <link rel="stylesheet" href="/style.css">
        <link rel=icon href=https://cdn.example/x.ico>
        <style>@import "x.css"; body { background: url('https://cdn.example/bg.png') }</style>
        <script src="app.js"></script></head>
        <body><img src="//cdn.example/a.png"><a href="https://example.org/">x</a>
        <div style="background:url(/bg.png)"></div>
        <svg xmlns="http://evil.example/ns"><image href="pic.png"/><use xlink:href="sprites.svg#a"/></svg>
        </body></html>"#;
    let problems = external_references(bad);
    for needle in [
        "/style.css",
        "x.ico",
        "@import",
        "url(https://cdn.example/bg.png)",
        "app.js",
        "//cdn.example/a.png",
        "https://example.org/",
        "url(/bg.png)",
        "evil.example",
        "pic.png",
        "sprites.svg#a",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} not reported: {problems:#?}"
        );
    }

    let good = r##"<!doctype html><html><head><link rel="icon" href="data:,">
        <style>.a { background: url("data:image/png;base64,AAAA") } </style></head>
        <body><!-- <img src="https://x"> --><a href="/docs/">docs</a><a href="#top">top</a>
        <svg viewBox="0 0 1 1" xmlns="http://www.w3.org/2000/svg"><path marker-end="url(#ah)"/></svg>
        <pre>curl http://127.0.0.1:3000/api/manifest</pre></body></html>"##;
    assert_eq!(external_references(good), Vec::<String>::new());
}

/// A user's own docs tree (projects only: no `_overviews`, `_master` or `reports`) under the
/// repository's spin.toml as it is, mounts unchanged, as `spin up` would run it: every tier
/// answers, and the landing page says there are no overview pages yet.
#[tokio::test(flavor = "multi_thread")]
async fn a_plain_docs_tree_serves_every_tier() {
    dochub_tests::ensure_components_built().unwrap();
    let app_dir = tempfile::tempdir().unwrap();
    let content = app_dir.path().join("content");
    let spec = dochub_content::corpus::Spec {
        projects: 2,
        subprojects: 2,
        pages: 3,
        page_bytes: 1500,
    };
    dochub_content::corpus::generate(&content, &spec).unwrap();
    let root = dochub_content::ContentRoot::open(&content).unwrap();
    dochub_index::build::write_build(
        &root,
        &app_dir.path().join("build"),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .unwrap();
    // spin.toml beside the tree: only the component sources point back at this repository.
    let manifest = std::fs::read_to_string(repo_root().join("spin.toml"))
        .unwrap()
        .replace(
            "source = \"target/",
            &format!("source = \"{}/target/", repo_root().display()),
        );
    std::fs::write(app_dir.path().join("spin.toml"), manifest).unwrap();
    let host = dochub_host::start(dochub_host::HostOptions {
        manifest: app_dir.path().join("spin.toml"),
        listen: "127.0.0.1:0".parse().unwrap(),
        state_dir: Some(app_dir.path().join(".spin")),
        ..Default::default()
    })
    .await
    .expect("a tree without _overviews starts");
    let base = format!("http://{}", host.addr());
    let landing = reqwest::get(format!("{base}/overview/")).await.unwrap();
    assert_eq!(landing.status(), 200);
    let html = landing.text().await.unwrap();
    assert!(html.contains("There are no overview pages yet"), "{html}");
    assert!(!html.contains("href=\"/overview/architecture\""));
    let (status, _) = raw_get_at(&base, "/overview/architecture").await;
    assert_eq!(status, 404);
    for (path, needle) in [
        ("/docs/", "Project 1"),
        ("/docs/p01/s00/page-0002", "Subproject 1.0"),
        ("/docs/search?q=service", "p00/s00/page-0000"),
        ("/api/manifest", "\"total_documents\":12"),
        ("/api/manifest/p00/s01", "page-0002"),
        ("/api/search?q=service", "p00/s00/page-0000"),
        ("/api/raw/p00/s00/page-0000", "title:"),
    ] {
        let res = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        let body = res.text().await.unwrap();
        assert!(body.contains(needle), "{path}: {needle} not in {body}");
    }
    let report = reqwest::get(format!("{base}/api/report/latest"))
        .await
        .unwrap();
    assert_eq!(report.status(), 404);
    host.shutdown().await;
}

async fn raw_get_at(base: &str, path: &str) -> (u16, String) {
    let res = reqwest::get(format!("{base}{path}")).await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap_or_default())
}

/// Sets a file's or folder's modification time a minute back, as on a tree left alone.
fn settle(path: &std::path::Path) {
    let at = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(path)
        .unwrap()
        .set_times(std::fs::FileTimes::new().set_modified(at))
        .unwrap();
}

/// The WASIp3 instance keeps the landing page and overview files while their times stand
/// still; mounted in place, every change still shows on the next request.
#[tokio::test(flavor = "multi_thread")]
async fn edits_in_place_show_on_the_next_request() {
    let content = tempfile::tempdir().unwrap();
    dochub_tests::copy_tree(&fixture("overview-partial"), content.path());
    let overviews = content.path().join("_overviews");
    for name in ["architecture.html", "content-pipeline.html", ""] {
        settle(&overviews.join(name));
    }
    let app = TestApp::builder()
        .content(content.path())
        .direct_mounts()
        .start()
        .await
        .unwrap();
    let card = |id: &str| format!(r#"<a class="card t1" href="/overview/{id}">"#);
    let landing = || async {
        let res = reqwest::get(app.url("/overview/")).await.unwrap();
        assert_eq!(res.status(), 200);
        res.text().await.unwrap()
    };
    let page = |id: &'static str| {
        let url = app.url(&format!("/overview/{id}"));
        async move {
            let res = reqwest::get(url).await.unwrap();
            (res.status(), res.bytes().await.unwrap())
        }
    };
    let first = std::fs::read(overviews.join("architecture.html")).unwrap();
    // Several requests, so that later ones come from what an instance kept.
    for _ in 0..3 {
        assert!(!landing().await.contains(&card("auth-deployment")));
        assert_eq!(
            page("architecture").await,
            (StatusCode::OK, first.clone().into())
        );
    }

    std::fs::write(overviews.join("auth-deployment.html"), "<p>new</p>").unwrap();
    assert!(landing().await.contains(&card("auth-deployment")));
    std::fs::write(overviews.join("architecture.html"), "<p>edited</p>").unwrap();
    assert_eq!(
        page("architecture").await,
        (StatusCode::OK, "<p>edited</p>".into())
    );
    std::fs::remove_file(overviews.join("architecture.html")).unwrap();
    assert_eq!(page("architecture").await.0, StatusCode::NOT_FOUND);
    assert!(!landing().await.contains(&card("architecture")));
    app.stop().await;
}
