//! What search engines ask the docs component: `/robots.txt` and `/sitemap.xml`.
//!
//! In development (the pages are open) `robots.txt` allows everything and names the sitemap,
//! which lists every docs URL: the home, each project, each subproject and each page, in the
//! order readers see them. In production the pages need a token, so `robots.txt` (itself open:
//! a crawler cannot send one) disallows everything, and the sitemap needs the token like the
//! pages, which would only show a crawler the 401 anyway.
//!
//! URLs are absolute, as the sitemap protocol requires: from the variable `site_url` when it
//! is set (e.g. `https://docs.example.com`; a deployed app may sit behind a proxy whose
//! address the request does not show), else from the request's own URL. A sitemap holds at
//! most [`SITEMAP_LIMIT`] URLs; a larger tree gets a sitemap index instead, whose parts are
//! `/sitemap.xml?part=1`, `?part=2`, ...

use dochub_content::{Catalog, CatalogError};
use dochub_http::{Request, Response, query_param};
use dochub_render::{page_href, project_href, subproject_href};

use crate::docs::{SiteConfig, gate, text_response};

/// Content type of `robots.txt`.
pub const ROBOTS_CONTENT_TYPE: &str = "text/plain; charset=utf-8";
/// Content type of `sitemap.xml`.
pub const SITEMAP_CONTENT_TYPE: &str = "application/xml; charset=utf-8";
/// The most URLs one sitemap may list (the sitemap protocol's limit).
pub const SITEMAP_LIMIT: usize = 50_000;

/// `/robots.txt`: open, and in production, a refusal of everything. `origin` is the site's
/// scheme and authority (`https://docs.example.com`).
pub fn robots(config: &SiteConfig, req: &Request<'_>, origin: &str) -> Response {
    let head = req.method.eq_ignore_ascii_case("HEAD");
    if !(req.method == "GET" || head) {
        return text_response(405, "Method not allowed; use GET.")
            .with_header("allow", crate::docs::ALLOW)
            .strip_for(req.method);
    }
    let text = if config.auth.required() {
        "# The docs need a token here: nothing is for crawlers.\nUser-agent: *\nDisallow: /\n"
            .to_owned()
    } else {
        format!("User-agent: *\nAllow: /\n\nSitemap: {origin}/sitemap.xml\n")
    };
    Response::new(200, ROBOTS_CONTENT_TYPE, text.into_bytes()).strip_for(req.method)
}

/// `/sitemap.xml` (and its parts, `?part=N`), behind the same token as the pages.
pub fn sitemap(config: &SiteConfig, req: &Request<'_>, origin: &str) -> Response {
    if let Some(refused) = gate(config, req) {
        return refused;
    }
    let part = match query_param(req.query, "part") {
        None => None,
        Some(n) => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Some(n),
            _ => {
                return text_response(400, "`part` is a sitemap part number, 1 or more.")
                    .strip_for(req.method);
            }
        },
    };
    let answer = config.source.read(|catalog| site_paths(catalog));
    let res = match answer {
        Ok((paths, warning)) => {
            let parts = paths.len().div_ceil(SITEMAP_LIMIT).max(1);
            let body = match part {
                None if parts == 1 => Some(urlset(origin, &paths)),
                None => Some(sitemap_index(origin, parts)),
                Some(n) if n <= parts => {
                    let start = (n - 1) * SITEMAP_LIMIT;
                    let end = paths.len().min(start + SITEMAP_LIMIT);
                    Some(urlset(origin, &paths[start..end]))
                }
                Some(_) => None,
            };
            match body {
                Some(xml) => Response::new(200, SITEMAP_CONTENT_TYPE, xml.into_bytes()),
                None => text_response(404, &format!("The sitemap has {parts} part(s).")),
            }
            .with_warning(warning)
        }
        Err(e) => text_response(500, &e.to_string()),
    };
    res.strip_for(req.method)
}

/// A docs path the sitemap lists, with the date its page last changed (`<lastmod>`) when known.
type SitePath = (String, Option<String>);

/// Every docs path that answers a page, in reading order: the home, then each project, its
/// subprojects and their pages (a subproject's `index` page is its own address, listed once,
/// with the landing page's date). A project without subprojects and a subproject without
/// pages answer 404: not listed.
fn site_paths(catalog: &dyn Catalog) -> Result<Vec<SitePath>, CatalogError> {
    let mut paths = vec![("/docs/".to_owned(), None)];
    for project in catalog.outline()? {
        if project.subprojects.is_empty() {
            continue;
        }
        paths.push((project_href(&project.id), None));
        for (subproject, _) in &project.subprojects {
            let pages = catalog.pages(&project.id, subproject)?;
            if pages.is_empty() {
                continue;
            }
            let landing = pages.iter().find(|page| page.id == "index");
            paths.push((
                subproject_href(&project.id, subproject),
                landing.and_then(|page| page.updated.clone()),
            ));
            for page in pages {
                if page.id != "index" {
                    paths.push((page_href(&project.id, subproject, &page.id), page.updated));
                }
            }
        }
    }
    Ok(paths)
}

fn urlset(origin: &str, paths: &[SitePath]) -> String {
    let mut xml = String::with_capacity(120 + paths.len() * (origin.len() + 40));
    xml.push_str(concat!(
        r#"<?xml version="1.0" encoding="UTF-8"?>"#,
        "\n",
        r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
        "\n"
    ));
    for (path, updated) in paths {
        xml.push_str("  <url><loc>");
        escape_xml(&mut xml, origin);
        escape_xml(&mut xml, path);
        xml.push_str("</loc>");
        if let Some(date) = updated {
            // A W3C date, as `updated` and git give it (checked when read).
            xml.push_str("<lastmod>");
            escape_xml(&mut xml, date);
            xml.push_str("</lastmod>");
        }
        xml.push_str("</url>\n");
    }
    xml.push_str("</urlset>\n");
    xml
}

fn sitemap_index(origin: &str, parts: usize) -> String {
    let mut xml = String::from(concat!(
        r#"<?xml version="1.0" encoding="UTF-8"?>"#,
        "\n",
        r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
        "\n"
    ));
    for n in 1..=parts {
        xml.push_str("  <sitemap><loc>");
        escape_xml(&mut xml, origin);
        xml.push_str(&format!("/sitemap.xml?part={n}</loc></sitemap>\n"));
    }
    xml.push_str("</sitemapindex>\n");
    xml
}

fn escape_xml(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

/// The site's origin (`scheme://authority`, no trailing `/`): `site_url` when it is set, else
/// the request's URL (`spin-full-url`), else `http://localhost`.
///
/// ```
/// use dochub_app::crawl::origin;
/// assert_eq!(origin("https://docs.example.com/", None), "https://docs.example.com");
/// assert_eq!(origin("", Some("http://127.0.0.1:3000/robots.txt")), "http://127.0.0.1:3000");
/// ```
pub fn origin(site_url: &str, full_url: Option<&str>) -> String {
    let site_url = site_url.trim().trim_end_matches('/');
    if !site_url.is_empty() {
        return site_url.to_owned();
    }
    let Some(url) = full_url else {
        return "http://localhost".to_owned();
    };
    let scheme = url.split_once("://").map_or("http", |(scheme, _)| scheme);
    match dochub_http::url_authority(url) {
        Some(authority) => format!("{scheme}://{authority}"),
        None => "http://localhost".to_owned(),
    }
}
