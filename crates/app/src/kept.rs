//! Raw pages and manifests a reused instance keeps ([`KeptAnswers`]).
//!
//! A WASIp3 component's instance serves up to 128 requests under Spin v4, and each file read is
//! two round trips to the host's blocking thread pool (`dochub_content::fsio`): most of what a
//! raw page costs beyond an empty component, and a prebuilt manifest reads two files and
//! checks two folders. An answer is kept only where it cannot change under the app: in a copied mount (`spin up`'s default, and a deployed app's), which the build
//! mounted beside the content shows ([`dochub_index::Index::known_copy`]). Folders mounted in
//! place (`--direct-mounts`) keep nothing, so an edited page shows on the next request there.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use dochub_index::Index;

/// How long a kept answer is served before it is read again. In a copy nothing changes; the
/// bound covers a build that was copied by hand and then mounted in place beside content that
/// is edited, where an answer may then lag its files by this much.
pub const KEPT_LIFE: Duration = Duration::from_secs(1);

/// The most bytes one instance keeps; an answer larger than a quarter of it is not kept.
pub const KEPT_BYTES: usize = 4 << 20;

/// Raw pages and manifests kept for one instance's life, shared by its requests (clones
/// share them).
#[derive(Clone)]
pub struct KeptAnswers(Rc<Inner>);

struct Inner {
    build_dir: PathBuf,
    /// Whether the mounts are a copy: asked of the build once, at the first answer.
    copy: OnceCell<bool>,
    answers: RefCell<Answers>,
}

#[derive(Default)]
struct Answers {
    by_key: HashMap<String, (Instant, Rc<[u8]>)>,
    bytes: usize,
}

impl std::fmt::Debug for KeptAnswers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let answers = self.0.answers.borrow();
        f.debug_struct("KeptAnswers")
            .field("build_dir", &self.0.build_dir)
            .field("copy", &self.0.copy.get())
            .field("answers", &answers.by_key.len())
            .field("bytes", &answers.bytes)
            .finish()
    }
}

impl KeptAnswers {
    /// Answers kept when the build in `build_dir` (`BUILD_DIR`, whether or not its index is
    /// served) is a copy; none when it is not, or cannot be opened.
    pub fn new(build_dir: impl Into<PathBuf>) -> KeptAnswers {
        KeptAnswers(Rc::new(Inner {
            build_dir: build_dir.into(),
            copy: OnceCell::new(),
            answers: RefCell::default(),
        }))
    }

    /// [`KeptAnswers::new`] for the build folder the environment names (`BUILD_DIR`).
    pub fn from_env() -> KeptAnswers {
        let dir = std::env::var("BUILD_DIR").ok();
        KeptAnswers::new(dochub_index::build::build_dir_setting(dir.as_deref()))
    }

    /// The page at `path` (`<project>/<subproject>/<page>`): kept, when it was read less than
    /// [`KEPT_LIFE`] ago in a copy, else from `read` (a missing page is never kept).
    pub fn page(&self, path: &str, read: impl FnOnce() -> Option<Vec<u8>>) -> Option<Rc<[u8]>> {
        match self.answer(path, || Ok::<_, Infallible>(read())) {
            Ok(page) => page,
            Err(never) => match never {},
        }
    }

    /// The answer kept under `key`, as [`KeptAnswers::page`]: `read` gives the bytes to keep, or
    /// `None` for an answer that must not be kept (a miss, a fallback, an error's).
    pub fn answer<E>(
        &self,
        key: &str,
        read: impl FnOnce() -> Result<Option<Vec<u8>>, E>,
    ) -> Result<Option<Rc<[u8]>>, E> {
        if !self.is_copy() {
            return Ok(read()?.map(Rc::from));
        }
        let now = Instant::now();
        if let Some((read_at, bytes)) = self.0.answers.borrow().by_key.get(key)
            && now.duration_since(*read_at) < KEPT_LIFE
        {
            return Ok(Some(bytes.clone()));
        }
        let Some(bytes) = read()? else {
            return Ok(None);
        };
        let bytes: Rc<[u8]> = Rc::from(bytes);
        self.keep(key, now, bytes.clone());
        Ok(Some(bytes))
    }

