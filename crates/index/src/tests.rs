//! The index answers exactly what the live tree answers, and notices when it no longer can.

use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use super::*;
use dochub_content::Catalog;
use dochub_content::corpus::{COMMON_TERM, RARE_TERM, Spec, generate};
use dochub_search::MAX_RESULTS;

/// An answer of the index as the assertions look at it.
#[derive(Debug, PartialEq)]
enum Answer<T> {
    Fresh(T),
    Stale(String),
}

fn fresh<T>(answer: Result<T, CatalogError>) -> Answer<T> {
    match answer {
        Ok(value) => Answer::Fresh(value),
        Err(CatalogError::Stale(reason)) => Answer::Stale(reason),
        Err(e) => panic!("{e}"),
    }
}

/// What changed since the build, as [`Index::check`] says it; `None` when nothing did.
fn stale(checked: Result<(), CatalogError>) -> Option<String> {
    match fresh(checked) {
        Answer::Fresh(()) => None,
        Answer::Stale(reason) => Some(reason),
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn build(content: &Path) -> (ContentRoot, tempfile::TempDir, Index) {
    let root = ContentRoot::open(content).unwrap();
    let out = tempfile::tempdir().unwrap();
    write_index(&root, out.path()).unwrap();
    let index = Index::open(out.path()).unwrap();
    (root, out, index)
}

/// A generated tree plus pages that exercise the edges: a BOM, bytes that are not UTF-8,
/// characters whose lowercase is longer, an empty page, a page with no frontmatter.
fn generated() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        projects: 3,
        subprojects: 3,
        pages: 12,
        page_bytes: 1500,
    };
    generate(dir.path(), &spec).unwrap();
    let odd = dir.path().join("p01").join("odd");
    fs::create_dir_all(&odd).unwrap();
    fs::write(
        odd.join("bom.md"),
        "\u{feff}---\ntitle: Bom\n---\nÜBER die STRAßE İx\n",
    )
    .unwrap();
    fs::write(odd.join("latin1.md"), b"caf\xe9 au lait \xff\xfe end\n").unwrap();
    fs::write(odd.join("empty.md"), b"").unwrap();
    fs::write(
        odd.join("plain.md"),
        "no frontmatter, ΣΟΦΊΑ and 日本語\ttabs\r\nCRLF\n",
    )
    .unwrap();
    fs::write(odd.join("a-b.md"), "dash sorts before slash: quasar\n").unwrap();
    // `p01/odd-x` sorts between `p01/odd/...` and `p01/s..` by path, not by folder.
    let odd_x = dir.path().join("p01").join("odd-x");
    fs::create_dir_all(&odd_x).unwrap();
    fs::write(odd_x.join("z.md"), "SERVICE in capitals\n").unwrap();
    dir
}

/// Queries cut from the pages' own text (so most match somewhere), plus fixed ones.
fn queries(root: &ContentRoot) -> Vec<String> {
    let mut out: Vec<String> = [
        RARE_TERM,
        COMMON_TERM,
        "SERVICE",
        "the",
        "th",
        "e s",
        "zz",
        "qu",
        "über",
        "ÜBER",
        "straße",
        "STRASSE",
        "σοφία",
        "ΣΟΦΊΑ",
        "日本",
        "日本語",
        "i̇x",
        "éé",
        "café",
        "\u{fffd}\u{fffd}",
        "  quasar  ",
        "the service",
        "title:",
        "---",
        "nothing-matches-this",
        "a\tb",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut seed = 7u64;
    // Pages spread over the whole tree, at most about 40: each query also runs the live scan,
    // which reads every page (unoptimised in tests).
    let paths = root.all_page_paths().unwrap();
    let stride = paths.len().div_ceil(40).max(1);
    for (p, s, id) in paths.into_iter().step_by(stride) {
        let raw = root.raw(&p, &s, &id).unwrap().unwrap();
        let text = String::from_utf8_lossy(&raw).into_owned();
        let chars: Vec<char> = text.chars().collect();
        for _ in 0..3 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if chars.len() < 3 {
                break;
            }
            let len = 2 + (seed >> 33) as usize % 7;
            let start = (seed >> 13) as usize % chars.len().saturating_sub(len).max(1);
            let q: String = chars[start..(start + len).min(chars.len())]
                .iter()
                .collect();
            if q.trim().chars().count() >= 2 {
                out.push(q);
            }
        }
    }
    out
}

