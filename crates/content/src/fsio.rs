//! The file-system calls on a request's hot path, made with as few host round trips as WASI 0.2
//! allows.
//!
//! In a Spin component every file-system call is a round trip to the host's blocking thread
//! pool (wasmtime-wasi's `spawn_blocking`, in Spin v4.0.2 as in `dochub-host`): about 35 µs on
//! the 2-core machines here, where the system call itself takes 2 µs. Rust's `std::fs` on
//! wasip2 spends two of them on a `metadata` (a `stat-at` without following links, then one
//! following them) and three or four on reading a small file. So in a component:
//! - [`stat`] and [`mtime_ns`] are one `stat-at`;
//! - [`list_dir`] is one `open-at` and one `read-directory` (the host reads every entry's type
//!   in that one round trip; `std`'s `read_dir` costs a `stat-at` per entry on top, through
//!   wasi-libc's `readdir`, which asks each entry's inode number);
//! - [`read`] is one `open-at` and one read per 64 KiB;
//! - [`File::read_ranges`] starts every read at once and then waits for each in turn:
//!   a file's input stream `read` hands the read to the host's pool and returns
//!   (wasmtime-wasi's `FileInputStream`, the same in Spin v4.0.2's wasmtime-wasi 44), so the
//!   reads overlap. Opening a file is still one round trip each.
//!
//! Natively (tests, the CLI, `dochub build`) the same functions use `std`.

use std::io;
use std::path::Path;

use crate::error::ContentError;
use crate::segment::is_valid_id;

/// Modification time of a file or folder in nanoseconds since 1970; 0 when it has none or
/// cannot be read (the index then compares listings instead).
pub fn mtime_ns(path: &Path) -> u64 {
    stat(path).ok().flatten().map_or(0, |found| found.mtime_ns)
}

/// What a folder entry is, links followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A folder.
    Dir,
    /// A regular file.
    File,
    /// Anything else.
    Other,
}

/// The entries of a folder whose names are UTF-8 and pass `keep`, with what each is (links
/// followed; a link that leads nowhere is left out), in no particular order. `Ok(None)` when
/// nothing is at `path`.
pub fn list_dir(
    path: &Path,
    keep: impl Fn(&str) -> bool,
) -> io::Result<Option<Vec<(String, EntryKind)>>> {
    imp::list_dir(path, &keep)
}

/// What one `stat` of a path tells, links followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// What is there.
    pub kind: EntryKind,
    /// Its modification time in nanoseconds since 1970; 0 when it has none.
    pub mtime_ns: u64,
}

/// One `stat` of `path`, links followed; `Ok(None)` when nothing is there.
pub fn stat(path: &Path) -> io::Result<Option<Stat>> {
    imp::stat(path)
}

/// Whether `path` is a folder; `Ok(None)` when nothing is there.
pub fn is_dir(path: &Path) -> io::Result<Option<bool>> {
    Ok(stat(path)?.map(|found| found.kind == EntryKind::Dir))
}

/// The whole file; `Ok(None)` when it does not exist.
pub fn read(path: &Path) -> io::Result<Option<Vec<u8>>> {
    Ok(read_capped(path, u64::MAX)?.map(|read| match read {
        Capped::Whole(bytes) => bytes,
        Capped::Over(_) => unreachable!("no file is longer than u64::MAX bytes"),
    }))
}

/// A file read up to a limit: its bytes, or its size when it has more than the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capped {
    /// The whole file.
    Whole(Vec<u8>),
    /// The file's size, over the limit; at most the limit and one chunk was read.
    Over(u64),
}

/// [`read`], stopping once the file proves longer than `max` bytes: what a file may cost a
/// component's memory is the limit, not the file.
pub fn read_capped(path: &Path, max: u64) -> io::Result<Option<Capped>> {
    imp::read_capped(path, max)
}

/// An open file whose byte ranges are read together.
pub struct File(imp::File);

impl File {
    /// Opens a file for reading.
    pub fn open(path: &Path) -> io::Result<File> {
        imp::File::open(path).map(File)
    }

    /// Byte ranges `(offset, len)`, all read at once, in any order. A range reaching past the
    /// end of the file comes back short. Ranges less than [`COALESCE_GAP`] apart are read as
    /// one span.
    pub fn read_ranges(&mut self, ranges: &[(u64, usize)]) -> io::Result<Vec<Vec<u8>>> {
        let (spans, span_of) = coalesce(ranges);
        let read = self.0.read_ranges(&spans)?;
        Ok(ranges
            .iter()
            .zip(span_of)
            .map(|(&(offset, len), span)| {
                let bytes = &read[span];
                let from = usize::try_from(offset - spans[span].0)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                bytes[from..from.saturating_add(len).min(bytes.len())].to_vec()
            })
            .collect())
    }
}

