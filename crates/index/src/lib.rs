//! The prebuilt build: `dochub build` writes it ([`build::write_build`]: the manifests, the
//! search and navigation index, `llms-full.txt`), and the components read it one request at
//! a time as a [`dochub_content::Catalog`] ([`IndexCatalog`]), through [`Source::read`],
//! which falls back to the live tree when the build no longer describes it.
//!
//! The index itself is written into `build/index/` beside the manifests.
//!
//! A WASIp2 component lives for one request, and a WASIp3 instance may end after any of
//! its requests, so nothing here loads the whole index: a query
//! reads a small header, one block of the key table per trigram, the posting lists it needs,
//! and then only the candidate pages' records and texts.
//!
//! ```text
//! build/index/nav.bin       format, build id, every project and subproject (names, counts,
//!                           each folder's modification time and listing fingerprint)
//! build/index/sub/<n>.bin   subproject n's pages: id, title, summary, number, size, hash
//! build/index/grams.bin     sorted table: key (a byte trigram, or an ASCII bigram, of the
//!                           case-folded text) -> offset and length of its posting list,
//!                           with a sparse index of each 256-entry block's first key
//! build/index/postings.bin  posting lists: page numbers (path order), delta-varint or bitmap
//! build/index/pages.bin     where page n's entry starts, then the entries: subproject
//!                           number, id, title, the page's whole file and (apart) its plain
//!                           text and summary, compressed (LZ4), with the hashes of those bytes
//! build/index/code.bin      page n's fenced code blocks, highlighted (with the `highlight`
//!                           feature, which `dochub build` has; empty entries without it)
//! ```
//!
//! Search is `dochub_search`'s, with the index as its backend (the live tree is the other):
//! the same algorithm ranks both, so results, order and excerpts are the same. What the index
//! gives it stays exact: a page can contain the folded query only if it contains every
//! trigram of it, so the intersection of the trigrams' lists is a superset of the answer,
//! and each candidate is then matched with the same [`dochub_search::RankedQuery::in_tier`]
//! as the live scan. A two-byte query (two ASCII characters) is answered from its bigram's
//! list. What a query costs: the key table's header, one 4 KiB block and one posting list
//! per key; the term table's blocks and the impacts of the query's terms, which score every
//! candidate; then the best candidates from the page table, a run at a time, best first,
//! until the answer holds [`dochub_search::MAX_RESULTS`] hits: where each entry starts in
//! one round of reads, the entries themselves (one read each) in a second. A candidate that
//! is not a hit unpacks only its file. No page file is opened: in a Spin component each open
//! is a round trip to the host's thread pool, while the reads of a round are in flight
//! together (see [`dochub_content::fsio`]).
//!
//! **Never stale in silence.** Every answer compares the modification times of the
//! folders it depends on with the build's record (a `stat` each: adding, removing or renaming a
//! page, or saving it the way most editors do, through a new file renamed over the old one,
//! changes its folder's time), and the docs site checks the page file it renders against its
//! recorded size and hash. A search depends on every folder (any page may outrank the
//! answer's). Any difference is reported as
//! [`CatalogError::Stale`]; the caller then answers from the live tree and logs why
//! ([`Source::read`]). What no folder
//! time shows, a page rewritten in place, search sees after the next build (`spin build`, or
//! the host's `--build`); the page itself is shown as it is now.
//!
//! When the build folder itself was copied (`spin up` copies mounted folders unless given
//! `--direct-mounts`; a deployed app is a copy too), every time differs though nothing changed
//! after the copy: the index notices this from its own key table's time, which the build
//! records, and compares each folder's listing instead of its time (one `open` and one
//! `read-directory` a folder, see [`dochub_content::fsio::list_dir`]). A copy does not change while
//! the app runs (Spin v4.0.2's loader copies every mounted file into a fresh folder at start,
//! `crates/loader/src/local.rs`), so with a [`CheckMemo`] the listings are compared once per
//! copy, every folder at once, and the folders found changed are kept (the components keep
//! them in the key-value store, under a key naming the build and the copy's own key table
//! time). Later answers in that copy then cost two `stat`s, not one listing per folder.

pub mod build;
mod catalog;
mod code;
mod error;
mod format;
mod full;
mod git;
#[cfg(feature = "spin")]
mod kv;
mod search;

pub use catalog::{IndexCatalog, Source};
pub use error::IndexError;
pub use full::{FullSummary, PREBUILT_FULL, PREBUILT_RECORD, write_prebuilt_full};

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use dochub_content::fsio::{Kind, list, mtime_ns, read_file};
use dochub_content::{
    CatalogError, ContentError, ContentRoot, PagePath, Project, REPORTS_DIR, SubprojectSummary,
    page_analysis, page_text, parse_page, reading_order,
};
use dochub_search::{CorpusStats, FieldCounts, RankedQuery, SearchResults, Within, fold};

use format::{Grams, GramsWriter, PagesWriter, Postings, TermsWriter, encode_postings};
use search::IndexSearch;

/// Folder of the index inside the build directory.
pub const INDEX_DIR: &str = "index";
/// The index format this code reads and writes; any other is treated as stale.
pub const FORMAT: u32 = 10;

