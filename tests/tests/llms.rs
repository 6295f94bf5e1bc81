//! Docs for agents end to end: `/llms.txt`, `/llms-full.txt`, the markdown twins and `Accept`
//! negotiation, served by the real `docs.wasm` under the host, over HTTP.

use std::path::{Path, PathBuf};

use dochub_tests::{TestApp, copy_tree, fixture, repo_root};
use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};

fn client() -> Client {
    Client::builder()
        .redirect(Policy::none())
        .build()
        .expect("client")
}

struct Got {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl Got {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("utf-8 body")
    }
}

async fn get_with(app: &TestApp, path: &str, accept: Option<&str>) -> Got {
    let mut req = client().get(app.url(path));
    if let Some(accept) = accept {
        req = req.header("accept", accept);
    }
    let res = req.send().await.expect("request");
    Got {
        status: res.status(),
        headers: res.headers().clone(),
        body: res.bytes().await.expect("body").to_vec(),
    }
}

async fn get(app: &TestApp, path: &str) -> Got {
    get_with(app, path, None).await
}

/// Every page of a content tree in manifest order: `(<p>/<s>/<page>, file)`. The pages are
/// found on disk with the directory rules of the interface (no `_` or `.` folders, no
/// `reports`); their order is the reading order the manifests list them in (`order`, then
/// titles and names), which the library's tree gives.
fn pages_on_disk(root: &Path) -> Vec<(String, PathBuf)> {
    fn dirs(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("read dir")
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                (e.path().is_dir() && !name.starts_with(['_', '.'])).then_some(name)
            })
            .collect()
    }
    let mut on_disk = std::collections::BTreeSet::new();
    for p in dirs(root).into_iter().filter(|p| p != "reports") {
        for s in dirs(&root.join(&p)) {
            for entry in std::fs::read_dir(root.join(&p).join(&s)).expect("read dir") {
                let name = entry
                    .expect("entry")
                    .file_name()
                    .into_string()
                    .expect("utf-8");
                if let Some(id) = name.strip_suffix(".md")
                    && !id.starts_with(['_', '.'])
                {
                    on_disk.insert(format!("{p}/{s}/{id}"));
                }
            }
        }
    }
    let tree = dochub_content::ContentRoot::open(root).expect("content root");
    let mut out = Vec::new();
    for p in tree.projects().expect("projects") {
        for s in tree
            .subprojects(&p.id)
            .expect("subprojects")
            .unwrap_or_default()
        {
            for page in tree.pages(&p.id, &s.id).expect("pages") {
                let file = root.join(&p.id).join(&s.id).join(format!("{}.md", page.id));
                out.push((page.path(), file));
            }
        }
    }
    let listed: std::collections::BTreeSet<String> =
        out.iter().map(|(path, _)| path.clone()).collect();
    assert_eq!(listed, on_disk, "the tree lists every page on disk, once");
    assert_eq!(listed.len(), out.len());
    out
}

/// A list line `- [title](url)` or `- [title](url): description`, indented or not: the url.
fn link_of(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("- [")?;
    // The title may hold escaped brackets.
    let mut close = None;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            ']' if !escaped => {
                close = Some(i);
                break;
            }
            _ => escaped = false,
        }
    }
    let after = rest[close?..].strip_prefix("](")?;
    let end = after.find(')')?;
    let tail = &after[end + 1..];
    assert!(
        tail.is_empty() || (tail.starts_with(": ") && tail.len() > 2),
        "a link line ends with `: description` or nothing: {line:?}"
    );
    Some(&after[..end])
}

