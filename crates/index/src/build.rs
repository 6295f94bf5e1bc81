//! The prebuilt `build/` directory: the manifests written once by `dochub build`
//! and served as they are with `SERVE_PREBUILT`.
//!
//! Layout (all JSON exactly as the live endpoints produce it):
//!
//! ```text
//! build/manifest.json                          GET /api/manifest
//! build/manifest/<project>.json                GET /api/manifest/<project>
//! build/manifest/<project>/<subproject>.json   GET /api/manifest/<project>/<subproject>
//! build/index/                                 the search and navigation index (crate::index)
//! build/llms-full.txt, build/llms-full.json     GET /llms-full.txt and where each project is in
//!                                              it (crate::index)
//! ```

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::IndexError;
use crate::{FullSummary, Index, IndexSummary, write_index, write_prebuilt_full};
use dochub_content::ContentRoot;
use dochub_content::fsio::{self, EntryKind, read_file};
use dochub_content::is_valid_id;

/// Master manifest file in the build directory.
pub const MASTER_FILE: &str = "manifest.json";
/// Directory of project and subproject manifests in the build directory.
pub const MANIFEST_DIR: &str = "manifest";

/// The JSON bytes of a manifest, as both the live and the prebuilt path serve them.
pub fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, IndexError> {
    Ok(serde_json::to_vec(value)?)
}

/// What [`write_build`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSummary {
    /// Project manifests written.
    pub projects: usize,
    /// Subproject manifests written.
    pub subprojects: usize,
    /// Pages counted in the master manifest.
    pub documents: usize,
    /// The search and navigation index.
    pub index: IndexSummary,
    /// `llms-full.txt` (see [`crate::llms`]).
    pub llms_full: FullSummary,
}

/// Writes every manifest of `root` into `out` (created if needed) and removes
/// manifests of an earlier build that no longer exist, so none goes stale.
/// Other files in `out` are left alone. Files are overwritten in place, so two
/// builds of the same content running at once (parallel test processes) agree. The master
/// manifest is stamped with `generated_at`, the time as the caller's bodies write it.
pub fn write_build(
    root: &ContentRoot,
    out: &Path,
    generated_at: &str,
) -> Result<BuildSummary, IndexError> {
    let master = root.master_manifest(generated_at)?;
    let dir = out.join(MANIFEST_DIR);
    let mut written = BTreeSet::new();
    let mut projects = 0;
    let mut subprojects = 0;
    for p in &master.projects {
        if let Some(manifest) = root.project_manifest(&p.id)? {
            let pdir = dir.join(&p.id);
            fs::create_dir_all(&pdir).map_err(|e| IndexError::io(&pdir, e))?;
            written.insert(write(
                &dir.join(format!("{}.json", p.id)),
                &to_json(&manifest)?,
            )?);
            projects += 1;
            for s in &manifest.subprojects {
                if let Some(sm) = root.subproject_manifest(&p.id, &s.id)? {
                    written.insert(write(&pdir.join(format!("{}.json", s.id)), &to_json(&sm)?)?);
                    subprojects += 1;
                }
            }
        }
    }
    fs::create_dir_all(&dir).map_err(|e| IndexError::io(&dir, e))?;
    remove_stale(&dir, &written)?;
    let index = write_index(root, out)?;
    let llms_full = write_prebuilt_full(root, out, Index::open(out)?.build_id())?;
    // The master goes last: its presence marks a complete build.
    write(&out.join(MASTER_FILE), &to_json(&master)?)?;
    Ok(BuildSummary {
        projects,
        subprojects,
        documents: master.total_documents,
        index,
        llms_full,
    })
}

/// Deletes files under `dir` not in `keep`, then directories left empty.
fn remove_stale(dir: &Path, keep: &BTreeSet<PathBuf>) -> Result<(), IndexError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(IndexError::io(dir, e)),
    };
    for entry in entries {
        let path = entry.map_err(|e| IndexError::io(dir, e))?.path();
        let gone = |r: std::io::Result<()>| match r {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(IndexError::io(&path, e)),
            _ => Ok(()),
        };
        if path.is_dir() {
            remove_stale(&path, keep)?;
            if fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none()) {
                gone(fs::remove_dir(&path))?;
            }
        } else if !keep.contains(&path) {
            gone(fs::remove_file(&path))?;
        }
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<PathBuf, IndexError> {
    fs::write(path, bytes).map_err(|e| IndexError::io(path, e))?;
    Ok(path.to_path_buf())
}