/// Ranges closer than this are read as one span: each read in flight costs the host a hand-off
/// to a thread and back, worth about this many bytes of copying.
const COALESCE_GAP: u64 = 16 * 1024;
/// The most a merged span may cover: what a Spin host reads in one go (wasmtime-wasi reads at
/// most 64 KiB per call), so that a span never takes more rounds than its parts would.
const MAX_SPAN: u64 = 64 * 1024;

/// The spans to read for `ranges`, `(offset, len)` in offset order, and each range's span.
fn coalesce(ranges: &[(u64, usize)]) -> (Vec<(u64, usize)>, Vec<usize>) {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].0);
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let mut span_of = vec![0; ranges.len()];
    for i in order {
        let (offset, len) = ranges[i];
        let end = offset.saturating_add(len as u64);
        match spans.last_mut() {
            Some(last)
                if offset <= last.1.saturating_add(COALESCE_GAP)
                    && end.max(last.1) - last.0 <= MAX_SPAN =>
            {
                last.1 = last.1.max(end);
            }
            _ => spans.push((offset, end)),
        }
        span_of[i] = spans.len() - 1;
    }
    let spans = spans
        .into_iter()
        .map(|(start, end)| (start, usize::try_from(end - start).unwrap_or(usize::MAX)))
        .collect();
    (spans, span_of)
}

/// What [`list`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Folders whose names are valid ids (projects, subprojects).
    Dir,
    /// Page ids: `*.md` files whose stems are valid ids.
    Page,
}

/// Sorted names of valid entries of one kind (`Page`: ids of `*.md` files).
pub fn list(dir: &Path, kind: Kind) -> Result<Vec<String>, ContentError> {
    // Names that are not UTF-8 cannot be named in a URL; `list_dir` skips them.
    fn id_of(name: &str, kind: Kind) -> Option<&str> {
        match kind {
            Kind::Dir => Some(name),
            Kind::Page => name.strip_suffix(".md"),
        }
    }
    let entries = list_dir(dir, |name| id_of(name, kind).is_some_and(is_valid_id))
        .map_err(|e| ContentError::io(dir, e))?
        .unwrap_or_default();
    let wanted = match kind {
        Kind::Dir => EntryKind::Dir,
        Kind::Page => EntryKind::File,
    };
    let mut out: Vec<String> = entries
        .into_iter()
        .filter(|(_, entry_kind)| *entry_kind == wanted)
        .filter_map(|(name, _)| id_of(&name, kind).map(str::to_owned))
        .collect();
    out.sort();
    Ok(out)
}

/// Reads a regular file; `None` when it does not exist or is a directory.
pub fn read_file(path: &Path) -> Result<Option<Vec<u8>>, ContentError> {
    read(path).or_else(|e| absent_or_error(path, e))
}