    /// Whether the mounts are a copy (asked once).
    fn is_copy(&self) -> bool {
        *self
            .0
            .copy
            .get_or_init(|| Index::open(&self.0.build_dir).is_ok_and(|index| index.known_copy()))
    }

    fn keep(&self, key: &str, read_at: Instant, bytes: Rc<[u8]>) {
        if bytes.len() > KEPT_BYTES / 4 {
            return;
        }
        let mut answers = self.0.answers.borrow_mut();
        if let Some((_, old)) = answers.by_key.remove(key) {
            answers.bytes -= old.len();
        }
        // Full: start again rather than track which page was read last; an instance lives
        // for at most a few hundred requests anyway.
        if answers.bytes + bytes.len() > KEPT_BYTES {
            answers.by_key.clear();
            answers.bytes = 0;
        }
        answers.bytes += bytes.len();
        answers.by_key.insert(key.to_owned(), (read_at, bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dochub_content::ContentRoot;
    use std::fs;
    use std::path::Path;

    /// A content tree with one page, and its build, made to look copied when `copy`.
    fn tree(copy: bool) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("content");
        fs::create_dir_all(content.join("p/s")).unwrap();
        fs::write(content.join("p/s/page.md"), "# Page\n\nfirst\n").unwrap();
        let built = dir.path().join("built");
        let root = ContentRoot::open(&content).unwrap();
        dochub_index::build::write_build(&root, &built, "2026-01-01T00:00:00Z").unwrap();
        if copy {
            // What a copy does to the build: its files' times are no longer those recorded.
            let later = std::time::SystemTime::now() + Duration::from_secs(3600);
            for entry in fs::read_dir(built.join(dochub_index::INDEX_DIR)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    let file = fs::File::options().write(true).open(path).unwrap();
                    file.set_modified(later).unwrap();
                }
            }
        }
        (dir, content, built)
    }

    fn read(kept: &KeptAnswers, content: &Path) -> Option<Vec<u8>> {
        let file = content.join("p/s/page.md");
        kept.page("p/s/page", || fs::read(file).ok())
            .map(|bytes| bytes.to_vec())
    }

    #[test]
    fn a_copy_keeps_a_page_for_its_life() {
        let (_dir, content, build) = tree(true);
        let kept = KeptAnswers::new(&build);
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nfirst\n");
        fs::write(content.join("p/s/page.md"), "# Page\n\nsecond\n").unwrap();
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nfirst\n");
        std::thread::sleep(KEPT_LIFE);
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nsecond\n");
    }

    #[test]
    fn folders_mounted_in_place_keep_nothing() {
        let (_dir, content, build) = tree(false);
        let kept = KeptAnswers::new(&build);
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nfirst\n");
        fs::write(content.join("p/s/page.md"), "# Page\n\nsecond\n").unwrap();
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nsecond\n");
    }

    #[test]
    fn without_a_build_nothing_is_kept() {
        let (dir, content, _build) = tree(false);
        let kept = KeptAnswers::new(dir.path().join("no-build"));
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nfirst\n");
        fs::write(content.join("p/s/page.md"), "edited").unwrap();
        assert_eq!(read(&kept, &content).unwrap(), b"edited");
    }

    #[test]
    fn a_missing_page_is_not_kept_and_the_bytes_stay_bounded() {
        let (_dir, content, build) = tree(true);
        let kept = KeptAnswers::new(&build);
        assert_eq!(kept.page("p/s/gone", || None), None);
        let big = vec![b'x'; KEPT_BYTES / 4];
        for n in 0..10 {
            kept.page(&format!("p/s/big-{n}"), || Some(big.clone()));
            assert!(kept.0.answers.borrow().bytes <= KEPT_BYTES);
        }
        // Over a quarter of the bound: served, not kept.
        let huge = vec![b'y'; KEPT_BYTES / 4 + 1];
        kept.page("p/s/huge", || Some(huge.clone()));
        assert!(!kept.0.answers.borrow().by_key.contains_key("p/s/huge"));
        assert_eq!(read(&kept, &content).unwrap(), b"# Page\n\nfirst\n");
    }
}
