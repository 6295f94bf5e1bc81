//! The version switcher in a real browser (headless Chromium through chromedriver), in light and
//! in dark mode, on `tests/fixtures/versions`: on an older version's page the switcher and the
//! notice are shown and readable (text against its background at WCAG AA contrast), clicking a
//! version opens the same page there, and a search from the page keeps to its version. Writes
//! `docs-versions-<mode>.png` to the screenshot folder (never the repository).

use dochub_tests::TestApp;
use dochub_tests::browser::{Browser, screenshot_dir};
use fantoccini::Locator;
use serde_json::Value as Json;

/// WebDriver's code for the Enter key.
const ENTER: &str = "\u{e007}";

/// The switcher's links and the notice as drawn: text, box, and the contrast of each text
/// against the first background behind it that is not transparent.
async fn versions(browser: &Browser) -> Json {
    browser
        .eval(
            "const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
             const lum = (c) => {
                 const [r, g, b] = rgb(c).slice(0, 3).map((v) => {
                     v /= 255;
                     return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
                 });
                 return 0.2126 * r + 0.7152 * g + 0.0722 * b;
             };
             const behind = (el) => {
                 for (let e = el; e; e = e.parentElement) {
                     const c = getComputedStyle(e).backgroundColor;
                     const a = rgb(c)[3];
                     if (a === undefined || a > 0) return c;
                 }
                 return 'rgb(255, 255, 255)';
             };
             const contrast = (el) => {
                 const [a, b] = [lum(getComputedStyle(el).color), lum(behind(el))];
                 return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
             };
             const seen = (el) => {
                 const r = el.getBoundingClientRect();
                 return { text: el.textContent.trim(), href: el.getAttribute('href'),
                          current: el.getAttribute('aria-current'),
                          width: r.width, height: r.height, contrast: contrast(el) };
             };
             const notice = document.querySelector('.version-notice');
             return {
                 background: getComputedStyle(document.body).backgroundColor,
                 links: [...document.querySelectorAll('nav.versions a')].map(seen),
                 notice: notice && seen(notice),
                 noticeLink: notice && seen(notice.querySelector('a')),
                 canonical: document.querySelector('link[rel=canonical]')?.href || null,
             };",
        )
        .await
        .expect("versions script")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_version_switcher_in_light_and_dark() {
    let Some(browser) = Browser::start_or_skip("the_version_switcher_in_light_and_dark")
        .await
        .expect("browser starts")
    else {
        return;
    };
    let content = dochub_tests::versions_tree();
    let app = TestApp::builder()
        .content(content.path())
        .start()
        .await
        .expect("app starts");
    let client = browser.client();
    browser.set_viewport(1280, 900).await.expect("viewport");
    let page = app.url("/docs/spin/v1/install");

    for (dark, mode, background) in [
        (false, "light", "rgb(255, 255, 255)"),
        (true, "dark", "rgb(13, 17, 23)"),
    ] {
        browser.set_dark(dark).await.expect("mode");
        client.goto(&page).await.expect("goto");
        let seen = versions(&browser).await;
        assert_eq!(seen["background"], background, "{mode}: {seen}");
        let links = seen["links"].as_array().expect("links");
        let texts: Vec<&str> = links
            .iter()
            .map(|l| l["text"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(texts, ["Spin 2 latest", "Spin 1"], "{mode}: {seen}");
        assert_eq!(links[0]["href"], "/docs/spin/v2/install", "{mode}");
        assert_eq!(links[1]["current"], "page", "{mode}");
        for item in links.iter().chain([&seen["notice"], &seen["noticeLink"]]) {
            assert!(
                item["width"].as_f64().unwrap_or(0.0) > 0.0,
                "{mode}: shown: {item}"
            );
            assert!(
                item["height"].as_f64().unwrap_or(0.0) >= 24.0 || item == &seen["noticeLink"],
                "{mode}: a target of 24 px at least: {item}"
            );
            let contrast = item["contrast"].as_f64().unwrap_or(0.0);
            assert!(contrast >= 4.5, "{mode}: contrast {contrast:.2}: {item}");
        }
        assert!(
            seen["notice"]["text"]
                .as_str()
                .unwrap_or("")
                .starts_with("You are reading Spin 1, an older version."),
            "{mode}: {seen}"
        );
        assert_eq!(
            seen["canonical"],
            app.url("/docs/spin/v2/install"),
            "{mode}: {seen}"
        );
        let shot = screenshot_dir()
            .expect("dir")
            .join(format!("docs-versions-{mode}.png"));
        browser
            .full_page_screenshot(&shot)
            .await
            .expect("screenshot");
    }

    // Clicking the latest opens the same page there, which has no notice.
    client
        .find(Locator::Css("nav.versions a[href='/docs/spin/v2/install']"))
        .await
        .expect("latest link")
        .click()
        .await
        .expect("click");
    browser
        .wait_for_url(&app.url("/docs/spin/v2/install"))
        .await
        .expect("latest page");
    let latest = versions(&browser).await;
    assert_eq!(latest["notice"], Json::Null, "{latest}");
    assert_eq!(latest["links"][0]["current"], "page", "{latest}");

    // A search typed on a v2 page keeps to v2.
    let search = client
        .find(Locator::Css("form.search input[name=q]"))
        .await
        .expect("search box");
    search
        .send_keys(&format!("kettle{ENTER}"))
        .await
        .expect("type");
    browser
        .wait_for_url(&app.url("/docs/search?q=kettle&version=v2"))
        .await
        .expect("results page");
    let hits: Vec<String> = browser
        .eval("return [...document.querySelectorAll('.results a')].map((a) => a.getAttribute('href'));")
        .await
        .expect("hits")
        .as_array()
        .expect("array")
        .iter()
        .map(|h| h.as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        hits.iter()
            .any(|h| h.split('#').next() == Some("/docs/spin/v2/install")),
        "{hits:?}"
    );
    assert!(
        !hits.iter().any(|h| h.starts_with("/docs/spin/v1/")),
        "{hits:?}"
    );
    assert_eq!(
        browser.console_errors().await.expect("log"),
        Vec::<String>::new(),
        "no script errors or policy violations"
    );
    browser.stop().await;
    app.stop().await;
}
