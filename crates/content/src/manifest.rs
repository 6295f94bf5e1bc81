//! The JSON manifests of spec 2.2–2.4, built from the tree.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::{Deserialize, Serialize};

use crate::error::ContentError;
use crate::frontmatter::Reference;
use crate::model::SchemaCoverage;
use crate::tree::ContentRoot;

/// The master manifest (`GET /api/manifest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MasterManifest {
    /// When it was generated, ISO 8601 UTC with milliseconds.
    pub generated_at: String,
    /// One entry per project, in reading order (`crate::reading_order`).
    pub projects: Vec<ProjectEntry>,
    /// Pages across all projects.
    pub total_documents: usize,
}

/// A project in the master manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectEntry {
    /// Directory name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Number of subprojects.
    pub subproject_count: usize,
    /// Number of pages.
    pub doc_count: usize,
}

/// The project manifest (`GET /api/manifest/:project`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectManifest {
    /// The project.
    pub project: Named,
    /// Its subprojects, in reading order.
    pub subprojects: Vec<SubprojectEntry>,
}

/// `id`, `name` and `description` of a project or subproject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    /// Directory name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
}

/// A subproject in the project manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubprojectEntry {
    /// Directory name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Number of pages.
    pub doc_count: usize,
}

/// The subproject manifest (`GET /api/manifest/:project/:subproject`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubprojectManifest {
    /// Project id.
    pub project: String,
    /// The subproject.
    pub subproject: Named,
    /// The eight booleans from `_subproject.yaml`.
    pub schema_coverage: SchemaCoverage,
    /// Its pages, in reading order.
    pub documents: Vec<DocumentEntry>,
}

/// A page in the subproject manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentEntry {
    /// File name without `.md`.
    pub id: String,
    /// Title (with fallbacks).
    pub title: String,
    /// Summary or `""`.
    pub summary: String,
    /// `/api/raw/<project>/<subproject>/<page>`.
    pub raw_url: String,
    /// Cross-references from the frontmatter.
    pub references: Vec<Reference>,
}

/// Characters escaped in a URL path segment (RFC 3986 `pchar` minus a few sub-delims
/// kept as they are common in names).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Percent-encodes one URL path segment.
pub fn encode_segment(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

/// `/api/raw/<project>/<subproject>/<page>`, segments percent-encoded.
pub fn raw_url(project: &str, subproject: &str, page: &str) -> String {
    format!(
        "/api/raw/{}/{}/{}",
        encode_segment(project),
        encode_segment(subproject),
        encode_segment(page)
    )
}

impl ContentRoot {
    /// The master manifest, stamped with `generated_at`: the time as every body writes it
    /// (`dochub_http::iso8601`, which the caller owns: the model formats no time).
    pub fn master_manifest(&self, generated_at: &str) -> Result<MasterManifest, ContentError> {
        let projects: Vec<ProjectEntry> = self
            .projects()?
            .into_iter()
            .map(|p| ProjectEntry {
                id: p.id,
                name: p.name,
                description: p.description,
                subproject_count: p.subproject_count,
                doc_count: p.doc_count,
            })
            .collect();
        Ok(MasterManifest {
            generated_at: generated_at.to_owned(),
            total_documents: projects.iter().map(|p| p.doc_count).sum(),
            projects,
        })
    }

    /// The project manifest, or `None` if the project directory does not exist.
    pub fn project_manifest(&self, project: &str) -> Result<Option<ProjectManifest>, ContentError> {
        let Some(p) = self.project(project)? else {
            return Ok(None);
        };
        let subprojects = self
            .subprojects(project)?
            .unwrap_or_default()
            .into_iter()
            .map(|s| SubprojectEntry {
                id: s.id,
                name: s.name,
                description: s.description,
                doc_count: s.doc_count,
            })
            .collect();
        Ok(Some(ProjectManifest {
            project: Named {
                id: p.id,
                name: p.name,
                description: p.description,
            },
            subprojects,
        }))
    }

    /// The subproject manifest, or `None` if the subproject directory does not exist.
    pub fn subproject_manifest(
        &self,
        project: &str,
        subproject: &str,
    ) -> Result<Option<SubprojectManifest>, ContentError> {
        let Some(s) = self.subproject(project, subproject)? else {
            return Ok(None);
        };
        let documents = self
            .pages(project, subproject)?
            .into_iter()
            .map(|page| DocumentEntry {
                raw_url: raw_url(project, subproject, &page.id),
                title: page.parsed.title,
                summary: page.parsed.summary,
                references: page.parsed.frontmatter.references,
                id: page.id,
            })
            .collect();
        Ok(Some(SubprojectManifest {
            project: s.project,
            subproject: Named {
                id: s.id,
                name: s.name,
                description: s.description,
            },
            schema_coverage: s.schema_coverage,
            documents,
        }))
    }
}

/// The JSON bytes of a manifest or a search answer, as both catalogs serve them.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ContentError> {
    Ok(serde_json::to_vec(value)?)
}
