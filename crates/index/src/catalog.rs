//! The prebuilt index as a [`Catalog`], and [`Source`], which picks the catalog for a request
//! and falls back to the live tree when the index cannot answer.

use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use crate::build::{BuildMode, Prebuilt};
use crate::{Checked, Index, IndexError, Memo, Scope};

use dochub_content::llms::{FullText, Outline, OutlineProject, OutlineSubproject};
use dochub_content::{
    Catalog, CatalogError, ManifestName, PagePath, PageSource, PageSummary, ProjectOutline,
    ReadError, SubprojectSummary,
};
use dochub_content::{ContentRoot, Project};
use dochub_search::{SearchResults, Within};

/// Where a request's answers come from: the content tree, and the build beside it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The content root (`CONTENT_DIR`).
    pub content_dir: PathBuf,
    /// Whether and where the prebuilt index and manifests are read (`SERVE_PREBUILT`,
    /// `BUILD_DIR`).
    pub build: BuildMode,
    /// Where a copied build's check is kept between requests (the key-value store).
    pub memo: Option<Memo>,
}

impl Source {
    /// The source a component reads from its environment: `CONTENT_DIR` (default `/content`),
    /// `SERVE_PREBUILT` and `BUILD_DIR` ([`BuildMode::from_settings`]); unset and blank are
    /// the same.
    pub fn from_env(memo: Option<Memo>) -> Source {
        let env = |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Source {
            content_dir: env("CONTENT_DIR")
                .unwrap_or_else(|| "/content".into())
                .into(),
            build: BuildMode::from_settings(
                env("SERVE_PREBUILT").as_deref(),
                env("BUILD_DIR").as_deref(),
            ),
            memo,
        }
    }

    /// Runs `read` on the prebuilt index when there is one, and once more on the live tree
    /// when the index could not answer it; the warning then says why, for the log. A reader is
    /// written once, against `&dyn Catalog`, and never learns which catalog answered.
    pub fn read<T, E: ReadError>(
        &self,
        read: impl Fn(&dyn Catalog) -> Result<T, E>,
    ) -> Result<(T, Option<String>), E> {
        let root = ContentRoot::open(&self.content_dir).map_err(CatalogError::from)?;
        let mut warning = None;
        if let Some((dir, required)) = self.build.dir() {
            let prebuilt = IndexCatalog::new(&root, dir, required, self.memo.as_ref());
            match read(&prebuilt) {
                Ok(value) => return Ok((value, None)),
                Err(e) => match e.catalog() {
                    Some(CatalogError::Stale(reason)) => {
                        warning = Some(format!("answering from the content tree: {reason}"));
                    }
                    Some(CatalogError::NoIndex) => {}
                    _ => return Err(e),
                },
            }
        }
        read(&root).map(|value| (value, warning))
    }
}

/// The prebuilt index of a build folder, opened on first use, answering only while the folders
/// each answer depends on are as the build recorded them (see [`Index::check`]).
pub struct IndexCatalog<'a> {
    root: &'a ContentRoot,
    build_dir: &'a Path,
    /// `SERVE_PREBUILT` set: a missing build is an error, not a quiet fallback.
    required: bool,
    memo: Option<&'a Memo>,
    index: OnceCell<Index>,
    /// The folders found as built so far: each is looked at once per request.
    checked: RefCell<Checked>,
}

