//! Callouts end to end: the real components under the host, over HTTP, answering from the
//! content tree and from its prebuilt index. Both forms (`> [!WARNING]`, `:::tip[Title]`)
//! render as `<aside class="callout callout-<kind>">` with no marker left in the page, in the
//! search excerpts or in the description; a hostile title comes out escaped.

use std::path::Path;

use dochub_tests::TestApp;
use serde_json::Value as Json;

const GUIDE: &str = "---\ntitle: Deploy guide\n---\n# Deploy guide\n\n\
> [!WARNING]\n> Rotate the zebrafish token before you deploy.\n\n\
Some text between.\n\n\
:::tip[Speed tip]\nBuild the quokka index once.\n:::\n\n\
:::danger\n- never run it twice\n- never in production\n:::\n\n\
:::tip[<script>alert(1)</script>]\nA hostile pangolin title.\n:::\n\n\
```md\n:::note\nfenced stays text\n:::\n```\n";

fn content_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = [
        ("p/_project.yaml", "name: P\n"),
        ("p/guide/_subproject.yaml", "name: Guide\n"),
        ("p/guide/deploy.md", GUIDE),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::fs::create_dir_all(dir.path().join("_overviews")).expect("mkdir");
    dir
}

/// The app on `content`, from the tree, or from the build it writes into `build` first.
async fn start(content: &Path, build: Option<&Path>) -> TestApp {
    let mut app = TestApp::builder().content(content);
    if let Some(build) = build {
        let root = dochub_content::ContentRoot::open(content).expect("root");
        dochub_index::build::write_build(&root, build, &dochub_http::iso8601(chrono::Utc::now()))
            .expect("build");
        app = app
            .mount(build, "/prebuilt")
            .env("BUILD_DIR", "/prebuilt")
            .env("SERVE_PREBUILT", "1");
    }
    app.start().await.expect("app starts")
}

async fn get(app: &TestApp, path: &str) -> (u16, String) {
    let res = reqwest::get(app.url(path)).await.expect("request");
    let status = res.status().as_u16();
    (status, res.text().await.expect("body"))
}

/// The search answer for `q`, and the excerpt of its first result.
async fn search(app: &TestApp, q: &str) -> (Json, String) {
    let (status, body) = get(app, &format!("/api/search?q={q}")).await;
    assert_eq!(status, 200, "{body}");
    let json: Json = serde_json::from_str(&body).expect("json");
    let excerpt = json["results"][0]["excerpt"]
        .as_str()
        .unwrap_or_else(|| panic!("no result for {q}: {json}"))
        .to_owned();
    (json, excerpt)
}

#[tokio::test(flavor = "multi_thread")]
async fn callouts_render_search_and_describe_without_markers() {
    let content = content_tree();
    let build = tempfile::tempdir().expect("build dir");
    let live = start(content.path(), None).await;
    let prebuilt = start(content.path(), Some(build.path())).await;
    for app in [&live, &prebuilt] {
        let (status, html) = get(app, "/docs/p/guide/deploy").await;
        assert_eq!(status, 200, "{html}");
        let content_html = &html[html.find(r#"class="content""#).expect("content")..];
        for expected in [
            "<aside class=\"callout callout-warning\" role=\"note\">\n<p class=\"callout-title\">Warning</p>\n<p>Rotate the zebrafish token before you deploy.</p>\n</aside>",
            "<aside class=\"callout callout-tip\" role=\"note\">\n<p class=\"callout-title\">Speed tip</p>\n<p>Build the quokka index once.</p>\n</aside>",
            "<aside class=\"callout callout-danger\" role=\"note\">\n<p class=\"callout-title\">Danger</p>\n<ul>\n<li>never run it twice</li>\n<li>never in production</li>\n</ul>\n</aside>",
            "<p class=\"callout-title\">&lt;script&gt;alert(1)&lt;/script&gt;</p>",
            ":::note\nfenced stays text\n:::\n</code></pre>",
        ] {
            assert!(
                content_html.contains(expected),
                "{expected} in {content_html}"
            );
        }
        assert!(!html.contains("<script>alert"), "hostile title escaped");
        assert!(!content_html.contains("[!WARNING]"), "{content_html}");
        assert!(!content_html.contains("<p>:::"), "{content_html}");
        // The description is the first paragraph, the alert's text without its marker.
        assert!(
            html.contains(
                r#"<meta name="description" content="Rotate the zebrafish token before you deploy.">"#
            ),
            "{html}"
        );
        for (q, expected) in [
            ("zebrafish", "Rotate the zebrafish token before you deploy."),
            ("quokka", "Speed tip Build the quokka index once."),
            (
                "pangolin",
                "<script>alert(1)</script> A hostile pangolin title.",
            ),
        ] {
            let (_, excerpt) = search(app, q).await;
            assert!(excerpt.contains(expected), "{q}: {excerpt}");
            assert!(
                !excerpt.contains("[!") && !excerpt.contains(":::tip"),
                "{excerpt}"
            );
        }
    }
    // The index answers exactly as the tree does.
    for q in ["zebrafish", "quokka", "pangolin", "never", "fenced"] {
        assert_eq!(
            search(&live, q).await.0,
            search(&prebuilt, q).await.0,
            "{q}"
        );
    }
    live.stop().await;
    prebuilt.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bundled_docs_show_both_callout_forms() {
    let content = dochub_tests::repo_root().join("content");
    let app = TestApp::builder()
        .content(&content)
        .start()
        .await
        .expect("app starts");
    let (status, html) = get(&app, "/docs/dochub/docs/rendering").await;
    assert_eq!(status, 200);
    assert!(
        html.contains(r#"<aside class="callout callout-note" role="note">"#),
        "GitHub alert"
    );
    assert!(
        html.contains(
            r#"<aside class="callout callout-tip" role="note">
<p class="callout-title">Speed tip</p>"#
        ),
        "directive"
    );
    let (_, auth) = get(&app, "/docs/dochub/deployment/auth").await;
    assert!(auth.contains(r#"<aside class="callout callout-warning" role="note">"#));
    app.stop().await;
}
