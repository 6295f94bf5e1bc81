//! The content tree on disk: projects, subprojects and pages.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::ContentError;
use crate::frontmatter::parse_page;
use crate::fsio::{Capped, EntryKind, Kind, absent_or_error, list};
use crate::limits::{MAX_PAGE_BYTES, MAX_YAML_BYTES, oversized_page};
use crate::model::{
    Page, PageSummary, Project, ProjectOutline, SchemaCoverage, Subproject, reading_order,
};
use crate::segment::is_valid_id;
use crate::versions::versions_field;
use crate::yaml::{order_field, parse_yaml, str_field};

/// Top-level directory that holds daily reports; never a project.
pub const REPORTS_DIR: &str = "reports";
/// File in a project directory with its display name and description.
pub const PROJECT_META: &str = "_project.yaml";
/// File in a subproject directory with its name, description and schema coverage.
pub const SUBPROJECT_META: &str = "_subproject.yaml";

/// An open content root. Cheap to create; every call reads the disk afresh (a Spin component
/// lives for one request, so there is nothing to cache), but for the root's own modification
/// time, taken when it is opened: open a root per request.
#[derive(Debug, Clone)]
pub struct ContentRoot {
    root: PathBuf,
    /// The root folder's modification time when it was opened (0: none, or not looked at).
    mtime_ns: u64,
}

/// Meta from `_project.yaml` / `_subproject.yaml`.
struct Meta {
    value: serde_json::Value,
    error: Option<String>,
}

impl ContentRoot {
    /// Opens a content root, checking that it is a readable directory.
    ///
    /// ```
    /// let err = dochub_content::ContentRoot::open("/no/such/dir").unwrap_err();
    /// assert!(err.to_string().contains("does not exist"));
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<ContentRoot, ContentError> {
        let root = path.as_ref().to_path_buf();
        // One `stat` (every request opens the root): a folder that cannot be listed fails at
        // its first listing instead.
        match crate::fsio::stat(&root) {
            Ok(None) => Err(ContentError::RootMissing { path: root }),
            Ok(Some(found)) if found.kind != EntryKind::Dir => {
                Err(ContentError::RootNotDirectory { path: root })
            }
            Ok(Some(found)) => Ok(ContentRoot {
                root,
                mtime_ns: found.mtime_ns,
            }),
            Err(e) => Err(ContentError::io(root, e)),
        }
    }

    /// The root folder's modification time as [`ContentRoot::open`] found it, from the same
    /// `stat`: what the prebuilt index compares with its record, without a second look.
    pub fn mtime_ns(&self) -> u64 {
        self.mtime_ns
    }

    /// The root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// All projects, in [`reading_order`].
    pub fn projects(&self) -> Result<Vec<Project>, ContentError> {
        let mut out = Vec::new();
        for id in list(&self.root, Kind::Dir)? {
            if id != REPORTS_DIR {
                out.push(self.load_project(id)?);
            }
        }
        out.sort_by(|a, b| reading_order((a.order, &a.name, &a.id), (b.order, &b.name, &b.id)));
        Ok(out)
    }

    /// One project, or `None` if there is no such project directory.
    pub fn project(&self, id: &str) -> Result<Option<Project>, ContentError> {
        if !self.is_project(id)? {
            return Ok(None);
        }
        self.load_project(id.to_owned()).map(Some)
    }

    /// The subprojects of a project, in [`reading_order`] (`None` if no such project).
    pub fn subprojects(&self, project: &str) -> Result<Option<Vec<Subproject>>, ContentError> {
        if !self.is_project(project)? {
            return Ok(None);
        }
        let dir = self.root.join(project);
        let mut out = Vec::new();
        for id in list(&dir, Kind::Dir)? {
            out.push(self.load_subproject(project, id)?);
        }
        out.sort_by(|a, b| reading_order((a.order, &a.name, &a.id), (b.order, &b.name, &b.id)));
        Ok(Some(out))
    }

