//! Docs for agents: the text of `/llms.txt` (the [llms.txt convention](https://llmstxt.org/))
//! and of `/llms-full.txt`, generated from the same listings as the manifests and the docs
//! sidebar, never from a hand-kept list.
//!
//! `/llms.txt` is an outline in the format llmstxt.org defines: an H1, a blockquote, a
//! paragraph, then H2 sections whose every list item is a link, `- [name](url): notes`:
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
//! - [<project name>](<origin>/docs/<p>/): <description>
//! - [<subproject name>](<origin>/docs/<p>/<s>/): <description>   each subproject with pages
//! - [<title>](<origin>/docs/<p>/<s>/<page>.md): <summary>        then its pages
//!
//! ## Optional                         pages whose frontmatter says `llms: optional`
//!
//! - [<title>](<origin>/docs/<p>/<s>/<page>.md): <summary>
//! ```
//!
//! The lists are flat, so that a reader that takes only top-level items still gets every
//! page. Links are absolute, as readers of the format expect: `<origin>` is the site's
//! `site_url`, else the request's own scheme and authority (as for the sitemap). A project
//! without pages has an empty section: it has no page to link.
//!
//! `/llms-full.txt` is every page's markdown, frontmatter stripped, in manifest order
//! (projects, subprojects and pages by id), each after a heading `# <path>: <title>` and a
//! `URL:` line with its markdown twin. It is written page by page into any [`Write`]
//! ([`write_full`]), so a tree of any size costs one page of memory: the docs component
//! streams it into the response body. `dochub build` writes it into the build directory too
//! (`dochub_index::write_prebuilt_full`, with each project's byte range and the index's build
//! id), and the index's catalog copies it out while it belongs to the current index
//! ([`FullText::Prebuilt`]). A text over [`PART_BYTES`] is answered in parts of whole pages
//! ([`split_parts`]), each saying which it is and where the next is ([`part_note`]).
//!
//! ```
//! use dochub_content::llms::{Outline, SiteIntro, llms_txt};
//! let intro = SiteIntro { name: "Docs".into(), summary: "Everything.".into() };
//! let text = llms_txt(&intro, &Outline::default(), 1, "https://docs.example.com");
//! assert!(text.starts_with("# Docs\n\n> Everything.\n"));
//! ```

use std::io::Write;

use crate::error::ContentError;
use crate::manifest::encode_segment;
use crate::model::PageSummary;
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
    /// Its versioned subprojects, newest first (`versions` of `_project.yaml`): the older
    /// ones are listed under `## Optional`.
    pub versions: Vec<String>,
}

impl OutlineProject {
    /// Whether `subproject` is a version of this project other than the latest.
    pub fn is_older_version(&self, subproject: &str) -> bool {
        self.versions.iter().skip(1).any(|v| v == subproject)
    }
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
    pub pages: Vec<PageSummary>,
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
}