fn assert_same_answers(content: &Path) {
    let (root, _out, index) = build(content);
    let qs = queries(&root);
    assert!(qs.len() > 20);
    for q in qs {
        let live = root.search(&q).unwrap();
        match fresh(index.search(&root, &q)) {
            Answer::Fresh(indexed) => {
                assert_eq!(indexed, live, "query {q:?} in {}", content.display())
            }
            Answer::Stale(reason) => panic!("fresh index reported stale: {reason}"),
        }
    }
    for q in ["", "a", " é ", "  "] {
        assert!(
            matches!(index.search(&root, q), Err(CatalogError::Query(_))),
            "{q:?}"
        );
    }
}

#[test]
fn search_matches_the_live_scan_on_every_fixture_tree() {
    for tree in ["tests/fixtures/basic", "tests/fixtures/docs", "content"] {
        assert_same_answers(&repo().join(tree));
    }
}

#[test]
fn search_matches_the_live_scan_on_a_generated_tree() {
    let dir = generated();
    assert_same_answers(dir.path());
    // The fixed queries really exercise each path: common, rare, two bytes, non-ASCII.
    let (root, _out, index) = build(dir.path());
    let hits = |q: &str| match fresh(index.search(&root, q)) {
        Answer::Fresh(r) => r.results.len(),
        Answer::Stale(reason) => panic!("{reason}"),
    };
    assert_eq!(hits(COMMON_TERM), MAX_RESULTS);
    assert!((1..MAX_RESULTS).contains(&hits(RARE_TERM)));
    assert_eq!(hits("th"), MAX_RESULTS);
    assert!(hits("ΣΟΦΊΑ") > 0 && hits("über") > 0 && hits("i̇x") > 0);
}

#[test]
fn versions_of_a_page_are_spread_out_as_live() {
    // Four versions of 30 pages: 120 hits for a common word, 30 version groups.
    let dir = tempfile::tempdir().unwrap();
    for v in 1..=4 {
        for n in 0..30 {
            let path = dir.path().join(format!("docs/v{v}/page-{n:02}.md"));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            let extra = "store ".repeat(n % 5 + v);
            fs::write(
                path,
                format!("---\ntitle: Page {n}\n---\nKey value {extra}\n"),
            )
            .unwrap();
        }
    }
    let (root, _out, index) = build(dir.path());
    for q in ["value", "store", "value key", "page"] {
        let live = root.search(q).unwrap();
        assert_eq!(index.search(&root, q).unwrap(), live, "{q}");
        assert_eq!(live.results.len(), MAX_RESULTS);
        // The best version of each of the 30 pages first, then second versions.
        let ids: std::collections::HashSet<&str> = live.results[..30]
            .iter()
            .map(|h| h.path.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(ids.len(), 30, "{q}");
    }
}

#[test]
fn sections_of_hits_are_the_live_scans() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p/s/guide.md");
    fs::create_dir_all(page.parent().unwrap()).unwrap();
    fs::write(
        &page,
        "---\ntitle: Guide\nsummary: About zebras\n---\nIntro with apples.\n\n# Guide\n\n\
         ## Usage\n\nFirst mango.\n\n## Usage\n\nSecond kiwi.\n\n\
         ## Über Größe {#size}\n\nThird papaya.\n\n### `code` <b>bold</b>\n\nFourth lime.\n",
    )
    .unwrap();
    fs::write(dir.path().join("p/s/other.md"), "## Kiwi\n\nkiwi again\n").unwrap();
    let (root, _out, index) = build(dir.path());
    let section = |q: &str| {
        let live = root.search(q).unwrap();
        assert_eq!(index.search(&root, q).unwrap(), live, "{q}");
        let hit = live.results.iter().find(|h| h.path == "p/s/guide").unwrap();
        (hit.section.clone(), hit.anchor.clone())
    };
    let some = |s: &str, a: &str| (Some(s.to_owned()), Some(a.to_owned()));
    assert_eq!(section("apples"), (None, None));
    assert_eq!(section("zebras"), (None, None));
    assert_eq!(section("mango"), some("Usage", "usage"));
    assert_eq!(section("kiwi"), some("Usage", "usage-1"));
    assert_eq!(section("papaya"), some("Über Größe", "size"));
    assert_eq!(section("lime"), some("code bold", "code-bboldb"));
    assert_eq!(section("Größe"), some("Über Größe", "size"));
}

