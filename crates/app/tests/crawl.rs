//! `/robots.txt` and `/sitemap.xml`, natively, from the live tree and from a prebuilt index.

use std::fs;
use std::path::Path;

use dochub_app::crawl::{SITEMAP_CONTENT_TYPE, origin, robots, sitemap};
use dochub_app::docs::SiteConfig;
use dochub_http::auth::{AuthConfig, token_digest};
use dochub_http::{Request, Response};
use dochub_index::Source;
use dochub_index::build::{BuildMode, write_build};
use tempfile::TempDir;

fn tree() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("a & b/_project.yaml", "name: A and B\norder: 2\n"),
        ("a & b/guide/index.md", "---\ntitle: Guide\n---\n# Guide\n"),
        (
            "a & b/guide/install.md",
            "---\ntitle: Install\norder: 1\n---\n",
        ),
        ("a & b/guide/<odd>.md", "---\ntitle: Odd\n---\n"),
        ("zed/_project.yaml", "name: Zed\norder: 1\n"),
        ("zed/notes/one.md", "# One\n"),
        // Answer 404, so they are not listed: a subproject without pages, a project without
        // subprojects.
        ("zed/empty/_subproject.yaml", "name: Empty\n"),
        ("bare/_project.yaml", "name: Bare\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn config(content: &Path, build: BuildMode, environment: &str, tokens: &str) -> SiteConfig {
    SiteConfig {
        source: Source {
            content_dir: content.to_path_buf(),
            build,
            memo: None,
        },
        auth: AuthConfig::new(environment, tokens),
        edit_url: String::new(),
    }
}

fn get(
    config: &SiteConfig,
    path_and_query: &str,
    auth: Option<&str>,
    route: fn(&SiteConfig, &Request<'_>, &str) -> Response,
) -> Response {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let headers: Vec<_> = auth
        .map(|a| ("authorization".into(), a.into()))
        .into_iter()
        .collect();
    let req = Request {
        method: "GET",
        path,
        query,
        headers: &headers,
    };
    route(config, &req, "https://docs.example.com")
}

fn text(res: &Response) -> String {
    String::from_utf8(res.body.clone()).unwrap()
}

const EXPECTED_URLS: [&str; 8] = [
    "https://docs.example.com/docs/",
    "https://docs.example.com/docs/zed/",
    "https://docs.example.com/docs/zed/notes/",
    "https://docs.example.com/docs/zed/notes/one",
    "https://docs.example.com/docs/a%20&amp;%20b/",
    "https://docs.example.com/docs/a%20&amp;%20b/guide/",
    "https://docs.example.com/docs/a%20&amp;%20b/guide/install",
    "https://docs.example.com/docs/a%20&amp;%20b/guide/%3Codd%3E",
];

fn locs(xml: &str) -> Vec<&str> {
    xml.split("<loc>")
        .skip(1)
        .map(|rest| &rest[..rest.find("</loc>").unwrap()])
        .collect()
}

#[test]
fn development_robots_allow_everything_and_name_the_sitemap() {
    let dir = tree();
    let config = config(dir.path(), BuildMode::Off, "development", "");
    let res = get(&config, "", None, robots);
    assert_eq!(res.status, 200);
    assert_eq!(
        text(&res),
        "User-agent: *\nAllow: /\n\nSitemap: https://docs.example.com/sitemap.xml\n"
    );
}

#[test]
fn the_sitemap_lists_every_docs_url_in_reading_order_live_and_prebuilt() {
    let dir = tree();
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(dir.path()).unwrap();
    write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .unwrap();
    for mode in [
        BuildMode::Off,
        BuildMode::Required(build.path().to_path_buf()),
    ] {
        let config = config(dir.path(), mode.clone(), "development", "");
        let res = get(&config, "", None, sitemap);
        assert_eq!(res.status, 200, "{mode:?}: {}", text(&res));
        assert_eq!(res.header("content-type"), Some(SITEMAP_CONTENT_TYPE));
        let xml = text(&res);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"));
        assert_eq!(locs(&xml), EXPECTED_URLS, "{mode:?}");
        assert!(xml.ends_with("</urlset>\n"));
        // The landing page `index` is its subproject's address, listed once.
        assert!(!xml.contains("/index<"));
    }
}

#[test]
fn production_robots_disallow_everything_and_the_sitemap_needs_the_token() {
    let dir = tree();
    let digest = token_digest("secret-token");
    let config = config(dir.path(), BuildMode::Off, "production", &digest);
    let res = get(&config, "", None, robots);
    assert_eq!(res.status, 200);
    assert!(text(&res).contains("User-agent: *\nDisallow: /\n"));
    assert!(!text(&res).contains("Sitemap:"));
    assert_eq!(get(&config, "", None, sitemap).status, 401);
    assert_eq!(get(&config, "", Some("Bearer wrong"), sitemap).status, 401);
    let res = get(&config, "", Some("Bearer secret-token"), sitemap);
    assert_eq!(res.status, 200);
    assert_eq!(locs(&text(&res)), EXPECTED_URLS);
}

#[test]
fn bad_parts_and_methods_are_refused() {
    let dir = tree();
    let config = config(dir.path(), BuildMode::Off, "development", "");
    for query in [
        "?part=0",
        "?part=x",
        "?part=-1",
        "?part=99999999999999999999999",
    ] {
        assert_eq!(get(&config, query, None, sitemap).status, 400, "{query}");
    }
    // One part: part 1 is the whole sitemap, part 2 does not exist.
    assert_eq!(
        locs(&text(&get(&config, "?part=1", None, sitemap))),
        EXPECTED_URLS
    );
    assert_eq!(get(&config, "?part=2", None, sitemap).status, 404);
    for method in ["POST", "DELETE"] {
        let req = Request {
            method,
            path: "",
            query: "",
            headers: &[],
        };
        assert_eq!(sitemap(&config, &req, "http://x").status, 405);
        assert_eq!(robots(&config, &req, "http://x").status, 405);
    }
    let head = Request {
        method: "HEAD",
        path: "",
        query: "",
        headers: &[],
    };
    let res = sitemap(&config, &head, "http://x");
    assert_eq!(res.status, 200);
    assert!(res.body.is_empty());
}

#[test]
fn origin_comes_from_site_url_else_the_request() {
    assert_eq!(
        origin(
            " https://docs.example.com/ ",
            Some("http://127.0.0.1:3000/x")
        ),
        "https://docs.example.com"
    );
    assert_eq!(
        origin("", Some("https://[::1]:8443/robots.txt")),
        "https://[::1]:8443"
    );
    assert_eq!(
        origin("", Some("http://user@127.0.0.1:3000/")),
        "http://127.0.0.1:3000"
    );
    assert_eq!(origin("", Some("garbage")), "http://localhost");
    assert_eq!(origin("", None), "http://localhost");
}
