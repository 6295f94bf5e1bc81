//! Docs for agents: the text of `/llms.txt` (the [llms.txt convention](https://llmstxt.org/))
//! and of `/llms-full.txt`, generated from the same listings as the manifests and the docs
//! sidebar, never from a hand-kept list.
//!
//! `/llms.txt` is an outline:
//!
//! ```text
//! # <site name>                       `_master/index.md`'s title, else "dochub"
//!
//! > <summary>                         its frontmatter `summary`, else a sentence with counts
//!
//! <one paragraph: what the links are, where the full text is>
//!
//! ## <project name>                    one H2 per project, in manifest order
//!
//! - <subproject name>: <description>  one item per subproject that has pages
//!   - [<title>](/docs/<p>/<s>/<page>.md): <summary>
//!
//! ## Optional                         pages whose frontmatter says `llms: optional`
//!
//! - [<title>](/docs/<p>/<s>/<page>.md): <summary>
//! ```
//!
//! Links are root-relative (`/docs/...`): the host and scheme a client used are the ones
//! that work for it, and a proxy in front of the app need not rewrite anything.
//!
//! `/llms-full.txt` is every page's markdown, frontmatter stripped, in manifest order
//! (projects, subprojects and pages by id), each after a heading `# <path>: <title>` and a
//! `URL:` line with its markdown twin. It is written page by page into any [`Write`]
//! ([`write_full`]), so a tree of any size costs one page of memory: the docs component
//! streams it into the response body. `dochub build` writes it into the build directory too
//! ([`write_prebuilt_full`], with each project's byte range and the index's build id), and
//! [`PrebuiltFull`] copies it out while it belongs to the current index.
//!
//! ```
//! use dochub_content::llms::{Outline, SiteIntro, llms_txt};
//! let intro = SiteIntro { name: "Docs".into(), summary: "Everything.".into() };
//! let text = llms_txt(&intro, &Outline::default());
//! assert!(text.starts_with("# Docs\n\n> Everything.\n"));
//! ```

use std::io::Write;

use crate::error::ContentError;
use crate::index::{Index, Indexed};
use crate::manifest::encode_segment;
use crate::tree::ContentRoot;

/// Site name when there is no `_master/index.md`.
pub const DEFAULT_SITE_NAME: &str = "dochub";

/// What can stop `/llms-full.txt` half-way.
#[derive(Debug, thiserror::Error)]
pub enum LlmsError {
    /// The content tree could not be read.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// The output could not be written (e.g. the client went away).
    #[error("cannot write the response: {0}")]
    Write(#[from] std::io::Error),
}

/// The H1 and blockquote of both files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteIntro {
    /// The site's name.
    pub name: String,
    /// One line saying what the site holds.
    pub summary: String,
}

/// Every project, subproject and page, as `/llms.txt` lists them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// Projects in manifest order.
    pub projects: Vec<OutlineProject>,
}

/// A project of the [`Outline`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineProject {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Subprojects by id.
    pub subprojects: Vec<OutlineSubproject>,
}

/// A subproject of the [`Outline`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineSubproject {
    /// Folder name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Pages by id.
    pub pages: Vec<OutlinePage>,
}

/// A page of the [`Outline`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlinePage {
    /// File name without `.md`.
    pub id: String,
    /// Title, with fallbacks.
    pub title: String,
    /// Summary or `""`.
    pub summary: String,
    /// Frontmatter `llms: optional`.
    pub optional: bool,
}

impl Outline {
    /// Pages across all projects.
    pub fn page_count(&self) -> usize {
        self.projects
            .iter()
            .flat_map(|p| &p.subprojects)
            .map(|s| s.pages.len())
            .sum()
    }
}

/// `/docs/<p>/<s>/<page>.md`, the markdown twin of a page, segments percent-encoded.
///
/// ```
/// assert_eq!(dochub_content::llms::twin_url("a", "b c", "d"), "/docs/a/b%20c/d.md");
/// ```
pub fn twin_url(project: &str, subproject: &str, page: &str) -> String {
    format!(
        "/docs/{}/{}/{}.md",
        encode_segment(project),
        encode_segment(subproject),
        encode_segment(page)
    )
}

