//! The content library against the `basic` fixture tree (shared with the
//! end-to-end tests) and against trees built in temporary directories.

use std::fs;
use std::path::Path;

use dochub_content::{Catalog, CatalogError, ContentError, ContentRoot, Severity};
use dochub_search::MAX_RESULTS;
use serde_json::json;

fn basic() -> ContentRoot {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/basic");
    ContentRoot::open(path).unwrap()
}

fn json_of<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap()
}

/// A generation time as the app stamps it.
const T0: &str = "2026-01-02T03:04:05.678Z";

#[test]
fn master_manifest_lists_projects_only() {
    let m = basic().master_manifest(T0).unwrap();
    assert_eq!(
        json_of(&m),
        json!({
            "generated_at": "2026-01-02T03:04:05.678Z",
            "projects": [
                {"id": "alpha", "name": "Alpha Project", "description": "The first project of the fixture",
                 "subproject_count": 2, "doc_count": 8},
                {"id": "beta", "name": "beta", "description": "", "subproject_count": 1, "doc_count": 1},
                {"id": "empty-project", "name": "empty-project", "description": "",
                 "subproject_count": 0, "doc_count": 0},
            ],
            "total_documents": 9,
        })
    );
}

#[test]
fn project_manifest() {
    let root = basic();
    assert_eq!(
        json_of(&root.project_manifest("alpha").unwrap().unwrap()),
        json!({
            "project": {"id": "alpha", "name": "Alpha Project", "description": "The first project of the fixture"},
            // In reading order: `guide` says `order: 1`; `reference` has none.
            "subprojects": [
                {"id": "guide", "name": "User Guide", "description": "How to use alpha", "doc_count": 7},
                {"id": "reference", "name": "reference", "description": "", "doc_count": 1},
            ],
        })
    );
    assert_eq!(
        json_of(&root.project_manifest("empty-project").unwrap().unwrap()),
        json!({"project": {"id": "empty-project", "name": "empty-project", "description": ""}, "subprojects": []})
    );
    for missing in [
        "nope",
        "reports",
        "_private",
        "_master",
        ".hidden",
        "README.md",
        "..",
        ".",
        "",
        "alpha/guide",
    ] {
        assert!(
            root.project_manifest(missing).unwrap().is_none(),
            "{missing}"
        );
    }
}

#[test]
fn subproject_manifest_with_awkward_pages() {
    let root = basic();
    let m = root.subproject_manifest("alpha", "guide").unwrap().unwrap();
    // The expected JSON sits beside the fixture; the end-to-end API test checks the same file.
    let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/basic.expected/alpha-guide.json");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(expected).unwrap()).unwrap();
    assert_eq!(json_of(&m), expected);
    // Broken `_subproject.yaml`: defaults, and the rest still served.
    let r = root
        .subproject_manifest("alpha", "reference")
        .unwrap()
        .unwrap();
    assert_eq!(r.subproject.name, "reference");
    assert_eq!(json_of(&r.schema_coverage).as_object().unwrap().len(), 8);
    assert!(
        json_of(&r.schema_coverage)
            .as_object()
            .unwrap()
            .values()
            .all(|v| v == false)
    );
    assert_eq!(r.documents[0].references[0].kind, "related");
    for (p, s) in [
        ("alpha", "deep"),
        ("alpha", "nope"),
        ("nope", "guide"),
        ("alpha", ".cache"),
        ("alpha", ".."),
    ] {
        assert!(root.subproject_manifest(p, s).unwrap().is_none(), "{p}/{s}");
    }
    // A project with no subprojects has none to list, and a file is no subproject.
    assert!(
        root.subproject_manifest("alpha", "guide/index.md")
            .unwrap()
            .is_none()
    );
}

#[test]
fn raw_is_byte_exact_and_confined() {
    let root = basic();
    let dir = root.path().join("alpha/guide");
    for id in ["latin1", "empty", "unicode", "install"] {
        let raw = root.raw("alpha", "guide", id).unwrap().unwrap();
        assert_eq!(raw, fs::read(dir.join(format!("{id}.md"))).unwrap(), "{id}");
    }
    let bad = [
        ("alpha", "guide", ".hidden"),
        ("alpha", "guide", "_draft"),
        ("alpha", "guide", "notes"),
        ("alpha", "guide", "deep/nested/page"),
        ("alpha", "guide", "../../../outside"),
        ("..", "..", "outside"),
        ("alpha", "..", "outside"),
        ("alpha", "guide", "/etc/passwd"),
        ("alpha", "guide", "a\0b"),
        ("alpha", "guide", "..\\..\\outside"),
        ("_private", "x", "secret"),
        ("alpha", ".cache", "x"),
        ("alpha", "guide", "deep"),
        ("reports", "x", "y"),
    ];
    for (p, s, page) in bad {
        assert!(root.raw(p, s, page).unwrap().is_none(), "{p}/{s}/{page}");
    }
    let long = "a".repeat(300);
    assert!(root.raw("alpha", "guide", &long).unwrap().is_none());
}

