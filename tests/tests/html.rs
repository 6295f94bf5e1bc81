//! Every kind of HTML page the app serves, checked by the W3C's Nu HTML Checker: a docs page,
//! a subproject's landing page and listing, a project listing, `/docs/` itself, a search
//! results page, the overview landing page, each bundled overview, both 404 pages and two
//! versions of a versioned page. None may have an error.
//!
//! The checker comes from npm (`vnu-jar`, pinned in `tests/vnu/package-lock.json`; `.ci/run`
//! installs it) and runs on Java (Debian: `default-jre-headless`). Without them the test is
//! skipped, saying why, unless `CI` is set.

use std::path::PathBuf;
use std::process::Command;

use dochub_overview::OVERVIEWS;
use dochub_tests::browser::in_ci;
use dochub_tests::{TestApp, fixture, repo_root};

/// The checker's jar, when it and Java are installed.
fn vnu_jar() -> Result<PathBuf, String> {
    if Command::new("java").arg("-version").output().is_err() {
        return Err("java is not installed (Debian: apt-get install default-jre-headless)".into());
    }
    let dir = repo_root().join("tests/vnu");
    let jar = dir.join("node_modules/vnu-jar/build/dist/vnu.jar");
    if !jar.is_file() {
        return Err(format!(
            "vnu-jar is not installed: run `npm ci --ignore-scripts` in {}",
            dir.display()
        ));
    }
    Ok(jar)
}

/// Fetches `path` from `app`, which must answer `status` with HTML; writes it into `dir`.
async fn save(
    app: &TestApp,
    path: &str,
    status: u16,
    dir: &std::path::Path,
    files: &mut Vec<PathBuf>,
) {
    let res = reqwest::get(app.url(path)).await.expect("request");
    assert_eq!(res.status().as_u16(), status, "{path}");
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(kind.starts_with("text/html"), "{path}: {kind}");
    let name: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let file = dir.join(format!("{name}.html"));
    std::fs::write(&file, res.bytes().await.expect("body")).expect("write");
    files.push(file);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_nu_checker_finds_no_error_on_any_kind_of_page() {
    let jar = match vnu_jar() {
        Ok(jar) => jar,
        Err(why) if !in_ci() => {
            eprintln!("skipping the_nu_checker_finds_no_error_on_any_kind_of_page: {why}");
            return;
        }
        Err(why) => panic!("{why}, and CI is set, so this test may not be skipped"),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = Vec::new();

    // The bundled docs, as a new user runs them.
    let app = TestApp::builder().start().await.expect("app starts");
    let mut pages = vec![
        ("/docs/dochub/content/frontmatter", 200),
        ("/docs/dochub/api/", 200),
        ("/docs/dochub/", 200),
        ("/docs/", 200),
        ("/docs/search?q=order", 200),
        ("/docs/search?q=no-such-words-anywhere", 200),
        ("/docs/dochub/api/nope", 404),
        ("/overview/", 200),
        ("/overview/nope", 404),
    ];
    let overviews: Vec<String> = OVERVIEWS
        .iter()
        .map(|o| format!("/overview/{}", o.id))
        .collect();
    pages.extend(overviews.iter().map(|path| (path.as_str(), 200)));
    for (path, status) in pages {
        save(&app, path, status, dir.path(), &mut files).await;
    }
    app.stop().await;

    // A subproject without a landing page is a listing of its pages.
    let app = TestApp::builder()
        .content(fixture("docs"))
        .start()
        .await
        .expect("app starts");
    save(&app, "/docs/alpha/reference/", 200, dir.path(), &mut files).await;
    app.stop().await;

    // A versioned project: the latest version's page and an older one's, with the switcher,
    // the older-version notice, its canonical link and a callout.
    let versions = dochub_tests::versions_tree();
    let app = TestApp::builder()
        .content(versions.path())
        .start()
        .await
        .expect("app starts");
    for path in ["/docs/spin/v1/install", "/docs/spin/v2/install"] {
        save(&app, path, 200, dir.path(), &mut files).await;
    }
    app.stop().await;

    // One run over every file: the JVM's start is the slow part.
    let out = tokio::task::spawn_blocking(move || {
        Command::new("java")
            .arg("-jar")
            .arg(&jar)
            .args(["--errors-only", "--stdout"])
            .args(&files)
            .output()
            .expect("java runs")
    })
    .await
    .expect("the checker finishes");
    let report = String::from_utf8_lossy(&out.stdout)
        .replace(&format!("file:{}/", dir.path().display()), "");
    assert!(
        out.status.success() && report.trim().is_empty(),
        "the Nu HTML Checker found errors ({}):\n{report}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