impl ContentRoot {
    /// The site's name and summary: `_master/index.md`'s title and summary, else defaults.
    pub fn site_intro(&self) -> Result<SiteIntro, ContentError> {
        let master = self.master_index()?;
        let name = master
            .as_ref()
            .filter(|m| m.parsed.frontmatter.title.is_some() || m.parsed.title_from_heading)
            .map_or_else(|| DEFAULT_SITE_NAME.to_owned(), |m| m.title().to_owned());
        let summary = match master.as_ref().map(|m| m.summary().trim()) {
            Some(s) if !s.is_empty() => s.to_owned(),
            _ => format!(
                "Documentation of {} served by dochub, as markdown for agents.",
                plural(self.projects()?.len(), "project", "projects")
            ),
        };
        Ok(SiteIntro {
            name: one_line(&name),
            summary: one_line(&summary),
        })
    }

    /// The outline read from the tree (every page file is read for its title).
    pub fn llms_outline(&self) -> Result<Outline, ContentError> {
        let mut projects = Vec::new();
        for p in self.projects()? {
            let mut subprojects = Vec::new();
            for s in self.subprojects(&p.id)?.unwrap_or_default() {
                let pages = self
                    .pages(&p.id, &s.id)?
                    .into_iter()
                    .map(|page| OutlinePage {
                        title: page.parsed.title,
                        summary: page.parsed.summary,
                        optional: page.parsed.frontmatter.llms_optional,
                        id: page.id,
                    })
                    .collect();
                subprojects.push(OutlineSubproject {
                    id: s.id,
                    name: s.name,
                    description: s.description,
                    pages,
                });
            }
            projects.push(OutlineProject {
                id: p.id,
                name: p.name,
                description: p.description,
                subprojects,
            });
        }
        Ok(Outline { projects })
    }
}

impl Index {
    /// The outline from the prebuilt index: one small file per subproject, no page read.
    /// The caller checks the index against the tree first ([`Index::check`] with
    /// [`crate::index::Scope::Everything`]).
    pub fn llms_outline(&self) -> Result<Indexed<Outline>, ContentError> {
        let mut projects = Vec::new();
        for p in self.projects() {
            let mut subprojects = Vec::new();
            for s in &p.subprojects {
                let pages = match self.pages(s)? {
                    Indexed::Fresh(pages) => pages,
                    Indexed::Stale(reason) => return Ok(Indexed::Stale(reason)),
                };
                subprojects.push(OutlineSubproject {
                    id: s.id.clone(),
                    name: s.name.clone(),
                    description: s.description.clone(),
                    pages: pages
                        .into_iter()
                        .map(|page| OutlinePage {
                            id: page.id,
                            title: page.title,
                            summary: page.summary,
                            optional: page.optional,
                        })
                        .collect(),
                });
            }
            projects.push(OutlineProject {
                id: p.id.clone(),
                name: p.name.clone(),
                description: p.description.clone(),
                subprojects,
            });
        }
        Ok(Indexed::Fresh(Outline { projects }))
    }
}

/// The text of `/llms.txt`.
pub fn llms_txt(intro: &SiteIntro, outline: &Outline) -> String {
    let mut out = header(intro);
    out.push_str(&format!(
        "Each link below is a page's markdown. Every page in one file: [llms-full.txt](/llms-full.txt) \
         ({}); one project's pages: `/llms-full.txt?project=<id>`.\n",
        plural(outline.page_count(), "page", "pages")
    ));
    let mut optional = Vec::new();
    for p in &outline.projects {
        out.push_str(&format!("\n## {}\n\n", one_line(&p.name)));
        if !p.description.trim().is_empty() {
            out.push_str(&format!("{}\n\n", one_line(&p.description)));
        }
        if p.subprojects.iter().all(|s| s.pages.is_empty()) {
            out.push_str("- No pages yet.\n");
            continue;
        }
        for s in p.subprojects.iter().filter(|s| !s.pages.is_empty()) {
            out.push_str(&format!("- {}", one_line(&s.name)));
            if !s.description.trim().is_empty() {
                out.push_str(&format!(": {}", one_line(&s.description)));
            }
            out.push('\n');
            for page in &s.pages {
                let line = link_line(&p.id, &s.id, page);
                if page.optional {
                    optional.push(line);
                } else {
                    out.push_str(&format!("  {line}"));
                }
            }
        }
    }
    if !optional.is_empty() {
        out.push_str("\n## Optional\n\n");
        for line in optional {
            out.push_str(&line);
        }
    }
    out
}

