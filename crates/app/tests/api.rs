//! `dochub_content::api` natively: routing, methods, auth and errors, without a host.

use std::path::Path;

use chrono::Utc;
use dochub_app::api::{
    ApiConfig, Database, Gate, Health, Route, StoreReading, Stores, handle, handle_or_health,
    health_response, route,
};
use dochub_http::auth::{AuthConfig, token_digest};
use dochub_http::query_param;
use dochub_http::{Request, Response};
use dochub_index::Source;
use dochub_index::build::{BuildMode, write_build};

fn config(environment: &str, tokens: &str) -> ApiConfig {
    ApiConfig {
        source: Source {
            content_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/basic"),
            build: BuildMode::Off,
            memo: None,
        },
        auth: AuthConfig::new(environment, tokens),
        kept: None,
    }
}

fn get(config: &ApiConfig, path: &str, query: &str, auth: Option<&str>) -> Response {
    let headers: Vec<_> = auth
        .map(|a| ("authorization".into(), a.into()))
        .into_iter()
        .collect();
    handle(
        config,
        &Request {
            method: "GET",
            path,
            query,
            headers: &headers,
        },
        Utc::now(),
    )
}

fn error_of(res: &Response) -> String {
    let v: serde_json::Value = serde_json::from_slice(&res.body).unwrap();
    v["error"].as_str().unwrap().to_owned()
}

#[test]
fn routes() {
    assert_eq!(route("/health"), Route::Health);
    assert_eq!(route("/manifest"), Route::Manifest);
    assert_eq!(route("/manifest/"), Route::Manifest);
    assert_eq!(
        route("/manifest/a%20b/c"),
        Route::SubprojectManifest("a b".into(), "c".into())
    );
    assert_eq!(
        route("/raw/a/b/c%2Fd"),
        Route::Raw("a".into(), "b".into(), "c/d".into())
    );
    assert_eq!(route("/report/latest"), Route::LatestReport);
    for p in [
        "",
        "/",
        "//manifest",
        "/manifest//",
        "/raw/a//c",
        "/raw/a/b/%FF",
        "manifest",
        "/report",
    ] {
        assert_eq!(route(p), Route::NotFound, "{p:?}");
    }
}

#[test]
fn query_parameters() {
    assert_eq!(query_param("q=a+b&x=1", "q").as_deref(), Some("a b"));
    assert_eq!(query_param("x=1&q=%C3%BC%2B", "q").as_deref(), Some("ü+"));
    assert_eq!(query_param("q&x", "q").as_deref(), Some(""));
    assert_eq!(query_param("q=1&q=2", "q").as_deref(), Some("1"));
    assert_eq!(query_param("qq=1", "q"), None);
}

#[test]
fn responses() {
    let c = config("development", "");
    let res = get(&c, "/manifest/alpha/guide", "", None);
    assert_eq!(res.status, 200);
    assert_eq!(res.header("Content-Type"), Some("application/json"));
    let res = get(&c, "/raw/alpha/guide/install", "", None);
    assert_eq!(
        res.header("content-type"),
        Some("text/markdown; charset=utf-8")
    );
    let res = get(&c, "/raw/alpha/guide/..%2F..%2F..%2Foutside", "", None);
    assert_eq!(
        (res.status, error_of(&res).as_str()),
        (404, "Document not found")
    );
    let res = get(&c, "/search", "q=%20x%20", None);
    assert_eq!(res.status, 400);
    let res = get(&c, "/report/latest", "", None);
    assert_eq!(res.status, 200);
    let head = handle(
        &c,
        &Request {
            method: "HEAD",
            path: "/manifest",
            query: "",
            headers: &[],
        },
        Utc::now(),
    );
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let post = handle(
        &c,
        &Request {
            method: "POST",
            path: "/search",
            query: "q=ab",
            headers: &[],
        },
        Utc::now(),
    );
    assert_eq!(
        (post.status, post.header("allow")),
        (405, Some("GET, HEAD"))
    );
    let post = handle(
        &c,
        &Request {
            method: "POST",
            path: "/nope",
            query: "",
            headers: &[],
        },
        Utc::now(),
    );
    assert_eq!(post.status, 404);
}

