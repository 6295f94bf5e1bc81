//! The prebuilt `/llms-full.txt`: written by `dochub build` beside the index with a record of
//! where each project's pages are in it, and copied out as it is while it belongs to the index.

use std::io::Write;

use crate::IndexError;
use dochub_content::CatalogError;
use dochub_content::ContentRoot;
use dochub_content::fsio::read_file;
use dochub_content::llms::FileRanges;
use dochub_content::llms::{LlmsError, header, write_project};

/// The prebuilt `/llms-full.txt` in the build directory (written by `dochub build`).
pub const PREBUILT_FULL: &str = "llms-full.txt";
/// Where each project's pages are in [`PREBUILT_FULL`], and which build it belongs to.
pub const PREBUILT_RECORD: &str = "llms-full.json";

/// What [`write_prebuilt_full`] records beside the file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FullRecord {
    /// The id of the index built with it ([`crate::Index::build_id`]).
    build_id: u64,
    /// Hash of `_master/index.md` (which gives the header), 0 when there is none.
    master: u64,
    /// Bytes of the header.
    header: u64,
    /// Each project's pages: id, first byte, end byte.
    projects: Vec<(String, u64, u64)>,
    /// Where each page's entry ends, in file order: what parts are cut by.
    page_ends: Vec<u64>,
    /// Size of the whole file.
    size: u64,
}

/// What [`write_prebuilt_full`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FullSummary {
    /// Pages written.
    pub pages: usize,
    /// Bytes of `llms-full.txt`.
    pub bytes: u64,
}

/// Counts what passes through to the inner writer.
struct Counting<W: Write> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn master_hash(root: &ContentRoot) -> Result<u64, IndexError> {
    Ok(root
        .master_index()?
        .map_or(0, |page| crate::hash(&page.raw)))
}

/// Writes `<out>/llms-full.txt` and its record for the index built as `build_id`, each
/// through a temporary file and a rename (a reader never sees half a file; the record last).
pub fn write_prebuilt_full(
    root: &ContentRoot,
    out: &std::path::Path,
    build_id: u64,
) -> Result<FullSummary, IndexError> {
    let path = out.join(PREBUILT_FULL);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let file = std::fs::File::create(&tmp).map_err(|e| IndexError::io(&tmp, e))?;
    let mut w = Counting {
        inner: std::io::BufWriter::new(file),
        written: 0,
    };
    let mut projects = Vec::new();
    let mut page_ends = Vec::new();
    let mut pages = 0;
    let mut header_len = 0;
    let mut write_all = |w: &mut Counting<_>| -> Result<(), LlmsError> {
        w.write_all(header(&root.site_intro()?).as_bytes())?;
        header_len = w.written;
        for p in root.projects()? {
            let start = w.written;
            pages += write_project(root, &p.id, &mut *w, &mut page_ends, start)?;
            projects.push((p.id, start, w.written));
        }
        w.flush()?;
        Ok(())
    };
    if let Err(e) = write_all(&mut w) {
        drop(w);
        let _ = std::fs::remove_file(&tmp);
        return Err(match e {
            LlmsError::Content(e) => e.into(),
            LlmsError::Write(e) => IndexError::io(&tmp, e),
        });
    }
    let size = w.written;
    drop(w);
    std::fs::rename(&tmp, &path).map_err(|e| IndexError::io(&path, e))?;
    let record = FullRecord {
        build_id,
        master: master_hash(root)?,
        header: header_len,
        projects,
        page_ends,
        size,
    };
    let record_path = out.join(PREBUILT_RECORD);
    let tmp = record_path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(&record)?).map_err(|e| IndexError::io(&tmp, e))?;
    std::fs::rename(&tmp, &record_path).map_err(|e| IndexError::io(&record_path, e))?;
    Ok(FullSummary { pages, bytes: size })
}