#[tokio::test(flavor = "multi_thread")]
async fn llms_txt_parses_back_and_every_link_is_a_page_twin() {
    let app = TestApp::builder().start().await.expect("app starts");
    let content = repo_root().join("content");
    let res = get(&app, "/llms.txt").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), "text/plain; charset=utf-8");
    let text = res.text();
    let lines: Vec<&str> = text.lines().collect();

    // H1 with the site name (the master page's title), blank line, blockquote summary.
    let master = dochub_content::parse_page(
        "index",
        &std::fs::read(content.join("_master/index.md")).expect("master page"),
    );
    assert_eq!(lines[0], format!("# {}", master.title));
    assert_eq!(lines[1], "");
    assert_eq!(lines[2], format!("> {}", master.summary));
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("# ")).count(),
        1,
        "one H1"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("###")),
        "no H3 or deeper"
    );

    // One H2 per project of the manifest, in its order.
    let manifest: serde_json::Value = reqwest::get(app.url("/api/manifest"))
        .await
        .expect("manifest")
        .json()
        .await
        .expect("json");
    let names: Vec<String> = manifest["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .map(|p| format!("## {}", p["name"].as_str().expect("name")))
        .collect();
    let h2: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("## "))
        .filter(|l| *l != "## Optional")
        .collect();
    assert_eq!(h2, names);

    // Every list item is a link, and every link is absolute, on the app's own origin (no
    // `site_url` here). The project's and subprojects' links open their docs pages; the
    // twins are every page exactly once, and each resolves to the page's bytes.
    let origin = app.base_url().trim_end_matches('/').to_owned();
    let mut twins = Vec::new();
    for line in &lines {
        if line.starts_with("- ") {
            let url = link_of(line).unwrap_or_else(|| panic!("malformed link line {line:?}"));
            let path = url
                .strip_prefix(&origin)
                .unwrap_or_else(|| panic!("not an absolute link on {origin}: {line}"));
            assert!(path.starts_with("/docs/"), "{line}");
            if path.ends_with(".md") {
                twins.push(path.to_owned());
            } else {
                assert!(path.ends_with('/'), "{line}");
                assert_eq!(get(&app, path).await.status, 200, "{line}");
            }
        } else if line.contains("](") {
            // The one link outside the lists: the full text, in the paragraph after the summary.
            assert!(
                line.contains(&format!("[llms-full.txt]({origin}/llms-full.txt)")),
                "{line}"
            );
            assert!(get(&app, "/llms-full.txt").await.status == 200);
        }
        assert!(!line.starts_with("  "), "the lists are flat: {line:?}");
    }
    // The subproject lines of old (`- Content: How the content tree…`) are links now.
    assert!(
        text.contains(&format!(
            "- [Content]({origin}/docs/dochub/content/): How the content tree"
        )),
        "{text}"
    );
    let pages = pages_on_disk(&content);
    let expected: Vec<String> = pages
        .iter()
        .map(|(path, _)| format!("/docs/{path}.md"))
        .collect();
    let mut sorted = twins.clone();
    sorted.sort();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(sorted, expected_sorted, "each page listed exactly once");
    for ((_, file), url) in pages.iter().zip(&expected) {
        let twin = get(&app, url).await;
        assert_eq!(twin.status, 200, "{url}");
        assert_eq!(
            twin.header("content-type"),
            "text/markdown; charset=utf-8",
            "{url}"
        );
        assert_eq!(twin.body, std::fs::read(file).expect("page file"), "{url}");
    }
    app.stop().await;
}