/// Words that share prefixes, fold alike, or are not letters, for generated pages and queries.
const VOCABULARY: &[&str] = &[
    "key",
    "keys",
    "value",
    "valuable",
    "store",
    "stored",
    "config",
    "configuration",
    "redis",
    "trigger",
    "triggers",
    "Über",
    "über",
    "STRASSE",
    "straße",
    "日本",
    "a",
    "x1",
    "--",
    "!!",
    "[key](value.md)",
    "`store`",
];

fn words(max: usize) -> impl proptest::strategy::Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(VOCABULARY), 0..max)
        .prop_map(|words| words.join(" "))
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// On any tree, the index answers any query with the live scan's results, order and
    /// excerpts: both rank with the same numbers.
    #[test]
    fn ranked_answers_agree_on_generated_trees(
        pages in proptest::collection::vec(
            (
                0..3usize,
                proptest::option::of(prop_oneof![words(4), Just("Key Value".to_owned())]),
                words(3),
                words(40),
                0..4usize,
            ),
            1..24,
        ),
        queries in proptest::collection::vec(words(4), 1..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        // The same ids in sibling folders, some with the same title: versions of one page.
        for (folder, title, heading, body, id) in &pages {
            let ids = ["intro", "key-value", "configuration", "quick-start"];
            let path = dir.path().join(format!("p/v{folder}/{}.md", ids[*id]));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            let front = title
                .as_ref()
                .map(|t| format!("---\ntitle: \"{t}\"\nsummary: \"{t} {heading}\"\n---\n"))
                .unwrap_or_default();
            fs::write(path, format!("{front}# {heading}\n\n{body}\n")).unwrap();
        }
        let (root, _out, index) = build(dir.path());
        for q in queries.iter().chain([&"key value".to_owned(), &"stor".to_owned()]) {
            match (root.search(q), index.search(&root, q)) {
                (Ok(live), Ok(indexed)) => prop_assert_eq!(indexed, live, "query {:?}", q),
                (Err(live @ CatalogError::Query(_)), Err(indexed @ CatalogError::Query(_))) => {
                    prop_assert_eq!(live.to_string(), indexed.to_string())
                }
                (live, indexed) => prop_assert!(false, "{q:?}: {live:?} vs {indexed:?}"),
            }
        }
    }
}

#[test]
fn navigation_matches_the_manifests() {
    for tree in ["tests/fixtures/basic", "tests/fixtures/docs", "content"] {
        let (root, _out, index) = build(&repo().join(tree));
        let master = root.master_manifest("2026-01-02T03:04:05.678Z").unwrap();
        assert_eq!(index.total_documents(), master.total_documents, "{tree}");
        assert_eq!(index.projects().len(), master.projects.len());
        for (ip, mp) in index.projects().iter().zip(&master.projects) {
            assert_eq!(
                (
                    &ip.id,
                    &ip.name,
                    &ip.description,
                    ip.subprojects.len(),
                    ip.doc_count
                ),
                (
                    &mp.id,
                    &mp.name,
                    &mp.description,
                    mp.subproject_count,
                    mp.doc_count
                )
            );
            let pm = root.project_manifest(&ip.id).unwrap().unwrap();
            for (is, ms) in ip.subprojects.iter().zip(&pm.subprojects) {
                assert_eq!(
                    (&is.id, &is.name, &is.description, is.doc_count),
                    (&ms.id, &ms.name, &ms.description, ms.doc_count)
                );
                let sm = root.subproject_manifest(&ip.id, &is.id).unwrap().unwrap();
                let Answer::Fresh(pages) = fresh(index.pages(is)) else {
                    panic!("stale")
                };
                let got: Vec<_> = pages
                    .iter()
                    .map(|p| (&p.id, &p.title, &p.summary))
                    .collect();
                let want: Vec<_> = sm
                    .documents
                    .iter()
                    .map(|d| (&d.id, &d.title, &d.summary))
                    .collect();
                assert_eq!(got, want, "{tree}/{}/{}", ip.id, is.id);
            }
        }
        for scope in [
            Scope::Outline,
            Scope::Everything,
            Scope::Project("alpha"),
            Scope::Subproject("alpha", "guide"),
        ] {
            assert_eq!(stale(index.check(&root, scope)), None, "{tree} {scope:?}");
        }
    }
}