const NAV_FILE: &str = "nav.bin";
/// Where format 2 and earlier kept the navigation file (JSON, with a `format` field).
const OLD_NAV_FILE: &str = "nav.json";
/// `nav.bin` and `sub/<n>.bin` start with these four bytes and the format, little-endian;
/// the rest is postcard (serde's compact binary form), several times as fast to read as JSON.
const NAV_MAGIC: &[u8; 4] = b"DHN1";
const SUB_DIR: &str = "sub";
const GRAMS_FILE: &str = "grams.bin";
const POSTINGS_FILE: &str = "postings.bin";
const PAGES_FILE: &str = "pages.bin";
const CODE_FILE: &str = "code.bin";
const TERMS_FILE: &str = "terms.bin";
const IMPACTS_FILE: &str = "impacts.bin";
const REDIRECTS_FILE: &str = "redirects.bin";

/// What the build recorded about one folder of the content tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirRecord {
    /// Modification time in nanoseconds since 1970 (0 when the platform gives none).
    pub mtime_ns: u64,
    /// Hash of the folder's listing: the names of the projects, subprojects or pages in it.
    pub listing: u64,
}

/// A project as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedProject {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Number of pages across its subprojects.
    pub doc_count: usize,
    /// `order` from `_project.yaml`.
    pub order: Option<i64>,
    /// `versions` from `_project.yaml`, as the tree reads it.
    pub versions: Vec<String>,
    /// Its subprojects, in reading order.
    pub subprojects: Vec<IndexedSubproject>,
    /// The project folder.
    pub dir: DirRecord,
}

/// A subproject as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedSubproject {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Number of pages.
    pub doc_count: usize,
    /// Its number in the index (the name of its `sub/<n>.bin`).
    pub number: u32,
    /// The numbers of its pages, `start..end`: a subproject's paths share a prefix, so its
    /// pages are neighbours in path order (what search leaves out by `version=`).
    pub pages: (u32, u32),
    /// The subproject folder.
    pub dir: DirRecord,
}

/// A page as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedPage {
    /// File name without `.md`.
    pub id: String,
    /// Title, with fallbacks.
    pub title: String,
    /// Summary or `""`.
    pub summary: String,
    /// Its number in path order.
    pub number: u32,
    /// File size in bytes.
    pub size: u64,
    /// Hash of the file's bytes.
    pub hash: u64,
    /// Whether its frontmatter says `llms: optional` (for `/llms.txt`).
    #[serde(default)]
    pub optional: bool,
    /// Its frontmatter's `order`: a subproject's pages are kept in
    /// [`dochub_content::reading_order`].
    pub order: Option<i64>,
    /// When it last changed, `YYYY-MM-DD`: its frontmatter's `updated`, else the date of the
    /// last git commit that touched its file when the build ran in a git work tree.
    pub updated: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct NavFile {
    build_id: u64,
    /// Modification time of `grams.bin` as written: a different one means the build was copied.
    stamp_ns: u64,
    pages: u32,
    root: DirRecord,
    projects: Vec<IndexedProject>,
}

/// `redirects.bin`: every old path a page's `redirect_from` lists that is no page, with the
/// page it leads to (the first in path order that claims it), sorted by old path.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RedirectsFile {
    build_id: u64,
    redirects: Vec<(String, PagePath)>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SubFile {
    build_id: u64,
    pages: Vec<IndexedPage>,
}

/// Which folders an answer depends on, for [`Index::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// The list of projects and of their subprojects (the docs sidebar).
    Outline,
    /// The outline and the page counts of one project's subprojects.
    Project(&'a str),
    /// The outline and one subproject's pages.
    Subproject(&'a str, &'a str),
    /// The outline and every subproject that may hold a page whose path
    /// (`<project>/<subproject>/<page>`) sorts at or before this one: what a search answer
    /// that ends at this path depends on.
    Through(&'a str),
    /// Every folder (search, the master manifest, the home page's counts).
    Everything,
}

/// What [`write_index`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSummary {
    /// Pages indexed.
    pub pages: usize,
    /// Distinct keys (trigrams and bigrams) in the key table.
    pub keys: usize,
    /// Distinct terms in the term table.
    pub terms: usize,
    /// Bytes of the index on disk.
    pub bytes: u64,
    /// Bytes of the page files indexed.
    pub corpus_bytes: u64,
    /// Pages (`<project>/<subproject>/<page>`) with a code block that its grammar could not
    /// highlight in time: the block is shown plain.
    pub plain_code: Vec<String>,
}

/// Where the check of a copied build is kept from one request to the next (a WASIp2
/// component lives for one request, and a WASIp3 instance for as long as Spin keeps it). Keys name the build and the copy; a value is never rewritten
/// differently under the same key, so concurrent writers agree and no compare-and-swap is
/// needed. Failures are the implementation's to swallow: the next request checks again.
pub trait CheckMemo {
    /// The bytes saved under `key`, if any.
    fn load(&self, key: &str) -> Option<Vec<u8>>;
    /// Saves `bytes` under `key`.
    fn save(&self, key: &str, bytes: &[u8]);
}

/// A shared [`CheckMemo`], as the configurations hold it.
#[derive(Clone)]
pub struct Memo(pub std::rc::Rc<dyn CheckMemo>);

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

/// An opened index: the navigation file read, the rest read on demand.
#[derive(Debug, Clone)]
pub struct Index {
    dir: PathBuf,
    nav: NavFile,
    /// `(project, subproject)` by subproject number.
    subs: Vec<(String, String)>,
    /// The key table's modification time here: another than the build's record means the
    /// build (and so the content) was copied since it was written; folder times then say
    /// nothing, and listings are compared instead (see [`Index::copied`]).
    stamp_here: std::cell::OnceCell<u64>,
    memo: Option<Memo>,
}

