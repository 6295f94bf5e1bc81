//! Tier 2 in a real browser (headless Chromium through chromedriver): the layout rules a reader
//! sees — the "On this page" panel shown at 1280 px and hidden at 1000 px, a 280 px sidebar, the
//! content at most 800 px wide, the active link's blue left border — and the two ways of moving
//! around without script: typing in the search box and pressing Enter, and clicking the sidebar.
//! Writes `docs-install-1280.png` to the screenshot folder (never the repository).

use std::path::Path;

use dochub_tests::browser::{Browser, screenshot_dir};
use dochub_tests::{TestApp, fixture};
use fantoccini::Locator;
use serde_json::Value as Json;

/// WebDriver's code for the Enter key.
const ENTER: &str = "\u{e007}";

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// What the page's layout looks like right now.
async fn layout(browser: &Browser) -> Json {
    browser
        .eval(
            "const box = (sel) => {
                 const el = document.querySelector(sel);
                 if (!el) return null;
                 const r = el.getBoundingClientRect();
                 const s = getComputedStyle(el);
                 return { width: r.width, left: r.left, right: r.right, top: r.top, display: s.display,
                          position: s.position, borderLeftColor: s.borderLeftColor,
                          borderLeftWidth: s.borderLeftWidth };
             };
             return {
                 viewport: window.innerWidth,
                 scrollWidth: document.documentElement.scrollWidth,
                 toc: box('aside.toc'),
                 sidebar: box('nav.sidebar'),
                 container: box('.container'),
                 active: box('nav.sidebar a.active'),
                 header: getComputedStyle(document.querySelector('header.topbar')).backgroundColor,
             };",
        )
        .await
        .expect("layout script")
}