/// The record of the prebuilt file, if it belongs to the build `build_id` and the site header
/// is unchanged; else [`CatalogError::Stale`] saying why. The folders were checked by the caller.
fn current_record(
    build_dir: &std::path::Path,
    build_id: u64,
    root: &ContentRoot,
) -> Result<(FullRecord, std::path::PathBuf), CatalogError> {
    let record_path = build_dir.join(PREBUILT_RECORD);
    let Some(bytes) = read_file(&record_path)? else {
        return Err(CatalogError::Stale(format!(
            "`{}` is missing (rebuild with `dochub build`)",
            record_path.display()
        )));
    };
    let path = build_dir.join(PREBUILT_FULL);
    let record: FullRecord = serde_json::from_slice(&bytes).map_err(|e| {
        CatalogError::Stale(format!(
            "`{}` is unreadable ({e}; rebuild with `dochub build`)",
            record_path.display()
        ))
    })?;
    let size = std::fs::metadata(&path).map_or(u64::MAX, |m| m.len());
    if record.build_id != build_id || record.size != size {
        return Err(CatalogError::Stale(format!(
            "`{}` does not belong to the index (rebuild with `dochub build`)",
            path.display()
        )));
    }
    if record.master != master_hash(root)? {
        return Err(CatalogError::Stale(
            "`_master/index.md` changed since the build".into(),
        ));
    }
    Ok((record, path))
}

/// The entries (start, end) of the pages of `project` (all when `None`), in order.
fn entries(
    record: &FullRecord,
    path: &std::path::Path,
    project: Option<&str>,
) -> Result<Vec<(u64, u64)>, CatalogError> {
    let mut entries = Vec::new();
    let mut found = false;
    for (id, first, end) in &record.projects {
        if project.is_some_and(|p| p != id) {
            continue;
        }
        found = true;
        let mut start = *first;
        for &page_end in record
            .page_ends
            .iter()
            .filter(|e| **e > *first && **e <= *end)
        {
            entries.push((start, page_end));
            start = page_end;
        }
    }
    if project.is_some() && !found {
        return Err(CatalogError::Stale(format!(
            "no project `{}` in `{}`",
            project.unwrap_or_default(),
            path.display()
        )));
    }
    Ok(entries)
}

/// The length of each page's entry in the prebuilt file, for `project` (all when `None`).
pub(crate) fn prebuilt_entry_sizes(
    build_dir: &std::path::Path,
    build_id: u64,
    root: &ContentRoot,
    project: Option<&str>,
) -> Result<Vec<u64>, CatalogError> {
    let (record, path) = current_record(build_dir, build_id, root)?;
    Ok(entries(&record, &path, project)?
        .into_iter()
        .map(|(start, end)| end - start)
        .collect())
}