/// Checks that `text` has every page of `pages` exactly once, in order, each after its heading
/// and URL line and with its body (frontmatter stripped) verbatim.
fn assert_full_text(text: &str, pages: &[(String, PathBuf)]) {
    let headings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("# ") && l.contains('/'))
        .collect();
    assert_eq!(headings.len(), pages.len(), "one heading per page");
    let mut at = 0;
    for ((path, file), heading) in pages.iter().zip(&headings) {
        let id = path.rsplit('/').next().expect("id");
        let parsed = dochub_content::parse_page(id, &std::fs::read(file).expect("page"));
        assert_eq!(
            *heading,
            dochub_content::llms::full_heading(path, &parsed.title)
        );
        let section = format!("{heading}\n\nURL: /docs/{path}.md\n\n{}", parsed.body);
        assert_eq!(text.matches(&section).count(), 1, "{path} exactly once");
        let found = text[at..].find(&section).expect("in manifest order");
        at += found + section.len();
        if !parsed.body.is_empty() && parsed.frontmatter.present {
            // Frontmatter stripped: the section does not hold the file's first line `---`.
            assert!(!section.contains("\n---\ntitle:"), "{path}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn llms_full_holds_every_page_once_and_filters_by_project() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("docs"), dir.path());
    std::fs::create_dir_all(dir.path().join("_overviews")).expect("mkdir");
    // A page is added while it runs: mounted in place (under `spin up` too), not copied.
    let app = TestApp::builder()
        .content(dir.path())
        .direct_mounts()
        .start()
        .await
        .expect("app starts");
    let pages = pages_on_disk(dir.path());
    assert!(pages.len() >= 5, "the fixture has pages");

    let res = get(&app, "/llms-full.txt").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-type"), "text/plain; charset=utf-8");
    let text = res.text();
    assert!(text.starts_with("# dochub\n\n> "), "{text}");
    assert_full_text(&text, &pages);

    let alpha: Vec<(String, PathBuf)> = pages
        .iter()
        .filter(|(p, _)| p.starts_with("alpha/"))
        .cloned()
        .collect();
    let res = get(&app, "/llms-full.txt?project=alpha").await;
    assert_eq!(res.status, 200);
    assert_full_text(&res.text(), &alpha);

    let res = get(&app, "/llms-full.txt?project=nope").await;
    assert_eq!(res.status, 404);
    assert!(res.text().contains("nope"));
    let res = get(&app, "/llms-full.txt?project=..").await;
    assert_eq!(res.status, 404);

    // HEAD: the head alone; other methods: 405.
    let head = client()
        .head(app.url("/llms-full.txt"))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), 200);
    assert!(head.bytes().await.expect("body").is_empty());
    for path in ["/llms.txt", "/llms-full.txt"] {
        let post = client().post(app.url(path)).send().await.expect("post");
        assert_eq!(post.status(), 405, "{path}");
        assert_eq!(
            post.headers().get("allow").and_then(|v| v.to_str().ok()),
            Some("GET, HEAD")
        );
    }

    // A page added after the start is in both at once (nothing is cached or prebuilt stale).
    std::fs::write(
        dir.path().join("gamma/notes/later.md"),
        "---\ntitle: Later\nllms: optional\n---\nAdded later.\n",
    )
    .expect("write");
    let text = get(&app, "/llms-full.txt").await.text();
    assert_full_text(&text, &pages_on_disk(dir.path()));
    let index = get(&app, "/llms.txt").await.text();
    let optional = &index[index.find("\n## Optional\n").expect("optional section")..];
    assert!(
        optional.contains(&app.url("/docs/gamma/notes/later.md)")),
        "{index}"
    );
    app.stop().await;
}

