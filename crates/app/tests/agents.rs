//! What agents read, natively: a section of a page (`/api/raw?anchor=`), a page cut to a
//! budget of tokens, `/api/query`, and search kept to a project, a version and a limit.

use std::path::Path;

use chrono::Utc;
use dochub_app::api::{ApiConfig, handle};
use dochub_http::auth::AuthConfig;
use dochub_http::{Request, Response};
use dochub_index::Source;
use dochub_index::build::BuildMode;
use serde_json::Value;

fn config(fixture: &str) -> ApiConfig {
    ApiConfig {
        source: Source {
            content_dir: Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures")
                .join(fixture),
            build: BuildMode::Off,
            memo: None,
        },
        auth: AuthConfig::new("development", ""),
        kept: None,
    }
}

fn get(config: &ApiConfig, path: &str, query: &str) -> Response {
    let req = Request {
        method: "GET",
        path,
        query,
        headers: &[],
    };
    handle(config, &req, Utc::now())
}

fn json(res: &Response) -> Value {
    serde_json::from_slice(&res.body).unwrap()
}

fn header<'a>(res: &'a Response, name: &str) -> Option<&'a str> {
    res.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn an_anchor_reads_one_section_of_the_page() {
    let config = config("versions");
    let res = get(&config, "/raw/spin/v1/install", "anchor=check-the-install");
    assert_eq!(res.status, 200);
    assert_eq!(
        header(&res, "content-type"),
        Some("text/markdown; charset=utf-8")
    );
    assert_eq!(
        String::from_utf8(res.body).unwrap(),
        "## Check the install\n\nRun `spin --version`: it prints 1.0.\n"
    );
    // A section runs to the next heading of its level: `# Install` holds the whole body.
    let res = get(&config, "/raw/spin/v1/install", "anchor=install");
    let text = String::from_utf8(res.body).unwrap();
    assert!(
        text.starts_with("# Install\n") && text.ends_with("prints 1.0.\n"),
        "{text}"
    );

    let res = get(&config, "/raw/spin/v1/install", "anchor=nope");
    assert_eq!(res.status, 404);
    assert_eq!(
        json(&res)["error"],
        "no section `nope` on this page; its sections are: install, check-the-install"
    );
    // Without the agent's parameters the file is served as it is.
    let res = get(&config, "/raw/spin/v1/install", "");
    let file = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/versions/spin/v1/install.md"),
    )
    .unwrap();
    assert_eq!(res.body, file);
}

#[test]
fn a_budget_cuts_at_a_block_and_says_where_to_read_on() {
    let config = config("versions");
    let file = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/versions/spin/v1/install.md"),
    )
    .unwrap();
    let mut offset = 0;
    let mut whole = String::new();
    loop {
        let res = get(
            &config,
            "/raw/spin/v1/install",
            &format!("max_tokens=100&offset={offset}"),
        );
        assert_eq!(res.status, 200);
        let text = String::from_utf8(res.body.clone()).unwrap();
        assert!(text.len() <= 300, "{} bytes", text.len());
        match header(&res, "dochub-next-offset") {
            Some(next) => {
                assert!(text.ends_with(&format!("offset {next}.]\n")), "{text}");
                whole.push_str(text.split("\n\n[Cut to fit max_tokens").next().unwrap());
                offset = next.parse().unwrap();
            }
            None => {
                whole.push_str(&text);
                break;
            }
        }
    }
    assert_eq!(whole, file);
    for bad in ["max_tokens=5", "max_tokens=x", "offset=-1", "offset=99999"] {
        let res = get(&config, "/raw/spin/v1/install", bad);
        assert_eq!(res.status, 400, "{bad}");
        assert!(json(&res)["error"].as_str().unwrap().contains('`'), "{bad}");
    }
}