fn set_mtime(path: &Path, t: SystemTime) {
    fs::File::open(path).unwrap().set_modified(t).unwrap();
}

#[test]
fn a_changed_tree_is_reported_stale() {
    let dir = generated();
    let (root, _out, index) = build(dir.path());
    let page = dir.path().join("p00/s01/page-0003.md");

    // An edit in place that keeps the size: no folder shows it. Search answers from the texts
    // it indexed until the next build; the page itself, read to be shown, is found changed.
    let built = fs::read(&page).unwrap();
    let mut bytes = built.clone();
    let at = bytes.windows(9).position(|w| w == b"# Page 3:").unwrap();
    bytes[at + 2] = b'X';
    fs::write(&page, &bytes).unwrap();
    let Answer::Fresh(found) = fresh(index.search(&root, "# Page 3:")) else {
        panic!("search reads no page file, so only folders can make it stale");
    };
    assert!(found.results.iter().any(|h| h.path == "p00/s01/page-0003"));
    let Answer::Fresh(pages) = fresh(index.pages(index.subproject("p00", "s01").unwrap())) else {
        panic!("stale page list");
    };
    let record = pages.iter().find(|p| p.id == "page-0003").unwrap();
    let path = "p00/s01/page-0003";
    let verify = |raw: Option<&Vec<u8>>| {
        stale(Index::verify(record.size, record.hash, path, raw.cloned()).map(drop))
    };
    assert_eq!(verify(Some(&built)), None);
    assert!(verify(Some(&bytes)).unwrap().contains("edited"));
    assert!(verify(None).unwrap().contains("removed"));

    // A new page changes its folder's listing and time.
    let (root, _out, index) = build(dir.path());
    fs::write(dir.path().join("p02/s00/new.md"), "fresh quasar text\n").unwrap();
    let Answer::Stale(reason) = fresh(index.search(&root, "quasar")) else {
        panic!("a new page went unnoticed");
    };
    assert!(reason.contains("p02/s00"), "{reason}");
    assert!(stale(index.check(&root, Scope::Subproject("p02", "s00"))).is_some());
    // Folders the answer does not depend on are not looked at.
    assert_eq!(
        stale(index.check(&root, Scope::Subproject("p01", "s00"))),
        None
    );

    // A removed subproject or project shows in its parent's listing.
    let (root, _out, index) = build(dir.path());
    fs::remove_dir_all(dir.path().join("p01/odd-x")).unwrap();
    assert!(
        stale(index.check(&root, Scope::Outline))
            .unwrap()
            .contains("p01")
    );
    let (_, _out, index) = build(dir.path());
    fs::create_dir_all(dir.path().join("p99/s00")).unwrap();
    // As each request does: a root keeps the time its folder had when it was opened.
    let root = ContentRoot::open(dir.path()).unwrap();
    assert!(
        stale(index.check(&root, Scope::Outline))
            .unwrap()
            .contains("content root")
    );
}