/// A large answer streams in chunks and arrives whole; a small one goes out in one write, with
/// its length (chunked, its last chunk could wait 40 ms for the client's delayed ACK).
#[tokio::test(flavor = "multi_thread")]
async fn a_large_tree_streams_whole_and_a_small_answer_has_a_length() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dochub_content::corpus::Spec {
        projects: 2,
        subprojects: 5,
        pages: 40,
        page_bytes: 6000,
    };
    let written = dochub_content::corpus::generate(dir.path(), &spec).expect("corpus");
    std::fs::create_dir_all(dir.path().join("_overviews")).expect("mkdir");
    let app = TestApp::builder()
        .content(dir.path())
        .start()
        .await
        .expect("app starts");
    let res = get(&app, "/llms-full.txt").await;
    assert_eq!(res.status, 200);
    assert!(
        res.body.len() as u64 > written.bytes / 2,
        "{}",
        res.body.len()
    );
    assert_full_text(&res.text(), &pages_on_disk(dir.path()));
    assert_eq!(res.header("transfer-encoding"), "chunked");
    assert_eq!(res.header("content-length"), "");

    let page = get(&app, "/docs/p00/s00/page-0001").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-length"), page.body.len().to_string());
    assert_eq!(page.header("transfer-encoding"), "");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn twins_and_negotiation() {
    let app = TestApp::builder().start().await.expect("app starts");
    let file = repo_root().join("content/dochub/api/search.md");
    let on_disk = std::fs::read(&file).expect("page file");
    let page = "/docs/dochub/api/search";

    // The twin is the file's bytes, as `?format=raw` and `/api/raw` give them.
    for url in [
        format!("{page}.md"),
        format!("{page}?format=raw"),
        "/api/raw/dochub/api/search".to_owned(),
    ] {
        let res = get(&app, &url).await;
        assert_eq!(res.status, 200, "{url}");
        assert!(
            res.header("content-type").starts_with("text/markdown"),
            "{url}"
        );
        assert_eq!(res.body, on_disk, "{url}");
    }
    let twin = get(&app, &format!("{page}.md")).await;
    assert_eq!(twin.header("content-type"), "text/markdown; charset=utf-8");

    // Negotiated on the page's own URL.
    for accept in [
        "text/markdown",
        "text/markdown, text/html;q=0.9",
        "text/plain;q=0.5, text/markdown",
    ] {
        let res = get_with(&app, page, Some(accept)).await;
        assert_eq!(res.status, 200, "{accept}");
        assert_eq!(
            res.header("content-type"),
            "text/markdown; charset=utf-8",
            "{accept}"
        );
        assert_eq!(res.header("vary"), "Accept", "{accept}");
        assert_eq!(res.body, on_disk, "{accept}");
    }
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    for accept in [Some(browser), Some("*/*"), None] {
        let res = get_with(&app, page, accept).await;
        assert_eq!(res.status, 200);
        assert_eq!(
            res.header("content-type"),
            "text/html; charset=utf-8",
            "{accept:?}"
        );
        assert_eq!(res.header("vary"), "Accept", "{accept:?}");
        assert_eq!(
            res.header("link"),
            r#"</docs/dochub/api/search.md>; rel="alternate"; type="text/markdown""#
        );
        assert!(res.text().contains(
            r#"<link rel="alternate" type="text/markdown" href="/docs/dochub/api/search.md">"#
        ));
    }

    // A subproject's landing page negotiates to its index.md.
    let landing = std::fs::read(repo_root().join("content/dochub/api/index.md")).expect("index");
    let res = get_with(&app, "/docs/dochub/api/", Some("text/markdown")).await;
    assert_eq!(res.body, landing);
    assert_eq!(res.header("vary"), "Accept");
    let res = get(&app, "/docs/dochub/api/index.md").await;
    assert_eq!(res.body, landing);

    // Missing pages are 404 in every form.
    for (url, accept) in [
        ("/docs/dochub/api/nope.md", None),
        ("/docs/dochub/api/nope", Some("text/markdown")),
        ("/docs/dochub/nope/search.md", None),
        ("/docs/dochub/api/%2e%2e.md", None),
    ] {
        assert_eq!(get_with(&app, url, accept).await.status, 404, "{url}");
    }
    app.stop().await;
}

/// sha256("secret"), as `auth_tokens` holds it.
const SECRET_DIGEST: &str = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

