//! The build against the `basic` fixture tree: what `dochub build` writes is what the live
//! tree answers.

use std::fs;
use std::path::Path;

use dochub_content::{ContentRoot, to_json};
use dochub_index::IndexError;
use dochub_index::build::{Prebuilt, write_build};

fn basic() -> ContentRoot {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/basic");
    ContentRoot::open(path).unwrap()
}

/// A generation time as the app stamps it.
const T0: &str = "2026-01-02T03:04:05.678Z";

#[test]
fn prebuilt_matches_live() {
    let root = basic();
    let out = tempfile::tempdir().unwrap();
    // A stale manifest from an earlier build must disappear.
    fs::create_dir_all(out.path().join("manifest/gone")).unwrap();
    fs::write(out.path().join("manifest/gone.json"), b"{}").unwrap();
    fs::write(out.path().join("manifest/gone/sub.json"), b"{}").unwrap();
    fs::create_dir_all(out.path().join("manifest/alpha")).unwrap();
    fs::write(out.path().join("manifest/alpha/old.json"), b"{}").unwrap();
    fs::write(out.path().join("keep.txt"), b"not ours").unwrap();
    let summary = write_build(&root, out.path(), T0).unwrap();
    assert_eq!(
        (summary.projects, summary.subprojects, summary.documents),
        (3, 3, 9)
    );
    assert!(!out.path().join("manifest/gone.json").exists());
    assert!(!out.path().join("manifest/gone").exists());
    assert!(out.path().join("keep.txt").exists());
    assert!(!out.path().join("manifest/alpha/old.json").exists());
    assert!(out.path().join("manifest/alpha/guide.json").exists());
    // Building again over a complete build is the same build.
    write_build(&root, out.path(), T0).unwrap();
    let pre = Prebuilt::open(out.path()).unwrap();
    assert_eq!(
        pre.master_manifest().unwrap(),
        to_json(&root.master_manifest(T0).unwrap()).unwrap()
    );
    for p in ["alpha", "beta", "empty-project"] {
        assert_eq!(
            pre.project_manifest(p).unwrap().unwrap(),
            to_json(&root.project_manifest(p).unwrap().unwrap()).unwrap()
        );
    }
    for (p, s) in [
        ("alpha", "guide"),
        ("alpha", "reference"),
        ("beta", "tools"),
    ] {
        assert_eq!(
            pre.subproject_manifest(p, s).unwrap().unwrap(),
            to_json(&root.subproject_manifest(p, s).unwrap().unwrap()).unwrap()
        );
    }
    assert!(pre.project_manifest("nope").unwrap().is_none());
    assert!(pre.project_manifest("..").unwrap().is_none());
    assert!(
        pre.subproject_manifest("alpha", "../alpha")
            .unwrap()
            .is_none()
    );
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        Prebuilt::open(empty.path()),
        Err(IndexError::PrebuiltMissing { .. })
    ));
}