/// Where answers may come from, as the components' `SERVE_PREBUILT` and `BUILD_DIR` say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildMode {
    /// `SERVE_PREBUILT` is `0` or `false`: every answer scans the content tree.
    Off,
    /// The default: answers come from the build directory's index and manifests when they
    /// are there and match the content, else from the content tree.
    Auto(PathBuf),
    /// `SERVE_PREBUILT` set to anything else: as `Auto`, but a missing build is an error
    /// naming the folder rather than a quiet fallback.
    Required(PathBuf),
}

/// The build folder `BUILD_DIR` names (unset and blank are the same), `/build` by default,
/// whether or not `SERVE_PREBUILT` lets answers come from it.
pub fn build_dir_setting(build_dir: Option<&str>) -> PathBuf {
    PathBuf::from(
        build_dir
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .unwrap_or("/build"),
    )
}

impl BuildMode {
    /// Reads the two settings (unset and blank are the same); `BUILD_DIR` defaults to `/build`.
    ///
    /// ```
    /// use dochub_index::build::BuildMode;
    /// assert_eq!(BuildMode::from_settings(None, None), BuildMode::Auto("/build".into()));
    /// assert_eq!(BuildMode::from_settings(Some("false"), None), BuildMode::Off);
    /// assert_eq!(BuildMode::from_settings(Some("1"), Some("/b")), BuildMode::Required("/b".into()));
    /// ```
    pub fn from_settings(serve_prebuilt: Option<&str>, build_dir: Option<&str>) -> BuildMode {
        let dir = build_dir_setting(build_dir);
        match serve_prebuilt.map(str::trim) {
            None | Some("") => BuildMode::Auto(dir),
            Some("0" | "false") => BuildMode::Off,
            Some(_) => BuildMode::Required(dir),
        }
    }

    /// The build folder, and whether it must be there; `None` when answers never come from
    /// a build.
    pub fn dir(&self) -> Option<(&Path, bool)> {
        match self {
            BuildMode::Off => None,
            BuildMode::Auto(dir) => Some((dir, false)),
            BuildMode::Required(dir) => Some((dir, true)),
        }
    }
}

/// A prebuilt build directory, opened for serving.
#[derive(Debug, Clone)]
pub struct Prebuilt {
    dir: PathBuf,
}

impl Prebuilt {
    /// Opens a build directory; it must hold `manifest.json`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Prebuilt, IndexError> {
        let dir = dir.as_ref().to_path_buf();
        // One `stat` (`std`'s `is_file` is two host round trips in a component).
        match fsio::stat(&dir.join(MASTER_FILE)) {
            Ok(Some(found)) if found.kind == EntryKind::File => Ok(Prebuilt { dir }),
            _ => Err(IndexError::PrebuiltMissing { path: dir }),
        }
    }

    /// A build directory whose `manifest.json` is not looked for: reading it says whether it
    /// is there ([`Prebuilt::master_manifest`]).
    pub(crate) fn unchecked(dir: impl AsRef<Path>) -> Prebuilt {
        Prebuilt {
            dir: dir.as_ref().to_path_buf(),
        }
    }

    /// The master manifest's JSON.
    pub fn master_manifest(&self) -> Result<Vec<u8>, IndexError> {
        read_file(&self.dir.join(MASTER_FILE))?.ok_or_else(|| IndexError::PrebuiltMissing {
            path: self.dir.clone(),
        })
    }

    /// A project manifest's JSON, or `None` if the project was not built.
    pub fn project_manifest(&self, project: &str) -> Result<Option<Vec<u8>>, IndexError> {
        if !is_valid_id(project) {
            return Ok(None);
        }
        Ok(read_file(
            &self.dir.join(MANIFEST_DIR).join(format!("{project}.json")),
        )?)
    }

    /// A subproject manifest's JSON, or `None` if it was not built.
    pub fn subproject_manifest(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<Vec<u8>>, IndexError> {
        if !is_valid_id(project) || !is_valid_id(subproject) {
            return Ok(None);
        }
        Ok(read_file(
            &self
                .dir
                .join(MANIFEST_DIR)
                .join(project)
                .join(format!("{subproject}.json")),
        )?)
    }
}