#[tokio::test(flavor = "multi_thread")]
async fn production_protects_every_agent_route() {
    let app = TestApp::builder()
        .variable("environment", "production")
        .variable("auth_tokens", SECRET_DIGEST)
        .start()
        .await
        .expect("app starts");
    for path in [
        "/llms.txt",
        "/llms-full.txt",
        "/llms-full.txt?project=dochub",
        "/docs/dochub/api/search.md",
    ] {
        let res = client().get(app.url(path)).send().await.expect("request");
        assert_eq!(res.status(), 401, "{path}");
        assert!(
            res.headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("Basic")),
            "{path}"
        );
        let body = res.text().await.expect("body");
        assert!(!body.contains("# "), "no content leaks: {body}");
        for (token, status) in [("wrong", 401), ("secret", 200)] {
            let res = client()
                .get(app.url(path))
                .bearer_auth(token)
                .send()
                .await
                .expect("request");
            assert_eq!(res.status(), status, "{path} with `{token}`");
        }
    }
    let res = client()
        .get(app.url("/docs/dochub/api/search"))
        .header("accept", "text/markdown")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 401);
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prebuilt_answers_match_the_tree_and_never_go_stale() {
    let content = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("docs"), content.path());
    std::fs::create_dir_all(content.path().join("_overviews")).expect("mkdir");
    let build = tempfile::tempdir().expect("temp dir");
    let (prebuilt, live) = prebuilt_and_live(content.path(), build.path(), true).await;
    let from_index = get(&prebuilt, "/llms.txt").await;
    assert_eq!(from_index.status, 200);
    assert_eq!(from_index.text(), get(&live, "/llms.txt").await.text());
    for path in ["/llms-full.txt", "/llms-full.txt?project=alpha"] {
        let copied = get(&prebuilt, path).await;
        assert_eq!(copied.status, 200);
        assert_eq!(copied.body, get(&live, path).await.body, "{path}");
    }
    // The prebuilt file is what is served while it is current: a same-size edit of it shows.
    let file = build.path().join("llms-full.txt");
    let text = std::fs::read_to_string(&file).expect("prebuilt llms-full.txt");
    assert!(text.starts_with("# dochub\n"), "{text}");
    std::fs::write(&file, text.replacen("# dochub", "# DOCHUB", 1)).expect("write");
    let copied = get(&prebuilt, "/llms-full.txt").await.text();
    assert!(copied.starts_with("# DOCHUB\n"), "{copied}");
    assert_full_text(&copied, &pages_on_disk(content.path()));

    // A page added after the build is listed at once (the index is noticed to be stale).
    std::fs::write(
        content.path().join("alpha/guide/added.md"),
        "---\ntitle: Added\nsummary: New\n---\nText\n",
    )
    .expect("write");
    let text = get(&prebuilt, "/llms.txt").await.text();
    assert!(
        text.contains(&format!(
            "- [Added]({SITE_URL}/docs/alpha/guide/added.md): New\n"
        )),
        "{text}"
    );
    assert_eq!(text, get(&live, "/llms.txt").await.text());
    // ...and in llms-full.txt, from the tree (the prebuilt file is no longer used).
    let full = get(&prebuilt, "/llms-full.txt").await.text();
    assert!(full.starts_with("# dochub\n"), "{full}");
    assert_full_text(&full, &pages_on_disk(content.path()));
    assert!(full.contains("# alpha/guide/added: Added\n"));
    prebuilt.stop().await;
    live.stop().await;
}

/// The public origin some tests configure: every link of `/llms.txt` starts with it.
const SITE_URL: &str = "https://docs.example.com";

#[test]
fn link_lines_are_read_as_the_convention_writes_them() {
    assert_eq!(link_of("- [A](/x.md): b"), Some("/x.md"));
    assert_eq!(link_of("  - [A \\[1\\]](/y.md)"), Some("/y.md"));
    assert_eq!(link_of("- plain item"), None);
}

/// Builds `content` into `build`, then starts two apps on it: one answering from that build, one
/// from the tree; `direct`: mounted in place, so that edits after the start are seen. Both
/// have the same `site_url`, so that their answers are the same text.
async fn prebuilt_and_live(content: &Path, build: &Path, direct: bool) -> (TestApp, TestApp) {
    let root = dochub_content::ContentRoot::open(content).expect("root");
    dochub_index::build::write_build(&root, build, &dochub_http::iso8601(chrono::Utc::now()))
        .expect("build");
    let mut prebuilt = TestApp::builder()
        .variable("site_url", SITE_URL)
        .content(content)
        .mount(build, "/prebuilt")
        .env("BUILD_DIR", "/prebuilt")
        .env("SERVE_PREBUILT", "1");
    let mut live = TestApp::builder()
        .variable("site_url", SITE_URL)
        .content(content)
        .env("SERVE_PREBUILT", "0");
    if direct {
        prebuilt = prebuilt.direct_mounts();
        live = live.direct_mounts();
    }
    (
        prebuilt.start().await.expect("app starts"),
        live.start().await.expect("app starts"),
    )
}

