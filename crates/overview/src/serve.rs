//! Request handling for the overview component, as a plain function of method, path and content root.

use std::path::{Path, PathBuf};

use dochub_content::fsio::{self, EntryKind};
use dochub_http::auth::{AuthConfig, BASIC_CHALLENGE};
use dochub_http::{HTML, Response};

use crate::kept::KeptPages;
use crate::pages::{error_page, landing_page};
use crate::registry::{OVERVIEWS, Overview, find, validate_id};

/// Where `/` sends the browser.
pub const LANDING_PATH: &str = "/overview/";

/// The overview pages' policy: only inline styles, scripts and `data:` images may load, so a
/// page that references anything outside itself fails visibly in the browser instead of
/// quietly depending on the network. (Overviews are self-contained pages written with their
/// own inline scripts, which no hash list could name ahead of time.)
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                       img-src data:; font-src data:; base-uri 'none'; form-action 'self'; \
                       frame-ancestors 'none'";

/// The policy of the pages this component writes itself (the landing and error pages): the
/// one script they run is dochub's page script, allowed by its hash
/// ([`dochub_http::page::SCRIPT_HASH`]); `connect-src 'self'` as on the docs pages, for
/// audits that read `/robots.txt` from inside the page.
pub const OWN_PAGES_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     script-src 'sha256-30TygC+e3/mJYFulOxmvQwgJg2YPGIDnmYBGlRYKhIo='; connect-src 'self'; \
     img-src data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn html(status: u16, body: Vec<u8>) -> Response {
    Response::new(status, HTML, body).with_header("content-security-policy", OWN_PAGES_CSP)
}

fn overview_html(status: u16, body: Vec<u8>) -> Response {
    Response::new(status, HTML, body).with_header("content-security-policy", CSP)
}

fn error_reply(status: u16, title: &str, message: &str) -> Response {
    match error_page(status, title, message) {
        Ok(page) => html(status, page.into_bytes()),
        Err(e) => internal_error(e.to_string()),
    }
}

/// A plain 500 whose detail goes to the log (as the response's warning), never to the client.
pub fn internal_error(detail: String) -> Response {
    Response::text(500, "Internal Server Error").with_warning(Some(detail))
}

/// What the component reads once per request from its environment and Spin variables.
#[derive(Debug, Clone)]
pub struct Config {
    /// The content root (`CONTENT_DIR`); overview files are `<content_dir>/_overviews/<id>.html`.
    pub content_dir: PathBuf,
    /// Who may read the pages (from the `environment` and `auth_tokens` variables).
    pub auth: AuthConfig,
    /// The answers an instance that serves many requests keeps ([`KeptPages`]); `None` reads
    /// everything per request, which is cheaper where an instance serves one.
    pub kept: Option<KeptPages>,
}

impl Config {
    /// A configuration without authentication, as in development.
    pub fn open(content_dir: impl Into<PathBuf>) -> Self {
        Config {
            content_dir: content_dir.into(),
            auth: AuthConfig::new("development", ""),
            kept: None,
        }
    }
}

/// Answers one request to `/` or `/overview/...`.
///
/// `path` is the request path without query, `authorization` the `Authorization` header.
/// Every route needs a token when `config.auth` requires one (401 with a Basic challenge, so
/// that a browser asks for it); then only `GET` and `HEAD` are allowed, and registered
/// overview files are served byte for byte.
pub fn respond(config: &Config, method: &str, path: &str, authorization: Option<&str>) -> Response {
    let head = method == "HEAD";
    if !config.auth.allows(authorization) {
        let mut reply = error_reply(
            401,
            "Sign in required",
            "This dochub runs in production: send Authorization: Bearer <token>, or give the token as the password when your browser asks.",
        );
        reply
            .headers
            .push(("www-authenticate", BASIC_CHALLENGE.to_owned()));
        if head {
            reply.body.clear();
        }
        return reply;
    }
    if method != "GET" && !head {
        let mut reply = error_reply(
            405,
            "Method not allowed",
            "Overview pages can only be read (GET or HEAD).",
        );
        reply.headers.push(("allow", "GET, HEAD".to_owned()));
        return reply;
    }
    let mut reply = match path {
        "/" => {
            let mut r = html(302, Vec::new());
            r.headers.push(("location", LANDING_PATH.to_owned()));
            r
        }
        "/overview" | "/overview/" => landing(config),
        _ => match path.strip_prefix("/overview/") {
            Some(id) => overview(id, config),
            None => not_found(),
        },
    };
    if head {
        reply.body.clear();
    }
    reply
}