#[test]
fn a_ranked_answer_depends_on_every_folder() {
    let dir = generated();
    let (root, _out, index) = build(dir.path());
    let search = |q: &str| match fresh(index.search(&root, q)) {
        Answer::Fresh(r) => Ok(r),
        Answer::Stale(reason) => Err(reason),
    };
    let full = search(COMMON_TERM).unwrap();
    assert_eq!(full.results.len(), MAX_RESULTS);
    // A page in the last folder could outrank every hit: even a full answer is stale.
    fs::write(
        dir.path().join("p02/s02/late.md"),
        "---\ntitle: Service\n---\n# Service\n\nservice service\n",
    )
    .unwrap();
    let reason = search(COMMON_TERM).unwrap_err();
    assert!(reason.contains("p02/s02"), "{reason}");
    // The live scan ranks the new page first.
    assert_eq!(
        root.search(COMMON_TERM).unwrap().results[0].path,
        "p02/s02/late"
    );
}

#[test]
fn a_copied_tree_with_new_times_is_still_current() {
    // `spin up` copies mounted folders: same names and bytes, new modification times.
    let dir = generated();
    let (root, _out, index) = build(dir.path());
    let later = SystemTime::now() + Duration::from_secs(3600);
    for d in ["", "p00", "p00/s00", "p01", "p01/odd"] {
        set_mtime(&dir.path().join(d), later);
    }
    // Not copied (the build's own time is as written): a folder's new time means a change.
    assert!(stale(index.check(&root, Scope::Everything)).is_some());
    set_mtime(&_out.path().join(INDEX_DIR).join(GRAMS_FILE), later);
    let index = Index::open(_out.path()).unwrap();
    assert_eq!(stale(index.check(&root, Scope::Everything)), None);
    assert!(matches!(
        fresh(index.search(&root, RARE_TERM)),
        Answer::Fresh(_)
    ));
    // In a copy, a page added or removed before the copy still shows in the listing.
    fs::write(dir.path().join("p00/s00/late.md"), "late\n").unwrap();
    assert!(stale(index.check(&root, Scope::Subproject("p00", "s00"))).is_some());
}

/// A key-value store in memory that counts its reads and writes.
#[derive(Default)]
struct MapMemo {
    map: std::cell::RefCell<HashMap<String, Vec<u8>>>,
    loads: std::cell::Cell<usize>,
    saves: std::cell::Cell<usize>,
}

impl CheckMemo for MapMemo {
    fn load(&self, key: &str) -> Option<Vec<u8>> {
        self.loads.set(self.loads.get() + 1);
        self.map.borrow().get(key).cloned()
    }

    fn save(&self, key: &str, bytes: &[u8]) {
        self.saves.set(self.saves.get() + 1);
        self.map.borrow_mut().insert(key.to_owned(), bytes.to_vec());
    }
}

/// Copies a folder the way `spin up` does: every file, new times.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of a content tree and of its build, as one `spin up` makes them.
fn copied(content: &Path, build: &Path) -> (tempfile::TempDir, ContentRoot, PathBuf) {
    let copy = tempfile::tempdir().unwrap();
    copy_tree(content, &copy.path().join("content"));
    copy_tree(build, &copy.path().join("build"));
    let root = ContentRoot::open(copy.path().join("content")).unwrap();
    let build = copy.path().join("build");
    (copy, root, build)
}

fn with_memo(build: &Path, memo: &Rc<MapMemo>) -> Index {
    Index::open(build)
        .unwrap()
        .with_memo(Some(Memo(memo.clone())))
}

#[test]
fn a_build_is_a_known_copy_only_where_it_was_copied() {
    let dir = generated();
    let (_root, out, index) = build(dir.path());
    assert!(!index.known_copy());
    let (_copy, _root, build) = copied(dir.path(), out.path());
    assert!(Index::open(&build).unwrap().known_copy());
}

