//! `dochub build` and `dochub check` as a user runs them (the online commands are tested
//! against the running app in `tests/tests/cli.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dochub(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dochub"))
        .args(args)
        .output()
        .unwrap()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/basic")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn build_writes_every_manifest() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("build");
    let o = dochub(&[Path::new("build"), &fixture(), &dir]);
    assert!(o.status.success(), "{o:?}");
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap_or(""),
        format!(
            "wrote 3 project and 3 subproject manifests (9 documents) to {}",
            dir.display()
        )
    );
    assert_eq!(
        lines.next().unwrap_or(""),
        "wrote llms-full.txt: 9 pages, 0.0 MB"
    );
    let index_line = lines.next().unwrap_or("");
    assert!(
        index_line.starts_with("indexed 9 pages (") && index_line.contains(" s"),
        "{index_line}"
    );
    for file in [
        "nav.bin",
        "grams.bin",
        "postings.bin",
        "pages.bin",
        "sub/0.bin",
    ] {
        assert!(dir.join("index").join(file).is_file(), "{file}");
    }
    let master: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(master["total_documents"], 9);
    assert_eq!(master["projects"][0]["id"], "alpha");
    let mut files: Vec<String> = Vec::new();
    for entry in walk(&dir.join("manifest")) {
        files.push(
            entry
                .strip_prefix(&dir)
                .unwrap()
                .to_string_lossy()
                .into_owned(),
        );
    }
    files.sort();
    assert_eq!(
        files,
        [
            "manifest/alpha.json",
            "manifest/alpha/guide.json",
            "manifest/alpha/reference.json",
            "manifest/beta.json",
            "manifest/beta/tools.json",
            "manifest/empty-project.json",
        ]
    );
    let guide: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("manifest/alpha/guide.json")).unwrap()).unwrap();
    assert_eq!(guide["documents"].as_array().unwrap().len(), 7);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A code block that loops its grammar (found in the Cargo book) is shown plain, and the build
/// names its page rather than hanging or passing over it in silence.
#[test]
fn build_names_pages_whose_code_could_not_be_highlighted() {
    let content = tempfile::tempdir().unwrap();
    let guide = content.path().join("tool/guide");
    fs::create_dir_all(&guide).unwrap();
    fs::write(
        guide.join("loops.md"),
        "# Loops\n\n```js\n /*\n */\n \"k\": true\n /* `-`\n```\n",
    )
    .unwrap();
    fs::write(guide.join("fine.md"), "# Fine\n\n```js\nlet x = 1;\n```\n").unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = dochub(&[Path::new("build"), content.path(), out.path()]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "warning: tool/guide/loops: a code block took too long to highlight and is shown plain"
    );
    assert!(stdout(&o).contains("indexed 2 pages"), "{o:?}");
}

