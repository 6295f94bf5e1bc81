//! What every reader asks of the content: the [`Catalog`] trait, answering in the content
//! model ([`crate::model`]).
//!
//! There are two catalogs: the live tree ([`ContentRoot`], which reads the folders and page
//! files on every call) and the prebuilt index (`dochub_index::IndexCatalog`), which answers from
//! `build/` as long as the folders an answer depends on are as the build recorded them. A
//! reader writes its answer once, against `&dyn Catalog`; when the index finds itself stale
//! half-way, it returns [`CatalogError::Stale`], and the caller that picked the catalog runs the
//! same reader again on the live tree. No reader ever sees which catalog it has.

use crate::error::ContentError;
use crate::fields::PagePath;
use crate::llms::{FullText, Outline, OutlineProject, OutlineSubproject, SiteIntro};
use crate::manifest::to_json;
use crate::model::Page;
use crate::model::{PageSource, PageSummary, Project, ProjectOutline, SubprojectSummary};
use crate::report::Report;
use crate::search::TreeScan;
use crate::tree::ContentRoot;
use dochub_search::{QueryTooShort, RankedQuery, SearchResults, Within};

/// Why a catalog gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The content could not be read.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// A search query too short to search for.
    #[error(transparent)]
    Query(#[from] QueryTooShort),
    /// The prebuilt build failed in a way the live tree may not stand in for (it is required
    /// and missing, or unreadable): the index's own error says how.
    #[error(transparent)]
    Prebuilt(Box<dyn std::error::Error + Send + Sync>),
    /// The prebuilt index does not describe the content as it is now; the reason names what
    /// changed. Ask the live tree instead.
    #[error("{0}")]
    Stale(String),
    /// There is no prebuilt index to ask (nothing to warn about); ask the live tree.
    #[error("there is no prebuilt index")]
    NoIndex,
}

/// An error a reader returns: one that may hold a [`CatalogError`], so that the caller which
/// picked the catalog can tell an index that could not answer from a failure.
pub trait ReadError: From<CatalogError> {
    /// The catalog's error inside, if that is what this is.
    fn catalog(&self) -> Option<&CatalogError>;
}

impl ReadError for CatalogError {
    fn catalog(&self) -> Option<&CatalogError> {
        Some(self)
    }
}

/// A manifest of `/api/manifest`, named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestName<'a> {
    /// `/api/manifest`.
    Master,
    /// `/api/manifest/<project>`.
    Project(&'a str),
    /// `/api/manifest/<project>/<subproject>`.
    Subproject(&'a str, &'a str),
}

/// What every reader (the API, the docs site, the llms files) asks of the content. See the
/// module's documentation for the two implementations.
pub trait Catalog {
    /// The content root: what only the live tree holds (raw pages, reports, the home page).
    fn root(&self) -> &ContentRoot;

    /// Every project with its subprojects' names, in reading order (`crate::reading_order`).
    fn outline(&self) -> Result<Vec<ProjectOutline>, CatalogError>;

    /// Every project, with its counts, in reading order.
    fn projects(&self) -> Result<Vec<Project>, CatalogError>;

    /// One project and its subprojects, or `None` when there is no such project.
    fn project(&self, id: &str) -> Result<Option<(Project, Vec<SubprojectSummary>)>, CatalogError>;