/// What one request has found of the folders so far, so that each is checked once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checked {
    /// Whether the root folder's time is the build's (`None`: not looked at yet).
    root_as_built: Option<bool>,
    /// In a copied build with a memo, the folders that differ from the build.
    remembered: Option<Option<Vec<String>>>,
    /// Folders found unchanged.
    unchanged: std::collections::HashSet<String>,
}

/// One folder an answer depends on, with what the build recorded about it.
struct Folder<'a> {
    path: PathBuf,
    level: usize,
    record: &'a DirRecord,
    /// `""` for the root, else `<project>` or `<project>/<subproject>`.
    name: String,
}

fn rebuilding() -> CatalogError {
    CatalogError::Stale("the index is being rebuilt".into())
}

fn changed_since_build(name: &str) -> String {
    let what = if name.is_empty() {
        "the content root"
    } else {
        name
    };
    format!("`{what}` changed since the index was built (rebuild with `dochub build`)")
}

/// A navigation or subproject file's bytes: [`NAV_MAGIC`], [`FORMAT`], then postcard.
fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, IndexError> {
    let mut out = NAV_MAGIC.to_vec();
    out.extend_from_slice(&FORMAT.to_le_bytes());
    postcard::to_extend(value, out).map_err(|e| IndexError::Encode(e.to_string()))
}

/// Reads what [`encode`] wrote: another format is [`IndexError::Format`], bytes that
/// do not decode are [`IndexError::Damaged`].
fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8], path: &Path) -> Result<T, IndexError> {
    let damaged = || IndexError::Damaged {
        path: path.to_path_buf(),
    };
    let (head, body) = bytes.split_at_checked(8).ok_or_else(damaged)?;
    if &head[..4] != NAV_MAGIC {
        return Err(damaged());
    }
    let found = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    if found != FORMAT {
        return Err(IndexError::Format {
            found,
            expected: FORMAT,
        });
    }
    match postcard::take_from_bytes(body) {
        Ok((value, [])) => Ok(value),
        _ => Err(damaged()),
    }
}

/// The hash recorded for page files and listings.
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// The listing of a folder as the index records it: projects under the root, subprojects
/// under a project, page ids under a subproject.
fn listing(dir: &Path, level: usize) -> Result<u64, IndexError> {
    let mut names = match level {
        0 => list(dir, Kind::Dir)?,
        1 => list(dir, Kind::Dir)?,
        _ => list(dir, Kind::Page)?,
    };
    if level == 0 {
        names.retain(|n| n != REPORTS_DIR);
    }
    Ok(hash(names.join("\n").as_bytes()))
}

fn dir_record(dir: &Path, level: usize) -> Result<DirRecord, IndexError> {
    Ok(DirRecord {
        mtime_ns: mtime_ns(dir),
        listing: listing(dir, level)?,
    })
}

/// The keys a text is indexed under: every byte trigram of the folded text, every pair of
/// ASCII bytes (for two-character queries), and every word boundary ([`boundary_keys`]).
/// Sorted, without duplicates.
fn keys_of(folded: &[u8]) -> Vec<u32> {
    let mut keys = Vec::with_capacity(folded.len() * 2);
    for w in folded.windows(3) {
        keys.push(format::trigram(w[0], w[1], w[2]));
    }
    for w in folded.windows(2) {
        if w[0].is_ascii() && w[1].is_ascii() {
            keys.push(format::bigram(w[0], w[1]));
        }
    }
    keys.extend(boundary_keys(folded));
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A byte of a word: an ASCII letter or digit, or part of a character beyond ASCII.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80
}

/// Longest run of separators a boundary key spans.
const MAX_SEPARATOR: usize = 3;

/// Longest word an inner-word key spans.
const MAX_INNER_WORD: usize = 16;