#[test]
fn a_copy_is_checked_once_and_remembered() {
    let dir = generated();
    let (_root, out, _index) = build(dir.path());
    let (copy, root, build) = copied(dir.path(), out.path());
    let memo = Rc::new(MapMemo::default());

    // The first answer in a copy compares every folder's listing and keeps what it found.
    let index = with_memo(&build, &memo);
    assert!(index.copied());
    assert_eq!(
        stale(index.check(&root, Scope::Subproject("p00", "s00"))),
        None
    );
    assert_eq!((memo.loads.get(), memo.saves.get()), (1, 1));
    let key = memo.map.borrow().keys().next().cloned().unwrap();
    assert!(key.contains(&format!("{:016x}", index.build_id())), "{key}");
    let Answer::Fresh(found) = fresh(index.search(&root, RARE_TERM)) else {
        panic!("a faithful copy is current");
    };
    assert_eq!(found, root.search(RARE_TERM).unwrap());

    // Later answers in the same copy read the memo and list nothing: a page added to the copy
    // (which `spin up` never does) is not seen, while without the memo it is.
    fs::write(copy.path().join("content/p02/s00/new.md"), "quasar\n").unwrap();
    let index = with_memo(&build, &memo);
    assert_eq!(stale(index.check(&root, Scope::Everything)), None);
    assert!(matches!(
        fresh(index.search(&root, "quasar")),
        Answer::Fresh(_)
    ));
    assert_eq!(memo.saves.get(), 1);
    let unremembered = Index::open(&build).unwrap();
    assert!(stale(unremembered.check(&root, Scope::Everything)).is_some());

    // A memo that does not decode is checked again and replaced.
    memo.map
        .borrow_mut()
        .insert(key.clone(), b"\xff\xff\xff".to_vec());
    let index = with_memo(&build, &memo);
    assert!(stale(index.check(&root, Scope::Everything)).is_some());
    assert_eq!(memo.saves.get(), 2);
}

#[test]
fn a_copy_of_a_changed_tree_remembers_what_changed() {
    let dir = generated();
    let (_root, out, _index) = build(dir.path());
    // Edited after the build, before the copy: `spin up` without `spin build`.
    fs::write(dir.path().join("p00/s01/new.md"), "a new quasar\n").unwrap();
    fs::write(dir.path().join("p02/s02/new.md"), "another\n").unwrap();
    let (_copy, root, build) = copied(dir.path(), out.path());
    let memo = Rc::new(MapMemo::default());

    let index = with_memo(&build, &memo);
    let reason = stale(index.check(&root, Scope::Everything)).unwrap();
    assert!(reason.contains("p00/s01"), "{reason}");
    // Remembered per folder: answers that depend on neither changed folder stay indexed.
    for (scope, changed) in [
        (Scope::Subproject("p00", "s01"), Some("p00/s01")),
        (Scope::Project("p02"), Some("p02/s02")),
        (Scope::Outline, None),
        (Scope::Subproject("p01", "s00"), None),
        (Scope::Through("p00/s00/page-0011"), None),
    ] {
        let index = with_memo(&build, &memo);
        let found = stale(index.check(&root, scope));
        match changed {
            Some(name) => assert!(found.unwrap().contains(&format!("`{name}`")), "{scope:?}"),
            None => assert_eq!(found, None, "{scope:?}"),
        }
    }
    assert_eq!(memo.saves.get(), 1);
    let index = with_memo(&build, &memo);
    assert!(matches!(
        fresh(index.search(&root, RARE_TERM)),
        Answer::Stale(_)
    ));
}

#[test]
fn a_build_that_was_not_copied_never_reads_the_memo() {
    let dir = generated();
    let (root, out, _index) = build(dir.path());
    let memo = Rc::new(MapMemo::default());
    let index = with_memo(out.path(), &memo);
    assert_eq!(stale(index.check(&root, Scope::Everything)), None);
    // Edited in place (`--direct-mounts`, or `dochub-host --direct-mounts`): seen at once.
    fs::write(dir.path().join("p01/s00/new.md"), "new\n").unwrap();
    let index = with_memo(out.path(), &memo);
    assert!(stale(index.check(&root, Scope::Everything)).is_some());
    assert_eq!((memo.loads.get(), memo.saves.get()), (0, 0));
}