/// A tree whose full text passes 8 MiB: two projects of 24 pages of 200 KiB each (about 9.4 MiB;
/// a page may have at most 256 KiB).
fn large_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for project in ["alpha", "beta"] {
        let sub = dir.path().join(project).join("guide");
        std::fs::create_dir_all(&sub).expect("mkdir");
        for n in 1..=24 {
            let line = format!("{project} page {n}: the same sentence again and again.\n");
            let body = line.repeat((200 << 10) / line.len());
            std::fs::write(
                sub.join(format!("p{n}.md")),
                format!("---\ntitle: Page {n}\n---\n{body}"),
            )
            .expect("write page");
        }
    }
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_text_over_8_mib_is_answered_in_parts_that_add_up_to_it() {
    let content = large_tree();
    let root = dochub_content::ContentRoot::open(content.path()).expect("root");
    let intro = root.site_intro().expect("intro");
    let mut whole = Vec::new();
    dochub_content::llms::write_full(&root, &intro, None, &mut whole).expect("whole text");
    let whole = String::from_utf8(whole).expect("utf-8");
    assert!(whole.len() > 8 << 20, "{}", whole.len());
    let build = tempfile::tempdir().expect("temp dir");
    let (prebuilt, live) = prebuilt_and_live(content.path(), build.path(), false).await;
    for app in [&prebuilt, &live] {
        let index = get(app, "/llms.txt").await.text();
        assert!(
            index.contains(&format!(
                "in 2 files of at most 8 MiB each: [part 1]({SITE_URL}/llms-full.txt?part=1), \
                 [part 2]({SITE_URL}/llms-full.txt?part=2)"
            )),
            "{index}"
        );
        // No part (and part 1) is the first part; together the parts are the whole text.
        let first = get(app, "/llms-full.txt").await;
        assert_eq!(first.status, 200);
        assert_eq!(first.body, get(app, "/llms-full.txt?part=1").await.body);
        let second = get(app, "/llms-full.txt?part=2").await;
        assert_eq!(second.status, 200);
        let (first, second) = (first.text(), second.text());
        assert!(first.len() <= (8 << 20) + 4096, "{}", first.len());
        let note1 = "This is part 1 of 2 of the full text; the next is /llms-full.txt?part=2.\n";
        let note2 = "This is part 2 of 2 of the full text; it is the last.\n";
        let (head, rest1) = first.split_once(note1).expect("part 1 says so");
        let (_, rest2) = second.split_once(note2).expect("part 2 says so");
        assert_eq!(format!("{head}{rest1}{rest2}"), whole);
        // Each part is whole pages.
        assert!(rest2.starts_with("\n# "), "{}", &rest2[..40]);
        for bad in ["part=3", "part=0"] {
            let got = get(app, &format!("/llms-full.txt?{bad}")).await;
            let expected = if bad == "part=3" { 404 } else { 400 };
            assert_eq!(got.status, expected, "{bad}: {}", got.text());
        }
        // One project's text is under the limit: whole, with no note.
        let alpha = get(app, "/llms-full.txt?project=alpha").await.text();
        assert!(!alpha.contains("This is part"), "{}", &alpha[..200]);
        assert!(alpha.contains("# alpha/guide/p3: Page 3"));
    }
}

/// Runs the llms.txt format's reference implementation (`tests/llms/reference.py`, PyPI
/// `llms-txt` in `.ci/run`'s Python) in `mode` on `text`; `None` when that Python is missing
/// outside CI (the test is skipped).
fn reference(mode: &str, text: &str) -> Option<serde_json::Value> {
    let python = dochub_tests::clients::python_with(&["llms_txt"])?;
    // Its own folder: the tool reads docs from a local `pyproject.toml` project when it finds one.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("llms.txt");
    std::fs::write(&file, text).expect("write");
    let out = std::process::Command::new(python)
        .arg(repo_root().join("tests/llms/reference.py"))
        .args([mode, file.to_str().expect("utf-8 path")])
        .current_dir(dir.path())
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "reference.py {mode} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("one JSON object"))
}

/// What the reference parser read: `(title, summary, info, [(section, [(title, url, notes)])])`.
type Parsed = (String, String, String, Vec<(String, Vec<[String; 3]>)>);