/// `None` for an error that means the file is not there, else the error.
pub(crate) fn absent_or_error(
    path: &Path,
    e: std::io::Error,
) -> Result<Option<Vec<u8>>, ContentError> {
    match e.kind() {
        _ if is_absent(&e) => Ok(None),
        // Some platforms report reading a directory as a generic error.
        _ if path.is_dir() => Ok(None),
        _ => Err(ContentError::io(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_together_come_back_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut file = File::open(&path).unwrap();
        // Out of order, overlapping, adjacent, far apart, empty, and past the end.
        let ranges = [
            (150_000, 10),
            (0, 4),
            (2, 6),
            (8, 0),
            (100, 50),
            (199_990, 100),
            (300_000, 5),
            (60_000, 70_000),
        ];
        let got = file.read_ranges(&ranges).unwrap();
        for (&(offset, len), got) in ranges.iter().zip(&got) {
            let from = (offset as usize).min(bytes.len());
            let to = (from + len).min(bytes.len());
            assert_eq!(got, &bytes[from..to], "({offset}, {len})");
        }
        // Near ranges share a span; far ones, and a span that would pass 64 KiB, do not.
        let (spans, span_of) = coalesce(&ranges);
        assert_eq!(
            spans,
            [
                (0, 150),
                (60_000, 70_000),
                (150_000, 10),
                (199_990, 100),
                (300_000, 5)
            ]
        );
        assert_eq!(span_of, [2, 0, 0, 0, 0, 3, 4, 1]);
    }

    #[test]
    fn folder_listings_follow_links_and_skip_what_cannot_be_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("a.md"), b"a").unwrap();
        std::fs::write(root.join("skip.md"), b"s").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(root.join("sub"), root.join("to-sub")).unwrap();
            std::os::unix::fs::symlink(root.join("a.md"), root.join("to-a.md")).unwrap();
            std::os::unix::fs::symlink(root.join("nowhere"), root.join("dangling")).unwrap();
            let not_utf8 = std::ffi::OsStr::from_bytes(b"bad\xff.md");
            std::fs::write(root.join(not_utf8), b"x").unwrap();
        }
        let mut got = list_dir(root, |name| name != "skip.md").unwrap().unwrap();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want = vec![
            ("a.md".to_owned(), EntryKind::File),
            ("sub".to_owned(), EntryKind::Dir),
        ];
        if cfg!(unix) {
            want.push(("to-a.md".to_owned(), EntryKind::File));
            want.push(("to-sub".to_owned(), EntryKind::Dir));
        }
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, want);
        assert_eq!(list_dir(&root.join("missing"), |_| true).unwrap(), None);
        assert!(list_dir(&root.join("a.md"), |_| true).is_err());
    }

    #[test]
    fn missing_files_and_folders_read_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"hello").unwrap();
        let missing = dir.path().join("missing");
        assert_eq!(read(&a).unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(read(&missing).unwrap(), None);
        assert!(mtime_ns(&a) > 0);
        assert_eq!(mtime_ns(&missing), 0);
        assert_eq!(is_dir(dir.path()).unwrap(), Some(true));
        assert_eq!(is_dir(&a).unwrap(), Some(false));
        assert_eq!(is_dir(&missing).unwrap(), None);
    }
}

/// Whether an error means "there is no such file", as [`read`] answers
/// `None` for it (a name too long for the file system cannot exist either).
pub(crate) fn is_absent(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound
            | io::ErrorKind::NotADirectory
            | io::ErrorKind::IsADirectory
            | io::ErrorKind::InvalidFilename
    )
}

#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
use portable as imp;
#[cfg(all(target_os = "wasi", target_env = "p2"))]
use wasi_host as imp;

/// `std`: natively, and in a component for paths outside its preopened folders.
mod portable {
    use std::io::{self, Read, Seek, SeekFrom};
    use std::path::Path;
    use std::time::UNIX_EPOCH;

    use super::{EntryKind, Stat, is_absent};