#[test]
fn other_formats_and_mixed_builds_are_not_used() {
    let dir = generated();
    let root = ContentRoot::open(dir.path()).unwrap();
    let out = tempfile::tempdir().unwrap();
    assert!(matches!(
        Index::open(out.path()),
        Err(IndexError::PrebuiltMissing { .. })
    ));
    write_index(&root, out.path()).unwrap();
    let nav = out.path().join(INDEX_DIR).join(NAV_FILE);
    let bytes = fs::read(&nav).unwrap();
    assert_eq!(&bytes[..4], NAV_MAGIC);
    assert_eq!(bytes[4..8], FORMAT.to_le_bytes());
    let mut other_format = bytes.clone();
    other_format[4..8].copy_from_slice(&99u32.to_le_bytes());
    fs::write(&nav, &other_format).unwrap();
    assert!(matches!(
        Index::open(out.path()),
        Err(IndexError::Format {
            found: 99,
            expected: FORMAT
        })
    ));
    // An index written before the navigation file was binary says which format it is.
    fs::remove_file(&nav).unwrap();
    fs::write(
        nav.with_file_name(OLD_NAV_FILE),
        r#"{"format":2,"build_id":1}"#,
    )
    .unwrap();
    assert!(matches!(
        Index::open(out.path()),
        Err(IndexError::Format {
            found: 2,
            expected: FORMAT
        })
    ));
    fs::remove_file(nav.with_file_name(OLD_NAV_FILE)).unwrap();
    // Cut short, it is damaged.
    fs::write(&nav, &bytes[..bytes.len() - 3]).unwrap();
    assert!(matches!(
        Index::open(out.path()),
        Err(IndexError::Damaged { .. })
    ));
    // Files of another build (a rebuild half done) are stale, never mixed.
    fs::write(&nav, &bytes).unwrap();
    let other = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("p00/s00/extra.md"), "x quasar\n").unwrap();
    write_index(&ContentRoot::open(dir.path()).unwrap(), other.path()).unwrap();
    fs::copy(
        other.path().join(INDEX_DIR).join(GRAMS_FILE),
        out.path().join(INDEX_DIR).join(GRAMS_FILE),
    )
    .unwrap();
    fs::remove_file(dir.path().join("p00/s00/extra.md")).unwrap();
    let index = Index::open(out.path()).unwrap();
    // The folder's time changed but its listing is the built one, and the copied key table
    // makes the index compare listings: only the build id differs.
    let root = ContentRoot::open(dir.path()).unwrap();
    assert!(index.copied());
    assert_eq!(stale(index.check(&root, Scope::Everything)), None);
    assert!(
        matches!(fresh(index.search(&root, "quasar")), Answer::Stale(ref r) if r.contains("rebuilt"))
    );
}

#[test]
fn the_index_stays_near_the_size_of_the_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        projects: 2,
        subprojects: 5,
        pages: 30,
        page_bytes: 8000,
    };
    generate(dir.path(), &spec).unwrap();
    let root = ContentRoot::open(dir.path()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let summary = write_index(&root, out.path()).unwrap();
    assert_eq!(summary.pages, 300);
    // It holds each file and its plain text (compressed against it), each heading's place and
    // anchor, trigrams, word boundaries, inner words and terms: at 300 pages the key table's
    // cost per key shows (1.60x the corpus, most of it the 16,384 inner-word keys; the
    // generated pages are dense with headings, whose anchors cost about 0.1x); it must not
    // grow past this.
    assert!(
        summary.bytes < summary.corpus_bytes * 17 / 10,
        "{summary:?}"
    );
}

#[test]
fn a_phrase_of_three_common_words_is_looked_up_by_its_inner_word() {
    let keys = |text: &str| keys_of(fold(text).as_bytes());
    let query = query_keys(b"key value store");
    // A page holding the phrase, even inside longer words or in other case, holds every key
    // of the query.
    for text in [
        "A key value store.",
        "monkey value stores",
        "KEY VALUE STORE",
    ] {
        let held = keys(text);
        assert!(
            query.iter().all(|k| held.binary_search(k).is_ok()),
            "{text}"
        );
    }
    // Both pairs of words, but not the three together: the inner word's key is missing, so
    // the page is not a candidate.
    let apart = keys("The key value is set. A value store holds it.");
    assert!(query.iter().any(|k| apart.binary_search(k).is_err()));
    // The two pairs alone would have made it one.
    let pairs: Vec<u32> = [&b"key value"[..], b"value store"]
        .iter()
        .flat_map(|q| query_keys(q))
        .collect();
    assert!(pairs.iter().all(|k| apart.binary_search(k).is_ok()));
}