#[test]
fn build_of_a_missing_root_fails_clearly() {
    let out = tempfile::tempdir().unwrap();
    let o = dochub(&[Path::new("build"), Path::new("no/such/content"), out.path()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "error: content root `no/such/content` does not exist (check CONTENT_DIR and the files mount)"
    );
    assert!(!out.path().join("manifest.json").exists());
}

#[test]
fn check_fails_on_errors_and_names_files() {
    let o = dochub(&[Path::new("check"), &fixture()]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    // `file:line: level: message`, the YAML error on the line the parser stopped at.
    for line in [
        "alpha/guide/broken-yaml.md:3: error: invalid YAML in frontmatter",
        "alpha/reference/_subproject.yaml:2: error: invalid YAML",
        "alpha/guide/empty.md:1: error: missing title",
        "alpha/guide/no-frontmatter.md:1: error: missing frontmatter",
        "README.md: error: page is unreachable: pages live in <project>/<subproject>/<page>.md, not at the content root",
        "_private/secret.md: error: page is unreachable: names starting with `_`",
        "alpha/guide/_draft.md: error: page is unreachable: names starting with `_`",
        "alpha/guide/deep/nested/page.md: error: page is unreachable: pages nested below",
        "alpha/guide/latin1.md:1: warning: not valid UTF-8",
        "beta/tools: warning: no _subproject.yaml",
        "_overviews: warning: no _overviews/ folder: the 3 registered overview(s) (architecture, content-pipeline, auth-deployment) answer 404",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "{line} in {text}"
        );
    }
    // Hidden files (`.hidden.md`, `.cache/`) are nobody's pages.
    assert!(
        !text.contains(".hidden") && !text.contains(".cache"),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("9 error(s), 9 warning(s)"),
        "{text}"
    );
}

#[test]
fn check_passes_clean_content_and_strict_counts_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, s: &str| {
        let p = dir.path().join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    };
    write("p/_project.yaml", "name: P\n");
    write("p/s/_subproject.yaml", "name: S\n");
    write(
        "p/s/a.md",
        "---\ntitle: A\nreferences:\n  - target: p/s\n---\n",
    );
    for overview in ["architecture", "content-pipeline", "auth-deployment"] {
        write(&format!("_overviews/{overview}.html"), "<!doctype html>\n");
    }
    let o = dochub(&[Path::new("check"), dir.path()]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o).trim(), "0 error(s), 0 warning(s)");
    // A title from the heading is served, but worth a warning.
    write("p/s/b.md", "---\nsummary: B\n---\n# Heading only\n");
    let o = dochub(&[Path::new("check"), dir.path()]);
    assert!(o.status.success());
    let o = dochub(&[Path::new("check"), Path::new("--strict"), dir.path()]);
    assert_eq!(o.status.code(), Some(1));
    write(
        "p/s/c.md",
        "---\ntitle: C\nreferences:\n  - target: p/gone\n---\n",
    );
    let o = dochub(&[Path::new("check"), dir.path()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("p/s/c.md:4: error: reference target `p/gone` does not exist"),
        "{}",
        stdout(&o)
    );
    // A page without frontmatter, and pages no route reaches.
    write("p/s/d.md", "# D\n");
    write("p/loose.md", "---\ntitle: L\n---\n");
    write("p/s/deeper/e.md", "---\ntitle: E\n---\n");
    let o = dochub(&[Path::new("check"), dir.path()]);
    let text = stdout(&o);
    assert!(
        text.contains("p/s/d.md:1: error: missing frontmatter"),
        "{text}"
    );
    assert!(text.contains("p/loose.md: error: page is unreachable: pages live in <project>/<subproject>/, not directly in a project folder"), "{text}");
    assert!(
        text.contains("p/s/deeper/e.md: error: page is unreachable: pages nested below"),
        "{text}"
    );
}

#[test]
fn check_reports_overviews_the_registry_does_not_match() {
    let dir = tempfile::tempdir().unwrap();
    let overviews = dir.path().join("_overviews");
    fs::create_dir_all(&overviews).unwrap();
    for name in ["architecture.html", "content-pipeline.html", "stray.html"] {
        fs::write(overviews.join(name), "<!doctype html>").unwrap();
    }
    let o = dochub(&[Path::new("check"), dir.path()]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("_overviews/auth-deployment.html: error: overview `auth-deployment` (Authentication & Deployment) is registered but this file is missing"),
        "{text}"
    );
    assert!(
        text.contains("_overviews/stray.html:1: error: has no entry in the overview registry"),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("2 error(s), 0 warning(s)"),
        "{text}"
    );
}

#[test]
fn bundled_content_checks_clean_and_builds() {
    let content = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../content");
    let o = dochub(&[Path::new("check"), Path::new("--strict"), &content]);
    assert!(o.status.success(), "{}", stdout(&o));
    let out = tempfile::tempdir().unwrap();
    let o = dochub(&[Path::new("build"), &content, out.path()]);
    assert!(o.status.success(), "{o:?}");
    let master: serde_json::Value =
        serde_json::from_slice(&fs::read(out.path().join("manifest.json")).unwrap()).unwrap();
    assert_eq!(master["projects"][0]["id"], "dochub");
    assert!(master["total_documents"].as_u64().unwrap() >= 10);
}
