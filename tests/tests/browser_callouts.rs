//! Callouts in a real browser (headless Chromium through chromedriver), in the light and the
//! dark colour scheme: every kind is drawn as a box with its title shown, the title and the
//! text readable on the box (WCAG AA, 4.5:1), and no `[!` or `:::` marker visible anywhere.
//! Writes `callouts-light.png` and `callouts-dark.png` to the screenshot folder.

use dochub_tests::TestApp;
use dochub_tests::browser::{Browser, screenshot_dir};
use serde_json::Value as Json;

const KINDS: [&str; 7] = [
    "note",
    "tip",
    "important",
    "info",
    "warning",
    "caution",
    "danger",
];

/// A page with each alert, each directive kind, a custom title and a nested callout.
fn page() -> String {
    let mut md = String::from("---\ntitle: Callouts\n---\n# Callouts\n\nIntro.\n\n");
    for kind in ["NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"] {
        md.push_str(&format!("> [!{kind}]\n> GitHub's {kind} alert.\n\n"));
    }
    for kind in KINDS {
        md.push_str(&format!(
            ":::{kind}\nThe {kind} directive, with `code` and a [link](#intro).\n:::\n\n"
        ));
    }
    md.push_str("::::warning[Outer title]\n:::tip[Inner title]\nNested.\n:::\n::::\n");
    md
}

/// Each callout's box, title and text as drawn, with the contrast of its title and text.
async fn callouts(browser: &Browser) -> Json {
    browser
        .eval(
            "const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
             const lum = (c) => {
                 const [r, g, b] = rgb(c).map((v) => {
                     v /= 255;
                     return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
                 });
                 return 0.2126 * r + 0.7152 * g + 0.0722 * b;
             };
             const contrast = (a, b) => {
                 const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
                 return (hi + 0.05) / (lo + 0.05);
             };
             const content = document.querySelector('.content');
             return {
                 bodyBackground: getComputedStyle(document.body).backgroundColor,
                 text: content.innerText,
                 callouts: [...content.querySelectorAll('aside.callout')].map((box) => {
                     const title = box.querySelector(':scope > .callout-title');
                     const para = box.querySelector(':scope > p:not(.callout-title)');
                     const s = getComputedStyle(box);
                     const t = getComputedStyle(title);
                     const r = title.getBoundingClientRect();
                     return {
                         kind: box.className,
                         title: title.innerText,
                         titleShown: r.width > 0 && r.height > 0 && t.visibility === 'visible'
                             && t.opacity === '1',
                         titleColor: t.color,
                         background: s.backgroundColor,
                         edge: s.borderLeftColor,
                         edgeWidth: s.borderLeftWidth,
                         titleContrast: contrast(t.color, s.backgroundColor),
                         textContrast: para ? contrast(getComputedStyle(para).color, s.backgroundColor) : null,
                     };
                 }),
             };",
        )
        .await
        .expect("callouts script")
}

/// Checks what a reader sees in one colour scheme; returns the title colours by kind.
fn check_scheme(scheme: &str, seen: &Json) -> Vec<(String, String)> {
    let text = seen["text"].as_str().expect("text");
    assert!(
        !text.contains("[!") && !text.contains(":::"),
        "{scheme}: no marker visible: {text}"
    );
    let callouts = seen["callouts"].as_array().expect("callouts");
    assert_eq!(callouts.len(), 5 + KINDS.len() + 2, "{scheme}: {seen}");
    let mut colours = Vec::new();
    for c in callouts {
        assert_eq!(c["titleShown"], true, "{scheme}: {c}");
        assert_ne!(
            c["background"], seen["bodyBackground"],
            "{scheme}: a box: {c}"
        );
        assert_eq!(c["edgeWidth"], "4px", "{scheme}: {c}");
        assert_eq!(
            c["edge"], c["titleColor"],
            "{scheme}: edge in the kind's colour: {c}"
        );
        let title = c["titleContrast"].as_f64().unwrap_or(f64::NAN);
        assert!(title >= 4.5, "{scheme}: title contrast {title} < 4.5: {c}");
        // The outer of two nested callouts has no paragraph of its own.
        if let Some(text) = c["textContrast"].as_f64() {
            assert!(text >= 4.5, "{scheme}: text contrast {text} < 4.5: {c}");
        }
        colours.push((
            c["kind"].as_str().unwrap_or_default().to_owned(),
            c["titleColor"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    let titles: Vec<&str> = callouts
        .iter()
        .filter_map(|c| c["title"].as_str())
        .collect();
    assert_eq!(
        titles,
        [
            "Note",
            "Tip",
            "Important",
            "Warning",
            "Caution",
            "Note",
            "Tip",
            "Important",
            "Info",
            "Warning",
            "Caution",
            "Danger",
            "Outer title",
            "Inner title"
        ],
        "{scheme}"
    );
    colours
}

#[tokio::test(flavor = "multi_thread")]
async fn callouts_readable_in_light_and_dark() {
    let Some(browser) = Browser::start_or_skip("callouts_readable_in_light_and_dark")
        .await
        .expect("browser starts")
    else {
        return;
    };
    let content = tempfile::tempdir().expect("temp dir");
    for (path, text) in [
        ("p/_project.yaml", "name: P\n".to_owned()),
        ("p/guide/_subproject.yaml", "name: Guide\n".to_owned()),
        ("p/guide/callouts.md", page()),
    ] {
        let path = content.path().join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    std::fs::create_dir_all(content.path().join("_overviews")).expect("mkdir");
    let app = TestApp::builder()
        .content(content.path())
        .start()
        .await
        .expect("app starts");
    let client = browser.client();
    browser.set_viewport(1280, 900).await.expect("viewport");
    let shots = screenshot_dir().expect("dir");

    browser.set_dark(false).await.expect("light");
    client
        .goto(&app.url("/docs/p/guide/callouts"))
        .await
        .expect("goto");
    let light = callouts(&browser).await;
    assert_eq!(light["bodyBackground"], "rgb(255, 255, 255)", "{light}");
    let light_colours = check_scheme("light", &light);
    browser
        .full_page_screenshot(&shots.join("callouts-light.png"))
        .await
        .expect("screenshot");

    browser.set_dark(true).await.expect("dark");
    client.refresh().await.expect("reload");
    let dark = callouts(&browser).await;
    assert_eq!(dark["bodyBackground"], "rgb(13, 17, 23)", "{dark}");
    let dark_colours = check_scheme("dark", &dark);
    browser
        .full_page_screenshot(&shots.join("callouts-dark.png"))
        .await
        .expect("screenshot");

    // Each mode has its own colours, and the kinds are told apart by colour too.
    for (l, d) in light_colours.iter().zip(&dark_colours) {
        assert_ne!(l.1, d.1, "{} keeps its light colour in dark mode", l.0);
    }
    let of = |kind: &str| {
        light_colours
            .iter()
            .find(|(k, _)| k == &format!("callout callout-{kind}"))
            .map(|(_, c)| c.clone())
    };
    assert_ne!(of("note"), of("warning"));
    assert_ne!(of("tip"), of("danger"));
    assert_eq!(
        browser.console_errors().await.expect("log"),
        Vec::<String>::new(),
        "no script errors or policy violations"
    );
    app.stop().await;
    browser.stop().await;
}
