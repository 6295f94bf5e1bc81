//! Versions end to end (`versions:` in `_project.yaml`): the real components under the host,
//! over HTTP, on `tests/fixtures/versions` — `spin` lists `[v2, v1, ghost, v1]` (`ghost` is no
//! subproject, `v1` is listed twice), `templates` is only in v1, `triggers` only in v2, `faq`
//! is not a version. Each check runs on the live tree and on a prebuilt index of it: the two
//! must agree.

use std::path::Path;

use dochub_tests::TestApp;
use reqwest::StatusCode;
use reqwest::redirect::Policy;

const SITE_URL: &str = "https://docs.example.com";

/// One app on the tree and one on a build of it (`SERVE_PREBUILT`).
async fn live_and_prebuilt(content: &Path, build: &Path) -> Vec<(&'static str, TestApp)> {
    let root = dochub_content::ContentRoot::open(content).expect("root");
    dochub_index::build::write_build(&root, build, &dochub_http::iso8601(chrono::Utc::now()))
        .expect("build");
    let live = TestApp::builder()
        .variable("site_url", SITE_URL)
        .content(content)
        .env("SERVE_PREBUILT", "0")
        .start()
        .await
        .expect("app starts");
    let prebuilt = TestApp::builder()
        .variable("site_url", SITE_URL)
        .content(content)
        .mount(build, "/prebuilt")
        .env("BUILD_DIR", "/prebuilt")
        .env("SERVE_PREBUILT", "1")
        .start()
        .await
        .expect("app starts");
    vec![("live", live), ("prebuilt", prebuilt)]
}

async fn get(app: &TestApp, path: &str) -> (StatusCode, String) {
    let client = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client");
    let res = client.get(app.url(path)).send().await.expect("request");
    let status = res.status();
    (status, res.text().await.expect("body"))
}

