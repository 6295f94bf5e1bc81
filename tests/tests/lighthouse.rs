//! Lighthouse, the audit readers' browsers run, on the pages a reader meets first: a docs page
//! (code, a table, the outline, previous / next), a search page, the overview landing page and
//! an older version's page (switcher, notice, canonical link, callouts),
//! each in light and in dark mode, under the host, over HTTP. Every category (performance,
//! accessibility, best practices, SEO) must score 100. Performance is timed, so an audit that
//! misses it alone is repeated (at most three attempts, printed); the others must pass at once.
//!
//! Lighthouse comes from npm, pinned in `tests/lighthouse/package-lock.json` (`npm ci` in that
//! folder; `.ci/run` does it), and drives the system's Chromium (`CHROME_PATH`, else
//! `/usr/bin/chromium`) through `tests/lighthouse/audit.mjs`. Without Node, the packages or
//! Chromium the test is skipped, saying why, unless `CI` is set.

use std::path::PathBuf;
use std::process::Command;

use dochub_tests::browser::in_ci;
use dochub_tests::{TestApp, repo_root};
use serde_json::Value as Json;

const CATEGORIES: [&str; 4] = ["performance", "accessibility", "best-practices", "seo"];

/// The audit script, when everything it needs is installed.
fn audit_script() -> Result<PathBuf, String> {
    let dir = repo_root().join("tests/lighthouse");
    if Command::new("node").arg("--version").output().is_err() {
        return Err("node is not installed (Debian: apt-get install nodejs npm)".into());
    }
    if !dir.join("node_modules/lighthouse").is_dir() {
        return Err(format!(
            "lighthouse is not installed: run `npm ci` in {}",
            dir.display()
        ));
    }
    let chromium = std::env::var_os("CHROME_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if !chromium.is_file() {
        return Err(format!(
            "{} is not there (Debian: apt-get install chromium; or set CHROME_PATH)",
            chromium.display()
        ));
    }
    Ok(dir.join("audit.mjs"))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_category_scores_100_in_light_and_dark() {
    let script = match audit_script() {
        Ok(script) => script,
        Err(why) if !in_ci() => {
            eprintln!("skipping every_category_scores_100_in_light_and_dark: {why}");
            return;
        }
        Err(why) => panic!("{why}, and CI is set, so this test may not be skipped"),
    };
    // The bundled docs, with the build `spin build` writes, as a new user runs them.
    let app = TestApp::builder().start().await.expect("app starts");
    // An older version's page with callouts, from a fixture tree: the bundled docs have no
    // versions of their own to show. Its canonical link names the latest on the same origin.
    let versions = dochub_tests::versions_tree();
    let versioned = TestApp::builder()
        .content(versions.path())
        .start()
        .await
        .expect("app starts");
    let urls = [
        app.url("/docs/dochub/content/frontmatter"),
        app.url("/docs/search?q=order"),
        app.url("/overview/"),
        versioned.url("/docs/spin/v1/install"),
    ];
    let urls_for_node = urls.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(&script)
            .args(&urls_for_node)
            .output()
            .expect("node runs")
    })
    .await
    .expect("audit finishes");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "audit.mjs failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<Json> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON report a line"))
        .collect();
    assert_eq!(reports.len(), urls.len() * 2, "{stdout}");
    let mut below = Vec::new();
    for report in &reports {
        let (url, scheme) = (&report["url"], &report["scheme"]);
        println!(
            "{scheme} {url}: {} ({} attempt(s))",
            report["scores"], report["attempts"]
        );
        assert_eq!(report["errors"], Json::Array(Vec::new()), "{report}");
        for category in CATEGORIES {
            if report["scores"][category].as_f64() != Some(1.0) {
                below.push(format!(
                    "{url} ({scheme}): {category} {} — {}",
                    report["scores"][category], report["failing"]
                ));
            }
        }
        // The audit saw the mode it claims: a dark page has a dark background.
        let background = report["background"].as_str().unwrap_or_default();
        let dark = background == "rgb(13, 17, 23)" || background == "rgb(14, 19, 27)";
        assert_eq!(
            dark,
            scheme == "dark",
            "{url} {scheme}: background {background}"
        );
    }
    assert!(below.is_empty(), "below 100:\n{}", below.join("\n"));
    app.stop().await;
    versioned.stop().await;
}