#[test]
fn production_gate() {
    let c = config("production", &token_digest("t0ken"));
    let res = get(&c, "/manifest", "", None);
    assert_eq!(res.status, 401);
    assert_eq!(
        res.header("www-authenticate"),
        Some("Bearer realm=\"dochub\"")
    );
    assert_eq!(get(&c, "/manifest", "", Some("Bearer t0ken")).status, 200);
    assert_eq!(get(&c, "/nope", "", None).status, 401);
    let gate = handle_or_health(
        &c,
        &Request {
            method: "GET",
            path: "/health",
            query: "",
            headers: &[],
        },
        Utc::now(),
    );
    assert_eq!(gate, Gate::Health);
}

#[test]
fn prebuilt_and_missing_roots() {
    let mut c = config("development", "");
    let content = c.source.content_dir.clone();
    c.source.content_dir = "/no/such/root".into();
    let res = get(&c, "/manifest", "", None);
    assert_eq!(res.status, 500);
    assert!(error_of(&res).contains("`/no/such/root` does not exist"));
    // SERVE_PREBUILT=1 with nothing built: a 500 that says how to build.
    c.source.content_dir = content;
    let build = tempfile::tempdir().unwrap();
    c.source.build = BuildMode::Required(build.path().to_path_buf());
    let res = get(&c, "/manifest/alpha", "", None);
    assert_eq!(res.status, 500);
    assert!(error_of(&res).contains("has no manifest.json"));
    // The default with nothing built answers from the tree, without a warning.
    c.source.build = BuildMode::Auto(build.path().to_path_buf());
    let res = get(&c, "/manifest/alpha", "", None);
    assert_eq!((res.status, res.warning.clone()), (200, None));
    let root = dochub_content::ContentRoot::open(&c.source.content_dir).unwrap();
    write_build(&root, build.path(), &dochub_http::iso8601(Utc::now())).unwrap();
    for mode in [
        BuildMode::Auto(build.path().to_path_buf()),
        BuildMode::Required(build.path().to_path_buf()),
    ] {
        c.source.build = mode;
        let res = get(&c, "/manifest/alpha", "", None);
        assert_eq!((res.status, res.warning.clone()), (200, None));
        assert_eq!(get(&c, "/manifest/alpha/nope", "", None).status, 404);
        assert_eq!(get(&c, "/manifest/nope", "", None).status, 404);
        assert_eq!(get(&c, "/raw/alpha/guide/install", "", None).status, 200);
        assert_eq!(get(&c, "/search", "q=x", None).status, 400);
    }
}

