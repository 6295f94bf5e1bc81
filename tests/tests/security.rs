//! The shared HTTP layer end to end, on all four components at once: the auth matrix (every
//! route × four kinds of credentials × three environments × variables readable or not), the
//! development `Host` check against DNS rebinding, the security headers, and traversal and
//! injection corpora on every path segment and query parameter.

use std::collections::BTreeMap;

use dochub_http::auth::token_digest;
use dochub_tests::{TestApp, fixture};
use reqwest::{Client, Method, StatusCode};

/// The docs/API/overview token.
const DOCS_TOKEN: &str = "docs-s3cret";
/// The hub token of the machine `laptop`, which every hub route below acts as.
const LAPTOP_TOKEN: &str = "laptop-s3cret";
/// The hub token of another machine, `desk`.
const DESK_TOKEN: &str = "desk-s3cret";

/// Which auth a route is under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `/api/health`: never needs a token.
    Health,
    /// The docs site, the API and the overview: `auth_tokens`.
    Docs,
    /// The hub, acting as `laptop`: `hub_tokens`.
    Hub,
    /// The hub's machine list: any machine's token.
    HubAnyMachine,
}

struct Route {
    method: Method,
    path: &'static str,
    body: Option<&'static str>,
    kind: Kind,
    /// The status when allowed.
    ok: u16,
}

