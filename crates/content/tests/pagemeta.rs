//! `updated` and `redirect_from`: what the frontmatter gives, what the live tree answers, and
//! what `dochub check` reports.

use std::fs;

use dochub_content::{Catalog, ContentRoot, Diagnostic, MAX_REDIRECTS, PagePath, Severity};

fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, ContentRoot) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let root = ContentRoot::open(dir.path()).unwrap();
    (dir, root)
}

const META: &[(&str, &str)] = &[
    ("p/_project.yaml", "name: P\n"),
    ("p/s/_subproject.yaml", "name: S\n"),
    ("p/t/_subproject.yaml", "name: T\n"),
];

fn with_meta<'a>(pages: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    META.iter().chain(pages).copied().collect()
}

/// The errors `check` finds in `path`, as `line: message`.
fn errors_in(diags: &[Diagnostic], path: &str) -> Vec<(usize, String)> {
    diags
        .iter()
        .filter(|d| d.path == path && d.severity == Severity::Error)
        .map(|d| (d.line.unwrap_or(0), d.message.clone()))
        .collect()
}

#[test]
fn a_good_page_has_its_date_and_old_paths_and_no_findings() {
    let (_dir, root) = tree(&with_meta(&[(
        "p/s/new.md",
        "---\ntitle: New\nsummary: S\nupdated: 2026-03-04\nredirect_from:\n  - p/s/old\n  - gone/x/y\n---\n# New\n",
    )]));
    let pages = root.page_summaries("p", "s").unwrap();
    assert_eq!(pages[0].updated.as_deref(), Some("2026-03-04"));
    let page = root.page("p", "s", "new").unwrap().unwrap();
    assert_eq!(
        page.parsed.frontmatter.redirect_from,
        [
            PagePath::new("p", "s", "old"),
            PagePath::new("gone", "x", "y")
        ]
    );
    let diags = root.check().unwrap();
    assert!(errors_in(&diags, "p/s/new.md").is_empty(), "{diags:?}");
    // The live tree finds the page an old path names, and nothing for any other.
    assert_eq!(
        root.redirect(&PagePath::new("gone", "x", "y")).unwrap(),
        Some(PagePath::new("p", "s", "new"))
    );
    assert_eq!(
        root.redirect(&PagePath::new("p", "s", "other")).unwrap(),
        None
    );
}

#[test]
fn an_updated_that_is_no_date_is_an_error_on_its_line() {
    for bad in ["yesterday", "2026-02-30", "2026-3-4", "[2026]", "20260304"] {
        let text = format!("---\ntitle: T\nsummary: S\nupdated: {bad}\n---\n");
        let (_dir, root) = tree(&with_meta(&[("p/s/a.md", &text)]));
        assert_eq!(root.page_summaries("p", "s").unwrap()[0].updated, None);
        let errors = errors_in(&root.check().unwrap(), "p/s/a.md");
        assert_eq!(errors.len(), 1, "{bad}: {errors:?}");
        assert_eq!(errors[0].0, 4, "{bad}");
        assert!(
            errors[0].1.starts_with("`updated` is") && errors[0].1.contains("YYYY-MM-DD"),
            "{errors:?}"
        );
    }
}

#[test]
fn an_old_path_that_is_a_page_is_an_error() {
    let (_dir, root) = tree(&with_meta(&[
        (
            "p/s/a.md",
            "---\ntitle: A\nsummary: S\nredirect_from:\n  - p/s/b\n---\n",
        ),
        ("p/s/b.md", "---\ntitle: B\nsummary: S\n---\n"),
    ]));
    let errors = errors_in(&root.check().unwrap(), "p/s/a.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, 5);
    assert!(
        errors[0].1.contains("`p/s/b` is an existing page"),
        "{errors:?}"
    );
}

#[test]
fn two_pages_claiming_one_old_path_are_both_errors_and_the_first_wins() {
    let (_dir, root) = tree(&with_meta(&[
        (
            "p/t/z.md",
            "---\ntitle: Z\nsummary: S\nredirect_from: [p/s/old]\n---\n",
        ),
        (
            "p/s/a.md",
            "---\ntitle: A\nsummary: S\nredirect_from:\n  - p/s/old\n---\n",
        ),
    ]));
    let diags = root.check().unwrap();
    for page in ["p/s/a.md", "p/t/z.md"] {
        let errors = errors_in(&diags, page);
        assert_eq!(errors.len(), 1, "{page}: {errors:?}");
        assert!(
            errors[0].1.contains(
                "`p/s/old` is claimed by 2 pages (p/s/a, p/t/z); `p/s/a` gets the redirect"
            ),
            "{errors:?}"
        );
    }
    assert_eq!(
        root.redirect(&PagePath::new("p", "s", "old")).unwrap(),
        Some(PagePath::new("p", "s", "a"))
    );
}

#[test]
fn malformed_old_paths_are_errors_on_their_lines_and_ignored() {
    let (_dir, root) = tree(&with_meta(&[(
        "p/s/a.md",
        "---\ntitle: A\nsummary: S\nredirect_from:\n  - p/s/ok\n  - /docs/p/s/x\n  - p/s\n  - p/_s/x\n  - 7\n---\n",
    )]));
    let page = root.page("p", "s", "a").unwrap().unwrap();
    assert_eq!(
        page.parsed.frontmatter.redirect_from,
        [PagePath::new("p", "s", "ok")]
    );
    let errors = errors_in(&root.check().unwrap(), "p/s/a.md");
    let lines: Vec<usize> = errors.iter().map(|e| e.0).collect();
    assert_eq!(lines, [6, 7, 8, 9], "{errors:?}");
    assert!(errors.iter().all(|e| e.1.starts_with("`redirect_from`")));
    assert!(
        errors[0].1.contains("`/docs/p/s/x` is not a page path"),
        "{errors:?}"
    );
    assert!(errors[2].1.contains("`_s` is not a valid id"), "{errors:?}");

    // Not a list at all.
    let (_dir, root) = tree(&with_meta(&[(
        "p/s/a.md",
        "---\ntitle: A\nsummary: S\nredirect_from: {p: s}\n---\n",
    )]));
    let errors = errors_in(&root.check().unwrap(), "p/s/a.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].1.contains("is not a list"), "{errors:?}");
}

#[test]
fn five_thousand_old_paths_are_one_clear_error_and_the_first_hundred_redirect() {
    // A flow list: 5,000 entries in block style are over the 64 KiB YAML limit (the whole
    // frontmatter then falls back, another finding).
    let entries: Vec<String> = (0..5000).map(|n| format!("o/s/p{n}")).collect();
    let text = format!(
        "---\ntitle: A\nsummary: S\nredirect_from: [{}]\n---\n# A\n",
        entries.join(", ")
    );
    let (_dir, root) = tree(&with_meta(&[("p/s/a.md", &text)]));
    let errors = errors_in(&root.check().unwrap(), "p/s/a.md");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, 4);
    assert_eq!(
        errors[0].1,
        format!(
            "`redirect_from` lists 5000 paths, over the limit of {MAX_REDIRECTS}; only the first {MAX_REDIRECTS} redirect"
        )
    );
    let last = MAX_REDIRECTS - 1;
    assert_eq!(
        root.redirect(&PagePath::new("o", "s", &format!("p{last}")))
            .unwrap(),
        Some(PagePath::new("p", "s", "a"))
    );
    assert_eq!(
        root.redirect(&PagePath::new("o", "s", &format!("p{MAX_REDIRECTS}")))
            .unwrap(),
        None
    );
}