#[test]
fn a_build_without_its_manifests_is_answered_from_the_tree_with_a_warning() {
    // `dochub build` writes manifest.json last: an index without it is a build being written.
    let mut c = config("development", "");
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(&c.source.content_dir).unwrap();
    write_build(&root, build.path(), &dochub_http::iso8601(Utc::now())).unwrap();
    std::fs::remove_file(build.path().join("manifest.json")).unwrap();
    c.source.build = BuildMode::Auto(build.path().to_path_buf());
    let res = get(&c, "/manifest/alpha", "", None);
    assert_eq!(res.status, 200);
    let warning = res.warning.clone().unwrap_or_default();
    assert!(warning.contains("being written"), "{warning:?}");
    let live = get(&config("development", ""), "/manifest/alpha", "", None);
    assert_eq!(res.body, live.body);
    // A raw page never needs the build, so a missing one is no error even when required.
    c.source.build = BuildMode::Required("/no/such/build".into());
    assert_eq!(get(&c, "/raw/alpha/guide/install", "", None).status, 200);
    assert_eq!(get(&c, "/manifest", "", None).status, 500);
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn answers_from_the_build_match_the_tree_until_it_changes() {
    let content = tempfile::tempdir().unwrap();
    copy_tree(&config("x", "").source.content_dir, content.path());
    let build = tempfile::tempdir().unwrap();
    let root = dochub_content::ContentRoot::open(content.path()).unwrap();
    write_build(&root, build.path(), &dochub_http::iso8601(Utc::now())).unwrap();
    let mut live = config("development", "");
    live.source.content_dir = content.path().to_path_buf();
    let mut pre = live.clone();
    pre.source.build = BuildMode::Auto(build.path().to_path_buf());
    for (path, query) in [
        ("/manifest/alpha", ""),
        ("/manifest/alpha/guide", ""),
        ("/search", "q=zebra"),
        ("/search", "q=in"),
        ("/search", "q=ALPHA"),
    ] {
        let (l, p) = (get(&live, path, query, None), get(&pre, path, query, None));
        assert_eq!((l.status, &l.body), (p.status, &p.body), "{path}?{query}");
        assert_eq!(p.warning, None, "{path}?{query}");
    }
    // A new page: the build no longer matches, the answer comes from the tree, and says why.
    std::fs::write(
        content.path().join("alpha/guide/new-page.md"),
        "# New\n\nA zebra crossing.\n",
    )
    .unwrap();
    let res = get(&pre, "/search", "q=zebra", None);
    let warning = res.warning.clone().expect("a warning for the log");
    assert!(warning.contains("alpha/guide"), "{warning}");
    assert_eq!(res.body, get(&live, "/search", "q=zebra", None).body);
    assert!(String::from_utf8_lossy(&res.body).contains("alpha/guide/new-page"));
    let res = get(&pre, "/manifest/alpha/guide", "", None);
    assert!(res.warning.is_some());
    assert!(String::from_utf8_lossy(&res.body).contains("new-page"));
    // Another project's manifest does not depend on that folder: still from the build.
    assert_eq!(get(&pre, "/manifest/beta", "", None).warning, None);
}

#[test]
fn health_status() {
    let now = Utc::now();
    let h = Health::new(
        "1.2.3",
        now - chrono::Duration::milliseconds(1500),
        Database::Disconnected,
        stores_ok(),
        "prod",
        now,
    );
    assert_eq!(h.status, "degraded");
    assert_eq!(h.uptime, 1.5);
    let h = Health::new(
        "1.2.3",
        now + chrono::Duration::seconds(1),
        Database::Unknown,
        stores_ok(),
        "dev",
        now,
    );
    assert_eq!((h.status.as_str(), h.uptime), ("healthy", 0.0));
    let res = health_response(&h, "GET");
    let v: serde_json::Value = serde_json::from_slice(&res.body).unwrap();
    assert_eq!(v["database"], "unknown");
    assert_eq!(v["service"], "dochub");
    assert_eq!(v["stores"]["hub"]["status"], "ok");
    assert!(v["stores"]["hub"].get("error").is_none());
    assert!(health_response(&h, "HEAD").body.is_empty());
    // One failing store degrades the whole, and its reading says why.
    let broken = Stores {
        hub: StoreReading::read("sqlite", Err("file is not a database".into())),
        key_value: StoreReading::ok("key-value"),
    };
    let h = Health::new("1", now, Database::Unknown, broken, "dev", now);
    assert_eq!(h.status, "degraded");
    let v: serde_json::Value = serde_json::from_slice(&health_response(&h, "GET").body).unwrap();
    assert_eq!(v["stores"]["hub"]["error"], "file is not a database");
    // A hub the deployment leaves out is not a failure.
    let docs_only = Stores {
        hub: StoreReading::unconfigured("no `hub_database_url`"),
        key_value: StoreReading::ok("key-value"),
    };
    let h = Health::new("1", now, Database::Unknown, docs_only, "dev", now);
    assert_eq!(h.status, "healthy");
}

fn stores_ok() -> Stores {
    Stores {
        hub: StoreReading::ok("sqlite"),
        key_value: StoreReading::ok("key-value"),
    }
}