fn routes() -> Vec<Route> {
    let get = |path, kind, ok| Route {
        method: Method::GET,
        path,
        body: None,
        kind,
        ok,
    };
    vec![
        get("/api/health", Kind::Health, 200),
        get("/api/manifest", Kind::Docs, 200),
        get("/api/manifest/alpha", Kind::Docs, 200),
        get("/api/manifest/alpha/guide", Kind::Docs, 200),
        get("/api/raw/alpha/guide/install", Kind::Docs, 200),
        get("/api/search?q=install", Kind::Docs, 200),
        get("/api/report/latest", Kind::Docs, 200),
        get("/docs/", Kind::Docs, 200),
        get("/docs/alpha/guide/install", Kind::Docs, 200),
        get("/", Kind::Docs, 302),
        get("/overview/", Kind::Docs, 200),
        Route {
            method: Method::POST,
            path: "/api/send",
            body: Some(r#"{"from":"laptop","to":"desk","body":"hi"}"#),
            kind: Kind::Hub,
            ok: 201,
        },
        get("/api/inbox/laptop", Kind::Hub, 200),
        Route {
            method: Method::POST,
            path: "/api/inbox/laptop/ack",
            body: Some(r#"{"through":0}"#),
            kind: Kind::Hub,
            ok: 200,
        },
        get("/machines", Kind::HubAnyMachine, 200),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credential {
    None,
    Wrong,
    Right,
    /// A valid token of someone else: the hub token of `desk` (for the docs, a hub token).
    OtherMachine,
}

const CREDENTIALS: [Credential; 4] = [
    Credential::None,
    Credential::Wrong,
    Credential::Right,
    Credential::OtherMachine,
];

impl Credential {
    fn token(self, kind: Kind) -> Option<&'static str> {
        match (self, kind) {
            (Credential::None, _) => None,
            (Credential::Wrong, _) => Some("wrong-token"),
            (Credential::Right, Kind::Hub | Kind::HubAnyMachine) => Some(LAPTOP_TOKEN),
            (Credential::Right, _) => Some(DOCS_TOKEN),
            (Credential::OtherMachine, _) => Some(DESK_TOKEN),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Status(u16),
    /// 500 whose body says what to fix (contains this).
    Refused(&'static str),
}

/// What a request must get, worked out from the rules, not from a run.
fn expected(env: &str, readable: bool, route: &Route, credential: Credential) -> Expect {
    // `environment` is read first: a misspelt value is what the refusal names.
    if env != "development" && env != "production" {
        return Expect::Refused("`development` or `production`");
    }
    if !readable {
        return Expect::Refused("cannot read the variable");
    }
    if env == "development" || route.kind == Kind::Health {
        return Expect::Status(route.ok);
    }
    Expect::Status(match (route.kind, credential) {
        (_, Credential::None | Credential::Wrong) => 401,
        (Kind::Docs, Credential::Right) => route.ok,
        (Kind::Docs, Credential::OtherMachine) => 401,
        (Kind::Hub, Credential::Right) => route.ok,
        (Kind::Hub, Credential::OtherMachine) => 403,
        (Kind::HubAnyMachine, _) => route.ok,
        (Kind::Health, _) => route.ok,
    })
}

async fn app(env: &str, readable: bool) -> TestApp {
    let mut builder = TestApp::builder()
        .content(fixture("basic"))
        .variable("environment", env)
        .variable("auth_tokens", &token_digest(DOCS_TOKEN))
        .variable(
            "hub_tokens",
            &format!(
                "laptop={},desk={}",
                token_digest(LAPTOP_TOKEN),
                token_digest(DESK_TOKEN)
            ),
        );
    if !readable {
        builder = builder
            .undeclare_variable("auth_tokens")
            .undeclare_variable("hub_tokens");
    }
    builder.start().await.expect("app starts")
}

struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

async fn request(
    client: &Client,
    app: &TestApp,
    method: Method,
    path: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> Answer {
    let mut req = client.request(method, app.url(path));
    if let Some(body) = body {
        req = req
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let res = req.send().await.expect("request");
    Answer {
        status: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.text().await.unwrap_or_default(),
    }
}

fn client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_matrix() {
    let client = client();
    let routes = routes();
    let (mut cases, mut failures) = (0, Vec::new());
    for env in ["development", "production", "prod"] {
        for readable in [true, false] {
            let app = app(env, readable).await;
            for route in &routes {
                for credential in CREDENTIALS {
                    cases += 1;
                    let want = expected(env, readable, route, credential);
                    let got = request(
                        &client,
                        &app,
                        route.method.clone(),
                        route.path,
                        route.body,
                        credential.token(route.kind),
                    )
                    .await;
                    let ok = match want {
                        Expect::Status(status) => got.status == status,
                        Expect::Refused(says) => got.status == 500 && got.body.contains(says),
                    };
                    // Whatever the answer, it never carries a token or its digest.
                    let leaks = [DOCS_TOKEN, LAPTOP_TOKEN, DESK_TOKEN]
                        .iter()
                        .any(|t| got.body.contains(t) || got.body.contains(&token_digest(t)));
                    if !ok || leaks || got.header("x-request-id").is_empty() {
                        failures.push(format!(
                            "{env} readable={readable} {} {} {credential:?}: want {want:?}, got \
                             {} {}",
                            route.method, route.path, got.status, got.body
                        ));
                    }
                }
            }
            app.stop().await;
        }
    }
    println!(
        "auth matrix: {cases} cases, {} passed",
        cases - failures.len()
    );
    assert_eq!(cases, routes.len() * 4 * 3 * 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_environment_refuses_everything() {
    let app = TestApp::builder()
        .content(fixture("basic"))
        .undeclare_variable("environment")
        .start()
        .await
        .unwrap();
    let client = client();
    for route in routes() {
        let got = request(&client, &app, route.method, route.path, route.body, None).await;
        assert_eq!(got.status, 500, "{}: {}", route.path, got.body);
        assert!(got.body.contains("`environment`"), "{}", got.body);
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn development_answers_only_loopback_host_names() {
    let app = TestApp::builder()
        .content(fixture("basic"))
        .variable("allowed_hosts", "devbox.test, other.test")
        .start()
        .await
        .unwrap();
    let client = client();
    let port = app.addr().port();
    for route in routes() {
        for (host, allowed) in [
            (format!("evil.example:{port}"), false),
            (format!("127.0.0.1.evil.example:{port}"), false),
            (format!("localhost.evil.example:{port}"), false),
            (format!("localhost:{port}"), true),
            (format!("[::1]:{port}"), true),
            (format!("devbox.test:{port}"), true),
        ] {
            let mut req = client
                .request(route.method.clone(), app.url(route.path))
                .header("host", &host);
            if let Some(body) = route.body {
                req = req.header("content-type", "application/json").body(body);
            }
            let res = req.send().await.unwrap();
            let status = res.status();
            if allowed {
                assert_eq!(status.as_u16(), route.ok, "{host} {}", route.path);
            } else {
                assert_eq!(status, StatusCode::FORBIDDEN, "{host} {}", route.path);
                let body = res.text().await.unwrap();
                assert!(body.contains("allowed_hosts"), "{body}");
            }
        }
    }
    // Production is reached under its public name: no Host check there.
    let prod = TestApp::builder()
        .content(fixture("basic"))
        .variable("environment", "production")
        .start()
        .await
        .unwrap();
    let res = client
        .get(prod.url("/api/health"))
        .header("host", "docs.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    prod.stop().await;
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_the_security_headers() {
    let app = app("development", true).await;
    let client = client();
    let mut seen = BTreeMap::new();
    for route in routes() {
        let got = request(&client, &app, route.method, route.path, route.body, None).await;
        assert_eq!(
            got.header("x-content-type-options"),
            "nosniff",
            "{}",
            route.path
        );
        assert_eq!(
            got.header("referrer-policy"),
            "no-referrer",
            "{}",
            route.path
        );
        assert_eq!(got.header("x-request-id").len(), 16, "{}", route.path);
        if got.header("content-type").starts_with("text/html") {
            let csp = got.header("content-security-policy");
            assert!(
                csp.starts_with("default-src 'none'"),
                "{}: {csp}",
                route.path
            );
            assert!(!csp.contains('*'), "{}: {csp}", route.path);
        }
        seen.insert(route.path, got.header("cache-control").to_owned());
    }
    for path in ["/api/health", "/api/send", "/api/inbox/laptop", "/machines"] {
        assert_eq!(seen[path], "no-store", "{path}");
    }
    let missing = request(&client, &app, Method::GET, "/api/nope", None, None).await;
    assert_eq!(
        (missing.status, missing.header("cache-control")),
        (404, "no-store")
    );
    for path in ["/docs/", "/api/manifest", "/overview/"] {
        assert!(
            seen[path].starts_with("public, max-age="),
            "{path}: {}",
            seen[path]
        );
    }
    app.stop().await;

    // Anything answered under auth is never stored.
    let prod = app_prod().await;
    let got = request(
        &client,
        &prod,
        Method::GET,
        "/docs/",
        None,
        Some(DOCS_TOKEN),
    )
    .await;
    assert_eq!((got.status, got.header("cache-control")), (200, "no-store"));
    prod.stop().await;
}

async fn app_prod() -> TestApp {
    app("production", true).await
}

#[tokio::test(flavor = "multi_thread")]
async fn browsers_are_challenged_with_basic_on_the_api() {
    let app = app_prod().await;
    let client = client();
    for path in ["/api/manifest", "/api/raw/alpha/guide/install"] {
        let plain = client.get(app.url(path)).send().await.unwrap();
        assert_eq!(plain.status(), 401);
        assert!(
            plain.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Bearer")
        );
        for (name, value) in [
            ("sec-fetch-mode", "navigate"),
            ("accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
            ("authorization", "Basic dXNlcjp3cm9uZw=="),
        ] {
            let res = client
                .get(app.url(path))
                .header(name, value)
                .send()
                .await
                .unwrap();
            assert_eq!(res.status(), 401, "{name}");
            let challenge = res.headers()["www-authenticate"].to_str().unwrap();
            assert!(challenge.starts_with("Basic"), "{name}: {challenge}");
        }
        // The browser then sends the token as the Basic password.
        let res = client
            .get(app.url(path))
            .basic_auth("reader", Some(DOCS_TOKEN))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
    }
    app.stop().await;
}

/// Payloads for path segments and query values: traversal, encodings, over-long names,
/// markup and SQL.
fn corpus() -> Vec<String> {
    let mut corpus: Vec<String> = [
        "..",
        "%2e%2e",
        "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "..%2F..%2F..%2Fetc%2Fpasswd",
        "..%5C..%5Cwindows",
        "%c0%ae%c0%ae",
        "%00",
        "a%00b",
        "%ff%fe",
        ".hidden",
        "_private",
        "_master",
        "reports",
        "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "'%20OR%201%3D1--",
        "%22%3B%20DROP%20TABLE%20messages%3B--",
        "%25",
        "%",
        "%zz",
        "con",
        "a:b",
        "~",
        "-1",
        "99999999999999999999999",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    corpus.push("a".repeat(253));
    corpus.push("a".repeat(256));
    corpus.push("é".repeat(200));
    corpus.push("b".repeat(5000));
    corpus
}

/// Every path segment and query parameter, with `{}` where the payload goes.
const TEMPLATES: &[(&str, &str)] = &[
    ("GET", "/api/manifest/{}"),
    ("GET", "/api/manifest/alpha/{}"),
    ("GET", "/api/manifest/{}/guide"),
    ("GET", "/api/raw/{}/guide/install"),
    ("GET", "/api/raw/alpha/{}/install"),
    ("GET", "/api/raw/alpha/guide/{}"),
    ("GET", "/api/search?q={}"),
    ("GET", "/api/{}"),
    ("GET", "/api/report/{}"),
    ("GET", "/docs/{}"),
    ("GET", "/docs/{}/"),
    ("GET", "/docs/alpha/{}/"),
    ("GET", "/docs/alpha/guide/{}"),
    ("GET", "/docs/alpha/guide/{}.md"),
    ("GET", "/docs/alpha/guide/install?format={}"),
    ("GET", "/docs/search?q={}"),
    ("GET", "/overview/{}"),
    ("GET", "/{}"),
    ("GET", "/api/inbox/{}"),
    ("GET", "/api/inbox/laptop?limit={}"),
    ("GET", "/api/inbox/laptop?ack={}"),
    ("POST", "/api/inbox/{}/ack"),
    ("GET", "/machines?{}={}"),
];

#[tokio::test(flavor = "multi_thread")]
async fn traversal_and_injection_never_500_nor_name_a_path() {
    let app = app("development", true).await;
    let client = client();
    let content_dir = fixture("basic").to_string_lossy().into_owned();
    let (mut cases, mut failures) = (0, Vec::new());
    for payload in corpus() {
        for (method, template) in TEMPLATES {
            let path = template.replace("{}", &payload);
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let body = (method == Method::POST).then_some(r#"{"through":0}"#);
            cases += 1;
            let got = request(&client, &app, method, &path, body, None).await;
            let named_path = ["/content", "/build", content_dir.as_str(), "cannot read"]
                .iter()
                .any(|p| got.body.contains(p));
            let html = got.header("content-type").starts_with("text/html");
            let markup = html && got.body.contains("<script>alert(1)");
            if got.status >= 500 || named_path || markup {
                failures.push(format!("{path}: {} {}", got.status, got.body));
            }
        }
    }
    // A request body of markup and SQL is stored as text and returned escaped as JSON.
    let evil = r#"{"from":"laptop","to":"desk","body":"'; DROP TABLE messages;-- <script>"}"#;
    let sent = request(&client, &app, Method::POST, "/api/send", Some(evil), None).await;
    assert_eq!(sent.status, 201, "{}", sent.body);
    let inbox = request(&client, &app, Method::GET, "/api/inbox/desk", None, None).await;
    assert!(inbox.body.contains("DROP TABLE messages"), "{}", inbox.body);
    println!(
        "corpus: {cases} requests, {} passed",
        cases - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_link_shows_only_when_there_is_a_report() {
    let client = client();
    // A tree without reports: no link to a 404.
    let tree = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tree.path().join("alpha/guide")).unwrap();
    std::fs::write(tree.path().join("alpha/guide/install.md"), "# Install\n").unwrap();
    let app = TestApp::builder()
        .content(tree.path())
        .start()
        .await
        .unwrap();
    let page = request(
        &client,
        &app,
        Method::GET,
        "/docs/alpha/guide/install",
        None,
        None,
    )
    .await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("/api/report/latest"), "{}", page.body);
    app.stop().await;

    let docs = TestApp::builder()
        .content(fixture("docs"))
        .start()
        .await
        .unwrap();
    let page = request(&client, &docs, Method::GET, "/docs/", None, None).await;
    assert!(
        page.body
            .contains(r#"<a href="/api/report/latest">Report</a>"#)
    );
    let report = request(
        &client,
        &docs,
        Method::GET,
        "/api/report/latest",
        None,
        None,
    )
    .await;
    assert_eq!(report.status, 200);
    docs.stop().await;
}
