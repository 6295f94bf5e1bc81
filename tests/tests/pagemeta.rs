//! Redirects (`redirect_from`), "Edit this page" (the variable `edit_url`) and "Last updated"
//! (`updated`, or the git date `dochub build` records) end to end: the real components under
//! the host, over HTTP, from the live tree and from a build written by the `dochub` binary.

use std::path::Path;
use std::process::Command;

use dochub_tests::TestApp;
use dochub_tests::clients::dochub_bin;
use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};

fn client() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client")
}

async fn get(app: &TestApp, path: &str) -> (StatusCode, String, String) {
    let res = client().get(app.url(path)).send().await.expect("request");
    let status = res.status();
    let location = res
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, location, res.text().await.expect("body"))
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A tree with a page that moved (twice, once from another project), a page whose name needs
/// escaping, and a page without a date.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("_overviews")).expect("mkdir");
    write(root, "spin/_project.yaml", "name: Spin\n");
    write(root, "spin/v4/_subproject.yaml", "name: v4\n");
    write(
        root,
        "spin/v4/build.md",
        "---\ntitle: Build\nsummary: Building apps.\nupdated: 2026-03-04\nredirect_from:\n  - spin/v3/build\n  - old/guide/building\n---\n# Build\n\nText.\n",
    );
    write(
        root,
        "spin/v4/a b&c.md",
        "---\ntitle: Odd name\nsummary: S.\n---\n# Odd name\n",
    );
    write(
        root,
        "spin/v4/index.md",
        "---\ntitle: Spin v4\nsummary: Home.\nupdated: 2025-12-31\n---\n# Spin v4\n",
    );
    dir
}

async fn start(content: &Path, edit_url: Option<&str>, build: Option<&Path>) -> TestApp {
    let mut app = TestApp::builder().content(content);
    if let Some(url) = edit_url {
        app = app.variable("edit_url", url);
    }
    app = match build {
        Some(build) => app.mount(build, "/prebuilt").env("BUILD_DIR", "/prebuilt"),
        None => app.env("SERVE_PREBUILT", "0"),
    };
    app.start().await.expect("app starts")
}