/// `- [title](twin): summary` and a newline.
fn link_line(project: &str, subproject: &str, page: &OutlinePage) -> String {
    let mut line = format!(
        "- [{}]({})",
        link_text(&page.title),
        twin_url(project, subproject, &page.id)
    );
    if !page.summary.trim().is_empty() {
        line.push_str(&format!(": {}", one_line(&page.summary)));
    }
    line.push('\n');
    line
}

fn header(intro: &SiteIntro) -> String {
    format!(
        "# {}\n\n> {}\n\n",
        one_line(&intro.name),
        one_line(&intro.summary)
    )
}

/// Writes `/llms-full.txt` (all projects, or only `project`) into `out`, reading one page
/// at a time; returns the number of pages written. A project that does not exist writes
/// the header alone (the caller answers 404 before that).
pub fn write_full(
    root: &ContentRoot,
    intro: &SiteIntro,
    project: Option<&str>,
    out: &mut dyn Write,
) -> Result<usize, LlmsError> {
    out.write_all(header(intro).as_bytes())?;
    let projects = match project {
        Some(id) => root.project(id)?.into_iter().map(|p| p.id).collect(),
        None => root
            .projects()?
            .into_iter()
            .map(|p| p.id)
            .collect::<Vec<_>>(),
    };
    let mut written = 0;
    for p in projects {
        written += write_project(root, &p, &mut *out)?;
    }
    out.flush()?;
    Ok(written)
}

/// Writes one project's pages (the part of `/llms-full.txt` after the header).
fn write_project(
    root: &ContentRoot,
    project: &str,
    out: &mut dyn Write,
) -> Result<usize, LlmsError> {
    let mut written = 0;
    for s in root.subprojects(project)?.unwrap_or_default() {
        for id in root.page_ids(project, &s.id)? {
            // A page removed between listing and reading is left out, as in the manifests.
            let Some(page) = root.page(project, &s.id, &id)? else {
                continue;
            };
            write!(
                out,
                "\n{}\n\nURL: {}\n\n",
                full_heading(&page.path(), page.title()),
                twin_url(project, &s.id, &id)
            )?;
            let body = page.body();
            out.write_all(body.as_bytes())?;
            if !body.ends_with('\n') {
                out.write_all(b"\n")?;
            }
            written += 1;
        }
    }
    Ok(written)
}

/// The prebuilt `/llms-full.txt` in the build directory (written by `dochub build`).
pub const PREBUILT_FULL: &str = "llms-full.txt";
/// Where each project's pages are in [`PREBUILT_FULL`], and which build it belongs to.
pub const PREBUILT_RECORD: &str = "llms-full.json";

/// What [`write_prebuilt_full`] records beside the file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct FullRecord {
    /// The id of the index built with it ([`Index::build_id`]).
    build_id: u64,
    /// Hash of `_master/index.md` (which gives the header), 0 when there is none.
    master: u64,
    /// Bytes of the header.
    header: u64,
    /// Each project's pages: id, first byte, end byte.
    projects: Vec<(String, u64, u64)>,
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

fn master_hash(root: &ContentRoot) -> Result<u64, ContentError> {
    Ok(root
        .master_index()?
        .map_or(0, |page| crate::index::hash(&page.raw)))
}