fn parsed(json: &serde_json::Value) -> Parsed {
    assert!(
        json.get("error").is_none(),
        "the reference parser failed: {json}"
    );
    let s = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let sections = json["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|pair| {
            let links = pair[1]
                .as_array()
                .expect("links")
                .iter()
                .map(|l| [s(&l["title"]), s(&l["url"]), s(&l["desc"])])
                .collect();
            (s(&pair[0]), links)
        })
        .collect();
    (
        s(&json["title"]),
        s(&json["summary"]),
        s(&json["info"]),
        sections,
    )
}

/// `/llms.txt` as the format's reference parser reads it: the site's title and summary, one
/// section per project and the Optional one, every page's twin once, every link absolute on
/// the request's origin, or on `site_url` when it is set.
#[tokio::test(flavor = "multi_thread")]
async fn the_reference_parser_reads_llms_txt_with_absolute_links() {
    let app = TestApp::builder().start().await.expect("app starts");
    let Some(json) = reference("parse", &get(&app, "/llms.txt").await.text()) else {
        return;
    };
    let (title, summary, info, sections) = parsed(&json);
    let content = repo_root().join("content");
    let master = dochub_content::parse_page(
        "index",
        &std::fs::read(content.join("_master/index.md")).expect("master page"),
    );
    assert_eq!((title, summary), (master.title, master.summary));
    let origin = app.base_url().trim_end_matches('/').to_owned();
    assert!(
        info.contains(&format!("[llms-full.txt]({origin}/llms-full.txt)")),
        "{info}"
    );
    let names: Vec<&str> = sections.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["dochub", "Optional"]);
    let (_, dochub) = &sections[0];
    assert_eq!(
        dochub[0],
        [
            "dochub".to_owned(),
            format!("{origin}/docs/dochub/"),
            "A documentation service and a message hub, built as Spin WebAssembly components \
             in Rust. These pages document dochub itself."
                .to_owned()
        ]
    );
    assert!(
        dochub.contains(&[
            "Content".to_owned(),
            format!("{origin}/docs/dochub/content/"),
            "How the content tree is laid out, page frontmatter, reports and the content lint."
                .to_owned()
        ]),
        "{dochub:?}"
    );
    let mut twins: Vec<String> = sections
        .iter()
        .flat_map(|(_, links)| links)
        .map(|[_, url, _]| {
            url.strip_prefix(&origin)
                .unwrap_or_else(|| panic!("{url} is not on {origin}"))
                .to_owned()
        })
        .filter(|path| path.ends_with(".md"))
        .collect();
    twins.sort();
    let mut expected: Vec<String> = pages_on_disk(&content)
        .into_iter()
        .map(|(path, _)| format!("/docs/{path}.md"))
        .collect();
    expected.sort();
    assert_eq!(twins, expected, "every page once");
    for (_, links) in &sections {
        for [title, url, _] in links {
            let path = &url[origin.len()..];
            assert_eq!(get(&app, path).await.status, 200, "{title}: {url}");
        }
    }
    app.stop().await;

    let app = TestApp::builder()
        .variable("site_url", &format!("{SITE_URL}/"))
        .start()
        .await
        .expect("app starts");
    let (_, _, info, sections) = parsed(
        &reference("parse", &get(&app, "/llms.txt").await.text()).expect("python was found"),
    );
    assert!(
        info.contains(&format!("({SITE_URL}/llms-full.txt)")),
        "{info}"
    );
    for (_, links) in &sections {
        for [_, url, _] in links {
            assert!(url.starts_with(&format!("{SITE_URL}/docs/")), "{url}");
        }
    }
    app.stop().await;
}

/// `/llms-full.txt` holds what an agent gets from `/llms.txt` with the reference tool, which
/// fetches every link (the Optional section included) into one context: each page's markdown.
/// (`/llms-full.txt` itself is not in the format's grammar: its pages keep their own `##`
/// headings, which the parser would read as sections of links.)
#[tokio::test(flavor = "multi_thread")]
async fn the_reference_tool_gathers_the_pages_llms_full_holds() {
    let app = TestApp::builder().start().await.expect("app starts");
    let Some(json) = reference("ctx", &get(&app, "/llms.txt").await.text()) else {
        return;
    };
    let ctx = json["ctx"].as_str().expect("context");
    let full = get(&app, "/llms-full.txt").await.text();
    let pages = pages_on_disk(&repo_root().join("content"));
    for (path, file) in &pages {
        let raw = std::fs::read_to_string(file).expect("page");
        let id = path.rsplit('/').next().expect("id");
        let body = dochub_content::parse_page(id, raw.as_bytes()).body;
        // The tool joins a document's lines with `\n`, without the last newline.
        let fetched = raw.lines().collect::<Vec<_>>().join("\n");
        assert!(
            ctx.contains(&fetched),
            "{path} fetched whole by the reference tool"
        );
        assert!(full.contains(body.trim_end()), "{path} in /llms-full.txt");
    }
    app.stop().await;
}