/// The ranges of the prebuilt file that answer `/llms-full.txt` for `project` (all when
/// `None`; only the pages at positions `pages` when given): the header first, then the pages.
pub(crate) fn prebuilt_ranges(
    build_dir: &std::path::Path,
    build_id: u64,
    root: &ContentRoot,
    project: Option<&str>,
    pages: Option<std::ops::Range<usize>>,
) -> Result<FileRanges, CatalogError> {
    let (record, path) = current_record(build_dir, build_id, root)?;
    let entries = entries(&record, &path, project)?;
    let chosen = match pages {
        Some(range) => entries.get(range).unwrap_or_default(),
        None => &entries[..],
    };
    let mut ranges = vec![(0, record.header)];
    // Adjacent entries are one range.
    for &(start, end) in chosen {
        let last = ranges.len() - 1;
        if last > 0 && ranges[last].1 == start {
            ranges[last].1 = end;
        } else {
            ranges.push((start, end));
        }
    }
    Ok(FileRanges { path, ranges })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::IndexCatalog;
    use crate::build::write_build;
    use dochub_content::Catalog;
    use dochub_content::llms::{FullText, llms_txt, split_parts, write_full};

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let w = |path: &str, text: &str| {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        w("beta/_project.yaml", "name: Beta\ndescription: Second\n");
        w(
            "beta/core/intro.md",
            "---\ntitle: Intro\n---\nBody of intro\n",
        );
        w(
            "beta/core/old.md",
            "---\ntitle: Old\nllms: optional\n---\nOld",
        );
        w("alpha/api/_subproject.yaml", "name: API\n");
        w("alpha/api/routes.md", "# Routes\n\nText.\n");
        w("alpha/empty/.keep", "");
        dir
    }

    fn text(full: &FullText) -> String {
        let mut out = Vec::new();
        full.write_to(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_index_answers_the_llms_files_as_the_tree_does() {
        let dir = tree();
        let build = tempfile::tempdir().unwrap();
        let root = ContentRoot::open(dir.path()).unwrap();
        let summary = write_build(&root, build.path(), "2026-01-02T03:04:05.678Z").unwrap();
        assert_eq!(summary.llms_full.pages, 3);
        assert_eq!(
            summary.llms_full.bytes,
            fs::metadata(build.path().join(PREBUILT_FULL))
                .unwrap()
                .len()
        );
        let index = IndexCatalog::new(&root, build.path(), true, None);
        let intro = root.site_intro().unwrap();
        assert_eq!(
            llms_txt(
                &intro,
                &index.llms_outline().unwrap(),
                1,
                "http://localhost"
            ),
            llms_txt(
                &intro,
                &Catalog::llms_outline(&root).unwrap(),
                1,
                "http://localhost"
            )
        );
        for project in [None, Some("alpha"), Some("beta")] {
            let prebuilt = index.llms_full(project, None).unwrap();
            assert!(matches!(prebuilt, FullText::Prebuilt(..)), "{prebuilt:?}");
            let mut live = Vec::new();
            write_full(&root, &intro, project, &mut live).unwrap();
            assert_eq!(text(&prebuilt), String::from_utf8(live).unwrap());
        }
        // Parts of one page each: the same sizes, pages and bytes from either catalog.
        for project in [None, Some("alpha"), Some("beta")] {
            let sizes = index.llms_entry_sizes(project).unwrap();
            assert_eq!(sizes, Catalog::llms_entry_sizes(&root, project).unwrap());
            let parts = split_parts(&sizes, 1);
            assert_eq!(parts.len(), sizes.len().max(1));
            let mut whole = String::new();
            for (n, pages) in parts.into_iter().enumerate() {
                let note = format!("part {n}\n");
                let part = Some((pages, note.clone()));
                let prebuilt = text(&index.llms_full(project, part.clone()).unwrap());
                assert_eq!(
                    prebuilt,
                    text(&Catalog::llms_full(&root, project, part).unwrap())
                );
                let (head, rest) = prebuilt.split_once(&note).unwrap();
                if n == 0 {
                    whole.push_str(head);
                }
                whole.push_str(rest);
            }
            assert_eq!(whole, text(&index.llms_full(project, None).unwrap()));
        }
    }

    #[test]
    fn the_prebuilt_full_text_is_stale_once_it_no_longer_belongs_to_the_index() {
        let dir = tree();
        let build = tempfile::tempdir().unwrap();
        let root = ContentRoot::open(dir.path()).unwrap();
        write_build(&root, build.path(), "2026-01-02T03:04:05.678Z").unwrap();
        let stale = |project| {
            let index = IndexCatalog::new(&root, build.path(), true, None);
            match index.llms_full(project, None) {
                Err(CatalogError::Stale(reason)) => reason,
                other => panic!("{other:?}"),
            }
        };
        // A new master page changes the header (the root's time kept, so that only the
        // record can tell).
        let root_time = fs::metadata(dir.path()).unwrap().modified().unwrap();
        fs::create_dir_all(dir.path().join("_master")).unwrap();
        fs::write(dir.path().join("_master/index.md"), "# New name\n").unwrap();
        fs::File::open(dir.path())
            .unwrap()
            .set_modified(root_time)
            .unwrap();
        assert!(stale(None).contains("_master"));
        fs::remove_dir_all(dir.path().join("_master")).unwrap();
        fs::File::open(dir.path())
            .unwrap()
            .set_modified(root_time)
            .unwrap();
        // A rebuilt index beside an old llms-full.txt.
        let record = fs::read(build.path().join(PREBUILT_RECORD)).unwrap();
        fs::write(dir.path().join("beta/core/new.md"), "New").unwrap();
        crate::write_index(&root, build.path()).unwrap();
        fs::write(build.path().join(PREBUILT_RECORD), record).unwrap();
        assert!(stale(None).contains("does not belong"));
        // No record at all.
        fs::remove_file(build.path().join(PREBUILT_RECORD)).unwrap();
        assert!(stale(Some("beta")).contains("missing"));
    }
}
