//! The landing page and overview files a reused instance keeps while their modification time
//! stays the same ([`KeptPages`]).
//!
//! Under Spin v4 a WASIp3 instance serves up to 128 requests, and each file-system call is a
//! round trip to the host's blocking thread pool ([`dochub_content::fsio`]): listing
//! `_overviews/` is two of them, reading an overview file two more, and they are most of what
//! these routes cost beyond an empty component. A kept answer costs one `stat` instead, so it
//! stays exact in a folder mounted in place (`--direct-mounts`): an edit shows on the next
//! request, as it does without keeping. (The docs index trusts folder times the same way.)
//!
//! A time is trusted only once it is [`SETTLED`] in the past when the answer is made: a file
//! system stamps times from a coarse clock (a kernel tick, or whole seconds on some), so a
//! second change within the same tick as the first would otherwise leave the time unchanged
//! and the kept answer stale. A change after the answer was made then always shows as a later
//! time. (A network file system whose clock runs behind this machine's could still hide such a
//! change; a time ahead of this machine's clock is never trusted.) A link in `_overviews/`
//! is followed for its page, whose own time is checked, but the landing page follows the
//! folder's time alone: a card may outlive its link's target until the folder next changes,
//! and then leads to a 404.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dochub_content::fsio;

/// How long before an answer is made its folder or file must have last changed for the
/// answer to be kept.
pub const SETTLED: Duration = Duration::from_secs(2);

/// The largest answer kept; larger overview files are read on every request.
pub const KEPT_MAX_BYTES: usize = 1 << 20;

/// Answers kept for one instance's life, each with the path whose time it depends on (clones
/// share them). Only registered overviews and the landing page are ever kept, so the list stays
/// as short as the registry.
#[derive(Clone, Default)]
pub struct KeptPages(Rc<RefCell<Vec<Kept>>>);

struct Kept {
    path: PathBuf,
    mtime_ns: u64,
    bytes: Rc<[u8]>,
}

impl std::fmt::Debug for KeptPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptPages")
            .field("kept", &self.0.borrow().len())
            .finish()
    }
}

impl KeptPages {
    /// No answers kept yet.
    pub fn new() -> KeptPages {
        KeptPages::default()
    }

    /// What `make` answers for `path`: kept, when one `stat` of `path` shows the time it was
    /// made at, else made again. `make` gives the bytes to keep, or `None` for an answer that
    /// must not be kept (a miss).
    pub fn answer<E>(
        &self,
        path: &Path,
        make: impl FnOnce() -> Result<Option<Vec<u8>>, E>,
    ) -> Result<Option<Rc<[u8]>>, E> {
        // Read before the `stat`: a change after it shows as a later time than this.
        let now_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        let mtime_ns = fsio::stat(path)
            .ok()
            .flatten()
            .map_or(0, |found| found.mtime_ns);
        if mtime_ns != 0
            && let Some(kept) = self.0.borrow().iter().find(|kept| kept.path == path)
            && kept.mtime_ns == mtime_ns
        {
            return Ok(Some(kept.bytes.clone()));
        }
        let made = make();
        let mut kept = self.0.borrow_mut();
        kept.retain(|kept| kept.path != path);
        let bytes: Rc<[u8]> = match made {
            Ok(Some(bytes)) => Rc::from(bytes),
            Ok(None) | Err(_) => return made.map(|_| None),
        };
        let settled = mtime_ns != 0
            && u128::from(mtime_ns) + SETTLED.as_nanos() <= now_ns
            && bytes.len() <= KEPT_MAX_BYTES;
        if settled {
            kept.push(Kept {
                path: path.to_owned(),
                mtime_ns,
                bytes: bytes.clone(),
            });
        }
        Ok(Some(bytes))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::fs::{File, FileTimes};

    /// Sets a file's or folder's modification time.
    pub(crate) fn set_mtime(path: &Path, at: SystemTime) {
        let file = File::open(path).unwrap();
        file.set_times(FileTimes::new().set_modified(at)).unwrap();
    }

    /// Writes `bytes` to `path` and gives it the modification time `at`.
    fn write_at(path: &Path, bytes: &[u8], at: SystemTime) {
        std::fs::write(path, bytes).unwrap();
        set_mtime(path, at);
    }

    /// A time long settled.
    pub(crate) fn a_minute_ago() -> SystemTime {
        SystemTime::now() - Duration::from_secs(60)
    }

    fn answer(kept: &KeptPages, path: &Path) -> Option<Vec<u8>> {
        kept.answer(path, || Ok::<_, Infallible>(fsio::read(path).unwrap()))
            .unwrap()
            .map(|bytes| bytes.to_vec())
    }

    #[test]
    fn a_settled_file_is_kept_until_its_time_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let long_ago = a_minute_ago();
        write_at(&path, b"one", long_ago);
        let kept = KeptPages::new();
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"one"[..]));

        // Kept: the same time gives the kept bytes, whatever the file now holds.
        write_at(&path, b"two", long_ago);
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"one"[..]));

        // Any other time reads it again.
        set_mtime(&path, long_ago + Duration::from_nanos(1));
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"two"[..]));
    }

    #[test]
    fn a_time_that_has_not_settled_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let now = SystemTime::now();
        write_at(&path, b"one", now);
        let kept = KeptPages::new();
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"one"[..]));
        // A second change within the same clock tick leaves the time as it was.
        write_at(&path, b"two", now);
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"two"[..]));
        // Nor is a time ahead of the clock.
        let ahead = now + Duration::from_secs(3600);
        set_mtime(&path, ahead);
        answer(&kept, &path);
        write_at(&path, b"three", ahead);
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"three"[..]));
    }

    #[test]
    fn misses_are_not_kept_and_a_new_file_shows_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let kept = KeptPages::new();
        assert_eq!(answer(&kept, &path), None);
        write_at(&path, b"here", a_minute_ago());
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"here"[..]));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(answer(&kept, &path), None);
    }

    #[test]
    fn large_answers_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let long_ago = a_minute_ago();
        write_at(&path, &vec![b'a'; KEPT_MAX_BYTES + 1], long_ago);
        let kept = KeptPages::new();
        answer(&kept, &path);
        write_at(&path, b"small", long_ago);
        assert_eq!(answer(&kept, &path).as_deref(), Some(&b"small"[..]));
    }
}