#[test]
fn pages_parse_with_fallbacks() {
    let root = basic();
    let p = root.page("alpha", "guide", "install").unwrap().unwrap();
    assert_eq!(p.title(), "Installation");
    assert!(p.body().starts_with("# Installation\n"));
    assert_eq!(p.path(), "alpha/guide/install");
    let b = root.page("alpha", "guide", "broken-yaml").unwrap().unwrap();
    assert!(b.parsed.frontmatter.error.is_some());
    let ids = root.page_ids("alpha", "guide").unwrap();
    assert_eq!(
        ids,
        [
            "broken-yaml",
            "empty",
            "index",
            "install",
            "latin1",
            "no-frontmatter",
            "unicode"
        ]
    );
    let m = root.master_index().unwrap().unwrap();
    assert_eq!(m.title(), "Fixture Hub");
    assert_eq!(m.summary(), "Home of the basic fixture tree");
    let subs = root.subprojects("alpha").unwrap().unwrap();
    assert_eq!(
        subs.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["guide", "reference"]
    );
    assert!(subs[1].meta_error.is_some());
    assert!(root.subprojects("nope").unwrap().is_none());
}

#[test]
fn search_rules() {
    let root = basic();
    let r = root.search("ZEBRA").unwrap();
    assert_eq!(r.query, "ZEBRA");
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.results[0].path, "alpha/guide/install");
    assert_eq!(r.results[0].title, "Installation");
    // Plain text of the body: no frontmatter, fence markers or `#`.
    assert_eq!(
        r.results[0].excerpt,
        "Installation Run the installer, then check the version. # this comment is not a heading alpha --version The zebra keyword appears only here."
    );
    // Frontmatter counts; unicode is folded; non-UTF-8 pages are searched lossily.
    assert_eq!(
        root.search("landing PAGE").unwrap().results[0].path,
        "alpha/guide/index"
    );
    assert_eq!(
        root.search("ÜBERBLICK").unwrap().results[0].path,
        "alpha/guide/unicode"
    );
    assert_eq!(root.search("日本語の").unwrap().results.len(), 1);
    assert_eq!(
        root.search("pelican").unwrap().results[0].path,
        "alpha/guide/latin1"
    );
    // Only pages: not the master index, hidden, draft, deep, reports or outside files.
    for q in [
        "Fixture Hub",
        "Hidden page",
        "Draft page",
        "Too deep",
        "newest dated",
        "TOP SECRET",
        "not a page",
    ] {
        // Other pages may hold the words apart (the any-order tier), never the phrase.
        for hit in root.search(q).unwrap().results {
            let mut parts = hit.path.split('/');
            let (p, s, id) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            let raw = root.raw(p, s, id).unwrap().unwrap();
            let text = String::from_utf8_lossy(&raw).to_lowercase();
            assert!(!text.contains(&q.to_lowercase()), "{q}: {}", hit.path);
        }
    }
    assert!(root.search("TOP SECRET").unwrap().results.is_empty());
    assert!(root.search("title").unwrap().results.len() >= 5);
    for q in ["", "a", " a ", "é"] {
        assert!(
            matches!(root.search(q), Err(CatalogError::Query(_))),
            "{q:?}"
        );
    }
}

fn temp_tree(files: &[(&str, &[u8])]) -> (tempfile::TempDir, ContentRoot) {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    let root = ContentRoot::open(dir.path()).unwrap();
    (dir, root)
}

#[test]
fn search_caps_at_fifty_and_ties_keep_path_order() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let p = dir.path().join(format!("p{}/s/page{i:02}.md", i % 3));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        // Pages alike but for their number (two digits each: the same length in terms).
        fs::write(p, format!("# Page {i:02}\nthe common needle\n")).unwrap();
    }
    let root = ContentRoot::open(dir.path()).unwrap();
    let r = root.search("Common Needle").unwrap();
    assert_eq!(r.results.len(), MAX_RESULTS);
    let mut expected: Vec<String> = (0..60)
        .map(|i| format!("p{}/s/page{i:02}", i % 3))
        .collect();
    expected.sort();
    expected.truncate(50);
    assert_eq!(
        r.results.iter().map(|h| h.path.clone()).collect::<Vec<_>>(),
        expected
    );
}

#[test]
fn search_orders_by_joined_path() {
    // `a-b` sorts before `a/...` as a string, though `a` < `a-b` as a directory name.
    let (_d, root) = temp_tree(&[("a/s/x.md", b"needle"), ("a-b/s/x.md", b"needle")]);
    let r = root.search("needle").unwrap();
    assert_eq!(
        r.results
            .iter()
            .map(|h| h.path.as_str())
            .collect::<Vec<_>>(),
        ["a-b/s/x", "a/s/x"]
    );
}

