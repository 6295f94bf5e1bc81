//! Every `/docs` route, natively, over small content trees built in a temporary directory.

use std::fs;
use std::path::Path;

use dochub_app::docs::{SiteConfig, handle};
use dochub_http::auth::{AuthConfig, token_digest};
use dochub_http::{Request, Response};
use dochub_index::Source;
use dochub_index::build::BuildMode;
use tempfile::TempDir;

fn tree(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
    dir
}

fn standard() -> TempDir {
    tree(&[
        (
            "alpha/_project.yaml",
            "name: Alpha Project\ndescription: The first one\n",
        ),
        (
            "alpha/guide/_subproject.yaml",
            "name: User Guide\ndescription: For users\n",
        ),
        (
            "alpha/guide/install.md",
            "---\ntitle: Installing\nsummary: Get it running\n---\n# Installing\n\n## Download\n\nSee [the API](../reference/api.md#calls).\n\n### Checksums\n\n## Run\n",
        ),
        ("alpha/guide/zeta.md", "# Zeta page\n\nLast.\n"),
        ("alpha/reference/api.md", "# API\n\n## Calls {#calls}\n"),
        ("alpha/empty/_subproject.yaml", "name: Empty\n"),
        ("beta/_project.yaml", "name: Beta\n"),
        ("reports/2026-01-01.json", "{}"),
    ])
}

fn config(dir: &Path) -> SiteConfig {
    SiteConfig {
        source: Source {
            content_dir: dir.to_path_buf(),
            build: BuildMode::Off,
            memo: None,
        },
        auth: AuthConfig::new("development", ""),
        edit_url: String::new(),
    }
}

fn get(dir: &Path, path_and_query: &str) -> Response {
    request(&config(dir), "GET", path_and_query, None)
}

fn request(
    config: &SiteConfig,
    method: &str,
    path_and_query: &str,
    authorization: Option<&str>,
) -> Response {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let headers: Vec<_> = authorization
        .map(|a| ("authorization".into(), a.into()))
        .into_iter()
        .collect();
    handle(
        config,
        &Request {
            method,
            path,
            query,
            headers: &headers,
        },
    )
}

fn body(res: &Response) -> String {
    String::from_utf8(res.body.clone()).expect("utf-8 body")
}

#[track_caller]
fn assert_redirect(res: &Response, status: u16, location: &str) {
    assert_eq!(res.status, status, "{}", body(res));
    assert_eq!(res.header("location"), Some(location));
}