/// A full text in parts: the reference parser reads `/llms.txt`'s links to each part, absolute.
#[tokio::test(flavor = "multi_thread")]
async fn the_reference_parser_reads_the_links_to_the_parts() {
    if dochub_tests::clients::python_with(&["llms_txt"]).is_none() {
        return;
    }
    let content = large_tree();
    let app = TestApp::builder()
        .content(content.path())
        .start()
        .await
        .expect("app starts");
    let index = get(&app, "/llms.txt").await.text();
    let (_, _, info, sections) = parsed(&reference("parse", &index).expect("python"));
    let origin = app.base_url().trim_end_matches('/');
    for n in [1, 2] {
        let link = format!("[part {n}]({origin}/llms-full.txt?part={n})");
        assert!(info.contains(&link), "{info}");
        assert_eq!(
            get(&app, &format!("/llms-full.txt?part={n}")).await.status,
            200
        );
    }
    let names: Vec<&str> = sections.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(
        sections[0].1.len(),
        2 + 24,
        "the project, its subproject, its pages"
    );
    app.stop().await;
}

/// A versioned project (`tests/fixtures/versions`: `spin` lists `[v2, v1]`): its section holds
/// the latest version and the FAQ; v1, its landing page and its pages, is under `## Optional`,
/// as the reference parser reads it, on the tree and on a build alike.
#[tokio::test(flavor = "multi_thread")]
async fn older_versions_are_optional_in_llms_txt() {
    let content = dochub_tests::versions_tree();
    let build = tempfile::tempdir().expect("build dir");
    let (prebuilt, live) = prebuilt_and_live(content.path(), build.path(), false).await;
    let text = get(&live, "/llms.txt").await.text();
    assert_eq!(get(&prebuilt, "/llms.txt").await.text(), text);
    let twin = |path: &str| format!("{SITE_URL}/docs/{path}.md");
    let spin = region_of(&text, "## Spin\n");
    for path in ["spin/v2/install", "spin/v2/triggers", "spin/faq/questions"] {
        assert!(spin.contains(&twin(path)), "{path} in {spin}");
    }
    assert!(!spin.contains("/docs/spin/v1/"), "{spin}");
    let optional = region_of(&text, "## Optional\n");
    assert!(
        optional.contains(&format!(
            "- [Spin 1 (an older version)]({SITE_URL}/docs/spin/v1/): The previous release."
        )),
        "{optional}"
    );
    for path in ["spin/v1/install", "spin/v1/templates", "spin/v1/index"] {
        assert!(optional.contains(&twin(path)), "{path} in {optional}");
    }
    let Some(json) = reference("parse", &text) else {
        return;
    };
    let (_, _, _, sections) = parsed(&json);
    let urls = |name: &str| -> Vec<String> {
        sections
            .iter()
            .find(|(section, _)| section == name)
            .map(|(_, links)| links.iter().map(|l| l[1].clone()).collect())
            .unwrap_or_else(|| panic!("no section {name}: {sections:?}"))
    };
    assert!(urls("Spin").contains(&twin("spin/v2/install")));
    assert!(!urls("Spin").iter().any(|u| u.contains("/spin/v1/")));
    assert!(urls("Optional").contains(&twin("spin/v1/templates")));
}

/// From `heading` to the next `## ` heading.
fn region_of<'a>(text: &'a str, heading: &str) -> &'a str {
    let from = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in {text}"));
    let rest = &text[from + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}