/// The keys of the word boundaries of a folded text:
/// - each short run of separators (ASCII, not letters or digits) with the two bytes of word
///   before and after it (`ey va` in `key value`), and the same with three bytes (`key val`),
///   hashed;
/// - each word of up to [`MAX_INNER_WORD`] bytes between two short runs, with the two bytes of
///   word beyond each run (`ey value st` in `key value store`), hashed into one of
///   [`format::INNER_BUCKETS`] keys.
///
/// A phrase of common words has common trigrams, but its boundaries are as rare as the
/// phrase: a page holding `key value store` holds `ey va`, `ue st` and `ey value st`. The
/// inner-word key matters from three words on, where each pair of words is common but the
/// three together are not. A page of 8 KB holds about a thousand of them, so they share
/// 16,384 keys: a page holds about 6 % of them, and a false candidate is matched and dropped
/// (a key for each inner word tripled the index of 300 pages; 4,096 keys let a fifth of the
/// pages through). A query's keys are the text's wherever it matches (each run, and a word
/// between two runs, is whole in both: word bytes close it on either side), so they narrow
/// candidates without losing any.
fn boundary_keys(folded: &[u8]) -> Vec<u32> {
    let mut keys = Vec::new();
    let word_bytes = |range: std::ops::Range<usize>| {
        folded
            .get(range)
            .is_some_and(|b| b.iter().copied().all(is_word_byte))
    };
    // The run of separators before the current one, when it was short.
    let mut previous: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < folded.len() {
        if is_word_byte(folded[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < folded.len() && !is_word_byte(folded[i]) {
            i += 1;
        }
        if i - start > MAX_SEPARATOR {
            previous = None;
            continue;
        }
        // Two bytes either side, and three where there are (far rarer in a small vocabulary).
        for side in [2, 3] {
            if start >= side && word_bytes(start - side..start) && word_bytes(i..i + side) {
                keys.push(format::boundary(hash(&folded[start - side..i + side])));
            }
        }
        if let Some((before_start, before_end)) = previous
            && start - before_end <= MAX_INNER_WORD
            && before_start >= 2
            && word_bytes(before_start - 2..before_start)
            && word_bytes(i..i + 2)
        {
            keys.push(format::inner(hash(&folded[before_start - 2..i + 2])));
        }
        previous = Some((start, i));
    }
    keys
}

/// Most keys one text of a query is looked up by: any of a text's keys narrow its candidates
/// to a superset of its matches (each candidate is matched after), so a long query (a pasted
/// paragraph) costs no more than a short one.
const MAX_QUERY_KEYS: usize = 24;

/// The keys a folded query needs: its bigram when it is two bytes, else its trigrams, at most
/// [`MAX_QUERY_KEYS`] of them (every n-th in key order), and its word boundaries.
fn query_keys(folded: &[u8]) -> Vec<u32> {
    if folded.len() == 2 {
        return vec![format::bigram(folded[0], folded[1])];
    }
    let mut keys: Vec<u32> = folded
        .windows(3)
        .map(|w| format::trigram(w[0], w[1], w[2]))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // Boundaries narrow the most: all of them (up to half the keys), then trigrams.
    let mut boundaries = boundary_keys(folded);
    boundaries.sort_unstable();
    boundaries.dedup();
    boundaries.truncate(MAX_QUERY_KEYS / 2);
    let room = MAX_QUERY_KEYS - boundaries.len();
    if keys.len() > room {
        let step = keys.len().div_ceil(room);
        keys = keys.into_iter().step_by(step).collect();
    }
    keys.extend(boundaries);
    keys
}

/// Writes `path` through a temporary file and a rename, so a reader never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    fs::write(&tmp, bytes).map_err(|e| IndexError::io(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| IndexError::io(path, e))
}

/// Builds the index of `root` into `<out>/index/`. Files are replaced by rename, the
/// navigation file last; every file carries the build's id, so a reader that meets files of
/// two different builds treats the index as stale rather than mixing them.
pub fn write_index(root: &ContentRoot, out: &Path) -> Result<IndexSummary, IndexError> {
    let dir = out.join(INDEX_DIR);
    let sub_dir = dir.join(SUB_DIR);
    fs::create_dir_all(&sub_dir).map_err(|e| IndexError::io(&sub_dir, e))?;

    let (mut projects, numbers) = number_folders(root)?;
    let PageScan {
        count,
        postings,
        pages,
        sub_pages,
        page_hashes: mut build_hasher,
        corpus_bytes,
        terms,
        lengths,
        stats,
        code,
        redirects,
        plain_code,
    } = scan_pages(root, &numbers)?;
    for s in projects.iter_mut().flat_map(|p| &mut p.subprojects) {
        let numbers = sub_pages.get(s.number as usize).into_iter().flatten();
        let (start, end) = numbers.fold((u32::MAX, 0), |(start, end), page| {
            (start.min(page.number), end.max(page.number + 1))
        });
        s.pages = if start < end { (start, end) } else { (0, 0) };
    }
    build_hasher.extend_from_slice(&serde_json::to_vec(&projects)?);
    let build_id = hash(&build_hasher);

    let mut keys: Vec<u32> = postings.keys().copied().collect();
    keys.sort_unstable();
    let mut grams = GramsWriter::default();
    let mut lists = Vec::new();
    for key in &keys {
        let start = lists.len() as u64;
        encode_postings(&postings[key], count, &mut lists);
        grams.push(*key, start, (lists.len() as u64 - start) as u32);
    }
    drop(postings);

    let mut term_list: Vec<(String, Vec<(u32, FieldCounts)>)> = terms.into_iter().collect();
    term_list.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut term_table = TermsWriter::default();
    for (term, pages) in &term_list {
        let impacts: Vec<(u32, u16)> = pages
            .iter()
            .map(|(page, counts)| (*page, stats.impact(counts, &lengths[*page as usize])))
            .collect();
        term_table.push(term, &impacts);
    }
    let (term_bytes, impact_bytes) = term_table.finish(build_id);

    write_atomic(&dir.join(IMPACTS_FILE), &impact_bytes)?;
    write_atomic(&dir.join(TERMS_FILE), &term_bytes)?;
    write_atomic(&dir.join(POSTINGS_FILE), &lists)?;
    write_atomic(&dir.join(GRAMS_FILE), &grams.finish(build_id))?;
    write_atomic(&dir.join(PAGES_FILE), &pages.finish(build_id))?;
    write_atomic(&dir.join(CODE_FILE), &code.finish(build_id))?;
    let redirects = RedirectsFile {
        build_id,
        redirects,
    };
    write_atomic(&dir.join(REDIRECTS_FILE), &encode(&redirects)?)?;
    for (n, mut pages) in sub_pages.into_iter().enumerate() {
        pages.sort_by(|a, b| reading_order((a.order, &a.title, &a.id), (b.order, &b.title, &b.id)));
        let sub = SubFile { build_id, pages };
        write_atomic(&sub_dir.join(format!("{n}.bin")), &encode(&sub)?)?;
    }
    let nav = NavFile {
        build_id,
        stamp_ns: mtime_ns(&dir.join(GRAMS_FILE)),
        pages: count,
        root: dir_record(root.path(), 0)?,
        projects,
    };
    write_atomic(&dir.join(NAV_FILE), &encode(&nav)?)?;

    Ok(IndexSummary {
        pages: count as usize,
        keys: keys.len(),
        terms: term_list.len(),
        bytes: dir_size(&dir)?,
        corpus_bytes,
        plain_code,
    })
}

/// Every project and subproject as the index records them, and each subproject's number:
/// subprojects are numbered in (project, subproject) order.
fn number_folders(root: &ContentRoot) -> Result<(Vec<IndexedProject>, Numbers), IndexError> {
    let mut projects = Vec::new();
    let mut numbers = HashMap::new();
    for p in root.projects()? {
        let pdir = root.path().join(&p.id);
        let mut subprojects = Vec::new();
        for s in root.subprojects(&p.id)?.unwrap_or_default() {
            let number = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
            numbers.insert((p.id.clone(), s.id.clone()), number);
            subprojects.push(IndexedSubproject {
                dir: dir_record(&pdir.join(&s.id), 2)?,
                id: s.id,
                name: s.name,
                description: s.description,
                doc_count: s.doc_count,
                number,
                pages: (0, 0),
            });
        }
        projects.push(IndexedProject {
            dir: dir_record(&pdir, 1)?,
            id: p.id,
            name: p.name,
            description: p.description,
            doc_count: p.doc_count,
            order: p.order,
            versions: p.versions,
            subprojects,
        });
    }
    Ok((projects, numbers))
}

/// Each subproject's number, by `(project, subproject)`.
type Numbers = HashMap<(String, String), u32>;

/// What one pass over every page file gathers for the index.
struct PageScan {
    /// Pages read (numbered 0.. in path order).
    count: u32,
    /// Key -> the numbers of the pages holding it, ascending.
    postings: HashMap<u32, Vec<u32>>,
    /// The page table being written.
    pages: PagesWriter,
    /// Each subproject's page records, by subproject number.
    sub_pages: Vec<Vec<IndexedPage>>,
    /// Every page's hash in order: part of the build's id.
    page_hashes: Vec<u8>,
    /// Bytes of the page files.
    corpus_bytes: u64,
    /// Term -> the pages holding it, ascending, with its counts in each field.
    terms: HashMap<String, Vec<(u32, FieldCounts)>>,
    /// Each page's field lengths, by page number.
    lengths: Vec<FieldCounts>,
    /// The field lengths summed.
    stats: CorpusStats,
    /// Each page's highlighted code blocks, by page number.
    code: code::CodeWriter,
    /// Old path -> the page that claims it first, sorted, without old paths that are pages.
    redirects: Vec<(String, PagePath)>,
    /// Pages with a code block that missed the highlighter's deadline.
    plain_code: Vec<String>,
}

/// Each fenced code block of `body` that a grammar knows, highlighted: `(key, html)`.
#[cfg(feature = "highlight")]
fn highlighted_blocks(
    highlighter: &dochub_highlight::Highlighter,
    body: &str,
) -> Vec<(u64, String)> {
    dochub_content::code_blocks(body)
        .into_iter()
        .filter_map(|block| {
            let html = highlighter.highlight(&block.language, &block.code)?;
            Some((block.key(), html))
        })
        .collect()
}

/// Reads every page once, in search (path) order.
fn scan_pages(root: &ContentRoot, numbers: &Numbers) -> Result<PageScan, IndexError> {
    let paths = root.all_page_paths()?;
    let mut scan = PageScan {
        count: 0,
        postings: HashMap::new(),
        pages: PagesWriter::default(),
        sub_pages: vec![Vec::new(); numbers.len()],
        page_hashes: Vec::with_capacity(paths.len() * 8),
        corpus_bytes: 0,
        terms: HashMap::new(),
        lengths: Vec::with_capacity(paths.len()),
        stats: CorpusStats::default(),
        code: code::CodeWriter::default(),
        redirects: Vec::new(),
        plain_code: Vec::new(),
    };
    // Pages without `updated` get their last commit's date (none outside a git work tree).
    let commit_dates = git::last_commit_dates(root.path());
    let mut claims: std::collections::BTreeMap<String, PagePath> = Default::default();
    #[cfg(feature = "highlight")]
    let highlighter = dochub_highlight::Highlighter::new();
    for (p, s, id) in &paths {
        // A page removed while building is left out, as the live scan would.
        let Some(raw) = root.raw(p, s, id)? else {
            continue;
        };
        let Some(&sub) = numbers.get(&(p.clone(), s.clone())) else {
            continue;
        };
        let page_hash = hash(&raw);
        scan.page_hashes.extend_from_slice(&page_hash.to_le_bytes());
        scan.corpus_bytes += raw.len() as u64;
        // A page is found by its id too (`quickstart` need not say "quickstart").
        let mut keys = keys_of(fold(&page_text(&raw)).as_bytes());
        keys.extend(keys_of(fold(id).as_bytes()));
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            scan.postings.entry(key).or_default().push(scan.count);
        }
        let parsed = parse_page(id, &raw);
        #[cfg(feature = "highlight")]
        {
            let given_up = highlighter.given_up();
            scan.code
                .push(&highlighted_blocks(&highlighter, &parsed.body));
            if highlighter.given_up() > given_up {
                scan.plain_code.push(format!("{p}/{s}/{id}"));
            }
        }
        #[cfg(not(feature = "highlight"))]
        scan.code.push(&[]);
        let (analysed, headings) = page_analysis(id, &parsed);
        scan.stats.add(&analysed.lengths);
        scan.lengths.push(analysed.lengths);
        for (term, counts) in analysed.terms {
            scan.terms
                .entry(term)
                .or_default()
                .push((scan.count, counts));
        }
        scan.pages.push(
            sub,
            id,
            &parsed.title,
            &raw,
            &analysed.plain,
            &parsed.summary,
            &headings,
        )?;
        scan.sub_pages[sub as usize].push(IndexedPage {
            id: id.clone(),
            title: parsed.title,
            summary: parsed.summary,
            number: scan.count,
            size: raw.len() as u64,
            hash: page_hash,
            optional: parsed.frontmatter.llms_optional,
            order: parsed.frontmatter.order,
            updated: parsed
                .frontmatter
                .updated
                .clone()
                .or_else(|| commit_dates.get(&format!("{p}/{s}/{id}.md")).cloned()),
        });
        // In path order, so the first page to claim an old path keeps it.
        for old in &parsed.frontmatter.redirect_from {
            claims
                .entry(old.joined())
                .or_insert_with(|| PagePath::new(p, s, id));
        }
        scan.count += 1;
    }
    // A page at an old path is served there: its address is never redirected.
    let pages: std::collections::HashSet<String> = paths
        .iter()
        .map(|(p, s, id)| format!("{p}/{s}/{id}"))
        .collect();
    scan.redirects = claims
        .into_iter()
        .filter(|(old, _)| !pages.contains(old))
        .collect();
    Ok(scan)
}