/// Every form of an old address answers 301 to the same form of the page's, the query kept;
/// an address nobody claims stays a 404.
async fn assert_redirects(app: &TestApp) {
    for (old, new) in [
        ("/docs/spin/v3/build", "/docs/spin/v4/build"),
        ("/docs/spin/v3/build?x=1", "/docs/spin/v4/build?x=1"),
        ("/docs/spin/v3/build.md", "/docs/spin/v4/build.md"),
        (
            "/docs/spin/v3/build?format=raw",
            "/docs/spin/v4/build?format=raw",
        ),
        ("/docs/old/guide/building", "/docs/spin/v4/build"),
        ("/docs/old/guide/building/", "/docs/spin/v4/build"),
        ("/api/raw/spin/v3/build", "/api/raw/spin/v4/build"),
        ("/api/raw/old/guide/building", "/api/raw/spin/v4/build"),
    ] {
        let (status, location, _) = get(app, old).await;
        assert_eq!(status, StatusCode::MOVED_PERMANENTLY, "{old}");
        assert_eq!(location, new, "{old}");
        let (status, _, _) = get(app, new).await;
        assert_eq!(status, StatusCode::OK, "{new}");
    }
    for missing in [
        "/docs/spin/v3/other",
        "/docs/spin/v3/other.md",
        "/api/raw/spin/v3/other",
        "/api/raw/spin/v3/..",
    ] {
        let (status, location, _) = get(app, missing).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
        assert_eq!(location, "", "{missing}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn old_addresses_redirect_and_pages_show_their_date_and_edit_link() {
    let content = tree();
    let app = start(
        content.path(),
        Some("https://git.example.com/o/r/edit/main/content/{path}?x=1&y=2"),
        None,
    )
    .await;
    assert_redirects(&app).await;

    let (status, _, html) = get(&app, "/docs/spin/v4/build").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains(r#"Last updated <time datetime="2026-03-04">4 March 2026</time>"#),
        "{html}"
    );
    // `{path}` filled with the page's file, and the whole URL escaped for HTML.
    assert!(
        html.contains(r#"<a href="https://git.example.com/o/r/edit/main/content/spin/v4/build.md?x=1&#38;y=2">Edit this page</a>"#)
            || html.contains(r#"<a href="https://git.example.com/o/r/edit/main/content/spin/v4/build.md?x=1&amp;y=2">Edit this page</a>"#),
        "{html}"
    );
    // Each segment of the path is percent-encoded as the site's own links are (`&` may stay
    // in a path, escaped for HTML).
    let (status, _, html) = get(&app, "/docs/spin/v4/a%20b%26c").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("/edit/main/content/spin/v4/a%20b&#38;c.md?x=1"),
        "{html}"
    );
    // No date, no `<time>`.
    assert!(!html.contains("<time"), "{html}");
    // The landing page has both too.
    let (_, _, html) = get(&app, "/docs/spin/v4/").await;
    assert!(html.contains(r#"<time datetime="2025-12-31">"#), "{html}");
    assert!(html.contains("/content/spin/v4/index.md?x=1"), "{html}");

    let (status, _, xml) = get(&app, "/sitemap.xml").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        xml.contains(&format!(
            "<loc>{}</loc><lastmod>2026-03-04</lastmod>",
            app.url("/docs/spin/v4/build")
        )),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            "<loc>{}</loc><lastmod>2025-12-31</lastmod>",
            app.url("/docs/spin/v4/")
        )),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            "<loc>{}</loc></url>",
            app.url("/docs/spin/v4/a%20b&amp;c")
        )),
        "{xml}"
    );
    // The manifests keep the interface's fields exactly.
    let (_, _, manifest) = get(&app, "/api/manifest/spin/v4").await;
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("json");
    for doc in manifest["documents"].as_array().expect("documents") {
        let mut keys: Vec<&str> = doc
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(keys, ["id", "raw_url", "references", "summary", "title"]);
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_edit_link_when_edit_url_is_empty_or_not_a_web_address() {
    let content = tree();
    for edit_url in [None, Some(""), Some("javascript:alert(1)//{path}")] {
        let app = start(content.path(), edit_url, None).await;
        let (status, _, html) = get(&app, "/docs/spin/v4/build").await;
        assert_eq!(status, StatusCode::OK);
        assert!(!html.contains("Edit this page"), "{edit_url:?}: {html}");
        assert!(!html.contains("javascript:"), "{edit_url:?}");
        assert!(html.contains(r#"<time datetime="2026-03-04">"#));
        app.stop().await;
    }
}

fn git(dir: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn dochub_build(content: &Path, out: &Path) {
    let output = Command::new(dochub_bin().expect("dochub builds"))
        .arg("build")
        .arg(content)
        .arg(out)
        .output()
        .expect("dochub build runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `dochub build` in a git work tree records each page's last commit date where the
/// frontmatter gives none; the page, its sitemap entry and the redirects are served from the
/// index. Outside a work tree the same build records no date and does not fail.
#[tokio::test(flavor = "multi_thread")]
async fn dochub_build_records_the_git_date_and_the_redirect_table() {
    let repo = tree();
    let content = repo.path();
    git(content, &["init", "-q"], "2024-01-02T10:00:00Z");
    git(content, &["add", "."], "2024-01-02T10:00:00Z");
    git(content, &["commit", "-qm", "one"], "2024-01-02T10:00:00Z");
    write(
        content,
        "spin/v4/a b&c.md",
        "---\ntitle: Odd name\nsummary: S.\n---\n# Odd name\n\nMore.\n",
    );
    git(content, &["commit", "-qam", "two"], "2025-05-06T10:00:00Z");

    let build = tempfile::tempdir().expect("build dir");
    dochub_build(content, build.path());
    let app = start(content, None, Some(build.path())).await;
    let (status, _, html) = get(&app, "/docs/spin/v4/a%20b%26c").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains(r#"Last updated <time datetime="2025-05-06">6 May 2025</time>"#),
        "{html}"
    );
    // The frontmatter's date wins over git's.
    let (_, _, html) = get(&app, "/docs/spin/v4/build").await;
    assert!(html.contains(r#"<time datetime="2026-03-04">"#), "{html}");
    let (_, _, xml) = get(&app, "/sitemap.xml").await;
    assert!(
        xml.contains(&format!(
            "<loc>{}</loc><lastmod>2025-05-06</lastmod>",
            app.url("/docs/spin/v4/a%20b&amp;c")
        )),
        "{xml}"
    );
    assert_redirects(&app).await;
    app.stop().await;

    // The live tree knows only the frontmatter's dates.
    let app = start(content, None, None).await;
    let (_, _, html) = get(&app, "/docs/spin/v4/a%20b%26c").await;
    assert!(!html.contains("<time"), "{html}");
    app.stop().await;

    // Outside a git work tree: no date, no error.
    let plain = tree();
    let build = tempfile::tempdir().expect("build dir");
    dochub_build(plain.path(), build.path());
    let app = start(plain.path(), None, Some(build.path())).await;
    let (status, _, html) = get(&app, "/docs/spin/v4/a%20b%26c").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!html.contains("<time"), "{html}");
    assert_redirects(&app).await;
    app.stop().await;
}

/// A page listing 5,000 old paths: served, its first 100 redirect, the rest are 404s, and
/// nothing answers 500.
#[tokio::test(flavor = "multi_thread")]
async fn five_thousand_old_paths_never_cost_a_500() {
    let content = tree();
    // A flow list (in block style 5,000 entries pass the 64 KiB YAML limit).
    let entries: Vec<String> = (0..5000).map(|n| format!("o/m/p{n}")).collect();
    let text = format!(
        "---\ntitle: Many\nsummary: S.\nredirect_from: [{}]\n---\n# Many\n",
        entries.join(", ")
    );
    write(content.path(), "spin/v4/many.md", &text);
    let build = tempfile::tempdir().expect("build dir");
    dochub_build(content.path(), build.path());
    for build in [None, Some(build.path())] {
        let app = start(content.path(), None, build).await;
        assert_eq!(get(&app, "/docs/spin/v4/many").await.0, StatusCode::OK);
        let (status, location, _) = get(&app, "/docs/o/m/p99").await;
        assert_eq!(status, StatusCode::MOVED_PERMANENTLY);
        assert_eq!(location, "/docs/spin/v4/many");
        assert_eq!(get(&app, "/docs/o/m/p100").await.0, StatusCode::NOT_FOUND);
        assert_eq!(
            get(&app, "/api/raw/o/m/p4999").await.0,
            StatusCode::NOT_FOUND
        );
        app.stop().await;
    }
}