fn landing(config: &Config) -> Response {
    let render =
        || landing_page(&available(&config.content_dir)).map(|page| Some(page.into_bytes()));
    let page = match &config.kept {
        // The folder's time changes when an overview file comes or goes.
        Some(kept) => kept
            .answer(&config.content_dir.join(OVERVIEWS_DIR), render)
            .map(|page| page.map(|bytes| bytes.to_vec())),
        None => render(),
    };
    match page {
        Ok(Some(page)) => html(200, page),
        Ok(None) => internal_error("the landing page came out empty".to_owned()),
        Err(e) => internal_error(e.to_string()),
    }
}

/// The registered overviews whose file is there: a plain docs tree has none, and its landing
/// page says so instead of linking to pages that would be 404s.
///
/// One listing of the folder, not a `stat` per overview: in a component each file-system call
/// is a round trip to the host's thread pool ([`dochub_content::fsio`]). A folder that cannot
/// be listed shows no overviews, as a missing one does.
fn available(content_dir: &Path) -> Vec<Overview> {
    let listed = fsio::list_dir(&content_dir.join(OVERVIEWS_DIR), |name| {
        OVERVIEWS.iter().any(|o| o.is_file_name(name))
    });
    let files: Vec<String> = match listed {
        Ok(Some(entries)) => entries
            .into_iter()
            .filter(|(_, kind)| *kind == EntryKind::File)
            .map(|(name, _)| name)
            .collect(),
        Ok(None) | Err(_) => Vec::new(),
    };
    OVERVIEWS
        .iter()
        .filter(|o| files.iter().any(|name| o.is_file_name(name)))
        .copied()
        .collect()
}

/// The folder of the overview files, inside the content root.
const OVERVIEWS_DIR: &str = "_overviews";

fn file_of(content_dir: &Path, o: &Overview) -> PathBuf {
    content_dir
        .join(OVERVIEWS_DIR)
        .join(format!("{}.html", o.id))
}

fn overview(id: &str, config: &Config) -> Response {
    // Validation comes first so that nothing from the request reaches a path unless it is a
    // plain slug; lookup then limits it to registered ids.
    let Some(entry) = validate_id(id).ok().and_then(|()| find(id)) else {
        return not_found();
    };
    let file = file_of(&config.content_dir, entry);
    // One open and one read (`std::fs::read` makes four host round trips in a component).
    let read = || fsio::read_file(&file);
    let bytes = match &config.kept {
        Some(kept) => kept
            .answer(&file, read)
            .map(|bytes| bytes.map(|bytes| bytes.to_vec())),
        None => read(),
    };
    match bytes {
        Ok(Some(bytes)) => overview_html(200, bytes),
        Ok(None) => not_found(),
        Err(e) => internal_error(e.to_string()),
    }
}