fn dir_size(dir: &Path) -> Result<u64, IndexError> {
    let mut total = 0;
    for entry in fs::read_dir(dir).map_err(|e| IndexError::io(dir, e))? {
        let entry = entry.map_err(|e| IndexError::io(dir, e))?;
        let meta = entry
            .metadata()
            .map_err(|e| IndexError::io(entry.path(), e))?;
        total += if meta.is_dir() {
            dir_size(&entry.path())?
        } else {
            meta.len()
        };
    }
    Ok(total)
}

impl Index {
    /// Opens the index in a build directory, reading only its navigation file.
    /// [`IndexError::PrebuiltMissing`] when there is none; [`IndexError::Format`]
    /// when it was written by another version of dochub.
    pub fn open(build_dir: impl AsRef<Path>) -> Result<Index, IndexError> {
        let dir = build_dir.as_ref().join(INDEX_DIR);
        let Some(bytes) = read_file(&dir.join(NAV_FILE))? else {
            // An index of format 2 or earlier: say so rather than "missing".
            if let Some(old) = read_file(&dir.join(OLD_NAV_FILE))? {
                #[derive(Deserialize)]
                struct Version {
                    format: u32,
                }
                let found = serde_json::from_slice::<Version>(&old).map_or(0, |v| v.format);
                return Err(IndexError::Format {
                    found,
                    expected: FORMAT,
                });
            }
            return Err(IndexError::PrebuiltMissing {
                path: build_dir.as_ref().to_path_buf(),
            });
        };
        let nav: NavFile = decode(&bytes, &dir.join(NAV_FILE))?;
        let subs = nav
            .projects
            .iter()
            .flat_map(|p| p.subprojects.iter().map(|s| (p.id.clone(), s.id.clone())))
            .collect();
        Ok(Index {
            dir,
            nav,
            subs,
            stamp_here: std::cell::OnceCell::new(),
            memo: None,
        })
    }