    fn kind(file_type: std::fs::FileType) -> EntryKind {
        if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        }
    }

    pub(crate) fn list_dir(
        path: &Path,
        keep: &dyn Fn(&str) -> bool,
    ) -> io::Result<Option<Vec<(String, EntryKind)>>> {
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !keep(&name) {
                continue;
            }
            let mut file_type = entry.file_type()?;
            if file_type.is_symlink() {
                match std::fs::metadata(entry.path()) {
                    Ok(meta) => file_type = meta.file_type(),
                    Err(_) => continue,
                }
            }
            out.push((name, kind(file_type)));
        }
        Ok(Some(out))
    }

    pub(crate) fn stat(path: &Path) -> io::Result<Option<Stat>> {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Ok(Some(Stat {
            kind: kind(meta.file_type()),
            mtime_ns,
        }))
    }

    pub(crate) fn read_capped(path: &Path, max: u64) -> io::Result<Option<super::Capped>> {
        let mut file = match std::fs::File::open(path) {
            Ok(file) => file,
            Err(e) if is_absent(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut bytes = Vec::new();
        (&mut file)
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > max {
            return Ok(Some(super::Capped::Over(file.metadata()?.len())));
        }
        Ok(Some(super::Capped::Whole(bytes)))
    }

    fn read_up_to(file: &mut std::fs::File, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(len.min(64 << 20));
        file.take(len as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }

    pub(crate) struct File(std::fs::File);

    impl File {
        pub(crate) fn open(path: &Path) -> io::Result<File> {
            std::fs::File::open(path).map(File)
        }

        pub(crate) fn read_ranges(&mut self, ranges: &[(u64, usize)]) -> io::Result<Vec<Vec<u8>>> {
            ranges
                .iter()
                .map(|&(offset, len)| {
                    self.0.seek(SeekFrom::Start(offset))?;
                    read_up_to(&mut self.0, len)
                })
                .collect()
        }
    }
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi_host {
    use std::io;
    use std::path::{Component, Path};

    use wasi::filesystem::preopens::get_directories;
    use wasi::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
    };
    use wasi::io::streams::{InputStream, StreamError};

    use super::{EntryKind, Stat, is_absent};

    /// What the host reads at most per call (wasmtime-wasi's `MAX_READ_SIZE_ALLOC`); a shorter
    /// read of a regular file is its end.
    const CHUNK: usize = 64 * 1024;

    thread_local! {
        /// The component's preopened folders (its `files` mounts), asked once per instance.
        static PREOPENS: Vec<(Descriptor, String)> = get_directories();
    }

    fn error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            ErrorCode::NameTooLong => io::ErrorKind::InvalidFilename,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, format!("{code:?}"))
    }

    fn stream_error(e: StreamError) -> io::Error {
        match e {
            StreamError::LastOperationFailed(e) => io::Error::other(e.to_debug_string()),
            StreamError::Closed => io::Error::from(io::ErrorKind::UnexpectedEof),
        }
    }

    /// Runs `f` with the preopened folder holding `path` and the path inside it; `None` when
    /// no preopen holds it, or the path is not plain (relative, `.` or `..`): `std` then
    /// resolves it as it always did.
    fn at<R>(path: &Path, f: impl FnOnce(&Descriptor, &str) -> R) -> Option<R> {
        if !path.is_absolute()
            || path
                .components()
                .any(|c| matches!(c, Component::CurDir | Component::ParentDir))
        {
            return None;
        }
        let path = path.to_str()?;
        PREOPENS.with(|preopens| {
            let (dir, rest) = preopens
                .iter()
                .filter_map(|(dir, name)| {
                    let name = name.trim_end_matches('/');
                    let rest = path.strip_prefix(name)?;
                    (rest.is_empty() || rest.starts_with('/')).then_some((dir, name.len(), rest))
                })
                .max_by_key(|&(_, len, _)| len)
                .map(|(dir, _, rest)| (dir, rest.trim_start_matches('/')))?;
            Some(f(dir, if rest.is_empty() { "." } else { rest }))
        })
    }

    fn open(path: &Path) -> Option<io::Result<Option<Descriptor>>> {
        at(path, |dir, rel| {
            match dir.open_at(
                PathFlags::SYMLINK_FOLLOW,
                rel,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            ) {
                Ok(file) => Ok(Some(file)),
                Err(code) => {
                    let e = error(code);
                    if is_absent(&e) { Ok(None) } else { Err(e) }
                }
            }
        })
    }

    fn nanos(time: Option<wasi::clocks::wall_clock::Datetime>) -> u64 {
        time.map_or(0, |t| t.seconds * 1_000_000_000 + u64::from(t.nanoseconds))
    }

    fn kind(type_: DescriptorType) -> EntryKind {
        match type_ {
            DescriptorType::Directory => EntryKind::Dir,
            DescriptorType::RegularFile => EntryKind::File,
            _ => EntryKind::Other,
        }
    }

    pub(crate) fn list_dir(
        path: &Path,
        keep: &dyn Fn(&str) -> bool,
    ) -> io::Result<Option<Vec<(String, EntryKind)>>> {
        let listed = at(path, |dir, rel| {
            let opened;
            let folder = if rel == "." {
                dir
            } else {
                match dir.open_at(
                    PathFlags::SYMLINK_FOLLOW,
                    rel,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                ) {
                    Ok(folder) => {
                        opened = folder;
                        &opened
                    }
                    Err(ErrorCode::NoEntry) => return Ok(None),
                    Err(code) => return Err(error(code)),
                }
            };
            let entries = folder.read_directory().map_err(error)?;
            let mut out = Vec::new();
            loop {
                let entry = match entries.read_directory_entry() {
                    Ok(Some(entry)) => entry,
                    Ok(None) => break,
                    // A name that is not UTF-8 (the host reports it in its place and goes on).
                    Err(ErrorCode::IllegalByteSequence) => continue,
                    Err(code) => return Err(error(code)),
                };
                if !keep(&entry.name) {
                    continue;
                }
                let entry_kind = if entry.type_ == DescriptorType::SymbolicLink {
                    match folder.stat_at(PathFlags::SYMLINK_FOLLOW, &entry.name) {
                        Ok(stat) => kind(stat.type_),
                        Err(_) => continue,
                    }
                } else {
                    kind(entry.type_)
                };
                out.push((entry.name, entry_kind));
            }
            Ok(Some(out))
        });
        listed.unwrap_or_else(|| super::portable::list_dir(path, keep))
    }

    pub(crate) fn stat(path: &Path) -> io::Result<Option<Stat>> {
        match at(path, |dir, rel| dir.stat_at(PathFlags::SYMLINK_FOLLOW, rel)) {
            Some(Ok(stat)) => Ok(Some(Stat {
                kind: kind(stat.type_),
                mtime_ns: nanos(stat.data_modification_timestamp),
            })),
            Some(Err(ErrorCode::NoEntry)) => Ok(None),
            Some(Err(code)) => Err(error(code)),
            None => super::portable::stat(path),
        }
    }

    pub(crate) fn read_capped(path: &Path, max: u64) -> io::Result<Option<super::Capped>> {
        let file = match open(path) {
            Some(Ok(Some(file))) => file,
            Some(Ok(None)) => return Ok(None),
            Some(Err(e)) => return Err(e),
            None => return super::portable::read_capped(path, max),
        };
        let mut out = Vec::new();
        loop {
            let (bytes, end) = file.read(CHUNK as u64, out.len() as u64).map_err(error)?;
            let short = bytes.len() < CHUNK;
            out.extend_from_slice(&bytes);
            if out.len() as u64 > max {
                let size = file.stat().map_err(error)?.size;
                return Ok(Some(super::Capped::Over(size)));
            }
            if end || short {
                return Ok(Some(super::Capped::Whole(out)));
            }
        }
    }

    /// One read in flight: its stream, what it still wants, and what it got.
    struct Pending {
        stream: InputStream,
        want: usize,
        got: Vec<u8>,
        done: bool,
    }

    impl Pending {
        /// Takes what the stream has and starts its next read; `true` when the stream is
        /// waiting on the host.
        fn pump(&mut self) -> io::Result<bool> {
            while !self.done {
                if self.got.len() >= self.want {
                    self.done = true;
                    break;
                }
                let ask = (self.want - self.got.len()).min(CHUNK);
                match self.stream.read(ask as u64) {
                    Ok(bytes) if bytes.is_empty() => return Ok(true),
                    Ok(bytes) => {
                        // A short read of a regular file is its end: asking again would cost a
                        // round trip to be told so.
                        self.done = bytes.len() < ask;
                        self.got.extend_from_slice(&bytes);
                    }
                    Err(StreamError::Closed) => self.done = true,
                    Err(e) => return Err(stream_error(e)),
                }
            }
            Ok(false)
        }
    }

    /// Reads `len` bytes from each stream at once: each stream's first `read` starts the host's
    /// read in the background; then each is waited for in turn while the others go on. (One
    /// `poll` over all of them would return at the first ready and ask every unfinished stream
    /// again, host calls growing with the square of the reads.)
    fn read_all(streams: Vec<(InputStream, usize)>) -> io::Result<Vec<Vec<u8>>> {
        let mut pending: Vec<Pending> = streams
            .into_iter()
            .map(|(stream, len)| Pending {
                stream,
                want: len,
                got: Vec::with_capacity(len.min(64 << 20)),
                done: len == 0,
            })
            .collect();
        for p in &mut pending {
            p.pump()?;
        }
        for p in &mut pending {
            while p.pump()? {
                p.stream.subscribe().block();
            }
        }
        Ok(pending.into_iter().map(|p| p.got).collect())
    }

    pub(crate) enum File {
        Wasi(Descriptor),
        Std(super::portable::File),
    }

    impl File {
        pub(crate) fn open(path: &Path) -> io::Result<File> {
            match open(path) {
                Some(Ok(Some(file))) => Ok(File::Wasi(file)),
                Some(Ok(None)) => Err(io::ErrorKind::NotFound.into()),
                Some(Err(e)) => Err(e),
                None => super::portable::File::open(path).map(File::Std),
            }
        }

        pub(crate) fn read_ranges(&mut self, ranges: &[(u64, usize)]) -> io::Result<Vec<Vec<u8>>> {
            match self {
                File::Wasi(file) => read_all(
                    ranges
                        .iter()
                        .map(|&(offset, len)| {
                            Ok((file.read_via_stream(offset).map_err(error)?, len))
                        })
                        .collect::<io::Result<_>>()?,
                ),
                File::Std(file) => file.read_ranges(ranges),
            }
        }
    }
}