    /// One subproject and its project, or `None` when either is missing.
    fn subproject(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<(Project, SubprojectSummary)>, CatalogError>;

    /// A subproject's pages, in reading order (empty when there is no such subproject).
    fn pages(&self, project: &str, subproject: &str) -> Result<Vec<PageSummary>, CatalogError>;

    /// The page `id` among `pages` (a subproject's, from [`Catalog::pages`]), or `None`.
    fn find_page<'p>(
        &self,
        pages: &'p [PageSummary],
        _project: &str,
        _subproject: &str,
        id: &str,
    ) -> Result<Option<&'p PageSummary>, CatalogError> {
        Ok(pages.iter().find(|page| page.id == id))
    }

    /// The bytes of a listed page, as they are now.
    fn page_text(
        &self,
        project: &str,
        subproject: &str,
        page: &PageSummary,
    ) -> Result<Vec<u8>, CatalogError>;

    /// The highlighted form of a listed page's fenced code blocks, by
    /// [`crate::code_key`]: what `dochub build` wrote into the index. The live tree has none
    /// (its blocks are shown plain).
    fn highlighted_code(
        &self,
        _page: &PageSummary,
    ) -> Result<std::collections::HashMap<u64, String>, CatalogError> {
        Ok(std::collections::HashMap::new())
    }

    /// Searches every page (`dochub_search` gives the rules); a query under
    /// [`dochub_search::MIN_QUERY_CHARS`] characters is [`CatalogError::Query`].
    fn search(&self, query: &str) -> Result<SearchResults, CatalogError> {
        self.search_within(query, &Within::everything())
    }

    /// [`Catalog::search`], answering only with pages of the subprojects `within` admits
    /// (`version=`, see [`crate::version_scope`]).
    fn search_within(&self, query: &str, within: &Within) -> Result<SearchResults, CatalogError>;

    /// Whether the page exists now: one look at its file, whichever catalog asks (the version
    /// switcher links a page's twin in each version, or that version's landing page).
    fn has_page(&self, project: &str, subproject: &str, page: &str) -> Result<bool, CatalogError> {
        Ok(self.root().has_page(project, subproject, page)?)
    }

    /// A manifest's JSON, or `None` when what it names does not exist; `generated_at` (the
    /// time as every body writes it) stamps the master.
    fn manifest(
        &self,
        name: ManifestName<'_>,
        generated_at: &str,
    ) -> Result<Option<Vec<u8>>, CatalogError>;

    /// Every project, subproject and page, as `/llms.txt` lists them.
    fn llms_outline(&self) -> Result<Outline, CatalogError>;

    /// The length of each page's entry in `/llms-full.txt` (every project, or one that
    /// exists), in order: what the text is cut into parts by ([`crate::llms::split_parts`]).
    fn llms_entry_sizes(&self, project: Option<&str>) -> Result<Vec<u64>, CatalogError>;

    /// The body of `/llms-full.txt`, for every project or one that exists; with `part`, only
    /// the pages at those positions, after the note.
    fn llms_full(
        &self,
        project: Option<&str>,
        part: Option<(std::ops::Range<usize>, String)>,
    ) -> Result<FullText, CatalogError>;

    /// A page's file as it is on disk, or `None`.
    fn raw(
        &self,
        project: &str,
        subproject: &str,
        page: &str,
    ) -> Result<Option<Vec<u8>>, CatalogError> {
        Ok(self.root().raw(project, subproject, page)?)
    }

    /// The page whose `redirect_from` lists `old`, an address that is no page (see
    /// [`crate::redirect`]). The live tree reads every page for it; the index keeps a table.
    fn redirect(&self, old: &PagePath) -> Result<Option<PagePath>, CatalogError> {
        Ok(self.root().find_redirect(old)?)
    }

    /// `_master/index.md`, if present.
    fn master_index(&self) -> Result<Option<Page>, CatalogError> {
        Ok(self.root().master_index()?)
    }

    /// Whether there is any daily report.
    fn has_reports(&self) -> Result<bool, CatalogError> {
        Ok(self.root().has_reports()?)
    }

    /// The latest daily report, if any.
    fn latest_report(&self) -> Result<Option<Report>, CatalogError> {
        Ok(self.root().latest_report()?)
    }

    /// The name and summary the llms files start with.
    fn site_intro(&self) -> Result<SiteIntro, CatalogError> {
        Ok(self.root().site_intro()?)
    }
}

/// The live tree: every answer reads the folders and files as they are.
impl Catalog for ContentRoot {
    fn root(&self) -> &ContentRoot {
        self
    }

    fn outline(&self) -> Result<Vec<ProjectOutline>, CatalogError> {
        Ok(self.sidebar()?)
    }