/// The text of `/llms.txt`; `parts` is how many answers `/llms-full.txt` takes ([`split_parts`]),
/// `origin` the site's scheme and authority that every link starts with (no trailing `/`).
pub fn llms_txt(intro: &SiteIntro, outline: &Outline, parts: usize, origin: &str) -> String {
    let mut out = header(intro);
    let pages = plural(outline.page_count(), "page", "pages");
    out.push_str(
        "Each project and subproject below links its page on the docs site, and is followed by \
         its pages, each linking its markdown. ",
    );
    if parts <= 1 {
        out.push_str(&format!(
            "Every page in one file: [llms-full.txt]({origin}/llms-full.txt) ({pages}); one \
             project's pages: `{origin}/llms-full.txt?project=<id>`.\n"
        ));
    } else {
        let links = (1..=parts)
            .map(|n| format!("[part {n}]({origin}/llms-full.txt?part={n})"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push_str(&format!(
            "Every page ({pages}) in {parts} files of at most {} MiB each: {links}; one \
             project's pages: `{origin}/llms-full.txt?project=<id>` (in parts too when it is \
             that large: `&part=<n>`).\n",
            PART_BYTES >> 20
        ));
    }
    let mut optional = Vec::new();
    for p in &outline.projects {
        out.push_str(&format!("\n## {}\n", one_line(&p.name)));
        // Older versions are all optional: an agent reads the latest unless told otherwise.
        let (older, current): (Vec<_>, Vec<_>) = p
            .subprojects
            .iter()
            .filter(|s| !s.pages.is_empty())
            .partition(|s| p.is_older_version(&s.id));
        for s in older {
            let href = format!(
                "{origin}/docs/{}/{}/",
                encode_segment(&p.id),
                encode_segment(&s.id)
            );
            let name = format!("{} (an older version)", version_name(&p.name, &s.name));
            optional.push(item(&name, &href, &s.description));
            for page in &s.pages {
                let href = format!("{origin}{}", twin_url(&p.id, &s.id, &page.id));
                optional.push(item(&page.title, &href, &page.summary));
            }
        }
        // Every list item is a link (the format's file lists): a project without pages has
        // no page of its own to link, so its section is empty.
        if current.is_empty() {
            continue;
        }
        out.push('\n');
        let href = format!("{origin}/docs/{}/", encode_segment(&p.id));
        out.push_str(&item(&p.name, &href, &p.description));
        for s in current {
            let href = format!(
                "{origin}/docs/{}/{}/",
                encode_segment(&p.id),
                encode_segment(&s.id)
            );
            out.push_str(&item(&s.name, &href, &s.description));
            for page in &s.pages {
                let href = format!("{origin}{}", twin_url(&p.id, &s.id, &page.id));
                let line = item(&page.title, &href, &page.summary);
                if page.optional {
                    optional.push(line);
                } else {
                    out.push_str(&line);
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

/// A version's name as `/llms.txt` lists it: after its project's name, unless it starts with
/// that name already ("Spin 1", not "Spin Spin 1"; "Spin v1" for a version named `v1`).
fn version_name(project: &str, version: &str) -> String {
    let named = version
        .strip_prefix(project)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace));
    if named {
        version.to_owned()
    } else {
        format!("{project} {version}")
    }
}

/// `- [name](href): notes` (no `: notes` when there are none) and a newline.
fn item(name: &str, href: &str, notes: &str) -> String {
    // Parentheses stay legal in segments, but would end the link for a reader that takes
    // the URL up to the first `)`, as the format's reference parser does.
    let href = href.replace('(', "%28").replace(')', "%29");
    let mut line = format!("- [{}]({href})", link_text(name));
    if !notes.trim().is_empty() {
        line.push_str(&format!(": {}", one_line(notes)));
    }
    line.push('\n');
    line
}

/// The header both files start with.
pub fn header(intro: &SiteIntro) -> String {
    format!(
        "# {}\n\n> {}\n\n",
        one_line(&intro.name),
        one_line(&intro.summary)
    )
}

/// Writes `/llms-full.txt` (all projects, or only `project`) into `out`, reading one page
/// at a time; returns the number of pages written. With `pages`, only the pages at those
/// positions (in the order of the whole text, counted from 0) are written, after `note`. A
/// project that does not exist writes the header alone (the caller answers 404 before that).
pub fn write_full(
    root: &ContentRoot,
    intro: &SiteIntro,
    project: Option<&str>,
    out: &mut dyn Write,
) -> Result<usize, LlmsError> {
    write_part(root, intro, project, None, "", out)
}

/// [`write_full`] for the pages at positions `pages` only, with `note` after the header.
pub fn write_part(
    root: &ContentRoot,
    intro: &SiteIntro,
    project: Option<&str>,
    pages: Option<std::ops::Range<usize>>,
    note: &str,
    out: &mut dyn Write,
) -> Result<usize, LlmsError> {
    out.write_all(header(intro).as_bytes())?;
    out.write_all(note.as_bytes())?;
    let mut position = 0;
    let mut written = 0;
    for p in scope(root, project)? {
        for_each_page(root, &p, |page, twin| {
            let wanted = pages.as_ref().is_none_or(|r| r.contains(&position));
            position += 1;
            if wanted {
                write_entry(page, twin, &mut *out)?;
                written += 1;
            }
            Ok(())
        })?;
    }
    out.flush()?;
    Ok(written)
}

/// The projects of the whole text, or `project` alone.
fn scope(root: &ContentRoot, project: Option<&str>) -> Result<Vec<String>, ContentError> {
    Ok(match project {
        Some(id) => root.project(id)?.into_iter().map(|p| p.id).collect(),
        None => root.projects()?.into_iter().map(|p| p.id).collect(),
    })
}

/// Calls `f` with each page of `project` in reading order and its markdown twin's URL.
fn for_each_page(
    root: &ContentRoot,
    project: &str,
    mut f: impl FnMut(&crate::model::Page, &str) -> Result<(), LlmsError>,
) -> Result<(), LlmsError> {
    for s in root.subprojects(project)?.unwrap_or_default() {
        for id in root.page_ids_in_order(project, &s.id)? {
            // A page removed between listing and reading is left out, as in the manifests.
            let Some(page) = root.page(project, &s.id, &id)? else {
                continue;
            };
            f(&page, &twin_url(project, &s.id, &id))?;
        }
    }
    Ok(())
}

/// One page's entry: its heading, its twin's URL, its markdown.
fn write_entry(
    page: &crate::model::Page,
    twin: &str,
    out: &mut dyn Write,
) -> Result<(), LlmsError> {
    write!(
        out,
        "\n{}\n\nURL: {twin}\n\n",
        full_heading(&page.path(), page.title())
    )?;
    let body = page.body();
    out.write_all(body.as_bytes())?;
    if !body.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes one project's pages (the part of `/llms-full.txt` after the header), each entry's
/// length after it into `ends` as the offset where it ends, counted from `start`.
pub fn write_project(
    root: &ContentRoot,
    project: &str,
    out: &mut dyn Write,
    ends: &mut Vec<u64>,
    start: u64,
) -> Result<usize, LlmsError> {
    let mut written = 0;
    let mut offset = start;
    for_each_page(root, project, |page, twin| {
        let mut counter = Counter(&mut *out, 0);
        write_entry(page, twin, &mut counter)?;
        offset += counter.1;
        ends.push(offset);
        written += 1;
        Ok(())
    })?;
    Ok(written)
}

/// The length of each page's entry in `/llms-full.txt` (all projects, or only `project`), in
/// order: what the text is cut into parts by ([`split_parts`]). Reads every page.
pub fn entry_sizes(root: &ContentRoot, project: Option<&str>) -> Result<Vec<u64>, LlmsError> {
    let mut sizes = Vec::new();
    for p in scope(root, project)? {
        for_each_page(root, &p, |page, twin| {
            let mut counter = Counter(std::io::sink(), 0);
            write_entry(page, twin, &mut counter)?;
            sizes.push(counter.1);
            Ok(())
        })?;
    }
    Ok(sizes)
}

/// Counts the bytes written through it.
struct Counter<W: Write>(W, u64);

impl<W: Write> Write for Counter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The most page text one answer of `/llms-full.txt` carries: 8 MiB, so that with its header
/// and note it stays well under the 10 MiB response limit of Spin edge hosts (Akamai
/// Functions). A larger text is answered in parts (`?part=<n>`).
pub const PART_BYTES: u64 = 8 << 20;

/// Cuts page entries of `sizes` bytes, in order, into runs of at most `limit` bytes: the parts
/// of a large `/llms-full.txt`. A page larger than `limit` is a part of its own. No pages: one
/// empty part.
///
/// ```
/// use dochub_content::llms::split_parts;
/// assert_eq!(split_parts(&[4, 4, 4, 9, 1], 8), vec![0..2, 2..3, 3..4, 4..5]);
/// assert_eq!(split_parts(&[], 8), vec![0..0]);
/// ```
pub fn split_parts(sizes: &[u64], limit: u64) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, &size) in sizes.iter().enumerate() {
        if i > start && bytes + size > limit {
            parts.push(start..i);
            (start, bytes) = (i, 0);
        }
        bytes += size;
    }
    parts.push(start..sizes.len());
    parts
}

/// The line after the header of part `number` of `of`: which part this is and where the next
/// one is, so that a reader of one part knows there is more.
pub fn part_note(number: usize, of: usize, project: Option<&str>) -> String {
    let scope = project.map_or(String::new(), |p| {
        format!("project={}&", crate::manifest::encode_segment(p))
    });
    let next = if number < of {
        format!("; the next is /llms-full.txt?{scope}part={}", number + 1)
    } else {
        "; it is the last".to_owned()
    };
    format!("This is part {number} of {of} of the full text{next}.\n")
}

/// The body of `/llms-full.txt`, written when the response head has been sent.
#[derive(Debug)]
pub enum FullText {
    /// Read from the tree, one page at a time.
    Tree {
        /// The content root.
        root: ContentRoot,
        /// The header.
        intro: SiteIntro,
        /// Only this project's pages.
        project: Option<String>,
        /// Only the pages at these positions (a part), after this note.
        part: Option<(std::ops::Range<usize>, String)>,
    },
    /// Copied from the build, which was found current: the header (the first range), the
    /// note, then the rest.
    Prebuilt(FileRanges, String),
}

impl FullText {
    /// Writes the whole text into `out`. An error means the text is incomplete: the caller
    /// must not end the body as if it were whole.
    pub fn write_to(&self, out: &mut dyn Write) -> Result<(), LlmsError> {
        match self {
            FullText::Tree {
                root,
                intro,
                project,
                part,
            } => {
                let (pages, note) = match part {
                    Some((pages, note)) => (Some(pages.clone()), note.as_str()),
                    None => (None, ""),
                };
                write_part(root, intro, project.as_deref(), pages, note, out).map(drop)
            }
            FullText::Prebuilt(ranges, note) => {
                let (header, rest) = ranges.ranges.split_at(ranges.ranges.len().min(1));
                FileRanges {
                    path: ranges.path.clone(),
                    ranges: header.to_vec(),
                }
                .write_to(out)?;
                out.write_all(note.as_bytes())?;
                FileRanges {
                    path: ranges.path.clone(),
                    ranges: rest.to_vec(),
                }
                .write_to(out)
                .map(drop)
            }
        }
    }
}

/// Byte ranges of one file, copied out in order: a prebuilt answer found current.
#[derive(Debug, Clone)]
pub struct FileRanges {
    /// The file.
    pub path: std::path::PathBuf,
    /// `(start, end)` byte ranges to send, in order.
    pub ranges: Vec<(u64, u64)>,
}

impl FileRanges {
    /// Copies the ranges into `out`, a block at a time; a file shorter than its ranges is an
    /// error, so the caller never ends a body as if it were whole.
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

    #[test]
    fn an_older_version_is_named_once_with_its_project() {
        assert_eq!(version_name("Spin", "Spin 1"), "Spin 1");
        assert_eq!(version_name("Spin", "v1"), "Spin v1");
        assert_eq!(version_name("Spin", "Spinnaker 1"), "Spin Spinnaker 1");
        assert_eq!(version_name("Spin", "Spin"), "Spin");
    }

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
        let outline = crate::Catalog::llms_outline(&root).unwrap();
        let text = llms_txt(&intro, &outline, 1, "https://docs.example.com");
        let expected = "# Hub\n\n> Docs.\n\n\
            Each project and subproject below links its page on the docs site, and is followed by \
            its pages, each linking its markdown. Every page in one file: \
            [llms-full.txt](https://docs.example.com/llms-full.txt) (4 pages); one project's pages: \
            `https://docs.example.com/llms-full.txt?project=<id>`.\n\
            \n## Alpha\n\n\
            - [Alpha](https://docs.example.com/docs/alpha/)\n\
            - [API](https://docs.example.com/docs/alpha/api/): Routes\n\
            - [Landing](https://docs.example.com/docs/alpha/api/index.md): Start\n\
            - [Routes](https://docs.example.com/docs/alpha/api/routes.md)\n\
            \n## Beta\n\n\
            - [Beta](https://docs.example.com/docs/beta/): Second\n\
            - [Core](https://docs.example.com/docs/beta/core/)\n\
            - [Intro \\[1\\]](https://docs.example.com/docs/beta/core/intro.md): Two lines\n\
            \n## Optional\n\n\
            - [Old](https://docs.example.com/docs/beta/core/old.md)\n";
        assert_eq!(text, expected);
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