impl<'a> IndexCatalog<'a> {
    /// The catalog of the build in `build_dir` for the tree at `root`.
    pub fn new(
        root: &'a ContentRoot,
        build_dir: &'a Path,
        required: bool,
        memo: Option<&'a Memo>,
    ) -> IndexCatalog<'a> {
        IndexCatalog {
            root,
            build_dir,
            required,
            memo,
            index: OnceCell::new(),
            checked: RefCell::default(),
        }
    }

    /// The index, opened the first time an answer needs it (a raw page or a report never does).
    fn index(&self) -> Result<&Index, CatalogError> {
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        if self.required {
            Prebuilt::open(self.build_dir)?;
        }
        let index = match Index::open(self.build_dir) {
            Ok(index) => index.with_memo(self.memo.cloned()),
            Err(IndexError::PrebuiltMissing { .. }) if !self.required => {
                return Err(CatalogError::NoIndex);
            }
            Err(e @ IndexError::PrebuiltMissing { .. }) => return Err(e.into()),
            Err(e) => {
                return Err(CatalogError::Stale(format!(
                    "not using the prebuilt index: {e}"
                )));
            }
        };
        Ok(self.index.get_or_init(|| index))
    }

    /// The index, once the folders `scope` depends on are found as built.
    fn current(&self, scope: Scope<'_>) -> Result<&Index, CatalogError> {
        let index = self.index()?;
        index.check_once(self.root, scope, &mut self.checked.borrow_mut())?;
        Ok(index)
    }
}