#[test]
fn latest_report_by_file_name() {
    let r = basic().latest_report().unwrap().unwrap();
    assert_eq!(r.name, "2025-03-02.json");
    assert_eq!(
        r.bytes,
        fs::read(basic().path().join("reports/2025-03-02.json")).unwrap()
    );
    let (_d, root) = temp_tree(&[("p/s/x.md", b"x")]);
    assert!(root.latest_report().unwrap().is_none());
    let (_d, root) = temp_tree(&[
        ("reports/readme.txt", b"x"),
        ("reports/2025-02-30.json", b"{}"),
    ]);
    assert!(root.latest_report().unwrap().is_none());
    let (_d, root) = temp_tree(&[
        ("reports/2024-12-31.json", b"{}"),
        ("reports/2025-01-01.json", b"[1]"),
    ]);
    assert!(matches!(
        root.latest_report(),
        Err(ContentError::BadReport { .. })
    ));
}

#[test]
fn open_errors_name_the_problem() {
    let e = ContentRoot::open("/definitely/not/here").unwrap_err();
    assert_eq!(
        e.to_string(),
        "content root `/definitely/not/here` does not exist (check CONTENT_DIR and the files mount)"
    );
    let f = tempfile::NamedTempFile::new().unwrap();
    let e = ContentRoot::open(f.path()).unwrap_err();
    assert!(e.to_string().contains("is not a directory"), "{e}");
}

#[test]
fn check_reports_problems_with_paths() {
    let diags = basic().check().unwrap();
    let errors: Vec<(String, Option<usize>, String)> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.path.clone(), d.line, d.message.clone()))
        .collect();
    let places: Vec<(&str, Option<usize>)> =
        errors.iter().map(|(p, l, _)| (p.as_str(), *l)).collect();
    assert_eq!(
        places,
        [
            ("README.md", None),
            ("_private/secret.md", None),
            ("alpha/guide/_draft.md", None),
            ("alpha/guide/broken-yaml.md", Some(3)),
            ("alpha/guide/deep/nested/page.md", None),
            ("alpha/guide/empty.md", Some(1)),
            ("alpha/guide/empty.md", Some(1)),
            ("alpha/guide/no-frontmatter.md", Some(1)),
            ("alpha/reference/_subproject.yaml", Some(2)),
        ]
    );
    assert!(errors[0].2.starts_with("page is unreachable"));
    assert!(errors[3].2.starts_with("invalid YAML in frontmatter"));
    assert!(errors[5].2.starts_with("missing frontmatter"));
    assert!(errors[6].2.starts_with("missing title"));
    let warned: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| d.to_string())
        .collect();
    for expected in [
        "alpha/guide/latin1.md:1: warning: not valid UTF-8",
        "beta: warning: no _project.yaml",
        "empty-project: warning: project has no subprojects",
        "reports/zz-latest.json: warning: ignored",
    ] {
        assert!(
            warned.iter().any(|w| w.starts_with(expected)),
            "{expected} in {warned:#?}"
        );
    }
    let (_d, root) = temp_tree(&[
        ("p/_project.yaml", b"name: P"),
        (
            "p/s/_subproject.yaml",
            b"name: S\nschema_coverage:\n  purpose: yes please\n  colour: true\n",
        ),
        (
            "p/s/a.md",
            b"---\ntitle: A\nreferences:\n  - target: p/s\n  - target: p/missing\n  - q/s\n---\n",
        ),
        ("reports/2025-01-01.json", b"{oops"),
    ]);
    let d: Vec<String> = root
        .check()
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        d,
        [
            "p/s/_subproject.yaml:3: warning: schema_coverage.purpose is not true or false; read as false",
            "p/s/_subproject.yaml:4: warning: schema_coverage.colour is not one of purpose, architecture, variables, api_endpoints, handshakes, data_model, dependencies, status; ignored",
            "p/s/a.md:5: error: reference target `p/missing` does not exist (expected `<project>/<subproject>`)",
            "p/s/a.md:6: error: reference target `q/s` does not exist (expected `<project>/<subproject>`)",
            "reports/2025-01-01.json:1: error: invalid JSON: key must be a string at line 1 column 2",
        ]
    );
}

#[test]
fn symlinked_and_odd_entries() {
    let (d, root) = temp_tree(&[
        ("p/s/a.md", b"# A"),
        ("p/s/b.MD", b"# upper-case extension"),
    ]);
    assert_eq!(root.page_ids("p", "s").unwrap(), ["a"]);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(d.path().join("p/s/a.md"), d.path().join("p/s/link.md"))
            .unwrap();
        std::os::unix::fs::symlink(d.path().join("nowhere"), d.path().join("p/s/dangling.md"))
            .unwrap();
        assert_eq!(root.page_ids("p", "s").unwrap(), ["a", "link"]);
    }
}