    /// One subproject, or `None` if there is no such directory.
    pub fn subproject(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<Subproject>, ContentError> {
        if !self.is_project(project)? || !is_valid_id(subproject) {
            return Ok(None);
        }
        if !is_dir(&self.root.join(project).join(subproject))? {
            return Ok(None);
        }
        self.load_subproject(project, subproject.to_owned())
            .map(Some)
    }

    /// The ids of a subproject's pages, sorted (empty if it does not exist).
    pub fn page_ids(&self, project: &str, subproject: &str) -> Result<Vec<String>, ContentError> {
        if !self.is_project(project)? || !is_valid_id(subproject) {
            return Ok(Vec::new());
        }
        let dir = self.root.join(project).join(subproject);
        if !is_dir(&dir)? {
            return Ok(Vec::new());
        }
        list(&dir, Kind::Page)
    }

    /// The ids of a subproject's pages in [`reading_order`], without keeping the pages: each
    /// is read for its `order` and title and dropped, so a subproject of any size costs one
    /// page at a time (for what streams its pages, like `/llms-full.txt`).
    pub fn page_ids_in_order(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Vec<String>, ContentError> {
        Ok(self
            .page_summaries(project, subproject)?
            .into_iter()
            .map(|page| page.id)
            .collect())
    }

    /// A subproject's pages as summaries, in [`reading_order`]: each page is read and dropped
    /// in turn, so a list holds titles, never the subproject's text ([`PageSource::Tree`]).
    pub fn page_summaries(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Vec<PageSummary>, ContentError> {
        let mut keyed = Vec::new();
        for id in self.page_ids(project, subproject)? {
            if let Some(page) = self.page(project, subproject, &id)? {
                keyed.push((page.parsed.frontmatter.order, PageSummary::of_page(page)));
            }
        }
        keyed.sort_by(|a, b| reading_order((a.0, &a.1.title, &a.1.id), (b.0, &b.1.title, &b.1.id)));
        Ok(keyed.into_iter().map(|(_, page)| page).collect())
    }

    /// A subproject's pages, read and parsed, in [`reading_order`].
    pub fn pages(&self, project: &str, subproject: &str) -> Result<Vec<Page>, ContentError> {
        let mut out = Vec::new();
        for id in self.page_ids(project, subproject)? {
            // A page removed between listing and reading is simply skipped.
            if let Some(page) = self.page(project, subproject, &id)? {
                out.push(page);
            }
        }
        out.sort_by(|a, b| reading_order(a.reading_key(), b.reading_key()));
        Ok(out)
    }

    /// One page, or `None` if any id is invalid or the `.md` file does not exist.
    pub fn page(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<Option<Page>, ContentError> {
        let Some(raw) = self.raw(project, subproject, page)? else {
            return Ok(None);
        };
        Ok(Some(Page {
            project: project.to_owned(),
            subproject: subproject.to_owned(),
            id: page.to_owned(),
            parsed: parse_page(page, &raw),
            raw,
        }))
    }

    /// The raw bytes of a page, or `None` if any id is invalid or the file does not exist.
    pub fn raw(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<Option<Vec<u8>>, ContentError> {
        match self.page_path(project, subproject, page) {
            Some(path) => read_page_file(&path, page),
            None => Ok(None),
        }
    }

    /// [`ContentRoot::raw`] of the tree at `root` without the `stat` of the root that
    /// [`ContentRoot::open`] makes: `Some` when the page's file is there, which proves the
    /// root is; `None` on a miss or an error, which the opened root then answers with its
    /// reasons. In a component that saves one of a raw page's three host round trips.
    pub fn raw_if_present(
        root: &Path,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Option<Vec<u8>> {
        let unchecked = ContentRoot {
            root: root.to_path_buf(),
            mtime_ns: 0,
        };
        unchecked.raw(project, subproject, page).ok().flatten()
    }

    /// Whether a page's file exists: one `stat`, the file not read.
    pub fn has_page(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<bool, ContentError> {
        let Some(path) = self.page_path(project, subproject, page) else {
            return Ok(false);
        };
        match crate::fsio::is_dir(&path) {
            Ok(found) => Ok(found == Some(false)),
            Err(e) if crate::fsio::is_absent(&e) => Ok(false),
            Err(e) => Err(ContentError::io(path, e)),
        }
    }

    /// The file of a page, or `None` if any id is invalid (or names the reports folder).
    fn page_path(&self, project: &str, subproject: &str, page: &str) -> Option<PathBuf> {
        let valid = is_valid_id(project)
            && project != REPORTS_DIR
            && is_valid_id(subproject)
            && is_valid_id(page);
        valid.then(|| {
            self.root
                .join(project)
                .join(subproject)
                .join(format!("{page}.md"))
        })
    }

    /// `_master/index.md`, the hub's home document, if present.
    pub fn master_index(&self) -> Result<Option<Page>, ContentError> {
        let Some(raw) = read_page_file(&self.root.join("_master").join("index.md"), "index")?
        else {
            return Ok(None);
        };
        Ok(Some(Page {
            project: "_master".into(),
            subproject: String::new(),
            id: "index".into(),
            parsed: parse_page("index", &raw),
            raw,
        }))
    }

    /// Every page of every subproject, as `(project, subproject, page)` ids, sorted by
    /// the joined path `<project>/<subproject>/<page>`.
    pub fn all_page_paths(&self) -> Result<Vec<(String, String, String)>, ContentError> {
        let mut out = Vec::new();
        for p in list(&self.root, Kind::Dir)? {
            if p == REPORTS_DIR {
                continue;
            }
            for s in list(&self.root.join(&p), Kind::Dir)? {
                for page in list(&self.root.join(&p).join(&s), Kind::Page)? {
                    out.push((p.clone(), s.clone(), page));
                }
            }
        }
        out.sort_by(|a, b| {
            let ka = [a.0.as_str(), "/", &a.1, "/", &a.2].concat();
            let kb = [b.0.as_str(), "/", &b.1, "/", &b.2].concat();
            ka.cmp(&kb)
        });
        Ok(out)
    }

    /// Every project with the names of its subprojects, in [`reading_order`], reading only the
    /// `_project.yaml` and `_subproject.yaml` files and the project folders: what the docs
    /// sidebar shows, without listing any subproject's pages (a page costs its own subproject,
    /// not the whole tree).
    pub fn sidebar(&self) -> Result<Vec<ProjectOutline>, ContentError> {
        let mut out = Vec::new();
        for id in list(&self.root, Kind::Dir)? {
            if id == REPORTS_DIR {
                continue;
            }
            let dir = self.root.join(&id);
            let meta = read_meta(&dir.join(PROJECT_META))?;
            let mut subs = Vec::new();
            for s in list(&dir, Kind::Dir)? {
                let meta = read_meta(&dir.join(&s).join(SUBPROJECT_META))?;
                let name = str_field(&meta.value, "name").unwrap_or_else(|| s.clone());
                subs.push((order_field(&meta.value).ok().flatten(), name, s));
            }
            subs.sort_by(|a, b| reading_order((a.0, &a.1, &a.2), (b.0, &b.1, &b.2)));
            let name = str_field(&meta.value, "name").unwrap_or_else(|| id.clone());
            let order = order_field(&meta.value).ok().flatten();
            let ids: Vec<String> = subs.iter().map(|(_, _, s)| s.clone()).collect();
            let (versions, _) = versions_field(&meta.value, &ids);
            out.push((
                order,
                ProjectOutline {
                    name,
                    id,
                    subprojects: subs.into_iter().map(|(_, n, s)| (s, n)).collect(),
                    versions,
                },
            ));
        }
        out.sort_by(|(a_order, a), (b_order, b)| {
            reading_order((*a_order, &a.name, &a.id), (*b_order, &b.name, &b.id))
        });
        Ok(out.into_iter().map(|(_, project)| project).collect())
    }

    fn is_project(&self, id: &str) -> Result<bool, ContentError> {
        if !is_valid_id(id) || id == REPORTS_DIR {
            return Ok(false);
        }
        is_dir(&self.root.join(id))
    }

    fn load_project(&self, id: String) -> Result<Project, ContentError> {
        let dir = self.root.join(&id);
        let meta = read_meta(&dir.join(PROJECT_META))?;
        let subs = list(&dir, Kind::Dir)?;
        let mut doc_count = 0;
        for s in &subs {
            doc_count += list(&dir.join(s), Kind::Page)?.len();
        }
        let (order, mut meta_warnings) = match order_field(&meta.value) {
            Ok(order) => (order, Vec::new()),
            Err(warning) => (None, vec![warning]),
        };
        let (versions, version_warnings) = versions_field(&meta.value, &subs);
        meta_warnings.extend(version_warnings);
        Ok(Project {
            name: str_field(&meta.value, "name").unwrap_or_else(|| id.clone()),
            description: str_field(&meta.value, "description").unwrap_or_default(),
            subproject_count: subs.len(),
            doc_count,
            order,
            versions,
            meta_error: meta.error,
            meta_warnings,
            id,
        })
    }

    fn load_subproject(&self, project: &str, id: String) -> Result<Subproject, ContentError> {
        let dir = self.root.join(project).join(&id);
        let meta = read_meta(&dir.join(SUBPROJECT_META))?;
        let mut warnings = Vec::new();
        let mut coverage = SchemaCoverage::default();
        match meta.value.get("schema_coverage") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Object(map)) => {
                for (key, value) in map {
                    match (coverage.slot(key), value) {
                        (Some(slot), serde_json::Value::Bool(b)) => *slot = *b,
                        (Some(_), _) => warnings.push(format!(
                            "schema_coverage.{key} is not true or false; read as false"
                        )),
                        (None, _) => warnings.push(format!(
                            "schema_coverage.{key} is not one of {}; ignored",
                            SchemaCoverage::KEYS.join(", ")
                        )),
                    }
                }
            }
            Some(_) => warnings.push("schema_coverage is not a mapping; read as all false".into()),
        }
        let order = order_field(&meta.value).unwrap_or_else(|warning| {
            warnings.push(warning);
            None
        });
        Ok(Subproject {
            project: project.to_owned(),
            name: str_field(&meta.value, "name").unwrap_or_else(|| id.clone()),
            description: str_field(&meta.value, "description").unwrap_or_default(),
            doc_count: list(&dir, Kind::Page)?.len(),
            schema_coverage: coverage,
            order,
            meta_error: meta.error,
            meta_warnings: warnings,
            id,
        })
    }
}

fn is_dir(path: &Path) -> Result<bool, ContentError> {
    match crate::fsio::is_dir(path) {
        Ok(found) => Ok(found == Some(true)),
        Err(e) if e.kind() == ErrorKind::NotADirectory => Ok(false),
        Err(e) => Err(ContentError::io(path, e)),
    }
}

fn read_meta(path: &Path) -> Result<Meta, ContentError> {
    let bytes = match crate::fsio::read_capped(path, MAX_YAML_BYTES as u64) {
        Ok(Some(Capped::Whole(bytes))) => Some(bytes),
        Ok(Some(Capped::Over(size))) => {
            return Ok(Meta {
                value: serde_json::Value::Null,
                error: Some(format!(
                    "invalid YAML: the file is {size} bytes, over the limit of {MAX_YAML_BYTES}"
                )),
            });
        }
        Ok(None) => None,
        Err(e) => absent_or_error(path, e)?,
    };
    let Some(bytes) = bytes else {
        return Ok(Meta {
            value: serde_json::Value::Null,
            error: None,
        });
    };
    let text = String::from_utf8_lossy(&bytes);
    Ok(match parse_yaml(&text) {
        Ok(value @ (serde_json::Value::Object(_) | serde_json::Value::Null)) => {
            Meta { value, error: None }
        }
        Ok(_) => Meta {
            value: serde_json::Value::Null,
            error: Some("not a mapping of `key: value` lines".into()),
        },
        Err(e) => Meta {
            value: serde_json::Value::Null,
            error: Some(format!("invalid YAML: {e}")),
        },
    })
}

/// A page file's bytes, or in place of a file over [`MAX_PAGE_BYTES`] a short page saying so
/// ([`oversized_page`]): what every reader, live or prebuilt, serves for it.
fn read_page_file(path: &Path, id: &str) -> Result<Option<Vec<u8>>, ContentError> {
    match crate::fsio::read_capped(path, MAX_PAGE_BYTES) {
        Ok(Some(Capped::Whole(bytes))) => Ok(Some(bytes)),
        Ok(Some(Capped::Over(size))) => Ok(Some(oversized_page(id, size))),
        Ok(None) => Ok(None),
        Err(e) => absent_or_error(path, e),
    }
}