impl Catalog for IndexCatalog<'_> {
    fn root(&self) -> &ContentRoot {
        self.root
    }

    fn outline(&self) -> Result<Vec<ProjectOutline>, CatalogError> {
        let index = self.current(Scope::Outline)?;
        Ok(index
            .projects()
            .iter()
            .map(|p| ProjectOutline {
                id: p.id.clone(),
                name: p.name.clone(),
                subprojects: p
                    .subprojects
                    .iter()
                    .map(|s| (s.id.clone(), s.name.clone()))
                    .collect(),
                versions: p.versions.clone(),
            })
            .collect())
    }

    fn projects(&self) -> Result<Vec<Project>, CatalogError> {
        let index = self.current(Scope::Everything)?;
        Ok(index.projects().iter().map(Index::project_of).collect())
    }

    fn project(&self, id: &str) -> Result<Option<(Project, Vec<SubprojectSummary>)>, CatalogError> {
        let index = self.current(Scope::Project(id))?;
        Ok(index.project(id).map(|p| {
            let subprojects = p.subprojects.iter().map(Index::subproject_of).collect();
            (Index::project_of(p), subprojects)
        }))
    }

    fn subproject(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<(Project, SubprojectSummary)>, CatalogError> {
        let index = self.current(Scope::Subproject(project, subproject))?;
        let (Some(p), Some(s)) = (
            index.project(project),
            index.subproject(project, subproject),
        ) else {
            return Ok(None);
        };
        Ok(Some((Index::project_of(p), Index::subproject_of(s))))
    }

    fn pages(&self, project: &str, subproject: &str) -> Result<Vec<PageSummary>, CatalogError> {
        let index = self.current(Scope::Subproject(project, subproject))?;
        let Some(sub) = index.subproject(project, subproject) else {
            return Ok(Vec::new());
        };
        Ok(index
            .pages(sub)?
            .into_iter()
            .map(|p| PageSummary {
                id: p.id,
                title: p.title,
                summary: p.summary,
                optional: p.optional,
                updated: p.updated,
                source: PageSource::Recorded {
                    size: p.size,
                    hash: p.hash,
                    number: p.number,
                },
            })
            .collect())
    }

    fn find_page<'p>(
        &self,
        pages: &'p [PageSummary],
        project: &str,
        subproject: &str,
        id: &str,
    ) -> Result<Option<&'p PageSummary>, CatalogError> {
        if let Some(page) = pages.iter().find(|page| page.id == id) {
            return Ok(Some(page));
        }
        if self.root.raw(project, subproject, id)?.is_some() {
            return Err(CatalogError::Stale(format!(
                "{project}/{subproject}/{id} is not in the index"
            )));
        }
        Ok(None)
    }

    fn page_text(
        &self,
        project: &str,
        subproject: &str,
        page: &PageSummary,
    ) -> Result<Vec<u8>, CatalogError> {
        let raw = self.root.raw(project, subproject, &page.id)?;
        match &page.source {
            PageSource::Recorded { size, hash, .. } => {
                let path = format!("{project}/{subproject}/{}", page.id);
                Index::verify(*size, *hash, &path, raw)
            }
            PageSource::Tree => raw.ok_or_else(|| {
                CatalogError::Stale(format!("{project}/{subproject}/{} is gone", page.id))
            }),
        }
    }

    fn highlighted_code(
        &self,
        page: &PageSummary,
    ) -> Result<std::collections::HashMap<u64, String>, CatalogError> {
        match page.source {
            PageSource::Recorded { number, .. } => self.index()?.highlighted(number),
            PageSource::Tree => Ok(std::collections::HashMap::new()),
        }
    }

    /// From the build's table, while no folder changed (a page may have gained or lost an
    /// old path) and the page it leads to is still there.
    fn redirect(&self, old: &PagePath) -> Result<Option<PagePath>, CatalogError> {
        let index = self.current(Scope::Everything)?;
        let Some(new) = index.redirect(old)? else {
            return Ok(None);
        };
        if self
            .root
            .raw(&new.project, &new.subproject, &new.page)?
            .is_none()
        {
            return Err(CatalogError::Stale(format!(
                "`{}` was removed",
                new.joined()
            )));
        }
        Ok(Some(new))
    }

    fn search_within(&self, query: &str, within: &Within) -> Result<SearchResults, CatalogError> {
        let index = self.index()?;
        index.search_once(self.root, query, within, &mut self.checked.borrow_mut())
    }

    fn manifest(
        &self,
        name: ManifestName<'_>,
        _generated_at: &str,
    ) -> Result<Option<Vec<u8>>, CatalogError> {
        self.current(match name {
            ManifestName::Master => Scope::Everything,
            ManifestName::Project(p) => Scope::Project(p),
            ManifestName::Subproject(p, s) => Scope::Subproject(p, s),
        })?;
        let read = match name {
            // Read at once: its absence is the build's.
            ManifestName::Master => Prebuilt::unchecked(self.build_dir)
                .master_manifest()
                .map(Some),
            ManifestName::Project(p) => {
                Prebuilt::open(self.build_dir).and_then(|build| build.project_manifest(p))
            }
            ManifestName::Subproject(p, s) => {
                Prebuilt::open(self.build_dir).and_then(|build| build.subproject_manifest(p, s))
            }
        };
        match read {
            Ok(manifest) => Ok(manifest),
            // The index is there but not the manifests: a build is being written.
            Err(IndexError::PrebuiltMissing { .. }) => {
                Err(CatalogError::Stale("the build is being written".into()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// One small file per subproject, no page read.
    fn llms_outline(&self) -> Result<Outline, CatalogError> {
        let index = self.current(Scope::Everything)?;
        let mut projects = Vec::new();
        for p in index.projects() {
            let mut subprojects = Vec::new();
            for s in &p.subprojects {
                subprojects.push(OutlineSubproject {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    description: s.description.clone(),
                    pages: self.pages(&p.id, &s.id)?,
                });
            }
            projects.push(OutlineProject {
                id: p.id.clone(),
                name: p.name.clone(),
                description: p.description.clone(),
                subprojects,
                versions: p.versions.clone(),
            });
        }
        Ok(Outline { projects })
    }

    fn llms_entry_sizes(&self, project: Option<&str>) -> Result<Vec<u64>, CatalogError> {
        let index = self.current(Scope::Everything)?;
        crate::full::prebuilt_entry_sizes(self.build_dir, index.build_id(), self.root, project)
    }

    fn llms_full(
        &self,
        project: Option<&str>,
        part: Option<(std::ops::Range<usize>, String)>,
    ) -> Result<FullText, CatalogError> {
        let index = self.current(Scope::Everything)?;
        let (pages, note) = match part {
            Some((pages, note)) => (Some(pages), note),
            None => (None, String::new()),
        };
        let ranges = crate::full::prebuilt_ranges(
            self.build_dir,
            index.build_id(),
            self.root,
            project,
            pages,
        )?;
        Ok(FullText::Prebuilt(ranges, note))
    }
}
