//! Tier 1 in a real browser: every overview page and the landing page load in headless Chromium
//! with no console errors, nothing loaded from elsewhere, no sideways scrolling of the page at
//! 375 px, a dark scheme that differs from the light one, and full-page screenshots at 1440 px
//! and 375 px (written to `DOCHUB_SCREENSHOT_DIR`, default `dochub-screenshots` in the temp dir).

use dochub_overview::OVERVIEWS;
use dochub_tests::TestApp;
use dochub_tests::browser::{Browser, screenshot_dir};

const VIEWPORTS: [(u32, u32); 2] = [(1440, 900), (375, 812)];

#[tokio::test(flavor = "multi_thread")]
async fn overview_pages_render_cleanly_in_chromium() {
    let Some(browser) = Browser::start_or_skip("overview_pages_render_cleanly_in_chromium")
        .await
        .unwrap()
    else {
        return;
    };
    let app = TestApp::builder().start().await.unwrap();
    let dir = screenshot_dir().unwrap();

    let mut pages = vec![("landing".to_owned(), "/overview/".to_owned())];
    pages.extend(
        OVERVIEWS
            .iter()
            .map(|o| (o.id.to_owned(), format!("/overview/{}", o.id))),
    );

    let mut failures = Vec::new();
    for (name, path) in &pages {
        let mut backgrounds = Vec::new();
        for dark in [false, true] {
            browser.set_dark(dark).await.unwrap();
            for (width, height) in VIEWPORTS {
                browser.set_viewport(width, height).await.unwrap();
                let url = app.url(path);
                browser.client().goto(&url).await.unwrap();
                let what = format!("{name} at {width}px{}", if dark { " dark" } else { "" });

                let facts = browser
                    .eval(
                        "return {
                            title: document.title,
                            width: window.innerWidth,
                            scrollWidth: document.documentElement.scrollWidth,
                            dark: matchMedia('(prefers-color-scheme: dark)').matches,
                            background: getComputedStyle(document.body).backgroundColor,
                            svgs: document.querySelectorAll('svg').length,
                            resources: performance.getEntriesByType('resource').map(e => e.name),
                        };",
                    )
                    .await
                    .unwrap();
                if facts["title"].as_str().unwrap_or("").is_empty() {
                    failures.push(format!("{what}: no title"));
                }
                if facts["width"] != width {
                    failures.push(format!("{what}: viewport is {} px", facts["width"]));
                }
                // Wide diagrams scroll inside their own box; the page itself never does.
                if facts["scrollWidth"].as_u64().unwrap_or(u64::MAX) > u64::from(width) {
                    failures.push(format!(
                        "{what}: page is {} px wide, wider than the viewport",
                        facts["scrollWidth"]
                    ));
                }
                if facts["dark"] != dark {
                    failures.push(format!(
                        "{what}: prefers-color-scheme emulation not applied"
                    ));
                }
                if name != "landing" && facts["svgs"].as_u64().unwrap_or(0) == 0 {
                    failures.push(format!("{what}: no SVG diagram"));
                }
                // The pages are self-contained: nothing at all is fetched after the document.
                let resources = facts["resources"].as_array().cloned().unwrap_or_default();
                if !resources.is_empty() {
                    failures.push(format!("{what}: fetched {resources:?}"));
                }
                for error in browser.console_errors().await.unwrap() {
                    failures.push(format!("{what}: console: {error}"));
                }

                let file = dir.join(format!(
                    "overview-{name}-{width}{}.png",
                    if dark { "-dark" } else { "" }
                ));
                let png = browser.full_page_screenshot(&file).await.unwrap();
                assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{what}: not a PNG");
                assert!(png.len() > 10_000, "{what}: suspiciously small screenshot");
                if width == 1440 {
                    backgrounds.push(facts["background"].to_string());
                }
            }
        }
        if backgrounds.len() == 2 && backgrounds[0] == backgrounds[1] {
            failures.push(format!(
                "{name}: same background {} in light and dark",
                backgrounds[0]
            ));
        }
    }
    // Anything logged after the last check (late errors) counts too.
    for error in browser.console_errors().await.unwrap() {
        failures.push(format!("late console error: {error}"));
    }
    eprintln!("screenshots in {}", dir.display());
    browser.stop().await;
    app.stop().await;
    assert!(failures.is_empty(), "{failures:#?}");
}
