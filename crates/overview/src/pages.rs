//! HTML pages the component renders itself: the landing page and error pages.

use askama::Template;
use thiserror::Error;

#[cfg(test)]
use crate::registry::OVERVIEWS;
use crate::registry::Overview;

/// A page could not be rendered (askama reports only formatter failures).
#[derive(Debug, Error)]
#[error("cannot render the {page} page: {source}")]
pub struct RenderError {
    /// Which page failed.
    pub page: &'static str,
    /// The template engine's error.
    #[source]
    pub source: askama::Error,
}

#[derive(Template)]
#[template(path = "landing.html")]
struct Landing<'a> {
    overviews: &'a [Overview],
    script: &'static str,
    theme_switch: &'static str,
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    title: &'a str,
    message: &'a str,
    script: &'static str,
    theme_switch: &'static str,
}

/// The hub landing page at `/overview/`: the three tiers and a card per overview in
/// `overviews` (those whose file exists), or a line saying there are none yet, plus cards to
/// `/docs/`, `/api/manifest` and `/api/health`. Self-contained HTML.
pub fn landing_page(overviews: &[Overview]) -> Result<String, RenderError> {
    Landing {
        overviews,
        script: dochub_http::page::SCRIPT,
        theme_switch: dochub_http::page::THEME_SWITCH,
    }
    .render()
    .map_err(|source| RenderError {
        page: "landing",
        source,
    })
}

/// An error page in the landing page's style; `title` and `message` are escaped.
pub fn error_page(status: u16, title: &str, message: &str) -> Result<String, RenderError> {
    ErrorPage {
        status,
        title,
        message,
        script: dochub_http::page::SCRIPT,
        theme_switch: dochub_http::page::THEME_SWITCH,
    }
    .render()
    .map_err(|source| RenderError {
        page: "error",
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_links_every_overview_docs_and_api() {
        let html = landing_page(OVERVIEWS).unwrap();
        assert!(html.starts_with("<!doctype html>"), "{}", &html[..40]);
        for o in OVERVIEWS {
            assert!(
                html.contains(&format!("href=\"/overview/{}\"", o.id)),
                "{}",
                o.id
            );
            // Titles such as "Content & Rendering Pipeline" are escaped.
            let title = o.title.replace('&', "&#38;");
            assert!(html.contains(&title), "{title}");
        }
        for href in ["/docs/", "/api/manifest", "/api/health"] {
            assert!(html.contains(&format!("href=\"{href}\"")), "{href}");
        }
        for tier in ["Tier 1", "Tier 2", "Tier 3"] {
            assert!(html.contains(tier), "{tier}");
        }
        assert!(!html.contains("http://") && !html.contains("https://"));
        // Described to search engines, and no heading level skipped after the h1.
        assert!(html.contains(r#"<meta name="description" content="One tree of markdown"#));
        let h2 = html.find("<h2").unwrap();
        assert!(!html[..h2].contains("<h3"), "an h3 before the first h2");
    }

    #[test]
    fn landing_without_overviews_says_so() {
        let html = landing_page(&[]).unwrap();
        assert!(html.contains("There are no overview pages yet"), "{html}");
        assert!(!html.contains("class=\"card t1\""), "no overview cards");
        assert!(html.contains("href=\"/docs/\""));
    }

    #[test]
    fn error_page_escapes_its_text() {
        let html = error_page(404, "Not <found>", "no \"x\" & y").unwrap();
        assert!(html.contains("404"));
        assert!(html.contains("Not &#60;found&#62;"), "{html}");
        assert!(html.contains("no &#34;x&#34; &#38; y"), "{html}");
        assert!(!html.contains("<found>"));
    }
}
