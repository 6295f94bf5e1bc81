//! Tier 3 end to end: the real `api.wasm` under the host, over HTTP, on
//! `tests/fixtures/basic` (and on trees generated into temporary folders).

use std::path::Path;
use std::time::Duration;

use dochub_http::auth::token_digest;
use dochub_tests::{AppBuilder, TestApp, fixture};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An empty content tree in a temporary folder (with the `_overviews` folder
/// the overview component mounts).
fn content_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("_overviews")).unwrap();
    dir
}

async fn start(content: &Path) -> TestApp {
    TestApp::builder()
        .content(content)
        .start()
        .await
        .expect("app starts")
}

struct Res {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl Res {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

async fn send(req: reqwest::RequestBuilder) -> Res {
    let res = req.send().await.expect("request");
    Res {
        status: res.status(),
        headers: res.headers().clone(),
        body: res.bytes().await.expect("body").to_vec(),
    }
}

async fn get(app: &TestApp, path: &str) -> Res {
    send(reqwest::Client::new().get(app.url(path))).await
}

/// Sends the request line exactly as given (no client-side normalisation of `..`).
async fn raw_get(app: &TestApp, target: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(app.addr())
        .await
        .expect("connect");
    let req = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        app.addr()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn assert_json_error(res: &Res, status: u16) -> String {
    assert_eq!(res.status.as_u16(), status);
    assert_eq!(res.header("content-type"), "application/json");
    let body = res.json();
    assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{body}");
    body["error"].as_str().expect("error string").to_owned()
}

fn is_iso_millis(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
        && s.len() == 24
        && s.ends_with('Z')
        && s.as_bytes()[19] == b'.'
}

/// The subproject manifest of the `basic` fixture's `alpha/guide`, shared with the content
/// crate's own tests.
fn guide_manifest() -> Value {
    let path = fixture("basic.expected").join("alpha-guide.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn manifests_have_the_spec_shapes() {
    let app = start(&fixture("basic")).await;
    let res = get(&app, "/api/manifest").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), "application/json");
    let mut m = res.json();
    assert!(is_iso_millis(m["generated_at"].as_str().unwrap()), "{m}");
    m.as_object_mut().unwrap().remove("generated_at");
    assert_eq!(
        m,
        json!({
            "projects": [
                {"id": "alpha", "name": "Alpha Project", "description": "The first project of the fixture",
                 "subproject_count": 2, "doc_count": 8},
                {"id": "beta", "name": "beta", "description": "", "subproject_count": 1, "doc_count": 1},
                {"id": "empty-project", "name": "empty-project", "description": "",
                 "subproject_count": 0, "doc_count": 0},
            ],
            "total_documents": 9,
        })
    );
    let res = get(&app, "/api/manifest/alpha").await;
    assert_eq!(res.status, 200);
    assert_eq!(
        res.json(),
        json!({
            "project": {"id": "alpha", "name": "Alpha Project", "description": "The first project of the fixture"},
            "subprojects": [
                {"id": "guide", "name": "User Guide", "description": "How to use alpha", "doc_count": 7},
                {"id": "reference", "name": "reference", "description": "", "doc_count": 1},
            ],
        })
    );
    let res = get(&app, "/api/manifest/alpha/guide").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), guide_manifest());
    // A trailing slash is the same resource.
    assert_eq!(
        get(&app, "/api/manifest/alpha/guide/").await.json(),
        guide_manifest()
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_things_are_json_404s() {
    let app = start(&fixture("basic")).await;
    for (path, message) in [
        ("/api/manifest/nope", "Project not found"),
        ("/api/manifest/reports", "Project not found"),
        ("/api/manifest/_master", "Project not found"),
        ("/api/manifest/alpha/nope", "Subproject not found"),
        ("/api/manifest/alpha/deep", "Subproject not found"),
        ("/api/raw/alpha/guide/nope", "Document not found"),
        ("/api/raw/alpha/guide/.hidden", "Document not found"),
        ("/api/raw/alpha/guide/notes", "Document not found"),
        ("/api/raw/alpha/guide/install.md", "Document not found"),
        ("/api/raw/alpha/guide", "Not found"),
        ("/api/nothing", "Not found"),
        ("/api", "Not found"),
        ("/api/report", "Not found"),
    ] {
        let res = get(&app, path).await;
        assert_eq!(assert_json_error(&res, 404), message, "{path}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_returns_the_file_bytes_as_markdown() {
    let app = start(&fixture("basic")).await;
    for id in ["install", "latin1", "empty", "unicode", "index"] {
        let res = get(&app, &format!("/api/raw/alpha/guide/{id}")).await;
        assert_eq!(res.status, 200, "{id}");
        assert!(
            res.header("content-type").starts_with("text/markdown"),
            "{id}"
        );
        let file = std::fs::read(fixture("basic").join(format!("alpha/guide/{id}.md"))).unwrap();
        assert_eq!(res.body, file, "{id}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn traversal_never_leaves_the_root() {
    let app = start(&fixture("basic")).await;
    let long = "a".repeat(300);
    let attempts = [
        "/api/raw/alpha/guide/..%2F..%2F..%2Foutside".to_string(),
        "/api/raw/alpha/guide/%2e%2e%2f%2e%2e%2f..%2foutside".into(),
        "/api/raw/alpha/%2e%2e/%2e%2e".into(),
        "/api/raw/%2e%2e/%2e%2e/outside".into(),
        "/api/raw/../../outside".into(),
        "/api/raw/alpha/guide/..%5C..%5C..%5Coutside".into(),
        "/api/raw/alpha/guide/%2Fetc%2Fpasswd".into(),
        "/api/raw/alpha/guide/install%00".into(),
        "/api/raw/alpha/guide/%C0%AE%C0%AE".into(),
        "/api/manifest/..".into(),
        "/api/manifest/%2e%2e".into(),
        "/api/manifest/alpha/%2e%2e".into(),
        "/api/manifest/%2Fetc".into(),
        "/api/manifest/..%2F..%2Ftests".into(),
        format!("/api/raw/alpha/guide/{long}"),
        format!("/api/manifest/{long}"),
    ];
    for target in &attempts {
        let (status, text) = raw_get(&app, target).await;
        assert_eq!(status, 404, "{target}: {text}");
        assert!(!text.contains("TOP SECRET"), "{target}");
        assert!(text.contains("application/json"), "{target}: {text}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn search_matches_case_insensitively_and_ranks_the_answer() {
    let app = start(&fixture("basic")).await;
    let client = reqwest::Client::new();
    let search = |q: &str| send(client.get(app.url("/api/search")).query(&[("q", q)]));
    let res = search("ZEBRA keyword").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), "application/json");
    let body = res.json();
    assert_eq!(body["query"], "ZEBRA keyword");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["path"], "alpha/guide/install");
    assert_eq!(results[0]["title"], "Installation");
    // The match lies under the page's `# Installation`, so the hit names it as its section.
    assert_eq!(results[0].as_object().unwrap().len(), 5);
    assert_eq!(results[0]["section"], "Installation");
    assert_eq!(results[0]["anchor"], "installation");
    let excerpt = results[0]["excerpt"].as_str().unwrap();
    // Plain text of the body: no frontmatter, no fence markers, no `#`.
    assert_eq!(
        excerpt,
        "Installation Run the installer, then check the version. # this comment is not a heading alpha --version The zebra keyword appears only here."
    );
    // Unicode in the query; frontmatter counts; lossy non-UTF-8 pages.
    assert_eq!(
        search("überblick").await.json()["results"][0]["path"],
        "alpha/guide/unicode"
    );
    assert_eq!(
        search("Landing page").await.json()["results"][0]["path"],
        "alpha/guide/index"
    );
    assert_eq!(
        search("PELICAN").await.json()["results"][0]["path"],
        "alpha/guide/latin1"
    );
    // Best first: the page titled "Installation" before the one that links to it, which
    // path order would put first.
    let paths = |res: Value| -> Vec<String> {
        res["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        paths(search("install").await.json()),
        ["alpha/guide/install", "alpha/guide/index"]
    );
    // Words in any order, after the exact phrase.
    let res = search("keyword ZEBRA").await.json();
    assert_eq!(paths(res.clone()), ["alpha/guide/install"]);
    assert!(
        res["results"][0]["excerpt"]
            .as_str()
            .unwrap()
            .contains("The zebra keyword appears only here."),
        "{res}"
    );
    for q in ["TOP SECRET", "Too deep to be", "newest dated"] {
        assert_eq!(search(q).await.json()["results"], json!([]), "{q}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn search_needs_two_characters_and_answers_long_queries() {
    let app = start(&fixture("basic")).await;
    for path in [
        "/api/search",
        "/api/search?q=",
        "/api/search?q=a",
        "/api/search?q=%20a%20",
        "/api/search?x=ab",
    ] {
        let res = get(&app, path).await;
        assert_eq!(
            assert_json_error(&res, 400),
            "query parameter `q` must be at least 2 characters",
            "{path}"
        );
    }
    assert_eq!(get(&app, "/api/search?q=%C3%A9%C3%A9").await.status, 200);
    let long = "x".repeat(10 * 1024);
    let res = get(&app, &format!("/api/search?q={long}")).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["results"], json!([]));
    assert_eq!(res.json()["query"].as_str().unwrap().len(), 10 * 1024);
    // A pasted paragraph of many words, NUL, right-to-left marks, emoji, only punctuation:
    // answered like any query.
    let paragraph = "the zebra keyword appears ".repeat(400);
    for q in [
        paragraph.as_str(),
        "zebra\0keyword",
        "\u{200f}zebra\u{200e}",
        "🦓🦓 zebra",
        "!!!",
        "-- ",
        "\u{202e}ab",
    ] {
        let res = send(
            reqwest::Client::new()
                .get(app.url("/api/search"))
                .query(&[("q", q)]),
        )
        .await;
        assert_eq!(res.status, 200, "{q:?}");
        assert_eq!(res.json()["query"], q);
    }
    let zebra = |q: &str| {
        let q = q.to_owned();
        let url = app.url("/api/search");
        async move {
            let res = send(reqwest::Client::new().get(url).query(&[("q", q)])).await;
            res.json()["results"].as_array().unwrap().len()
        }
    };
    assert_eq!(zebra("\u{200f}zebra\u{200e}").await, 0);
    assert_eq!(zebra("🦓🦓 zebra").await, 0);
    // No page holds it, as a phrase or word by word, but its terms find the page holding
    // both (the partial tier).
    assert_eq!(zebra("zebra\0keyword").await, 1);
    assert!(zebra("---").await >= 5);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn search_caps_at_fifty_with_centred_excerpts() {
    let dir = content_tree();
    for i in 0..60 {
        let p = dir.path().join(format!("proj/sub{}/page{i:02}.md", i % 2));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // 300 characters either side of the match, multi-byte on the right.
        let text = format!("{}NEEDLE-{i:02}{}", "a".repeat(300), "ü".repeat(300));
        std::fs::write(p, text).unwrap();
    }
    let app = start(dir.path()).await;
    let res = get(&app, "/api/search?q=needle").await;
    assert_eq!(res.status, 200);
    let results = res.json()["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 50);
    let mut expected: Vec<String> = (0..60)
        .map(|i| format!("proj/sub{}/page{i:02}", i % 2))
        .collect();
    expected.sort();
    expected.truncate(50);
    let paths: Vec<String> = results
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths, expected);
    for r in &results {
        let excerpt = r["excerpt"].as_str().unwrap();
        assert!(
            excerpt.starts_with('…') && excerpt.ends_with('…'),
            "{excerpt}"
        );
        let inner = excerpt.trim_matches('…');
        assert_eq!(inner.chars().count(), 150);
        let at = inner.find("NEEDLE-").unwrap();
        let before = inner[..at].chars().count();
        let after = inner[at + "NEEDLE".len()..].chars().count();
        assert!(before.abs_diff(after) <= 1, "{before} / {after}");
    }
    app.stop().await;
}

/// The `id` attributes of a rendered page's headings.
fn heading_ids(html: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for level in 1..=6 {
        let open = format!("<h{level} id=\"");
        for (at, _) in html.match_indices(&open) {
            let rest = &html[at + open.len()..];
            ids.push(rest[..rest.find('"').unwrap()].to_owned());
        }
    }
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn search_hits_name_their_section_and_link_to_its_anchor() {
    let dir = content_tree();
    let page = dir.path().join("proj/sub/guide.md");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    std::fs::write(
        &page,
        "---\ntitle: Guide\nsummary: Only the summary says walrus.\n---\n\
         Okapi before any heading.\n\n## Usage\n\nFirst mango.\n\n## Usage\n\nThen kiwi.\n\n\
         ## Größe {#size}\n\nA papaya.\n\n### 日本語 <script>x</script>\n\nA lime.\n",
    )
    .unwrap();
    let build = build_of(dir.path());
    let live = start_with_build(dir.path(), None).await;
    let pre = start_with_build(dir.path(), Some(build.path())).await;
    let rendered = get(&live, "/docs/proj/sub/guide").await;
    let ids = heading_ids(&String::from_utf8_lossy(&rendered.body));
    for (q, section, anchor) in [
        ("mango", Some("Usage"), Some("usage")),
        ("kiwi", Some("Usage"), Some("usage-1")),
        ("papaya", Some("Größe"), Some("size")),
        ("lime", Some("日本語 x"), Some("日本語-scriptxscript")),
        ("okapi", None, None),
        ("walrus", None, None),
    ] {
        let path = format!("/api/search?q={q}");
        let (l, p) = (get(&live, &path).await, get(&pre, &path).await);
        assert_eq!(l.body, p.body, "{q}: the index and the tree agree");
        let hit = &l.json()["results"][0];
        assert_eq!(hit["path"], "proj/sub/guide", "{q}");
        assert_eq!(hit["section"].as_str(), section, "{q}: {hit}");
        assert_eq!(hit["anchor"].as_str(), anchor, "{q}: {hit}");
        // The fields follow the spec's, and are left out rather than null.
        let mut keys: Vec<&String> = hit.as_object().unwrap().keys().collect();
        keys.sort();
        let want: &[&str] = if section.is_some() {
            &["anchor", "excerpt", "path", "section", "title"]
        } else {
            &["excerpt", "path", "title"]
        };
        assert_eq!(keys, want, "{q}");
        let body = String::from_utf8_lossy(&l.body);
        assert!(
            body.find("\"excerpt\"") < body.find("\"section\"").or(Some(usize::MAX)),
            "{body}"
        );
        // The anchor is an id of the rendered page.
        if let Some(anchor) = anchor {
            assert!(ids.iter().any(|id| id == anchor), "{anchor} in {ids:?}");
        }
    }

    // The docs search page links each hit to its section and names it, escaped.
    for app in [&live, &pre] {
        let res = get(app, "/docs/search?q=lime").await;
        assert_eq!(res.status, 200);
        let html = String::from_utf8_lossy(&res.body);
        assert!(
            html.contains(
                r#"<a href="/docs/proj/sub/guide#%E6%97%A5%E6%9C%AC%E8%AA%9E-scriptxscript">Guide</a> <span class="section">› 日本語 x</span>"#
            ),
            "{html}"
        );
        assert!(!html.contains("<script>x"), "{html}");
        let html =
            String::from_utf8_lossy(&get(app, "/docs/search?q=okapi").await.body).into_owned();
        assert!(
            html.contains(r#"<a href="/docs/proj/sub/guide">Guide</a> <span class="path">"#),
            "{html}"
        );
    }
    live.stop().await;
    pre.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn latest_report_is_chosen_by_file_name() {
    let app = start(&fixture("basic")).await;
    let res = get(&app, "/api/report/latest").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), "application/json");
    assert_eq!(
        res.body,
        std::fs::read(fixture("basic").join("reports/2025-03-02.json")).unwrap()
    );
    app.stop().await;

    let dir = content_tree();
    std::fs::create_dir_all(dir.path().join("p/s")).unwrap();
    std::fs::write(dir.path().join("p/s/a.md"), "# A").unwrap();
    let app = start(dir.path()).await;
    assert_eq!(
        assert_json_error(&get(&app, "/api/report/latest").await, 404),
        "No reports yet"
    );
    app.stop().await;

    std::fs::create_dir_all(dir.path().join("reports")).unwrap();
    std::fs::write(dir.path().join("reports/latest.json"), "{}").unwrap();
    let app = start(dir.path()).await;
    assert_eq!(
        assert_json_error(&get(&app, "/api/report/latest").await, 404),
        "No reports yet"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn methods_other_than_get_are_405() {
    let app = start(&fixture("basic")).await;
    let client = reqwest::Client::new();
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        for path in [
            "/api/manifest",
            "/api/health",
            "/api/search?q=ab",
            "/api/raw/alpha/guide/install",
        ] {
            let res = send(client.request(m.clone(), app.url(path))).await;
            assert_json_error(&res, 405);
            assert_eq!(res.header("allow"), "GET, HEAD", "{method} {path}");
        }
    }
    let res = send(client.head(app.url("/api/manifest/alpha"))).await;
    assert_eq!(res.status, 200);
    assert!(res.body.is_empty());
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prebuilt_manifests_match_live_ones() {
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(fixture("basic")).unwrap();
    let stamp = chrono::DateTime::parse_from_rfc3339("2020-02-02T02:02:02.020Z")
        .unwrap()
        .to_utc();
    dochub_index::build::write_build(&root, build.path(), &dochub_http::iso8601(stamp)).unwrap();
    let live = start(&fixture("basic")).await;
    let pre = TestApp::builder()
        .content(fixture("basic"))
        .mount(build.path(), "/prebuilt")
        .env("SERVE_PREBUILT", "1")
        .env("BUILD_DIR", "/prebuilt")
        .start()
        .await
        .unwrap();
    let mut a = get(&live, "/api/manifest").await.json();
    let mut b = get(&pre, "/api/manifest").await.json();
    assert_eq!(b["generated_at"], "2020-02-02T02:02:02.020Z");
    a.as_object_mut().unwrap().remove("generated_at");
    b.as_object_mut().unwrap().remove("generated_at");
    assert_eq!(a, b);
    for path in [
        "/api/manifest/alpha",
        "/api/manifest/beta",
        "/api/manifest/empty-project",
        "/api/manifest/alpha/guide",
        "/api/manifest/alpha/reference",
        "/api/manifest/beta/tools",
    ] {
        let (l, p) = (get(&live, path).await, get(&pre, path).await);
        assert_eq!(p.status, 200, "{path}");
        assert_eq!(l.body, p.body, "{path}");
    }
    assert_eq!(
        assert_json_error(&get(&pre, "/api/manifest/nope").await, 404),
        "Project not found"
    );
    assert_eq!(
        assert_json_error(&get(&pre, "/api/manifest/alpha/nope").await, 404),
        "Subproject not found"
    );
    // Raw and search still read the content root.
    assert_eq!(get(&pre, "/api/raw/alpha/guide/install").await.status, 200);
    assert_eq!(
        get(&pre, "/api/search?q=zebra").await.json()["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    live.stop().await;
    pre.stop().await;

    // SERVE_PREBUILT with no build where BUILD_DIR points: a 500 whose body is generic (the
    // detail, with the path, goes to the log under the request id).
    let app = TestApp::builder()
        .content(fixture("basic"))
        .env("SERVE_PREBUILT", "1")
        .env("BUILD_DIR", "/nowhere")
        .start()
        .await
        .unwrap();
    let res = get(&app, "/api/manifest").await;
    let msg = assert_json_error(&res, 500);
    assert!(
        !msg.contains("/nowhere") && msg.contains(res.header("x-request-id")),
        "{msg}"
    );
    // SERVE_PREBUILT=0 is off.
    let app2 = TestApp::builder()
        .content(fixture("basic"))
        .env("SERVE_PREBUILT", "0")
        .env("BUILD_DIR", "/nowhere")
        .start()
        .await
        .unwrap();
    assert_eq!(get(&app2, "/api/manifest").await.status, 200);
    app2.stop().await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_content_root_is_a_generic_500() {
    let app = TestApp::builder()
        .content(fixture("basic"))
        .env("CONTENT_DIR", "/nowhere")
        .start()
        .await
        .unwrap();
    for path in [
        "/api/manifest",
        "/api/manifest/alpha",
        "/api/raw/a/b/c",
        "/api/search?q=ab",
        "/api/report/latest",
    ] {
        let res = get(&app, path).await;
        let msg = assert_json_error(&res, 500);
        assert!(
            !msg.contains("/nowhere") && msg.contains(res.header("x-request-id")),
            "{path}: {msg}"
        );
    }
    assert_eq!(get(&app, "/api/health").await.status, 200);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn production_requires_a_token_except_for_health() {
    let app = TestApp::builder()
        .content(fixture("basic"))
        .variable("environment", "production")
        .variable(
            "auth_tokens",
            &format!("{},{}", token_digest("other"), token_digest("s3cret")),
        )
        .start()
        .await
        .unwrap();
    let client = reqwest::Client::new();
    for path in [
        "/api/manifest",
        "/api/raw/alpha/guide/install",
        "/api/search?q=ab",
        "/api/nope",
        "/api/report/latest",
    ] {
        let res = send(client.get(app.url(path))).await;
        assert_json_error(&res, 401);
        assert!(
            res.header("www-authenticate").starts_with("Bearer"),
            "{path}"
        );
        let res = send(client.get(app.url(path)).bearer_auth("wrong")).await;
        assert_json_error(&res, 401);
        // The digest itself is not a token.
        let res = send(
            client
                .get(app.url(path))
                .bearer_auth(token_digest("s3cret")),
        )
        .await;
        assert_json_error(&res, 401);
    }
    let res = send(client.get(app.url("/api/manifest")).bearer_auth("s3cret")).await;
    assert_eq!(res.status, 200);
    let res = send(
        client
            .get(app.url("/api/manifest/alpha"))
            .basic_auth("me", Some("s3cret")),
    )
    .await;
    assert_eq!(res.status, 200);
    let res = send(client.get(app.url("/api/nope")).bearer_auth("s3cret")).await;
    assert_json_error(&res, 404);
    let res = send(client.get(app.url("/api/health"))).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["environment"], "production");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instance_that_serves_many_requests_judges_each_on_its_own() {
    // The api is a WASIp3 component: one instance answers these one after another, so nothing
    // of one request (its refusal, its id, its route) may show in the next.
    let app = start(&fixture("basic")).await;
    let client = reqwest::Client::new();
    let mut ids = std::collections::HashSet::new();
    for round in 0..4 {
        let ok = send(client.get(app.url("/api/manifest/alpha"))).await;
        assert_eq!(ok.status, 200, "round {round}");
        assert_eq!(ok.json()["project"]["id"], "alpha", "round {round}");
        let refused = send(
            client
                .get(app.url("/api/manifest/alpha"))
                .header("host", "dochub.example"),
        )
        .await;
        assert_json_error(&refused, 403);
        let missing = send(client.get(app.url("/api/raw/alpha/guide/nope"))).await;
        assert_json_error(&missing, 404);
        let raw = send(client.get(app.url("/api/raw/alpha/guide/install"))).await;
        assert_eq!(raw.status, 200, "round {round}");
        assert_eq!(
            raw.header("content-length"),
            raw.body.len().to_string(),
            "round {round}"
        );
        for res in [&ok, &refused, &missing, &raw] {
            assert!(
                ids.insert(res.header("x-request-id").to_owned()),
                "round {round}"
            );
        }
    }
    app.stop().await;
}

fn check_health_fields(h: &Value) {
    let o = h.as_object().unwrap();
    let mut keys: Vec<&str> = o.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "database",
            "environment",
            "service",
            "status",
            "stores",
            "timestamp",
            "uptime",
            "version"
        ]
    );
    // Every store the app keeps state in, each with what backs it and how it answered.
    for store in ["hub", "key_value"] {
        let reading = &h["stores"][store];
        assert!(reading["kind"].is_string(), "{h}");
        let status = reading["status"].as_str().unwrap_or_default();
        assert!(["ok", "failed", "unconfigured"].contains(&status), "{h}");
        assert_eq!(reading.get("error").is_some(), status != "ok", "{h}");
    }
    assert_eq!(h["service"], "dochub");
    assert_eq!(h["version"], env!("CARGO_PKG_VERSION"));
    assert!(h["uptime"].as_f64().unwrap() >= 0.0);
    assert!(is_iso_millis(h["timestamp"].as_str().unwrap()), "{h}");
}

#[tokio::test(flavor = "multi_thread")]
async fn health_without_a_database_is_unknown_and_uptime_grows() {
    let app = start(&fixture("basic")).await;
    // Concurrent first requests agree on one start time.
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let url = app.url("/api/health");
        tasks.push(tokio::spawn(async move {
            reqwest::get(url)
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }));
    }
    // (timestamp, timestamp - uptime) of each answer, in milliseconds.
    let mut readings = Vec::new();
    for t in tasks {
        let h = t.await.unwrap();
        check_health_fields(&h);
        assert_eq!(h["status"], "healthy");
        assert_eq!(h["database"], "unknown");
        assert_eq!(h["environment"], "development");
        let ts = chrono::DateTime::parse_from_rfc3339(h["timestamp"].as_str().unwrap()).unwrap();
        let up = (h["uptime"].as_f64().unwrap() * 1000.0).round() as i64;
        readings.push((ts.timestamp_millis(), ts.timestamp_millis() - up));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let h: Value = get(&app, "/api/health").await.json();
    let ts = chrono::DateTime::parse_from_rfc3339(h["timestamp"].as_str().unwrap()).unwrap();
    assert!(h["uptime"].as_f64().unwrap() >= 0.3, "{h}");
    let recorded = ts.timestamp_millis() - (h["uptime"].as_f64().unwrap() * 1000.0).round() as i64;
    // Every concurrent first request used the one recorded start, except one that began
    // before the winner stored it: its uptime is clamped to 0.
    assert!(
        readings
            .iter()
            .any(|(_, start)| start.abs_diff(recorded) <= 2),
        "{readings:?} vs {recorded}"
    );
    for (ts, start) in &readings {
        assert!(
            start.abs_diff(recorded) <= 2 || (ts == start && *ts <= recorded + 2),
            "{readings:?} vs {recorded}"
        );
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn health_answers_alike_however_its_path_is_written() {
    // `spin.toml` gives `/api/health` a component of its own; a trailing slash or a query
    // reaches the same answer, which reads the one recorded first start.
    let app = start(&fixture("basic")).await;
    let client = reqwest::Client::new();
    let started = |h: &Value| {
        let ts = chrono::DateTime::parse_from_rfc3339(h["timestamp"].as_str().unwrap()).unwrap();
        ts.timestamp_millis() - (h["uptime"].as_f64().unwrap() * 1000.0).round() as i64
    };
    let first = send(client.get(app.url("/api/health"))).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.header("content-type"), "application/json");
    let recorded = started(&first.json());
    for path in ["/api/health/", "/api/health?verbose=1", "/api/health"] {
        let res = send(client.get(app.url(path))).await;
        assert_eq!(res.status, 200, "{path}");
        assert_eq!(res.header("content-length"), res.body.len().to_string());
        let h = res.json();
        check_health_fields(&h);
        assert_eq!(h["status"], "healthy", "{path}: {h}");
        assert!(started(&h).abs_diff(recorded) <= 2, "{path}: {h}");
        assert_ne!(res.header("x-request-id"), first.header("x-request-id"));
    }
    let head = send(client.head(app.url("/api/health/"))).await;
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), "application/json");
    assert!(head.body.is_empty());
    let refused = send(
        client
            .get(app.url("/api/health"))
            .header("host", "dochub.example"),
    )
    .await;
    assert_json_error(&refused, 403);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn health_reports_the_database() {
    let mut cases = vec![(
        "postgres://postgres@127.0.0.1:1/test",
        "disconnected",
        "degraded",
    )];
    let postgres = dochub_tests::service_available("127.0.0.1:5432", "PostgreSQL");
    if postgres {
        // As under Spin: TLS unless the URL disables it, and the local server's certificate is
        // self-signed, so only `sslmode=disable` connects.
        cases.push((
            "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
            "connected",
            "healthy",
        ));
        cases.push((
            "postgres://postgres@127.0.0.1:5432/test",
            "disconnected",
            "degraded",
        ));
    }
    for (url, database, status) in cases {
        let app = TestApp::builder()
            .content(fixture("basic"))
            .variable("database_url", url)
            .start()
            .await
            .unwrap();
        let res = get(&app, "/api/health").await;
        assert_eq!(res.status, 200);
        let h = res.json();
        check_health_fields(&h);
        assert_eq!(h["database"], database, "{url}");
        assert_eq!(h["status"], status, "{url}");
        app.stop().await;
    }
    if !postgres {
        return;
    }
    // The POSTGRES_* parts, when no URL is set.
    let app = TestApp::builder()
        .content(fixture("basic"))
        .env("POSTGRES_HOST", "127.0.0.1")
        .env("POSTGRES_PORT", "5432")
        .env("POSTGRES_USER", "postgres")
        .env("POSTGRES_DB", "test")
        .env("POSTGRES_SSLMODE", "disable")
        .start()
        .await
        .unwrap();
    assert_eq!(
        get(&app, "/api/health").await.json()["database"],
        "connected"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bundled_content_is_served_live_and_prebuilt_by_spin_toml() {
    // spin.toml's build command writes build/ from content/ and mounts it at /build.
    let live = TestApp::builder().start().await.unwrap();
    let pre = TestApp::builder()
        .env("SERVE_PREBUILT", "1")
        .start()
        .await
        .unwrap();
    let mut a = get(&live, "/api/manifest").await.json();
    let mut b = get(&pre, "/api/manifest").await.json();
    assert_eq!(a["projects"][0]["id"], "dochub");
    a.as_object_mut().unwrap().remove("generated_at");
    b.as_object_mut().unwrap().remove("generated_at");
    assert_eq!(a, b);
    let subprojects = get(&live, "/api/manifest/dochub").await.json()["subprojects"].clone();
    for s in subprojects.as_array().unwrap() {
        let path = format!("/api/manifest/dochub/{}", s["id"].as_str().unwrap());
        let (l, p) = (get(&live, &path).await, get(&pre, &path).await);
        assert_eq!(
            (l.status, p.status),
            (StatusCode::OK, StatusCode::OK),
            "{path}"
        );
        assert_eq!(l.body, p.body, "{path}");
        for d in l.json()["documents"].as_array().unwrap() {
            let raw = get(&live, d["raw_url"].as_str().unwrap()).await;
            assert_eq!(raw.status, 200, "{}", d["raw_url"]);
        }
    }
    live.stop().await;
    pre.stop().await;
}

/// In a copy (the default mounts) a reused instance keeps the raw pages it read: each page
/// must still be its own file, byte for byte, however often and in whatever order it is read.
#[tokio::test(flavor = "multi_thread")]
async fn raw_pages_kept_in_a_copy_are_each_their_own_file() {
    let content = generated_tree(2, 2, 6);
    let build = build_of(content.path());
    let app = start_with_build(content.path(), Some(build.path())).await;
    let pages: Vec<(String, Vec<u8>)> = ["p00/s00", "p00/s01", "p01/s00", "p01/s01"]
        .iter()
        .flat_map(|sub| (0..6).map(move |n| format!("{sub}/page-{n:04}")))
        .map(|path| {
            let bytes = std::fs::read(content.path().join(format!("{path}.md"))).unwrap();
            (path, bytes)
        })
        .collect();
    for round in 0..3 {
        for (path, bytes) in pages.iter().cycle().skip(round * 5).take(pages.len()) {
            let res = get(&app, &format!("/api/raw/{path}")).await;
            assert_eq!(res.status, 200, "{path}");
            assert!(res.body == *bytes, "{path} in round {round}");
        }
        // Manifests are kept too: each still lists its own subproject's pages.
        for sub in ["p00/s00", "p01/s01", "p00/s01", "p01/s00"] {
            let m = get(&app, &format!("/api/manifest/{sub}")).await.json();
            let urls: Vec<&str> = m["documents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["raw_url"].as_str().unwrap())
                .collect();
            assert_eq!(urls.len(), 6, "{sub}: {m}");
            assert!(
                urls.iter()
                    .all(|u| u.starts_with(&format!("/api/raw/{sub}/"))),
                "{sub}: {m}"
            );
        }
        assert_eq!(
            get(&app, "/api/manifest").await.json()["total_documents"],
            24
        );
    }
    app.stop().await;
}

/// Mounted in place, nothing is kept: a page edited in place, or saved through a new file,
/// shows on the next request though a build (which would say "copy" if it were one) is there.
#[tokio::test(flavor = "multi_thread")]
async fn a_raw_page_edited_in_place_shows_at_once() {
    let content = generated_tree(1, 1, 2);
    let build = build_of(content.path());
    let app = with_build(content.path(), Some(build.path()))
        .direct_mounts()
        .start()
        .await
        .expect("app starts");
    let page = content.path().join("p00/s00/page-0001.md");
    let url = "/api/raw/p00/s00/page-0001";
    assert_eq!(get(&app, url).await.body, std::fs::read(&page).unwrap());
    for edit in 0..3 {
        let text = format!("# Edited\n\nEdit number {edit}.\n");
        if edit % 2 == 0 {
            std::fs::write(&page, &text).unwrap();
        } else {
            let tmp = content.path().join("p00/s00/.page.tmp");
            std::fs::write(&tmp, &text).unwrap();
            std::fs::rename(&tmp, &page).unwrap();
        }
        let res = get(&app, url).await;
        assert_eq!(res.status, 200);
        assert_eq!(String::from_utf8_lossy(&res.body), text);
    }
    app.stop().await;
}

/// A tree from the benchmark's generator: projects only, no `_overviews`, `_master` or reports.
fn generated_tree(projects: usize, subprojects: usize, pages: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let spec = dochub_content::corpus::Spec {
        projects,
        subprojects,
        pages,
        page_bytes: 3000,
    };
    dochub_content::corpus::generate(dir.path(), &spec).unwrap();
    dir
}

/// `dochub build` of `content` into a fresh folder.
fn build_of(content: &Path) -> tempfile::TempDir {
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(content).unwrap();
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .unwrap();
    build
}

/// The app on `content` answering from `build` (mounted at /prebuilt), or from the tree alone.
fn with_build(content: &Path, build: Option<&Path>) -> AppBuilder {
    let app = TestApp::builder().content(content);
    match build {
        Some(build) => app
            .mount(build, "/prebuilt")
            .env("BUILD_DIR", "/prebuilt")
            .env("SERVE_PREBUILT", "1"),
        None => app.env("SERVE_PREBUILT", "0"),
    }
}

async fn start_with_build(content: &Path, build: Option<&Path>) -> TestApp {
    with_build(content, build)
        .start()
        .await
        .expect("app starts")
}

const QUERIES: &[&str] = &[
    "quasar",
    "service",
    "SERVICE",
    "the",
    "th",
    "zz",
    "%C3%BCber",                      // über
    "%C3%9CBER",                      // ÜBER, case-folded
    "%E6%97%A5%E6%9C%AC",             // 日本, two characters, six bytes
    "%CE%A3%CE%9F%CE%A6%CE%8A%CE%91", // ΣΟΦΊΑ
    "stra%C3%9Fe",
    "the+service",
    "zebra",
    "nothing-matches-this",
];

#[tokio::test(flavor = "multi_thread")]
async fn search_and_manifests_from_the_index_match_the_tree() {
    let generated = generated_tree(3, 3, 10);
    for content in [fixture("basic"), generated.path().to_path_buf()] {
        let build = build_of(&content);
        let live = start_with_build(&content, None).await;
        let pre = start_with_build(&content, Some(build.path())).await;
        for q in QUERIES {
            let path = format!("/api/search?q={q}");
            let (l, p) = (get(&live, &path).await, get(&pre, &path).await);
            assert_eq!(p.status, 200, "{path}");
            assert_eq!(l.body, p.body, "{path} on {}", content.display());
        }
        let manifest = get(&live, "/api/manifest").await.json();
        let mut paths = vec![];
        for p in manifest["projects"].as_array().unwrap() {
            let id = p["id"].as_str().unwrap();
            paths.push(format!("/api/manifest/{id}"));
            let pm = get(&live, &format!("/api/manifest/{id}")).await.json();
            for s in pm["subprojects"].as_array().unwrap() {
                paths.push(format!("/api/manifest/{id}/{}", s["id"].as_str().unwrap()));
            }
        }
        for path in paths {
            let (l, p) = (get(&live, &path).await, get(&pre, &path).await);
            assert_eq!((l.status, &l.body), (p.status, &p.body), "{path}");
        }
        live.stop().await;
        pre.stop().await;
    }
}

/// The index-check memos the key-value store holds: `(key, value)`, from the SQLite file that
/// `dochub-host` and `spin up` both keep in the state folder.
fn index_check_memos(state_dir: &Path) -> Vec<(String, Vec<u8>)> {
    let db = rusqlite::Connection::open(state_dir.join("sqlite_key_value.db")).unwrap();
    let mut query = db
        .prepare("SELECT key, value FROM spin_key_value WHERE key LIKE 'dochub:index-check:%'")
        .unwrap();
    query
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_copied_build_is_checked_once_per_start_and_the_result_kept() {
    let content = generated_tree(2, 2, 5);
    let build = build_of(content.path());
    // Rewritten in place after the build: no folder shows it, so the index, which still holds
    // the page as built, answers without it; the tree would find it.
    let page = content.path().join("p01/s01/page-0002.md");
    let mut text = std::fs::read_to_string(&page).unwrap();
    text.push_str("\nAn okapi.\n");
    std::fs::write(&page, &text).unwrap();
    let state = tempfile::tempdir().unwrap();
    let start = || {
        with_build(content.path(), Some(build.path()))
            .state_dir(state.path())
            .start()
    };
    let hits = |res: &Res| res.json()["results"].as_array().unwrap().len();

    // Started, the app serves its own copy of both folders (as `spin up` does): every folder
    // has a new time, so the copy's listings are compared with the build once, and kept.
    let app = start().await.expect("app starts");
    assert_eq!(hits(&get(&app, "/api/search?q=okapi").await), 0);
    let memos = index_check_memos(state.path());
    assert_eq!(memos.len(), 1, "{memos:?}");
    // postcard's empty list: no folder differs.
    assert_eq!(memos[0].1, [0]);
    assert_eq!(hits(&get(&app, "/api/search?q=okapi").await), 0);
    assert_eq!(
        get(&app, "/api/manifest").await.json()["total_documents"],
        20
    );
    // A page added now is not in the copy, and nothing answers with it.
    std::fs::write(
        content.path().join("p00/s00/added.md"),
        "# Added\n\nokapi\n",
    )
    .unwrap();
    assert_eq!(hits(&get(&app, "/api/search?q=okapi").await), 0);
    assert_eq!(index_check_memos(state.path()).len(), 1);
    app.stop().await;

    // The next start copies the added page: its folder's listing differs from the build, so
    // search answers from the tree (both pages), and the new copy's memo names the folder.
    let app = start().await.expect("app starts");
    assert_eq!(hits(&get(&app, "/api/search?q=okapi").await), 2);
    let memos = index_check_memos(state.path());
    assert_eq!(memos.len(), 2, "{memos:?}");
    assert!(
        memos
            .iter()
            .any(|(_, v)| v.windows(7).any(|w| w == b"p00/s00")),
        "{memos:?}"
    );
    assert_eq!(
        get(&app, "/api/manifest").await.json()["total_documents"],
        21
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_index_falls_back_to_the_tree() {
    let content = generated_tree(2, 2, 5);
    let build = build_of(content.path());
    // Edited while it runs: mounted in place (under `spin up` too), not copied at start.
    let pre = with_build(content.path(), Some(build.path()))
        .direct_mounts()
        .start()
        .await
        .expect("app starts");
    let hits = |res: &Res| res.json()["results"].as_array().unwrap().len();
    assert_eq!(hits(&get(&pre, "/api/search?q=okapi").await), 0);
    // An edit in place of a page the answer does not read is not checked (the check stays
    // cheap): the index answers, which shows the index is what answered.
    let page = content.path().join("p01/s01/page-0002.md");
    let mut text = std::fs::read_to_string(&page).unwrap();
    text.push_str("\nAn okapi.\n");
    std::fs::write(&page, &text).unwrap();
    assert_eq!(hits(&get(&pre, "/api/search?q=okapi").await), 0);
    // Saving by rename, as most editors do, changes the folder: the tree answers.
    let tmp = content.path().join("p01/s01/.page.tmp");
    std::fs::write(&tmp, &text).unwrap();
    std::fs::rename(&tmp, &page).unwrap();
    let res = get(&pre, "/api/search?q=okapi").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json()["results"][0]["path"], "p01/s01/page-0002");
    // A new page is seen by search and by the manifests at once.
    std::fs::write(
        content.path().join("p00/s00/added.md"),
        "# Added\n\nokapi\n",
    )
    .unwrap();
    assert_eq!(hits(&get(&pre, "/api/search?q=okapi").await), 2);
    let m = get(&pre, "/api/manifest/p00/s00").await.json();
    assert!(
        m["documents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["id"] == "added")
    );
    assert_eq!(
        get(&pre, "/api/manifest").await.json()["total_documents"],
        21
    );
    pre.stop().await;
}