/// The text between `start` and the next `end` in `html`.
fn region<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in {html}"));
    let rest = &html[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

fn paths(json: &serde_json::Value) -> Vec<String> {
    json["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|hit| hit["path"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_of_a_versioned_project_switch_versions_and_name_the_latest() {
    let content = dochub_tests::versions_tree();
    let build = tempfile::tempdir().expect("build dir");
    for (kind, app) in live_and_prebuilt(content.path(), build.path()).await {
        // An older version's page that the latest has too: switcher, notice, canonical.
        let (status, html) = get(&app, "/docs/spin/v1/install").await;
        assert_eq!(status, 200, "{kind}");
        let switcher = region(&html, r#"<nav class="versions""#, "</nav>");
        assert!(switcher.contains(r#"<a href="/docs/spin/v2/install">Spin 2 <span class="versions-latest">latest</span></a>"#), "{kind}: {switcher}");
        assert!(
            switcher.contains(
                r#"<a href="/docs/spin/v1/install" class="active" aria-current="page">Spin 1</a>"#
            ),
            "{kind}: {switcher}"
        );
        // `ghost` is not a subproject: it is left out, not linked.
        assert!(!html.contains("ghost"), "{kind}");
        assert_eq!(switcher.matches("<li>").count(), 2, "{kind}: {switcher}");
        assert!(
            html.contains(&format!(
                r#"<link rel="canonical" href="{SITE_URL}/docs/spin/v2/install">"#
            )),
            "{kind}"
        );
        assert!(html.contains(r#"You are reading <strong>Spin 1</strong>, an older version. <a href="/docs/spin/v2/install">Read this page in Spin 2, the latest</a>."#), "{kind}");
        assert!(
            html.contains(r#"<input type="hidden" name="version" value="v1">"#),
            "{kind}"
        );
        // The sidebar: one entry for the versions (v1, being read), the FAQ beside it.
        let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
        assert!(
            sidebar.contains(r#"href="/docs/spin/v1/""#),
            "{kind}: {sidebar}"
        );
        assert!(
            !sidebar.contains(r#"href="/docs/spin/v2/""#),
            "{kind}: {sidebar}"
        );
        assert!(
            sidebar.contains(r#"href="/docs/spin/faq/""#),
            "{kind}: {sidebar}"
        );
        assert!(
            sidebar.contains(r#"href="/docs/spin/v1/templates""#),
            "{kind}"
        );

        // Only in v1: the latest's landing page instead, and no canonical.
        let (status, html) = get(&app, "/docs/spin/v1/templates").await;
        assert_eq!(status, 200, "{kind}");
        assert!(
            html.contains(
                r#"<a href="/docs/spin/v2/" title="No such page in Spin 2: its first page">Spin 2"#
            ),
            "{kind}"
        );
        assert!(
            html.contains(r#"<a href="/docs/spin/v2/">Go to Spin 2, the latest</a>"#),
            "{kind}"
        );
        assert!(!html.contains(r#"rel="canonical""#), "{kind}");

        // The latest: a switcher, no notice, no canonical; its sidebar entry is v2.
        let (status, html) = get(&app, "/docs/spin/v2/triggers").await;
        assert_eq!(status, 200, "{kind}");
        assert!(html.contains(r#"<a href="/docs/spin/v1/" title="No such page in Spin 1: its first page">Spin 1</a>"#), "{kind}");
        assert!(!html.contains(r#"class="version-notice""#), "{kind}");
        assert!(!html.contains(r#"rel="canonical""#), "{kind}");
        let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
        assert!(
            !sidebar.contains(r#"href="/docs/spin/v1/""#),
            "{kind}: {sidebar}"
        );

        // An older version's landing page names the latest's.
        let (status, html) = get(&app, "/docs/spin/v1/").await;
        assert_eq!(status, 200, "{kind}");
        assert!(
            html.contains(&format!(
                r#"<link rel="canonical" href="{SITE_URL}/docs/spin/v2/">"#
            )),
            "{kind}"
        );

        // Elsewhere no switcher, and the sidebar shows the latest.
        for path in [
            "/docs/spin/faq/questions",
            "/docs/other/guide/intro",
            "/docs/",
        ] {
            let (status, html) = get(&app, path).await;
            assert_eq!(status, 200, "{kind} {path}");
            assert!(!html.contains(r#"class="versions""#), "{kind} {path}");
            assert!(!html.contains(r#"name="version""#), "{kind} {path}");
            let sidebar = region(&html, r#"<nav class="sidebar""#, "</nav>");
            assert!(
                sidebar.contains(r#"href="/docs/spin/v2/""#),
                "{kind} {path}"
            );
            assert!(
                !sidebar.contains(r#"href="/docs/spin/v1/""#),
                "{kind} {path}"
            );
        }

        // The manifests keep the interface's fields: no `versions` anywhere.
        for path in [
            "/api/manifest",
            "/api/manifest/spin",
            "/api/manifest/spin/v1",
        ] {
            let (status, body) = get(&app, path).await;
            assert_eq!(status, 200, "{kind} {path}");
            assert!(!body.contains("\"versions\""), "{kind} {path}: {body}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn search_keeps_to_a_version_when_asked() {
    let content = dochub_tests::versions_tree();
    let build = tempfile::tempdir().expect("build dir");
    let mut answers = Vec::new();
    for (kind, app) in live_and_prebuilt(content.path(), build.path()).await {
        // Without `version`, every version answers.
        let (status, body) = get(&app, "/api/search?q=kettle").await;
        assert_eq!(status, 200, "{kind}: {body}");
        let all: serde_json::Value = serde_json::from_str(&body).expect("json");
        let mut every = paths(&all);
        every.sort();
        assert_eq!(
            every,
            [
                "other/guide/intro",
                "spin/faq/questions",
                "spin/v1/install",
                "spin/v2/install"
            ],
            "{kind}"
        );
        // `version=v1`: v2's pages leave; the FAQ and the other project stay.
        let (status, body) = get(&app, "/api/search?q=kettle&version=v1").await;
        assert_eq!(status, 200, "{kind}: {body}");
        let v1: serde_json::Value = serde_json::from_str(&body).expect("json");
        let mut kept = paths(&v1);
        kept.sort();
        assert_eq!(
            kept,
            ["other/guide/intro", "spin/faq/questions", "spin/v1/install"],
            "{kind}"
        );
        // A version no project lists: 400 naming those that are.
        let (status, body) = get(&app, "/api/search?q=kettle&version=ghost").await;
        assert_eq!(status, 400, "{kind}");
        let error: serde_json::Value = serde_json::from_str(&body).expect("json");
        assert_eq!(
            error["error"], "Unknown version `ghost`; the versions are: v1, v2",
            "{kind}"
        );
        // An empty one is none.
        let (status, body) = get(&app, "/api/search?q=kettle&version=").await;
        assert_eq!(status, 200, "{kind}");
        assert_eq!(paths(&serde_json::from_str(&body).expect("json")).len(), 4);

        // The docs search page honours it and keeps it in its search box.
        let (status, html) = get(&app, "/docs/search?q=kettle&version=v2").await;
        assert_eq!(status, 200, "{kind}");
        // Hits link to the section they lie under (each install page opens with its h1).
        assert!(
            html.contains(r#"href="/docs/spin/v2/install#install""#),
            "{kind}"
        );
        assert!(!html.contains(r#"href="/docs/spin/v1/install#"#), "{kind}");
        assert!(
            html.contains(r#"<input type="hidden" name="version" value="v2">"#),
            "{kind}"
        );
        // An unknown version is answered as /api/search answers it, and not kept for the
        // next search.
        let (status, html) = get(&app, "/docs/search?q=kettle&version=v9").await;
        assert_eq!(status, 400, "{kind}");
        assert!(
            html.contains("Unknown version `v9`; the versions are: v1, v2."),
            "{kind}"
        );
        assert!(!html.contains(r#"href="/docs/spin/v1/install#"#), "{kind}");
        assert!(!html.contains(r#"name="version" value="v9""#), "{kind}");
        // `latest` is the latest version, as for agents.
        let (status, html) = get(&app, "/docs/search?q=kettle&version=latest").await;
        assert_eq!(status, 200, "{kind}");
        assert!(
            html.contains(r#"href="/docs/spin/v2/install#install""#),
            "{kind}"
        );
        assert!(!html.contains(r#"href="/docs/spin/v1/install#"#), "{kind}");
        answers.push((all, v1));
    }
    // The tree and the index give the same answers, order and excerpts included.
    assert_eq!(answers[0], answers[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_versions_list_of_nothing_real_serves_like_none() {
    let content = dochub_tests::versions_tree();
    let project = content.path().join("spin/_project.yaml");
    for yaml in [
        "versions: v2\n",
        "versions: [nope, \"../v1\", {a: 1}, [v2]]\n",
        "versions: {v2: 1}\n",
        "versions: [v2, v1]\nname: [broken\n",
    ] {
        std::fs::write(&project, yaml).expect("write");
        let build = tempfile::tempdir().expect("build dir");
        for (kind, app) in live_and_prebuilt(content.path(), build.path()).await {
            for path in [
                "/docs/spin/v1/install",
                "/docs/spin/v1/",
                "/docs/",
                "/llms.txt",
                "/api/manifest/spin",
            ] {
                let (status, body) = get(&app, path).await;
                assert_eq!(status, 200, "{kind} {yaml:?} {path}");
                assert!(
                    !body.contains(r#"class="versions""#),
                    "{kind} {yaml:?} {path}"
                );
            }
            let (status, _) = get(&app, "/api/search?q=kettle&version=v1").await;
            assert_eq!(status, 400, "{kind} {yaml:?}");
        }
    }
}