#[test]
fn home_lists_projects_without_a_master_page() {
    let dir = standard();
    let res = get(dir.path(), "/");
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(res.header("content-security-policy").is_some());
    let html = body(&res);
    assert!(html.contains(r#"<li class="card"><a href="/docs/alpha/"><span class="card-title">Alpha Project</span>"#), "{html}");
    assert!(html.contains("3 subprojects · 3 pages"));
    assert!(html.contains(r#"href="/docs/beta/""#));
    assert!(!html.contains("/docs/reports/"), "reports is not a project");
}

#[test]
fn pages_run_only_the_page_script_allowed_by_its_hash() {
    let dir = standard();
    for path in ["/", "/alpha/guide/install", "/search?q=install", "/nope"] {
        let res = get(dir.path(), path);
        let csp = res.header("content-security-policy").expect("a policy");
        assert!(
            csp.contains(&format!("script-src {};", dochub_http::page::SCRIPT_HASH)),
            "{csp}"
        );
        assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");
        let html = body(&res);
        assert_eq!(html.matches("<script").count(), 1, "{path}");
        assert!(html.contains(&format!("<script>{}</script>", dochub_http::page::SCRIPT)));
    }
}

#[test]
fn home_renders_the_master_page() {
    let dir = standard();
    fs::create_dir_all(dir.path().join("_master")).expect("mkdir");
    fs::write(
        dir.path().join("_master/index.md"),
        "---\nsummary: Everything in one place\n---\n# Welcome\n\n## Start\n\nRead [the install guide](../alpha/guide/install.md).\n",
    )
    .expect("write");
    let html = body(&get(dir.path(), "/"));
    assert!(html.contains("<title>Welcome · dochub</title>"));
    assert!(html.contains(r#"<p class="summary">Everything in one place</p>"#));
    assert!(html.contains(r##"<a href="#start">Start</a>"##), "TOC");
    assert!(
        html.contains(r#"href="/docs/alpha/guide/install""#),
        "link rewritten"
    );
}

#[test]
fn slashless_paths_redirect() {
    let dir = standard();
    assert_redirect(&get(dir.path(), ""), 301, "/docs/");
    assert_redirect(&get(dir.path(), "/alpha"), 301, "/docs/alpha/");
    assert_redirect(
        &get(dir.path(), "/alpha/guide?x=1"),
        301,
        "/docs/alpha/guide/?x=1",
    );
    assert_redirect(
        &get(dir.path(), "/alpha/guide/install/"),
        301,
        "/docs/alpha/guide/install",
    );
    // `.md` is the page's markdown twin, not a redirect.
    let twin = get(dir.path(), "/alpha/guide/install.md");
    assert_eq!(twin.status, 200);
    assert_eq!(
        twin.body,
        fs::read(dir.path().join("alpha/guide/install.md")).expect("read")
    );
    assert_redirect(
        &get(dir.path(), "/alpha/guide/install.md/"),
        301,
        "/docs/alpha/guide/install",
    );
    // Only to something that exists.
    assert_eq!(get(dir.path(), "/nope").status, 404);
    assert_eq!(get(dir.path(), "/alpha/nope").status, 404);
    assert_eq!(get(dir.path(), "/alpha/guide/nope/").status, 404);
}

#[test]
fn project_page() {
    let dir = standard();
    let res = get(dir.path(), "/alpha/");
    assert_eq!(res.status, 200);
    let html = body(&res);
    assert!(html.contains("<h1>Alpha Project</h1>"));
    assert!(html.contains(r#"<p class="summary">The first one</p>"#));
    assert!(html.contains(r#"<span class="card-title">User Guide</span><span class="card-description">For users</span><span class="card-meta">2 pages</span>"#), "{html}");
    assert!(html.contains(r#"<span class="card-meta">0 pages</span>"#));
    // No subprojects, or no project: 404 in the layout.
    for path in ["/beta/", "/nope/", "/reports/"] {
        let res = get(dir.path(), path);
        assert_eq!(res.status, 404, "{path}");
        assert!(body(&res).contains("<h1>Page not found</h1>"), "{path}");
    }
}

#[test]
fn subproject_without_index_lists_its_pages() {
    let dir = standard();
    let res = get(dir.path(), "/alpha/guide/");
    assert_eq!(res.status, 200);
    let html = body(&res);
    assert!(html.contains("<h1>User Guide</h1>"));
    assert!(html.contains(r#"<a href="/docs/alpha/guide/install"><span class="card-title">Installing</span><span class="card-description">Get it running</span>"#), "{html}");
    assert!(html.contains(r#"<span class="card-title">Zeta page</span>"#));
    // The subproject link is the active one.
    assert!(html.contains(r#"<a class="subproject current active" href="/docs/alpha/guide/" aria-current="page">User Guide</a>"#), "{html}");
    assert_eq!(get(dir.path(), "/alpha/empty/").status, 404);
}

#[test]
fn subproject_with_index_renders_it() {
    let dir = standard();
    fs::write(
        dir.path().join("alpha/guide/index.md"),
        "---\ntitle: Guide home\n---\nWelcome.\n\n## First steps\n",
    )
    .expect("write");
    let html = body(&get(dir.path(), "/alpha/guide/"));
    assert!(html.contains("<h1>Guide home</h1>"));
    // One address for the landing page; its raw form stays where every page's is.
    assert_redirect(
        &get(dir.path(), "/alpha/guide/index"),
        301,
        "/docs/alpha/guide/",
    );
    let raw = get(dir.path(), "/alpha/guide/index?format=raw");
    assert_eq!(raw.status, 200);
    assert!(body(&raw).starts_with("---\ntitle: Guide home"));
    assert!(
        html.contains(
            r#"<a class="active" aria-current="page" href="/docs/alpha/guide/">Guide home</a>"#
        ),
        "{html}"
    );
    // The landing page comes first in the sidebar.
    let index = html.find(">Guide home</a></li>").expect("index link");
    let install = html.find(">Installing</a></li>").expect("install link");
    assert!(index < install);
}

#[test]
fn page_in_full_layout() {
    let dir = standard();
    let res = get(dir.path(), "/alpha/guide/install");
    assert_eq!(res.status, 200);
    let html = body(&res);
    assert!(html.contains("<title>Installing · dochub</title>"));
    assert!(html.contains(
        r#"<a class="active" aria-current="page" href="/docs/alpha/guide/install">Installing</a>"#
    ));
    assert!(html.contains(r#"<a href="/docs/alpha/guide/zeta">Zeta page</a>"#));
    assert!(
        html.contains(r#"<li><a href="/docs/alpha/">Alpha Project</a></li>"#),
        "crumbs"
    );
    assert!(html.contains(r#"<li><a href="/docs/alpha/guide/">User Guide</a></li>"#));
    assert!(html.contains(r#"<li><span aria-current="page">Installing</span></li>"#));
    assert!(html.contains(r#"<p class="summary">Get it running</p>"#));
    assert!(html.contains(r##"<li class="toc-h2"><a href="#download">Download</a></li>"##));
    assert!(html.contains(r##"<li class="toc-h3"><a href="#checksums">Checksums</a></li>"##));
    assert!(html.contains(r##"href="/docs/alpha/reference/api#calls""##));
    assert!(
        !html.contains("summary: Get it running"),
        "frontmatter not in the body"
    );
}

#[test]
fn raw_format() {
    let dir = standard();
    let res = get(dir.path(), "/alpha/guide/install?format=raw");
    assert_eq!(res.status, 200);
    assert_eq!(
        res.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(
        res.body,
        fs::read(dir.path().join("alpha/guide/install.md")).expect("read")
    );
    assert_eq!(get(dir.path(), "/alpha/guide/nope?format=raw").status, 404);
    // Another format value renders as usual.
    let res = get(dir.path(), "/alpha/guide/install?format=html");
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
}

#[test]
fn missing_and_traversal_are_404_pages() {
    let dir = standard();
    fs::write(dir.path().join("secret.md"), "top secret").expect("write");
    for path in [
        "/alpha/guide/nope",
        "/alpha/guide/..",
        "/alpha/guide/%2e%2e",
        "/alpha/%2e%2e/secret",
        "/..%2f..%2f/x/y",
        "/alpha/guide/..%2f..%2fsecret",
        "/alpha/guide/.hidden",
        "/_master/x/index",
        "/alpha/guide/install/extra/more",
        "/alpha/guide/%ff",
        "/alpha//install",
    ] {
        let res = get(dir.path(), path);
        assert_eq!(res.status, 404, "{path}");
        let html = body(&res);
        assert!(html.contains("<h1>Page not found</h1>"), "{path}");
        assert!(!html.contains("top secret"), "{path}");
        assert!(
            html.contains(r#"<nav class="sidebar""#),
            "404s keep the layout"
        );
    }
}

#[test]
fn search() {
    let dir = standard();
    assert_redirect(&get(dir.path(), "/search?q="), 302, "/docs/");
    assert_redirect(&get(dir.path(), "/search?q=+++"), 302, "/docs/");
    assert_redirect(&get(dir.path(), "/search"), 302, "/docs/");

    let res = get(dir.path(), "/search?q=running");
    assert_eq!(res.status, 200);
    let html = body(&res);
    assert!(
        html.contains(r#"<a href="/docs/alpha/guide/install">Installing</a>"#),
        "{html}"
    );
    assert!(html.contains("<mark>running</mark>"));
    assert!(html.contains("1 page matches"));

    let html = body(&get(dir.path(), "/search?q=x"));
    assert!(html.contains("Type at least 2 characters to search."));

    let html = body(&get(
        dir.path(),
        "/search?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    ));
    assert!(!html.contains("<script>alert(1)"), "{html}");
    assert!(html.contains("No pages match"));
}

#[test]
fn escaping_of_titles_from_content() {
    let dir = tree(&[
        ("p/_project.yaml", "name: \"<script>alert('p')</script>\"\n"),
        (
            "p/s/x.md",
            "---\ntitle: \"<script>alert('t')</script>\"\nsummary: \"<img src=x onerror=alert(1)>\"\n---\n<script>alert('body')</script>\n\n## <script>h</script>\n",
        ),
    ]);
    let html = body(&get(dir.path(), "/p/s/x"));
    // The one script is the page's own.
    let own = format!("<script>{}</script>", dochub_http::page::SCRIPT);
    assert!(!html.replace(&own, "").contains("<script"), "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
}

#[test]
fn methods() {
    let dir = standard();
    let config = config(dir.path());
    let res = request(&config, "POST", "/alpha/", None);
    assert_eq!(res.status, 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD"));
    assert_eq!(request(&config, "DELETE", "/", None).status, 405);
    let res = request(&config, "HEAD", "/alpha/guide/install", None);
    assert_eq!(res.status, 200);
    assert!(res.body.is_empty());
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
}

#[test]
fn production_needs_a_token() {
    let dir = standard();
    let config = SiteConfig {
        source: Source {
            content_dir: dir.path().to_path_buf(),
            build: BuildMode::Off,
            memo: None,
        },
        auth: AuthConfig::new("production", &token_digest("letmein")),
        edit_url: String::new(),
    };
    let res = request(&config, "GET", "/", None);
    assert_eq!(res.status, 401);
    assert!(
        res.header("www-authenticate")
            .is_some_and(|v| v.starts_with("Basic"))
    );
    assert!(
        !body(&res).contains("Alpha"),
        "nothing of the tree before auth"
    );
    assert_eq!(
        request(&config, "GET", "/", Some("Bearer wrong")).status,
        401
    );
    assert_eq!(
        request(&config, "GET", "/", Some("Bearer letmein")).status,
        200
    );
    // Basic auth with the token as password, as a browser sends it: "x:letmein".
    assert_eq!(
        request(&config, "GET", "/", Some("Basic eDpsZXRtZWlu")).status,
        200
    );
}

#[test]
fn missing_content_root_is_a_500_that_says_why() {
    let res = get(Path::new("/no/such/content/root"), "/");
    assert_eq!(res.status, 500);
    assert!(body(&res).contains("does not exist"));
}

#[test]
fn bad_markdown_renders() {
    let mut table = String::from("| a | b | c |\n|---|---|---|\n");
    for i in 0..5000 {
        table.push_str(&format!("| {i} | <b>x</b> | `y` |\n"));
    }
    let long: String = (0..10_000).map(|i| format!("line {i}\n\n")).collect();
    let dir = tree(&[
        ("p/s/table.md", &table),
        ("p/s/long.md", &long),
        ("p/s/fence.md", "# Fence\n\n```rust\nfn main() {\n"),
        ("p/s/punct.md", "## ???\n## !!!\n"),
        ("p/s/binary.md", "\u{0}\u{1}\u{fffd}"),
    ]);
    for page in ["table", "long", "fence", "punct", "binary"] {
        let res = get(dir.path(), &format!("/p/s/{page}"));
        assert_eq!(res.status, 200, "{page}");
    }
    let html = body(&get(dir.path(), "/p/s/punct"));
    assert!(html.contains(r##"<a href="#section">???</a>"##), "{html}");
    assert!(html.contains(r##"<a href="#section-1">!!!</a>"##));
}

#[test]
fn search_says_when_the_list_is_cut() {
    let pages: Vec<(String, String)> = (0..60)
        .map(|i| {
            (
                format!("p/s/page-{i:02}.md"),
                format!("# Page {i}\n\nCommon words.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = pages
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect();
    let dir = tree(&files);
    let html = body(&get(dir.path(), "/search?q=common"));
    assert_eq!(html.matches("<mark>").count(), 50, "at most 50 results");
    assert!(
        html.contains("Only the first 50 matching pages are shown"),
        "{html}"
    );
    assert!(html.contains("50 pages match"));
    let html = body(&get(dir.path(), "/search?q=page+7"));
    assert!(!html.contains("Only the first"));
}

/// Every address a reader can reach in a tree, plus searches and a few that do not exist.
fn addresses(dir: &Path) -> Vec<String> {
    let root = dochub_content::ContentRoot::open(dir).expect("root");
    let mut out = vec!["/".to_owned(), "/nope/".to_owned(), "/nope/x/".to_owned()];
    for p in root.projects().expect("projects") {
        out.push(format!("/{}/", p.id));
        out.push(format!("/{}", p.id));
        out.push(format!("/{}/nope/", p.id));
        for s in root
            .subprojects(&p.id)
            .expect("subprojects")
            .unwrap_or_default()
        {
            out.push(format!("/{}/{}/", p.id, s.id));
            out.push(format!("/{}/{}", p.id, s.id));
            out.push(format!("/{}/{}/nope", p.id, s.id));
            for id in root.page_ids(&p.id, &s.id).expect("pages") {
                out.push(format!("/{}/{}/{}", p.id, s.id, id));
                out.push(format!("/{}/{}/{}?format=raw", p.id, s.id, id));
            }
        }
    }
    for q in [
        "the",
        "th",
        "quasar",
        "SERVICE",
        "%C3%BCber",
        "%E6%97%A5%E6%9C%AC",
        "x",
        "zebra",
        // Kept to a version (tests/fixtures/versions), and a version no project lists.
        "kettle&version=v1",
        "kettle&version=v9",
    ] {
        out.push(format!("/search?q={q}"));
    }
    out
}

fn indexed(dir: &Path, build: &Path) -> SiteConfig {
    let mut config = config(dir);
    config.source.build = BuildMode::Auto(build.to_path_buf());
    config
}

fn assert_index_matches_live(dir: &Path) {
    let build = tempfile::tempdir().expect("build dir");
    let root = dochub_content::ContentRoot::open(dir).expect("root");
    dochub_index::build::write_build(&root, build.path(), &dochub_http::iso8601(chrono_now()))
        .expect("build");
    let pre = indexed(dir, build.path());
    for address in addresses(dir) {
        let mut live = request(&config(dir), "GET", &address, None);
        let mut fast = request(&pre, "GET", &address, None);
        assert_eq!(fast.warning, None, "{address}: {:?}", fast.warning);
        // The build highlights code blocks; the live tree shows them plain. Otherwise alike.
        live.body = without_highlighting(&live.body);
        fast.body = without_highlighting(&fast.body);
        if live != fast {
            let (a, b) = (
                String::from_utf8_lossy(&live.body),
                String::from_utf8_lossy(&fast.body),
            );
            let at = a
                .bytes()
                .zip(b.bytes())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            let near = |t: &str| {
                t.get(at.saturating_sub(80)..(at + 120).min(t.len()))
                    .unwrap_or("")
                    .to_owned()
            };
            panic!(
                "{address} in {} differs near byte {at}:\nlive: {}\nbuilt: {}",
                dir.display(),
                near(&a),
                near(&b)
            );
        }
    }
}

/// A page without its code blocks' highlighting: the spans' tags taken out (`</span>` closes
/// other spans too, so compare two pages that both went through this).
fn without_highlighting(html: &[u8]) -> Vec<u8> {
    // Raw pages may be any bytes; they hold no highlighting.
    let Ok(mut text) = String::from_utf8(html.to_vec()) else {
        return html.to_vec();
    };
    for class in "kscnftgid".chars() {
        text = text.replace(&format!(r#"<span class="hl-{class}">"#), "");
    }
    without_page_meta(&text.replace("</span>", "")).into_bytes()
}

/// `html` without its "Last updated" footer: the build records a page's git date (the
/// fixtures are in a git work tree), the live tree knows only frontmatter dates.
fn without_page_meta(html: &str) -> String {
    match (
        html.find(r#"<footer class="page-meta">"#),
        html.find("</footer>"),
    ) {
        (Some(start), Some(end)) if start < end => {
            format!(
                "{}{}",
                html[..start]
                    .strip_suffix("\n      ")
                    .unwrap_or(&html[..start]),
                &html[end + "</footer>".len()..]
            )
        }
        _ => html.to_owned(),
    }
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

#[test]
fn pages_from_the_index_are_the_live_pages() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for tree in [
        "tests/fixtures/basic",
        "tests/fixtures/docs",
        "tests/fixtures/versions",
        "content",
    ] {
        assert_index_matches_live(&repo.join(tree));
    }
    assert_index_matches_live(standard().path());
    let generated = tempfile::tempdir().expect("temp dir");
    let spec = dochub_content::corpus::Spec {
        projects: 3,
        subprojects: 2,
        pages: 8,
        page_bytes: 1200,
    };
    dochub_content::corpus::generate(generated.path(), &spec).expect("corpus");
    assert_index_matches_live(generated.path());
}

#[test]
fn a_stale_index_falls_back_to_the_tree_and_says_why() {
    let dir = standard();
    let build = tempfile::tempdir().expect("build dir");
    let root = dochub_content::ContentRoot::open(dir.path()).expect("root");
    dochub_index::build::write_build(&root, build.path(), &dochub_http::iso8601(chrono_now()))
        .expect("build");
    let pre = indexed(dir.path(), build.path());
    // An edit in place: the page is read anyway, so its new text is noticed.
    fs::write(
        dir.path().join("alpha/guide/zeta.md"),
        "# Zeta renamed\n\nEdited.\n",
    )
    .expect("write");
    let res = request(&pre, "GET", "/alpha/guide/zeta", None);
    assert!(body(&res).contains("Zeta renamed"));
    assert!(
        res.warning
            .as_deref()
            .unwrap_or("")
            .contains("alpha/guide/zeta"),
        "{:?}",
        res.warning
    );
    assert_eq!(
        res,
        Response {
            warning: res.warning.clone(),
            ..get(dir.path(), "/alpha/guide/zeta")
        }
    );
    // A new page shows in the sidebar at once.
    fs::write(dir.path().join("alpha/guide/new.md"), "# Brand new\n").expect("write");
    let res = request(&pre, "GET", "/alpha/guide/install", None);
    assert!(
        body(&res).contains("Brand new"),
        "sidebar lists the new page"
    );
    assert!(res.warning.is_some());
    let res = request(&pre, "GET", "/search?q=brand", None);
    assert!(body(&res).contains("/docs/alpha/guide/new"));
    // A page whose folders did not change still comes from the index, without a warning.
    let res = request(&pre, "GET", "/alpha/reference/api", None);
    assert_eq!((res.status, res.warning), (200, None));
}

#[test]
fn accept_markdown_answers_the_twin_and_every_page_names_it() {
    let dir = standard();
    let config = config(dir.path());
    let ask = |path: &str, accept: Option<&str>| {
        dochub_app::docs::handle_accepting(
            &config,
            &Request {
                method: "GET",
                path,
                query: "",
                headers: &[],
            },
            accept,
        )
    };
    let on_disk = fs::read(dir.path().join("alpha/guide/install.md")).expect("read");

    let md = ask("/alpha/guide/install", Some("text/markdown"));
    assert_eq!(md.status, 200);
    assert_eq!(
        md.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(md.header("vary"), Some("Accept"));
    assert_eq!(md.body, on_disk);

    let html = ask(
        "/alpha/guide/install",
        Some("text/html,application/xhtml+xml,*/*;q=0.8"),
    );
    assert_eq!(
        html.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(html.header("vary"), Some("Accept"));
    assert_eq!(
        html.header("link"),
        Some(r#"</docs/alpha/guide/install.md>; rel="alternate"; type="text/markdown""#)
    );
    assert!(body(&html).contains(
        r#"<link rel="alternate" type="text/markdown" href="/docs/alpha/guide/install.md">"#
    ));

    // A missing page is a 404 whatever is accepted; card lists name no twin.
    assert_eq!(ask("/alpha/guide/nope", Some("text/markdown")).status, 404);
    assert_eq!(ask("/alpha/guide/nope.md", None).status, 404);
    let cards = ask("/alpha/guide/", Some("text/markdown"));
    assert_eq!(
        cards.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(cards.header("link"), None);
    assert!(!body(&cards).contains("rel=\"alternate\""));

    // A landing page's twin is its index.md.
    fs::write(
        dir.path().join("alpha/guide/index.md"),
        "---\ntitle: Guide\n---\n# Guide\n",
    )
    .expect("write");
    let landing = ask("/alpha/guide/", Some("text/markdown"));
    assert_eq!(landing.body, b"---\ntitle: Guide\n---\n# Guide\n");
    let landing = ask("/alpha/guide/", None);
    assert_eq!(
        landing.header("link"),
        Some(r#"</docs/alpha/guide/index.md>; rel="alternate"; type="text/markdown""#)
    );
}

#[test]
fn code_is_highlighted_from_the_build_and_plain_without_it() {
    let page = format!(
        "---\ntitle: Code\n---\n# Code\n\n```rust\nfn main() {{}}\n```\n\n```<script>\nx < y\n```\n\n```\nplain\n```\n\n```{}\nlong name\n```\n",
        "r".repeat(5000)
    );
    let dir = tree(&[("p/s/code.md", page.as_str())]);
    let build = tempfile::tempdir().expect("temp dir");
    let root = dochub_content::ContentRoot::open(dir.path()).expect("root");
    dochub_index::build::write_build(
        &root,
        build.path(),
        &dochub_http::iso8601(chrono::Utc::now()),
    )
    .expect("build");
    let prebuilt = SiteConfig {
        source: Source {
            content_dir: dir.path().to_path_buf(),
            build: BuildMode::Required(build.path().to_path_buf()),
            memo: None,
        },
        auth: AuthConfig::new("development", ""),
        edit_url: String::new(),
    };
    let html = body(&request(&prebuilt, "GET", "/p/s/code", None));
    assert!(
        html.contains(r#"<pre><code class="language-rust"><span class="hl-k">fn</span> <span class="hl-f">main</span>"#),
        "{html}"
    );
    // An unknown or hostile language name is plain, escaped code, as is a block without one.
    assert!(
        html.contains("<pre><code class=\"language-&lt;script&gt;\">x &lt; y\n</code></pre>"),
        "{html}"
    );
    assert!(html.contains("<pre><code>plain\n</code></pre>"), "{html}");
    let long = format!(
        "<pre><code class=\"language-{}\">long name\n</code></pre>",
        "r".repeat(5000)
    );
    assert!(
        html.contains(&long),
        "a 5,000-character language name is plain code"
    );

    // A damaged highlighting file costs the page its colours, not its answer.
    let code_bin = build.path().join("index/code.bin");
    let intact = std::fs::read(&code_bin).expect("code.bin");
    let mut damaged = intact.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x55;
    std::fs::write(&code_bin, &damaged).expect("write");
    let res = request(&prebuilt, "GET", "/p/s/code", None);
    assert_eq!(res.status, 200);
    assert!(
        res.warning.as_deref().unwrap_or("").contains("code.bin"),
        "{:?}",
        res.warning
    );
    assert!(body(&res).contains("<pre><code class=\"language-rust\">fn main() {}\n</code></pre>"));
    std::fs::remove_file(&code_bin).expect("remove");
    assert_eq!(request(&prebuilt, "GET", "/p/s/code", None).status, 200);
    std::fs::write(&code_bin, &intact).expect("restore");

    // The live tree highlights nothing: the same block, plain.
    let live = body(&get(dir.path(), "/p/s/code"));
    assert!(
        live.contains("<pre><code class=\"language-rust\">fn main() {}\n</code></pre>"),
        "{live}"
    );
    // A page changed since the build is served from the tree: plain again, never stale.
    std::fs::write(
        dir.path().join("p/s/code.md"),
        "---\ntitle: Code\n---\n```rust\nfn changed() {}\n```\n",
    )
    .expect("write");
    let html = body(&request(&prebuilt, "GET", "/p/s/code", None));
    assert!(
        html.contains("<pre><code class=\"language-rust\">fn changed() {}\n</code></pre>"),
        "{html}"
    );
}
