//! Callouts in the content tree: `dochub check` findings at the page's own line numbers, and
//! search excerpts without callout markers.

use std::fs;

use dochub_content::{Catalog, ContentRoot, Severity};

fn temp_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, ContentRoot) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path);
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        fs::write(p, text).expect("write");
    }
    let root = ContentRoot::open(dir.path()).expect("open");
    (dir, root)
}

const PAGE: &str = "---\ntitle: Guide\nsummary: S\n---\n# Guide\n\n\
> [!WARNING]\n> Rotate the zebrafish token first.\n\n\
:::tip[Speed tip]\nBuild the quokka index once.\n:::\n\n\
:::foo\nUnknown.\n:::\n\n\
:::note\nnever closed\n";

#[test]
fn check_warns_about_directives_shown_as_text() {
    let (_d, root) = temp_tree(&[
        ("p/_project.yaml", "name: P\n"),
        ("p/s/_subproject.yaml", "name: S\n"),
        ("p/s/guide.md", PAGE),
    ]);
    let found: Vec<String> = root
        .check()
        .expect("check")
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "p/s/guide.md:14: warning: unknown callout kind `foo`, shown as text; use one of: \
             note, tip, important, info, warning, caution, danger",
            "p/s/guide.md:18: warning: callout `:::note` is never closed (a line of `:::` alone \
             closes it), shown as text",
        ]
    );
}

#[test]
fn search_excerpts_have_no_markers() {
    let (_d, root) = temp_tree(&[
        ("p/_project.yaml", "name: P\n"),
        ("p/s/_subproject.yaml", "name: S\n"),
        ("p/s/guide.md", PAGE),
    ]);
    for (query, expected) in [
        ("zebrafish", "Rotate the zebrafish token first."),
        ("quokka", "Speed tip Build the quokka index once."),
    ] {
        let hits = root.search(query).expect("search");
        let excerpt = &hits.results[0].excerpt;
        assert!(excerpt.contains(expected), "{query}: {excerpt}");
        assert!(
            !excerpt.contains("[!") && !excerpt.contains(":::tip"),
            "{excerpt}"
        );
    }
}