#[tokio::test(flavor = "multi_thread")]
async fn docs_layout_and_navigation_in_chromium() {
    let Some(browser) = Browser::start_or_skip("docs_layout_and_navigation_in_chromium")
        .await
        .expect("browser starts")
    else {
        return;
    };
    let content = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("docs"), content.path());
    // The overview component mounts this folder; the host refuses a missing mount source.
    std::fs::create_dir_all(content.path().join("_overviews")).expect("mkdir");
    let app = TestApp::builder()
        .content(content.path())
        .start()
        .await
        .expect("app starts");
    let client = browser.client();
    let page = app.url("/docs/alpha/guide/install");

    // Wide: the TOC is a fixed panel at the right, beside the content.
    browser.set_viewport(1280, 900).await.expect("viewport");
    client.goto(&page).await.expect("goto");
    let wide = layout(&browser).await;
    assert_eq!(wide["viewport"], 1280, "{wide}");
    assert_eq!(wide["toc"]["display"], "block", "{wide}");
    assert_eq!(wide["toc"]["position"], "fixed", "{wide}");
    let toc_left = wide["toc"]["left"].as_f64().expect("toc left");
    let content_right = wide["container"]["right"]
        .as_f64()
        .expect("container right");
    assert!(
        toc_left >= content_right,
        "the TOC does not cover the content: {wide}"
    );
    assert_eq!(wide["sidebar"]["width"], 280.0, "{wide}");
    assert_eq!(wide["sidebar"]["left"], 0.0, "{wide}");
    assert!(
        wide["container"]["width"].as_f64().expect("width") <= 800.0,
        "{wide}"
    );
    assert_eq!(
        wide["active"]["borderLeftColor"], "rgb(37, 99, 235)",
        "{wide}"
    );
    assert_eq!(wide["active"]["borderLeftWidth"], "3px", "{wide}");
    assert_eq!(
        wide["header"], "rgb(17, 24, 39)",
        "a dark header bar: {wide}"
    );
    assert_eq!(wide["scrollWidth"], 1280, "no sideways scrolling: {wide}");
    let toc_links = client
        .find_all(Locator::Css("aside.toc a"))
        .await
        .expect("toc links");
    assert_eq!(toc_links.len(), 4);
    for link in &toc_links {
        assert!(link.is_displayed().await.expect("displayed"));
    }
    let shot = screenshot_dir()
        .expect("screenshot dir")
        .join("docs-install-1280.png");
    browser
        .full_page_screenshot(&shot)
        .await
        .expect("screenshot");

    // Narrow: the TOC is hidden, the sidebar keeps its width, the content fills the rest.
    browser.set_viewport(1000, 900).await.expect("viewport");
    client.goto(&page).await.expect("goto");
    let narrow = layout(&browser).await;
    assert_eq!(narrow["viewport"], 1000, "{narrow}");
    assert_eq!(narrow["toc"]["display"], "none", "{narrow}");
    assert!(
        !toc_links[0].is_displayed().await.unwrap_or(false),
        "TOC links are hidden"
    );
    assert_eq!(narrow["sidebar"]["width"], 280.0, "{narrow}");
    assert!(narrow["container"]["width"].as_f64().expect("width") <= 800.0);
    assert_eq!(
        narrow["scrollWidth"], 1000,
        "no sideways scrolling: {narrow}"
    );

    // The boundary: 1199 px hides the panel, 1200 px shows it.
    for (width, display) in [(1199, "none"), (1200, "block")] {
        browser.set_viewport(width, 900).await.expect("viewport");
        let facts = layout(&browser).await;
        assert_eq!(facts["toc"]["display"], display, "{width} px: {facts}");
    }

    // Typing in the search box and pressing Enter lands on the results page.
    browser.set_viewport(1280, 900).await.expect("viewport");
    let search = client
        .find(Locator::Css(r#"header input[name="q"]"#))
        .await
        .expect("search box");
    search
        .send_keys(&format!("zanzibar{ENTER}"))
        .await
        .expect("type");
    let results = url::Url::parse(&app.url("/docs/search?q=zanzibar")).expect("url");
    client.wait().for_url(&results).await.expect("results page");
    let hit = client
        .wait()
        .for_element(Locator::Css(
            r#"ol.results a[href="/docs/alpha/guide/install"]"#,
        ))
        .await
        .expect("a result links to the page");
    assert_eq!(hit.text().await.expect("text"), "Installing alpha");
    let mark = client
        .find(Locator::Css("ol.results mark"))
        .await
        .expect("match marked");
    assert_eq!(mark.text().await.expect("text"), "zanzibar");

    // Clicking a sidebar link navigates; the new page's link becomes the active one.
    client.goto(&page).await.expect("goto");
    client
        .find(Locator::Css(
            r#"nav.sidebar a[href="/docs/alpha/reference/"]"#,
        ))
        .await
        .expect("sidebar link")
        .click()
        .await
        .expect("click");
    let reference = url::Url::parse(&app.url("/docs/alpha/reference/")).expect("url");
    client.wait().for_url(&reference).await.expect("navigated");
    let h1 = client
        .find(Locator::Css("article h1"))
        .await
        .expect("heading");
    assert_eq!(h1.text().await.expect("text"), "Reference");
    client
        .find(Locator::Css(
            r#"nav.sidebar a[href="/docs/alpha/reference/cli"]"#,
        ))
        .await
        .expect("the reference pages are listed now")
        .click()
        .await
        .expect("click");
    let cli = url::Url::parse(&app.url("/docs/alpha/reference/cli")).expect("url");
    client.wait().for_url(&cli).await.expect("navigated");
    let active = client
        .find(Locator::Css("nav.sidebar a.active"))
        .await
        .expect("active link");
    assert_eq!(active.text().await.expect("text"), "Command line");

    // Collapsed sections open on a click of their marker, showing the subprojects.
    let gamma_link = client
        .find(Locator::Css(r#"nav.sidebar a[href="/docs/gamma/notes/"]"#))
        .await
        .expect("gamma's subproject");
    assert!(
        !gamma_link.is_displayed().await.expect("displayed"),
        "folded"
    );
    browser
        .eval("document.querySelector('a[href=\"/docs/gamma/\"]').closest('details').open = true; return true;")
        .await
        .expect("open");
    assert!(
        gamma_link.is_displayed().await.expect("displayed"),
        "unfolded"
    );

    let errors = browser.console_errors().await.expect("log");
    assert!(errors.is_empty(), "console errors: {errors:?}");
    browser.stop().await;
    app.stop().await;
}