/// Writes `<out>/llms-full.txt` and its record for the index built as `build_id`, each
/// through a temporary file and a rename (a reader never sees half a file; the record last).
pub fn write_prebuilt_full(
    root: &ContentRoot,
    out: &std::path::Path,
    build_id: u64,
) -> Result<FullSummary, ContentError> {
    let path = out.join(PREBUILT_FULL);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let file = std::fs::File::create(&tmp).map_err(|e| ContentError::io(&tmp, e))?;
    let mut w = Counting {
        inner: std::io::BufWriter::new(file),
        written: 0,
    };
    let mut projects = Vec::new();
    let mut pages = 0;
    let mut header_len = 0;
    let mut write_all = |w: &mut Counting<_>| -> Result<(), LlmsError> {
        w.write_all(header(&root.site_intro()?).as_bytes())?;
        header_len = w.written;
        for p in root.projects()? {
            let start = w.written;
            pages += write_project(root, &p.id, &mut *w)?;
            projects.push((p.id, start, w.written));
        }
        w.flush()?;
        Ok(())
    };
    if let Err(e) = write_all(&mut w) {
        drop(w);
        let _ = std::fs::remove_file(&tmp);
        return Err(match e {
            LlmsError::Content(e) => e,
            LlmsError::Write(e) => ContentError::io(&tmp, e),
        });
    }
    let size = w.written;
    drop(w);
    std::fs::rename(&tmp, &path).map_err(|e| ContentError::io(&path, e))?;
    let record = FullRecord {
        build_id,
        master: master_hash(root)?,
        header: header_len,
        projects,
        size,
    };
    let record_path = out.join(PREBUILT_RECORD);
    let tmp = record_path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(&record)?).map_err(|e| ContentError::io(&tmp, e))?;
    std::fs::rename(&tmp, &record_path).map_err(|e| ContentError::io(&record_path, e))?;
    Ok(FullSummary { pages, bytes: size })
}

/// A prebuilt `/llms-full.txt` found current, ready to be copied out ([`PrebuiltFull::write_to`]).
#[derive(Debug, Clone)]
pub struct PrebuiltFull {
    path: std::path::PathBuf,
    /// Byte ranges of the file to send, in order.
    ranges: Vec<(u64, u64)>,
}

impl PrebuiltFull {
    /// The prebuilt file for `project` (all when `None`) if it belongs to `index` and the
    /// site header is unchanged, else why not. The caller has checked `index` against the
    /// tree ([`Index::check`], [`crate::index::Scope::Everything`]) and knows the project exists.
    pub fn open(
        build_dir: &std::path::Path,
        index: &Index,
        root: &ContentRoot,
        project: Option<&str>,
    ) -> Result<Indexed<PrebuiltFull>, ContentError> {
        let record_path = build_dir.join(PREBUILT_RECORD);
        let Some(bytes) = crate::tree::read_file(&record_path)? else {
            return Ok(Indexed::Stale(format!(
                "`{}` is missing (rebuild with `dochub build`)",
                record_path.display()
            )));
        };
        let record: FullRecord = serde_json::from_slice(&bytes)?;
        let path = build_dir.join(PREBUILT_FULL);
        let size = std::fs::metadata(&path).map_or(u64::MAX, |m| m.len());
        if record.build_id != index.build_id() || record.size != size {
            return Ok(Indexed::Stale(format!(
                "`{}` does not belong to the index (rebuild with `dochub build`)",
                path.display()
            )));
        }
        if record.master != master_hash(root)? {
            return Ok(Indexed::Stale(
                "`_master/index.md` changed since the build".into(),
            ));
        }
        let mut ranges = vec![(0, record.header)];
        for (id, start, end) in &record.projects {
            if project.is_none_or(|p| p == id) {
                ranges.push((*start, *end));
            }
        }
        if project.is_some() && ranges.len() == 1 {
            return Ok(Indexed::Stale(format!(
                "no project `{}` in `{}`",
                project.unwrap_or_default(),
                path.display()
            )));
        }
        Ok(Indexed::Fresh(PrebuiltFull { path, ranges }))
    }

    /// Copies the file's ranges into `out`, a block at a time.
    pub fn write_to(&self, out: &mut dyn Write) -> Result<u64, LlmsError> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file =
            std::fs::File::open(&self.path).map_err(|e| ContentError::io(&self.path, e))?;
        let mut copied = 0;
        for &(start, end) in &self.ranges {
            file.seek(SeekFrom::Start(start))
                .map_err(|e| ContentError::io(&self.path, e))?;
            let want = end.saturating_sub(start);
            let n = std::io::copy(&mut (&mut file).take(want), &mut *out)?;
            if n != want {
                return Err(ContentError::io(
                    &self.path,
                    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "shorter than recorded"),
                )
                .into());
            }
            copied += n;
        }
        out.flush()?;
        Ok(copied)
    }
}

