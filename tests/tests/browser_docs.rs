//! Tier 2 in a real browser (headless Chromium through chromedriver): the layout rules a reader
//! sees — the "On this page" panel shown at 1280 px and hidden at 1000 px, a 280 px sidebar, the
//! content at most 800 px wide, the active link's blue left border — and the two ways of moving
//! around without script: typing in the search box and pressing Enter, and clicking the sidebar.
//! Writes `docs-install-1280.png` to the screenshot folder (never the repository).

use dochub_tests::browser::{Browser, screenshot_dir};
use dochub_tests::copy_tree;
use dochub_tests::{TestApp, fixture};
use fantoccini::Locator;
use serde_json::Value as Json;

/// WebDriver's code for the Enter key.
const ENTER: &str = "\u{e007}";

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
    let results = app.url("/docs/search?q=zanzibar");
    browser.wait_for_url(&results).await.expect("results page");
    let hit = client
        .wait()
        .for_element(Locator::Css(
            r#"ol.results a[href="/docs/alpha/guide/install#installing-alpha"]"#,
        ))
        .await
        .expect("a result links to the page");
    assert_eq!(hit.text().await.expect("text"), "Installing alpha");
    let mark = client
        .find(Locator::Css("ol.results mark"))
        .await
        .expect("match marked");
    assert_eq!(mark.text().await.expect("text"), "zanzibar");

    // The search button does the same for a reader who clicks instead of pressing Enter.
    client.goto(&page).await.expect("goto");
    client
        .find(Locator::Css(r#"header input[name="q"]"#))
        .await
        .expect("search box")
        .send_keys("zanzibar")
        .await
        .expect("type");
    let button = client
        .find(Locator::Css(r#"header form.search button[type="submit"]"#))
        .await
        .expect("a search button");
    assert_eq!(
        button.attr("aria-label").await.expect("label").as_deref(),
        Some("Search")
    );
    button.click().await.expect("click");
    browser.wait_for_url(&results).await.expect("results page");

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
    browser
        .wait_for_url(&app.url("/docs/alpha/reference/"))
        .await
        .expect("navigated");
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
    browser
        .wait_for_url(&app.url("/docs/alpha/reference/cli"))
        .await
        .expect("navigated");
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

/// A guide whose reading order (`order`) differs from its file names' order, with a Rust block.
fn ordered_guide() -> tempfile::TempDir {
    let content = tempfile::tempdir().expect("temp dir");
    let files = [
        ("p/_project.yaml", "name: P\n"),
        ("p/guide/_subproject.yaml", "name: Guide\n"),
        (
            "p/guide/index.md",
            "---\ntitle: Start\norder: 0\n---\n# Start\n",
        ),
        (
            "p/guide/zz-quickstart.md",
            "---\ntitle: Quickstart\norder: 1\n---\n# Quickstart\n\n```rust\nfn main() {\n    let answer = 42; // the answer\n    println!(\"{answer}\");\n}\n```\n",
        ),
        (
            "p/guide/aa-deploy.md",
            "---\ntitle: Deploy\norder: 2\n---\n# Deploy\n",
        ),
        ("p/guide/mid.md", "---\ntitle: Appendix\n---\n# Appendix\n"),
    ];
    for (path, text) in files {
        let path = content.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::fs::create_dir_all(content.path().join("_overviews")).expect("mkdir");
    content
}

/// What the page looks like: its mode, the switch, a keyword's colour.
async fn theme(browser: &Browser) -> Json {
    browser
        .eval(
            "const button = document.getElementById('theme-switch');
             const keyword = document.querySelector('pre .hl-k');
             return {
                 dataTheme: document.documentElement.dataset.theme || null,
                 background: getComputedStyle(document.body).backgroundColor,
                 switchShown: !!button && !button.hidden && button.offsetWidth > 0,
                 pressed: button && button.getAttribute('aria-pressed'),
                 keyword: keyword && keyword.textContent,
                 keywordColor: keyword && getComputedStyle(keyword).color,
                 stored: localStorage.getItem('dochub-theme'),
                 copyButtons: [...document.querySelectorAll('pre button.copy')].map((b) => b.textContent),
             };",
        )
        .await
        .expect("theme script")
}

/// Clicks the element `locator` finds.
async fn click(client: &fantoccini::Client, locator: Locator<'_>) {
    client
        .find(locator)
        .await
        .unwrap_or_else(|e| panic!("{locator:?}: {e}"))
        .click()
        .await
        .expect("click");
}

const LIGHT_BG: &str = "rgb(255, 255, 255)";
const DARK_BG: &str = "rgb(13, 17, 23)";

#[tokio::test(flavor = "multi_thread")]
async fn dark_mode_switch_highlighting_and_previous_next() {
    let Some(browser) = Browser::start_or_skip("dark_mode_switch_highlighting_and_previous_next")
        .await
        .expect("browser starts")
    else {
        return;
    };
    let content = ordered_guide();
    // Code is highlighted by `dochub build`: the app serves this tree's build.
    let build = tempfile::tempdir().expect("build dir");
    let root = dochub_content::ContentRoot::open(content.path()).expect("root");
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .expect("build");
    let app = TestApp::builder()
        .content(content.path())
        .mount(build.path(), "/prebuilt")
        .env("BUILD_DIR", "/prebuilt")
        .env("SERVE_PREBUILT", "1")
        .start()
        .await
        .expect("app starts");
    let client = browser.client();
    let quickstart = app.url("/docs/p/guide/zz-quickstart");
    browser.set_viewport(1280, 900).await.expect("viewport");

    // The system's setting applies with nothing stored: light, then dark.
    browser.set_dark(false).await.expect("light");
    client.goto(&quickstart).await.expect("goto");
    let light = theme(&browser).await;
    assert_eq!(light["dataTheme"], Json::Null, "{light}");
    assert_eq!(light["background"], LIGHT_BG, "{light}");
    assert_eq!(light["switchShown"], true, "{light}");
    assert_eq!(light["pressed"], "false", "{light}");
    // The Rust block is highlighted, its keywords in the light theme's red.
    assert_eq!(light["keyword"], "fn", "{light}");
    assert_eq!(light["keywordColor"], "rgb(207, 34, 46)", "{light}");
    assert_eq!(light["copyButtons"], serde_json::json!(["Copy"]), "{light}");
    browser.set_dark(true).await.expect("dark");
    client.refresh().await.expect("reload");
    let system_dark = theme(&browser).await;
    assert_eq!(system_dark["background"], DARK_BG, "{system_dark}");
    assert_eq!(system_dark["pressed"], "true", "{system_dark}");
    assert_eq!(
        system_dark["keywordColor"], "rgb(255, 123, 114)",
        "{system_dark}"
    );

    // The switch overrides the system, and the choice survives a reload.
    click(client, Locator::Id("theme-switch")).await;
    let chosen = theme(&browser).await;
    assert_eq!(chosen["dataTheme"], "light", "{chosen}");
    assert_eq!(chosen["stored"], "light", "{chosen}");
    assert_eq!(chosen["background"], LIGHT_BG, "{chosen}");
    assert_eq!(chosen["pressed"], "false", "{chosen}");
    client.refresh().await.expect("reload");
    let reloaded = theme(&browser).await;
    assert_eq!(
        reloaded["background"], LIGHT_BG,
        "system dark, chosen light: {reloaded}"
    );
    assert_eq!(reloaded["keywordColor"], "rgb(207, 34, 46)", "{reloaded}");
    browser.set_dark(false).await.expect("light");
    click(client, Locator::Id("theme-switch")).await;
    client.goto(&app.url("/docs/p/guide/")).await.expect("goto");
    let other_page = theme(&browser).await;
    assert_eq!(
        other_page["background"], DARK_BG,
        "remembered across pages: {other_page}"
    );
    assert_eq!(other_page["pressed"], "true", "{other_page}");

    // Previous / next follow `order`, then titles: Start, Quickstart, Deploy, Appendix.
    let mut visited = vec![client.current_url().await.expect("url").path().to_owned()];
    while let Ok(next) = client.find(Locator::Css("a.pager-next")).await {
        let href = next.attr("href").await.expect("href").expect("a link");
        next.click().await.expect("click next");
        // Read the address only once the page the link names is there.
        browser
            .wait_for_url(&app.url(&href))
            .await
            .expect("next page");
        visited.push(client.current_url().await.expect("url").path().to_owned());
        assert!(visited.len() <= 4, "{visited:?}");
    }
    assert_eq!(
        visited,
        [
            "/docs/p/guide/",
            "/docs/p/guide/zz-quickstart",
            "/docs/p/guide/aa-deploy",
            "/docs/p/guide/mid"
        ]
    );
    click(client, Locator::Css("a.pager-previous")).await;
    browser
        .wait_for_url(&app.url("/docs/p/guide/aa-deploy"))
        .await
        .expect("previous page");
    assert_eq!(
        browser.console_errors().await.expect("log"),
        Vec::<String>::new(),
        "no script errors or policy violations"
    );
    let shot = screenshot_dir().expect("dir").join("docs-dark-1280.png");
    client.goto(&quickstart).await.expect("goto");
    browser
        .full_page_screenshot(&shot)
        .await
        .expect("screenshot");
    app.stop().await;
    browser.stop().await;
}