    /// Keeps the check of a copied build in `memo` (see the module's documentation).
    pub fn with_memo(mut self, memo: Option<Memo>) -> Index {
        self.memo = memo;
        self
    }

    /// Every project, in reading order.
    pub fn projects(&self) -> &[IndexedProject] {
        &self.nav.projects
    }

    /// One project.
    pub fn project(&self, id: &str) -> Option<&IndexedProject> {
        self.nav.projects.iter().find(|p| p.id == id)
    }

    /// One subproject.
    pub fn subproject(&self, project: &str, subproject: &str) -> Option<&IndexedSubproject> {
        self.project(project)?
            .subprojects
            .iter()
            .find(|s| s.id == subproject)
    }

    /// A project of the index in the content model.
    pub fn project_of(p: &IndexedProject) -> Project {
        Project {
            id: p.id.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
            subproject_count: p.subprojects.len(),
            doc_count: p.doc_count,
            order: p.order,
            versions: p.versions.clone(),
            meta_error: None,
            meta_warnings: Vec::new(),
        }
    }

    /// A subproject of the index in the content model.
    pub fn subproject_of(s: &IndexedSubproject) -> SubprojectSummary {
        SubprojectSummary {
            id: s.id.clone(),
            name: s.name.clone(),
            description: s.description.clone(),
            doc_count: s.doc_count,
        }
    }

    /// The build's id: files written beside the index record it to be matched with it.
    pub fn build_id(&self) -> u64 {
        self.nav.build_id
    }

    /// Pages across all projects.
    pub fn total_documents(&self) -> usize {
        self.nav.pages as usize
    }

    /// A subproject's pages, in reading order (one small file read).
    pub fn pages(&self, subproject: &IndexedSubproject) -> Result<Vec<IndexedPage>, CatalogError> {
        let path = self
            .dir
            .join(SUB_DIR)
            .join(format!("{}.bin", subproject.number));
        let Some(bytes) = read_file(&path)? else {
            return Err(CatalogError::Stale(format!(
                "`{}` is missing",
                path.display()
            )));
        };
        let sub: SubFile = decode(&bytes, &path)?;
        if sub.build_id != self.nav.build_id {
            return Err(rebuilding());
        }
        Ok(sub.pages)
    }