fn not_found() -> Response {
    error_reply(
        404,
        "Page not found",
        "There is no overview page at this address.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::OVERVIEWS;
    use dochub_http::auth::token_digest;

    fn get(dir: &Path, path: &str) -> Response {
        respond(&Config::open(dir), "GET", path, None)
    }

    fn content_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("_overviews")).unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join("_overviews").join(name), bytes).unwrap();
        }
        dir
    }

    #[test]
    fn root_redirects_to_the_landing_page() {
        let r = get(Path::new("/nonexistent"), "/");
        assert_eq!(r.status, 302);
        assert_eq!(r.header("location"), Some("/overview/"));
    }

    #[test]
    fn landing_page_with_and_without_slash() {
        let dir = content_with(&[("architecture.html", b"x")]);
        for path in ["/overview", "/overview/"] {
            let r = get(dir.path(), path);
            assert_eq!(r.status, 200, "{path}");
            assert_eq!(r.header("content-type"), Some(HTML));
            let body = String::from_utf8(r.body).unwrap();
            assert!(body.contains("href=\"/overview/architecture\""));
            // A registered overview without its file gets no card.
            assert!(!body.contains("href=\"/overview/content-pipeline\""));
        }
    }

    #[test]
    fn own_pages_run_only_the_page_script_allowed_by_its_hash() {
        let dir = content_with(&[("architecture.html", b"<script>inline()</script>")]);
        let landing = get(dir.path(), "/overview/");
        let csp = landing.header("content-security-policy").unwrap();
        assert!(csp.contains(dochub_http::page::SCRIPT_HASH), "{csp}");
        assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");
        let body = String::from_utf8(landing.body).unwrap();
        assert!(body.contains(&format!("<script>{}</script>", dochub_http::page::SCRIPT)));
        assert!(body.contains(r#"id="theme-switch""#));
        assert_eq!(
            get(dir.path(), "/overview/nope").header("content-security-policy"),
            Some(OWN_PAGES_CSP)
        );
        // An overview is authored HTML with its own inline scripts.
        let overview = get(dir.path(), "/overview/architecture");
        assert_eq!(overview.header("content-security-policy"), Some(CSP));
    }

    #[test]
    fn landing_page_of_a_tree_without_overviews_says_there_are_none() {
        let empty = content_with(&[]);
        for dir in [Path::new("/nonexistent"), empty.path()] {
            let r = get(dir, "/overview/");
            assert_eq!(r.status, 200);
            let body = String::from_utf8(r.body).unwrap();
            assert!(body.contains("There are no overview pages yet"), "{body}");
        }
    }

    /// Sets a file's or folder's modification time a minute back, long settled.
    fn settle(path: &Path) {
        crate::kept::tests::set_mtime(path, crate::kept::tests::a_minute_ago());
    }

    #[test]
    fn kept_pages_show_every_change_on_the_next_request() {
        let dir = content_with(&[("architecture.html", b"<p>first</p>")]);
        let overviews = dir.path().join("_overviews");
        settle(&overviews.join("architecture.html"));
        settle(&overviews);
        let config = Config {
            kept: Some(KeptPages::new()),
            ..Config::open(dir.path())
        };
        let landing = |config: &Config| {
            String::from_utf8(respond(config, "GET", "/overview/", None).body).unwrap()
        };
        let page = |config: &Config| respond(config, "GET", "/overview/architecture", None);
        for _ in 0..2 {
            assert!(landing(&config).contains("href=\"/overview/architecture\""));
            assert!(!landing(&config).contains("href=\"/overview/content-pipeline\""));
            assert_eq!(page(&config).body, b"<p>first</p>");
        }

        // A new overview file, an edit, and a removal each show at once.
        std::fs::write(overviews.join("content-pipeline.html"), b"x").unwrap();
        assert!(landing(&config).contains("href=\"/overview/content-pipeline\""));
        std::fs::write(overviews.join("architecture.html"), b"<p>second</p>").unwrap();
        assert_eq!(page(&config).body, b"<p>second</p>");
        std::fs::remove_file(overviews.join("architecture.html")).unwrap();
        assert_eq!(page(&config).status, 404);
        assert!(!landing(&config).contains("href=\"/overview/architecture\""));
        std::fs::remove_dir_all(&overviews).unwrap();
        assert!(landing(&config).contains("There are no overview pages yet"));
    }

    #[test]
    fn serves_files_byte_for_byte() {
        let bytes: &[u8] = b"<!doctype html>\n<p>caf\xc3\xa9 \xff raw</p>\r\n";
        let dir = content_with(&[("architecture.html", bytes)]);
        let r = get(dir.path(), "/overview/architecture");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some(HTML));
        assert_eq!(r.body, bytes);
    }

    #[test]
    fn head_has_headers_but_no_body() {
        let dir = content_with(&[("architecture.html", b"<p>x</p>")]);
        let r = respond(
            &Config::open(dir.path()),
            "HEAD",
            "/overview/architecture",
            None,
        );
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some(HTML));
        assert!(r.body.is_empty());
        assert_eq!(
            respond(&Config::open(dir.path()), "HEAD", "/overview/nope", None).status,
            404
        );
    }

    #[test]
    fn unknown_or_missing_is_an_html_404() {
        let dir = content_with(&[("architecture.html", b"x"), ("unlisted.html", b"x")]);
        for path in [
            "/overview/unlisted",
            "/overview/content-pipeline", // registered, no file
            "/overview/architecture/",
            "/overview/architecture.html",
            "/overview/Architecture",
            "/overviewx",
            "/elsewhere",
        ] {
            let r = get(dir.path(), path);
            assert_eq!(r.status, 404, "{path}");
            assert_eq!(r.header("content-type"), Some(HTML), "{path}");
            let body = String::from_utf8(r.body).unwrap();
            assert!(body.contains("Page not found"), "{path}");
        }
    }

    #[test]
    fn registered_id_that_is_a_directory_is_a_404() {
        let dir = content_with(&[]);
        std::fs::create_dir(dir.path().join("_overviews/architecture.html")).unwrap();
        assert_eq!(get(dir.path(), "/overview/architecture").status, 404);
    }

    #[test]
    fn traversal_is_a_404() {
        let dir = content_with(&[("architecture.html", b"x")]);
        // A registered-looking file outside _overviews that a traversal would reach.
        std::fs::write(dir.path().join("secret.html"), b"secret").unwrap();
        for path in [
            "/overview/../secret",
            "/overview/..%2Fsecret",
            "/overview/%2e%2e/secret",
            "/overview/./architecture",
            "/overview//architecture",
            "/overview/architecture/../architecture",
            "/overview/..\\secret",
        ] {
            let r = get(dir.path(), path);
            assert_eq!(r.status, 404, "{path}");
            assert!(!r.body.windows(6).any(|w| w == b"secret"), "{path}");
        }
    }

    #[test]
    fn other_methods_are_405_with_allow() {
        for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            let r = respond(&Config::open("/nonexistent"), method, "/overview/", None);
            assert_eq!(r.status, 405, "{method}");
            assert_eq!(r.header("allow"), Some("GET, HEAD"));
        }
    }

    #[test]
    fn every_registered_id_is_served_from_its_file() {
        let files: Vec<(String, Vec<u8>)> = OVERVIEWS
            .iter()
            .map(|o| (format!("{}.html", o.id), o.title.as_bytes().to_vec()))
            .collect();
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_slice()))
            .collect();
        let dir = content_with(&refs);
        for o in OVERVIEWS {
            let r = get(dir.path(), &format!("/overview/{}", o.id));
            assert_eq!(r.body, o.title.as_bytes());
        }
    }

    #[test]
    fn production_needs_a_token_on_every_route() {
        let dir = content_with(&[("architecture.html", b"<p>page</p>")]);
        let config = Config {
            content_dir: dir.path().to_owned(),
            auth: AuthConfig::new("production", &token_digest("s3cret")),
            kept: Some(KeptPages::new()),
        };
        for path in [
            "/",
            "/overview/",
            "/overview/architecture",
            "/overview/nope",
        ] {
            for auth in [None, Some("Bearer wrong"), Some("Basic !!")] {
                let r = respond(&config, "GET", path, auth);
                assert_eq!(r.status, 401, "{path} {auth:?}");
                assert_eq!(r.header("www-authenticate"), Some(BASIC_CHALLENGE));
                assert!(!r.body.windows(11).any(|w| w == b"<p>page</p>"));
            }
        }
        let r = respond(&config, "POST", "/overview/", None);
        assert_eq!(r.status, 401, "auth comes before the method check");
        let r = respond(
            &config,
            "GET",
            "/overview/architecture",
            Some("Bearer s3cret"),
        );
        assert_eq!(
            (r.status, r.body.as_slice()),
            (200, b"<p>page</p>".as_slice())
        );
        // Browsers send the token as the Basic password: "me:s3cret".
        let r = respond(&config, "GET", "/", Some("Basic bWU6czNjcmV0"));
        assert_eq!(r.status, 302);
    }
}