#[test]
fn a_question_is_answered_by_sections_of_the_latest_version_unless_pinned() {
    let config = config("versions");
    let res = get(&config, "/query", "q=How+do+I+check+the+install%3F");
    assert_eq!(res.status, 200);
    let answer = json(&res);
    let paths: Vec<&str> = answer["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(answer["sections"][0]["path"], "spin/v2/install");
    assert_eq!(answer["sections"][0]["anchor"], "check-the-install");
    assert_eq!(answer["sections"][0]["section"], "Check the install");
    assert_eq!(
        answer["sections"][0]["text"],
        "## Check the install\n\nRun `spin --version`: it prints 2.0.\n"
    );
    assert!(
        !paths.iter().any(|p| p.starts_with("spin/v1/")),
        "{paths:?}"
    );
    assert!(answer["tokens"].as_u64().unwrap() <= 2000);

    let pinned = json(&get(&config, "/query", "q=check+the+install&version=v1"));
    let paths: Vec<&str> = pinned["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths[0], "spin/v1/install");
    assert!(
        !paths.iter().any(|p| p.starts_with("spin/v2/")),
        "{paths:?}"
    );

    let res = get(&config, "/query", "q=kettle&project=other");
    let answer = json(&res);
    for s in answer["sections"].as_array().unwrap() {
        assert_eq!(s["path"], "other/guide/intro");
    }

    for (query, status, error) in [
        (
            "q=kettle&version=v9",
            400,
            "Unknown version `v9`; the versions are: v1, v2",
        ),
        (
            "q=kettle&project=nope",
            404,
            "unknown project `nope`; list them with /api/manifest",
        ),
        (
            "q=k",
            400,
            "query parameter `q` must be at least 2 characters",
        ),
        (
            "q=kettle&max_tokens=10",
            400,
            "`max_tokens` must be from 100 to 100000, not 10",
        ),
    ] {
        let res = get(&config, "/query", query);
        assert_eq!(res.status, status, "{query}");
        assert_eq!(json(&res)["error"], error, "{query}");
    }
}

#[test]
fn every_answer_keeps_within_its_budget() {
    let config = config("basic");
    for budget in [100, 150, 400, 2000] {
        for q in [
            "install",
            "how do I install alpha",
            "zebra keyword",
            "the version",
        ] {
            let res = get(&config, "/query", &format!("q={q}&max_tokens={budget}"));
            assert_eq!(res.status, 200, "{q}");
            let answer = json(&res);
            let tokens = answer["tokens"].as_u64().unwrap() as usize;
            assert!(tokens <= budget, "{q} at {budget}: {tokens}");
        }
    }
}

#[test]
fn search_keeps_to_a_project_a_version_and_a_limit() {
    let config = config("versions");
    let paths = |query: &str| -> Vec<String> {
        let res = get(&config, "/search", query);
        assert_eq!(res.status, 200, "{query}");
        json(&res)["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = paths("q=kettle");
    assert!(all.iter().any(|p| p.starts_with("spin/v1/")), "{all:?}");
    assert!(all.iter().any(|p| p.starts_with("other/")), "{all:?}");
    let latest = paths("q=kettle&version=latest");
    assert!(
        !latest.iter().any(|p| p.starts_with("spin/v1/")),
        "{latest:?}"
    );
    assert!(
        latest.iter().any(|p| p.starts_with("spin/v2/")),
        "{latest:?}"
    );
    assert_eq!(paths("q=kettle&project=other"), ["other/guide/intro"]);
    assert_eq!(paths("q=kettle&limit=1").len(), 1);
    let res = get(&config, "/search", "q=kettle&limit=0");
    assert_eq!(res.status, 400);
    assert_eq!(json(&res)["error"], "`limit` must be from 1 to 50, not 0");
    let res = get(&config, "/search", "q=kettle&limit=ten");
    assert_eq!(res.status, 400);
    assert_eq!(json(&res)["error"], "`limit` must be from 1 to 50, not ten");
}

/// A content tree of one project with these pages (`id`, markdown).
fn tree(pages: &[(&str, &str)]) -> (tempfile::TempDir, ApiConfig) {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("kb/guide");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(dir.path().join("kb/_project.yaml"), "name: KB\n").unwrap();
    std::fs::write(sub.join("_subproject.yaml"), "name: Guide\n").unwrap();
    for (id, markdown) in pages {
        std::fs::write(sub.join(format!("{id}.md")), markdown).unwrap();
    }
    let mut config = config("versions");
    config.source.content_dir = dir.path().to_owned();
    (dir, config)
}

#[test]
fn ranked_by_section_a_hit_names_the_section_that_answers() {
    // The first page holds the whole query in its frontmatter, which puts it first by page;
    // but no section of it holds both words, while one section of the second is about both.
    let filler = "Words about other things entirely. ".repeat(30);
    let (_dir, config) = tree(&[
        (
            "cache-eviction",
            &format!(
                "---\ntitle: Storage\nkeywords: eviction cache\n---\nThe cache is on by default.\n\n## Sizes\n\n{filler}\n\n\
                 ## Limits\n\n{filler} Eviction happens rarely.\n"
            ),
        ),
        (
            "tuning",
            "---\ntitle: Tuning\n---\nKnobs.\n\n## Eviction\n\nCache eviction drops the oldest \
             cache entries first; eviction runs when the cache is full.\n",
        ),
    ]);
    let by_page = json(&get(&config, "/search", "q=eviction+cache"));
    let by_section = json(&get(&config, "/search", "q=eviction+cache&rank=section"));
    let paths = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        paths(&by_page),
        ["kb/guide/cache-eviction", "kb/guide/tuning"],
        "{by_page}"
    );
    assert_eq!(
        paths(&by_section),
        ["kb/guide/tuning", "kb/guide/cache-eviction"],
        "{by_section}"
    );
    let first = &by_section["results"][0];
    assert_eq!(
        (first["section"].as_str(), first["anchor"].as_str()),
        (Some("Eviction"), Some("eviction"))
    );
    assert!(
        first["excerpt"]
            .as_str()
            .unwrap()
            .contains("Cache eviction drops"),
        "{first}"
    );
    let res = get(&config, "/search", "q=eviction&rank=best");
    assert_eq!(res.status, 400);
    assert!(
        json(&res)["error"]
            .as_str()
            .unwrap()
            .contains("`rank` must be `page` or `section`")
    );
}
