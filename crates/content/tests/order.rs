//! `order` in frontmatter, `_subproject.yaml` and `_project.yaml`: the reading order of every
//! listing, and what `dochub check` says of an `order` that is not a whole number.

use std::fs;
use std::path::Path;

use dochub_content::llms::llms_txt;
use dochub_content::{Catalog, ContentRoot, Severity};

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn page(title: &str, order: Option<&str>) -> String {
    let order = order.map(|o| format!("order: {o}\n")).unwrap_or_default();
    format!("---\ntitle: {title}\nsummary: About {title}.\n{order}---\n# {title}\n")
}

/// A guide whose pages, by file name, are `a-upgrade`, `b-install`, `c-index`... and whose
/// `order` says quickstart, install, then the rest by title.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "zeta/_project.yaml", "name: Zeta\norder: 1\n");
    write(root, "alpha/_project.yaml", "name: Alpha\n");
    write(root, "mu/_project.yaml", "name: Mu\norder: 0\n");
    write(
        root,
        "zeta/guide/_subproject.yaml",
        "name: Guide\norder: -5\n",
    );
    write(root, "zeta/api/_subproject.yaml", "name: API\n");
    write(
        root,
        "zeta/faq/_subproject.yaml",
        "name: FAQ\norder: first\n",
    );
    write(root, "zeta/guide/index.md", &page("Overview", Some("0")));
    write(
        root,
        "zeta/guide/quickstart.md",
        &page("Quickstart", Some("1")),
    );
    write(root, "zeta/guide/install.md", &page("Install", Some("2")));
    write(root, "zeta/guide/a-upgrade.md", &page("Upgrade", None));
    write(root, "zeta/guide/b-api.md", &page("api keys", None));
    write(root, "zeta/guide/c-tune.md", &page("Tuning", Some("1.5")));
    write(root, "zeta/guide/d-last.md", &page("Zebra", Some("\"3\"")));
    for s in ["api", "faq"] {
        write(root, &format!("zeta/{s}/index.md"), &page(s, None));
    }
    write(root, "alpha/docs/index.md", &page("Alpha", None));
    write(root, "mu/docs/index.md", &page("Mu", None));
    dir
}

const GUIDE: [&str; 7] = [
    "index",
    "quickstart",
    "install",
    "b-api",
    "c-tune",
    "a-upgrade",
    "d-last",
];

#[test]
fn pages_follow_their_order_then_their_titles() {
    let dir = tree();
    let root = ContentRoot::open(dir.path()).unwrap();
    let ids: Vec<String> = root
        .pages("zeta", "guide")
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    // Ordered pages first (0, 1, 2); then by title, case-insensitively: "api keys",
    // "Tuning" (1.5 is not a whole number), "Upgrade", "Zebra" ("3" is a string).
    assert_eq!(ids, GUIDE);
    let listed: Vec<String> = Catalog::pages(&root, "zeta", "guide")
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(listed, GUIDE);
}

#[test]
fn projects_and_subprojects_follow_their_yaml_order() {
    let dir = tree();
    let root = ContentRoot::open(dir.path()).unwrap();
    let projects: Vec<String> = root.projects().unwrap().into_iter().map(|p| p.id).collect();
    assert_eq!(projects, ["mu", "zeta", "alpha"]);
    let subs: Vec<String> = root
        .subprojects("zeta")
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    // guide (-5); then API and FAQ by name (FAQ's order is not a number).
    assert_eq!(subs, ["guide", "api", "faq"]);
    let outline = root.sidebar().unwrap();
    let sidebar: Vec<(&str, Vec<&str>)> = outline
        .iter()
        .map(|p| {
            let subs = p.subprojects.iter().map(|(id, _)| id.as_str()).collect();
            (p.id.as_str(), subs)
        })
        .collect();
    assert_eq!(
        sidebar,
        [
            ("mu", vec!["docs"]),
            ("zeta", vec!["guide", "api", "faq"]),
            ("alpha", vec!["docs"]),
        ]
    );
}

#[test]
fn manifests_and_llms_txt_list_in_reading_order() {
    let dir = tree();
    let root = ContentRoot::open(dir.path()).unwrap();
    let master = root.master_manifest("2026-01-02T03:04:05.678Z").unwrap();
    let ids: Vec<&str> = master.projects.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["mu", "zeta", "alpha"]);
    let project = root.project_manifest("zeta").unwrap().unwrap();
    let ids: Vec<&str> = project.subprojects.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["guide", "api", "faq"]);
    let sub = root.subproject_manifest("zeta", "guide").unwrap().unwrap();
    let ids: Vec<&str> = sub.documents.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, GUIDE);

    let text = llms_txt(
        &root.site_intro().unwrap(),
        &Catalog::llms_outline(&root).unwrap(),
        1,
        "http://127.0.0.1:3000",
    );
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"))
    };
    assert!(at("zeta/guide/quickstart.md") < at("zeta/guide/install.md"));
    assert!(at("zeta/guide/install.md") < at("zeta/guide/b-api.md"));
    assert!(at("zeta/guide/a-upgrade.md") < at("zeta/guide/d-last.md"));
    assert!(at("## Mu") < at("## Zeta") && at("## Zeta") < at("## Alpha"));
}

#[test]
fn check_reports_an_order_that_is_not_a_whole_number() {
    let dir = tree();
    write(
        dir.path(),
        "alpha/_project.yaml",
        "name: Alpha\ndescription: x\norder: [1, 2]\n",
    );
    write(
        dir.path(),
        "zeta/guide/huge.md",
        &page("Huge", Some("99999999999999999999999")),
    );
    let root = ContentRoot::open(dir.path()).unwrap();
    let diags = root.check().unwrap();
    let about_order: Vec<String> = diags
        .iter()
        .filter(|d| d.message.contains("`order`"))
        .map(|d| {
            assert_eq!(d.severity, Severity::Warning, "{d}");
            d.to_string()
        })
        .collect();
    let expected = [
        "alpha/_project.yaml:3",
        "zeta/faq/_subproject.yaml:2",
        "zeta/guide/c-tune.md:4",
        "zeta/guide/d-last.md:4",
    ];
    // A number too large for any integer is reported too: the YAML reader refuses the block,
    // so the page is served with the fallbacks, as for any broken frontmatter.
    let huge: Vec<String> = diags
        .iter()
        .filter(|d| d.path == "zeta/guide/huge.md" && d.message.contains("order"))
        .map(|d| d.to_string())
        .collect();
    assert_eq!(huge.len(), 1, "{diags:#?}");
    assert_eq!(about_order.len(), expected.len(), "{about_order:#?}");
    for (found, place) in about_order.iter().zip(expected) {
        assert!(found.starts_with(place), "{found} at {place}");
        assert!(found.contains("ignored for sorting"), "{found}");
    }
    // The page with the bad order is still served and listed.
    assert!(root.page("zeta", "guide", "huge").unwrap().is_some());
}