    fn projects(&self) -> Result<Vec<Project>, CatalogError> {
        Ok(ContentRoot::projects(self)?)
    }

    fn project(&self, id: &str) -> Result<Option<(Project, Vec<SubprojectSummary>)>, CatalogError> {
        let (Some(project), Some(subprojects)) =
            (ContentRoot::project(self, id)?, self.subprojects(id)?)
        else {
            return Ok(None);
        };
        let subprojects = subprojects
            .into_iter()
            .map(SubprojectSummary::from)
            .collect();
        Ok(Some((project, subprojects)))
    }

    fn subproject(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<(Project, SubprojectSummary)>, CatalogError> {
        let (Some(p), Some(s)) = (
            ContentRoot::project(self, project)?,
            ContentRoot::subproject(self, project, subproject)?,
        ) else {
            return Ok(None);
        };
        Ok(Some((p, s.into())))
    }

    fn pages(&self, project: &str, subproject: &str) -> Result<Vec<PageSummary>, CatalogError> {
        Ok(self.page_summaries(project, subproject)?)
    }

    fn page_text(
        &self,
        project: &str,
        subproject: &str,
        page: &PageSummary,
    ) -> Result<Vec<u8>, CatalogError> {
        match &page.source {
            // Read again (a gone page is never answered empty).
            PageSource::Tree | PageSource::Recorded { .. } => {
                self.raw(project, subproject, &page.id)?.ok_or_else(|| {
                    CatalogError::Stale(format!("{project}/{subproject}/{} is gone", page.id))
                })
            }
        }
    }

    /// Reads and analyses every page: ranking needs the whole tree's term statistics.
    fn search_within(&self, query: &str, within: &Within) -> Result<SearchResults, CatalogError> {
        let query = RankedQuery::new(query)?;
        let mut tree = TreeScan::within(self, &query, within)?;
        Ok(dochub_search::search(&query, &mut tree)?)
    }

    fn manifest(
        &self,
        name: ManifestName<'_>,
        generated_at: &str,
    ) -> Result<Option<Vec<u8>>, CatalogError> {
        let json = match name {
            ManifestName::Master => Some(to_json(&self.master_manifest(generated_at)?)),
            ManifestName::Project(p) => self.project_manifest(p)?.map(|m| to_json(&m)),
            ManifestName::Subproject(p, s) => self.subproject_manifest(p, s)?.map(|m| to_json(&m)),
        };
        Ok(json.transpose()?)
    }

    fn llms_outline(&self) -> Result<Outline, CatalogError> {
        let mut projects = Vec::new();
        for p in ContentRoot::projects(self)? {
            let mut subprojects = Vec::new();
            for s in self.subprojects(&p.id)?.unwrap_or_default() {
                subprojects.push(OutlineSubproject {
                    pages: self.page_summaries(&p.id, &s.id)?,
                    id: s.id,
                    name: s.name,
                    description: s.description,
                });
            }
            projects.push(OutlineProject {
                id: p.id,
                name: p.name,
                description: p.description,
                subprojects,
                versions: p.versions,
            });
        }
        Ok(Outline { projects })
    }

    fn llms_entry_sizes(&self, project: Option<&str>) -> Result<Vec<u64>, CatalogError> {
        crate::llms::entry_sizes(self, project).map_err(|e| match e {
            crate::llms::LlmsError::Content(e) => CatalogError::Content(e),
            // Sizes are counted into a sink, which cannot fail.
            crate::llms::LlmsError::Write(e) => {
                CatalogError::Content(ContentError::io(self.path(), e))
            }
        })
    }

    fn llms_full(
        &self,
        project: Option<&str>,
        part: Option<(std::ops::Range<usize>, String)>,
    ) -> Result<FullText, CatalogError> {
        Ok(FullText::Tree {
            root: self.clone(),
            intro: self.site_intro()?,
            project: project.map(str::to_owned),
            part,
        })
    }
}