    /// The page an old path leads to, from the table of `redirect_from`s (one small file
    /// read, binary searched). A missing table is [`CatalogError::Stale`].
    pub fn redirect(&self, old: &PagePath) -> Result<Option<PagePath>, CatalogError> {
        let path = self.dir.join(REDIRECTS_FILE);
        let Some(bytes) = read_file(&path)? else {
            return Err(CatalogError::Stale(format!(
                "`{}` is missing",
                path.display()
            )));
        };
        let table: RedirectsFile = decode(&bytes, &path)?;
        if table.build_id != self.nav.build_id {
            return Err(rebuilding());
        }
        let old = old.joined();
        Ok(table
            .redirects
            .binary_search_by(|(from, _)| from.as_str().cmp(&old))
            .ok()
            .map(|at| table.redirects[at].1.clone()))
    }

    /// Page `number`'s highlighted code blocks, by [`dochub_content::code_key`] (empty when
    /// `dochub build` highlighted none). A missing or damaged `code.bin` is
    /// [`CatalogError::Stale`]: the page is answered from the live tree.
    pub fn highlighted(&self, number: u32) -> Result<HashMap<u64, String>, CatalogError> {
        let path = self.dir.join(CODE_FILE);
        let mut file = match code::CodeFile::open(&path) {
            Err(IndexError::Content(ContentError::Io { source, .. }))
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                return Err(CatalogError::Stale(format!(
                    "`{}` is missing",
                    path.display()
                )));
            }
            opened => opened?,
        };
        if file.build_id() != self.nav.build_id {
            return Err(rebuilding());
        }
        // A damaged entry costs the page its highlighting, not its answer: the live tree
        // answers instead (plain code), and the reason is logged.
        Ok(file.blocks(number)?)
    }

    /// Whether the folders `scope` depends on are as the build recorded them:
    /// [`CatalogError::Stale`] naming the first that is not. One `stat` per folder, each
    /// in a copied build, a listing for each folder, or with a
    /// [`CheckMemo`] the copy's remembered check (two `stat`s and the memo's read, after the
    /// first answer in the copy).
    pub fn check(&self, root: &ContentRoot, scope: Scope<'_>) -> Result<(), CatalogError> {
        self.check_once(root, scope, &mut Checked::default())
    }

    /// [`Index::check`], skipping what `checked` holds and adding what it finds.
    pub(crate) fn check_once(
        &self,
        root: &ContentRoot,
        scope: Scope<'_>,
        checked: &mut Checked,
    ) -> Result<(), CatalogError> {
        let base = root.path();
        let root_as_built = *checked.root_as_built.get_or_insert_with(|| {
            self.nav.root.mtime_ns != 0 && root.mtime_ns() == self.nav.root.mtime_ns
        });
        let remembered = match &checked.remembered {
            Some(remembered) => remembered.clone(),
            None => {
                let found = if root_as_built {
                    None
                } else {
                    self.remembered_changes(root)?
                };
                checked.remembered = Some(found.clone());
                found
            }
        };
        for folder in self.folders(base, scope) {
            if checked.unchanged.contains(&folder.name) {
                continue;
            }
            let changed = match &remembered {
                Some(changed) => changed.binary_search(&folder.name).is_ok(),
                None if folder.level == 0 => !root_as_built && self.changed(&folder)?,
                None => self.changed(&folder)?,
            };
            if changed {
                return Err(CatalogError::Stale(changed_since_build(&folder.name)));
            }
            checked.unchanged.insert(folder.name);
        }
        Ok(())
    }

    /// The folders `scope` depends on, the root first, then each project before its
    /// subprojects.
    fn folders(&self, base: &Path, scope: Scope<'_>) -> Vec<Folder<'_>> {
        let mut folders = vec![Folder {
            path: base.to_path_buf(),
            level: 0,
            record: &self.nav.root,
            name: String::new(),
        }];
        let mut subprojects = Vec::new();
        for p in &self.nav.projects {
            // A folder whose paths all sort after the answer's last one cannot change it (not
            // `break`: `a-b/` sorts before `a/`, so id order is not path order).
            if let Scope::Through(last) = scope
                && format!("{}/", p.id).as_str() > last
            {
                continue;
            }
            let pdir = base.join(&p.id);
            for s in &p.subprojects {
                let wanted = match scope {
                    Scope::Outline => false,
                    Scope::Project(id) => id == p.id,
                    Scope::Subproject(pid, sid) => pid == p.id && sid == s.id,
                    Scope::Through(last) => format!("{}/{}/", p.id, s.id).as_str() <= last,
                    Scope::Everything => true,
                };
                if wanted {
                    subprojects.push(Folder {
                        path: pdir.join(&s.id),
                        level: 2,
                        record: &s.dir,
                        name: format!("{}/{}", p.id, s.id),
                    });
                }
            }
            folders.push(Folder {
                path: pdir,
                level: 1,
                record: &p.dir,
                name: p.id.clone(),
            });
            folders.append(&mut subprojects);
        }
        folders
    }

    /// In a copied build with a memo: the names of the folders that differ from the build
    /// (sorted), from the memo, or found now by comparing every folder's listing and then
    /// remembered. `None` when the build was not copied or there is no memo.
    fn remembered_changes(&self, root: &ContentRoot) -> Result<Option<Vec<String>>, IndexError> {
        let Some(memo) = &self.memo else {
            return Ok(None);
        };
        let stamp = self.stamp_here();
        // A file system without times cannot tell one copy from the next.
        if !self.copied() || stamp == 0 {
            return Ok(None);
        }
        let key = format!("dochub:index-check:{:016x}:{stamp}", self.nav.build_id);
        if let Some(bytes) = memo.0.load(&key)
            && let Ok(changed) = postcard::from_bytes::<Vec<String>>(&bytes)
            && changed.is_sorted()
        {
            return Ok(Some(changed));
        }
        let mut changed = Vec::new();
        for folder in self.folders(root.path(), Scope::Everything) {
            if self.changed(&folder)? {
                changed.push(folder.name);
            }
        }
        changed.sort();
        let bytes =
            postcard::to_allocvec(&changed).map_err(|e| IndexError::Encode(e.to_string()))?;
        memo.0.save(&key, &bytes);
        Ok(Some(changed))
    }

    /// A page file read for an answer, if it is the one the build indexed (`size` and
    /// `hash` as recorded); else [`CatalogError::Stale`] saying what changed.
    pub fn verify(
        size: u64,
        hash_of_bytes: u64,
        path: &str,
        raw: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, CatalogError> {
        match raw {
            None => Err(CatalogError::Stale(format!("`{path}` was removed"))),
            Some(raw) if raw.len() as u64 != size || hash(&raw) != hash_of_bytes => {
                Err(CatalogError::Stale(format!("`{path}` was edited")))
            }
            Some(raw) => Ok(raw),
        }
    }

    /// The key table's modification time here: one `stat`, made the first time it is needed.
    fn stamp_here(&self) -> u64 {
        *self
            .stamp_here
            .get_or_init(|| mtime_ns(&self.dir.join(GRAMS_FILE)))
    }

    /// Whether this build is known to be a copy: both times of its key table are known and
    /// differ. `spin up` copies every mounted folder or none (`--direct-mounts`), and so does
    /// `dochub-host`, so the content mounted beside a copied build is a copy too, which does
    /// not change while the app runs. Unlike [`Index::copied`]'s, a time that cannot be read
    /// says nothing here.
    pub fn known_copy(&self) -> bool {
        let here = self.stamp_here();
        self.nav.stamp_ns != 0 && here != 0 && here != self.nav.stamp_ns
    }

    /// Whether the build was copied since it was written: its key table's time is not the one
    /// the build recorded.
    fn copied(&self) -> bool {
        self.nav.stamp_ns == 0 || self.stamp_here() != self.nav.stamp_ns
    }

    /// Whether a folder differs from the build's record: its time, or in a copy (which keeps
    /// names, not times, and does not change after the copy) its listing.
    fn changed(&self, folder: &Folder<'_>) -> Result<bool, IndexError> {
        let record = folder.record;
        if record.mtime_ns != 0 && mtime_ns(&folder.path) == record.mtime_ns {
            return Ok(false);
        }
        if record.mtime_ns == 0 || self.copied() {
            return Ok(listing(&folder.path, folder.level)? != record.listing);
        }
        Ok(true)
    }

    /// Searches through the index; the same answer as the live tree's when fresh
    /// (`dochub_search` ranks both). A query under the minimum length is
    /// [`CatalogError::Query`], as live.
    pub fn search(&self, root: &ContentRoot, query: &str) -> Result<SearchResults, CatalogError> {
        self.search_once(root, query, &Within::everything(), &mut Checked::default())
    }

    /// [`Index::search`], checking only the folders `checked` does not hold yet.
    pub(crate) fn search_once(
        &self,
        root: &ContentRoot,
        query: &str,
        within: &Within,
        checked: &mut Checked,
    ) -> Result<SearchResults, CatalogError> {
        let query = RankedQuery::new(query)?;
        let results = dochub_search::search(&query, &mut IndexSearch::new(self, within))?;
        // Any page anywhere may outrank the answer's: it depends on every folder.
        self.check_once(root, Scope::Everything, checked)?;
        Ok(results)
    }

    /// For each folded text, the page numbers that may contain it (in their text or id), in
    /// path order; `None` when the key table belongs to another build. The key table's
    /// blocks and the posting lists of all the texts are read together.
    pub(crate) fn candidates(&self, texts: &[&[u8]]) -> Result<Option<Vec<Vec<u32>>>, IndexError> {
        let key_sets: Vec<Vec<u32>> = texts.iter().map(|t| query_keys(t)).collect();
        let mut keys: Vec<u32> = key_sets.concat();
        keys.sort_unstable();
        keys.dedup();
        let mut grams = Grams::open(&self.dir.join(GRAMS_FILE))?;
        if grams.build_id() != self.nav.build_id {
            return Ok(None);
        }
        let spans = grams.find_all(&keys)?;
        let postings_path = self.dir.join(POSTINGS_FILE);
        let mut file = format::open(&postings_path)?;
        let ranges: Vec<(u64, usize)> = spans
            .iter()
            .flatten()
            .map(|&(o, l)| (o, l as usize))
            .collect();
        let mut read = format::read_ranges(&mut file, &postings_path, &ranges)?.into_iter();
        let mut lists: HashMap<u32, Postings> = HashMap::new();
        for (key, span) in keys.iter().zip(&spans) {
            if span.is_some() {
                let bytes = read.next().unwrap_or_default();
                let list =
                    Postings::parse(&bytes, self.nav.pages).ok_or_else(|| IndexError::Damaged {
                        path: postings_path.clone(),
                    })?;
                lists.insert(*key, list);
            }
        }
        Ok(Some(
            key_sets
                .iter()
                .map(|set| {
                    let of_set: Option<Vec<&Postings>> =
                        set.iter().map(|key| lists.get(key)).collect();
                    of_set.map_or_else(Vec::new, |of_set| {
                        Postings::intersect(&of_set, self.nav.pages)
                    })
                })
                .collect(),
        ))
    }
}

#[cfg(test)]
mod tests;