/// The heading line of a page in `/llms-full.txt`, as [`write_full`] writes it.
///
/// ```
/// assert_eq!(dochub_content::llms::full_heading("a/b/c", "Title"), "# a/b/c: Title");
/// ```
pub fn full_heading(path: &str, title: &str) -> String {
    format!("# {path}: {}", one_line(title))
}

/// Folds line breaks so a name or summary cannot start a new markdown block.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A title inside `[...]`: brackets escaped so the link stays well-formed.
fn link_text(s: &str) -> String {
    one_line(s)
        .replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let w = |path: &str, text: &str| {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        w("beta/_project.yaml", "name: Beta\ndescription: Second\n");
        w("beta/core/_subproject.yaml", "name: Core\n");
        w(
            "beta/core/intro.md",
            "---\ntitle: Intro [1]\nsummary: |\n  Two\n  lines\n---\nBody of intro\n",
        );
        w(
            "beta/core/old.md",
            "---\ntitle: Old\nllms: optional\n---\nOld body",
        );
        w("alpha/_project.yaml", "name: Alpha\n");
        w(
            "alpha/api/_subproject.yaml",
            "name: API\ndescription: Routes\n",
        );
        w("alpha/api/routes.md", "# Routes\n\nText.\n");
        w(
            "alpha/api/index.md",
            "---\nsummary: Start\n---\n# Landing\n",
        );
        w("alpha/empty/.keep", "");
        w("reports/2026-01-01.json", "{}");
        dir
    }

    #[test]
    fn intro_defaults_without_a_master_page_and_reads_it_when_there() {
        let dir = tree();
        let root = ContentRoot::open(dir.path()).unwrap();
        let intro = root.site_intro().unwrap();
        assert_eq!(intro.name, DEFAULT_SITE_NAME);
        assert!(intro.summary.contains("2 projects"), "{}", intro.summary);
        fs::create_dir_all(dir.path().join("_master")).unwrap();
        fs::write(
            dir.path().join("_master/index.md"),
            "---\ntitle: My Hub\nsummary: All\n  the docs\n---\n",
        )
        .unwrap();
        let intro = root.site_intro().unwrap();
        assert_eq!(intro.name, "My Hub");
        assert_eq!(intro.summary, "All the docs");
    }

    #[test]
    fn llms_txt_lists_every_page_under_its_project_and_optional_ones_last() {
        let dir = tree();
        let root = ContentRoot::open(dir.path()).unwrap();
        let intro = SiteIntro {
            name: "Hub".into(),
            summary: "Docs.".into(),
        };
        let text = llms_txt(&intro, &root.llms_outline().unwrap());
        let expected = "# Hub\n\n> Docs.\n\n\
            Each link below is a page's markdown. Every page in one file: [llms-full.txt](/llms-full.txt) \
            (4 pages); one project's pages: `/llms-full.txt?project=<id>`.\n\
            \n## Alpha\n\n\
            - API: Routes\n  \
              - [Landing](/docs/alpha/api/index.md): Start\n  \
              - [Routes](/docs/alpha/api/routes.md)\n\
            \n## Beta\n\nSecond\n\n\
            - Core\n  \
              - [Intro \\[1\\]](/docs/beta/core/intro.md): Two lines\n\
            \n## Optional\n\n\
            - [Old](/docs/beta/core/old.md)\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn the_index_gives_the_same_outline_as_the_tree() {
        let dir = tree();
        let build = tempfile::tempdir().unwrap();
        let root = ContentRoot::open(dir.path()).unwrap();
        crate::index::write_index(&root, build.path()).unwrap();
        let index = Index::open(build.path()).unwrap();
        assert_eq!(
            index.llms_outline().unwrap(),
            Indexed::Fresh(root.llms_outline().unwrap())
        );
    }

    #[test]
    fn full_text_has_every_page_once_in_manifest_order_without_frontmatter() {
        let dir = tree();
        let root = ContentRoot::open(dir.path()).unwrap();
        let intro = root.site_intro().unwrap();
        let mut out = Vec::new();
        assert_eq!(write_full(&root, &intro, None, &mut out).unwrap(), 4);
        let text = String::from_utf8(out).unwrap();
        let headings: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("# ") && l.contains('/'))
            .collect();
        assert_eq!(
            headings,
            [
                "# alpha/api/index: Landing",
                "# alpha/api/routes: Routes",
                "# beta/core/intro: Intro [1]",
                "# beta/core/old: Old",
            ]
        );
        assert!(text.contains(
            "# beta/core/intro: Intro [1]\n\nURL: /docs/beta/core/intro.md\n\nBody of intro\n"
        ));
        // A body without a final newline gets one; frontmatter never appears.
        assert!(text.ends_with("URL: /docs/beta/core/old.md\n\nOld body\n"));
        assert!(!text.contains("llms: optional") && !text.contains("summary:"));

        let mut one = Vec::new();
        assert_eq!(
            write_full(&root, &intro, Some("beta"), &mut one).unwrap(),
            2
        );
        let one = String::from_utf8(one).unwrap();
        assert!(one.contains("# beta/core/intro") && !one.contains("# alpha/"));
    }

    #[test]
    fn the_prebuilt_full_text_is_the_live_one_while_it_belongs_to_the_index() {
        let dir = tree();
        let build = tempfile::tempdir().unwrap();
        let root = ContentRoot::open(dir.path()).unwrap();
        let summary =
            crate::prebuilt::write_build(&root, build.path(), chrono::Utc::now()).unwrap();
        assert_eq!(summary.llms_full.pages, 4);
        let index = Index::open(build.path()).unwrap();
        let intro = root.site_intro().unwrap();
        for project in [None, Some("alpha"), Some("beta")] {
            let Indexed::Fresh(prebuilt) =
                PrebuiltFull::open(build.path(), &index, &root, project).unwrap()
            else {
                panic!("fresh");
            };
            let mut copied = Vec::new();
            prebuilt.write_to(&mut copied).unwrap();
            let mut live = Vec::new();
            write_full(&root, &intro, project, &mut live).unwrap();
            assert_eq!(
                String::from_utf8(copied).unwrap(),
                String::from_utf8(live).unwrap()
            );
        }
        assert_eq!(
            summary.llms_full.bytes,
            fs::metadata(build.path().join(PREBUILT_FULL))
                .unwrap()
                .len()
        );

        // A new master page changes the header: stale.
        fs::create_dir_all(dir.path().join("_master")).unwrap();
        fs::write(
            dir.path().join("_master/index.md"),
            "# New name
",
        )
        .unwrap();
        assert!(matches!(
            PrebuiltFull::open(build.path(), &index, &root, None).unwrap(),
            Indexed::Stale(_)
        ));
        // A rebuilt index with an old llms-full.txt: stale.
        fs::remove_dir_all(dir.path().join("_master")).unwrap();
        let record = fs::read(build.path().join(PREBUILT_RECORD)).unwrap();
        fs::write(dir.path().join("beta/core/new.md"), "New").unwrap();
        crate::index::write_index(&root, build.path()).unwrap();
        let index = Index::open(build.path()).unwrap();
        fs::write(build.path().join(PREBUILT_RECORD), record).unwrap();
        let stale = PrebuiltFull::open(build.path(), &index, &root, None).unwrap();
        assert!(
            matches!(&stale, Indexed::Stale(r) if r.contains("does not belong")),
            "{stale:?}"
        );
        // No record at all: stale, saying so.
        fs::remove_file(build.path().join(PREBUILT_RECORD)).unwrap();
        assert!(matches!(
            PrebuiltFull::open(build.path(), &index, &root, None).unwrap(),
            Indexed::Stale(r) if r.contains("missing")
        ));
    }

    #[test]
    fn a_failing_writer_stops_the_full_text_with_an_error() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("client went away"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let dir = tree();
        let root = ContentRoot::open(dir.path()).unwrap();
        let intro = root.site_intro().unwrap();
        let err = write_full(&root, &intro, None, &mut Broken).unwrap_err();
        assert!(err.to_string().contains("client went away"), "{err}");
    }
}
