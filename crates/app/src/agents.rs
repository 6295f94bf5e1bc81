//! What agents read instead of whole pages: one section of a page, a page or section cut to a
//! budget of tokens, and the sections that best answer a question ([`query_docs`]). The API
//! serves them (`/api/raw/<path>?anchor=&max_tokens=&offset=`, `/api/query`), and the MCP
//! tools `read_doc` and `query_docs` are these functions, over stdio and at `/mcp` alike.
//!
//! Tokens are counted as `dochub_content` counts them ([`dochub_content::count_tokens`]: UTF-8
//! bytes over three, rounded up), and an answer never counts more than its `max_tokens`.
//!
//! **Scope.** Without a version, a project that lists versions answers from its latest one
//! (the first it lists) and the others from all their pages; with a version, projects listing
//! it answer from it alone, never another of their versions; a version no project lists is
//! refused, naming those that are ([`Scope`]).
//!
//! **How sections are ranked.** The pages search finds first ([`CANDIDATE_PAGES`] of them) are
//! split into sections: the text before a page's first heading, and each heading with its
//! text up to the next heading. Each section is scored as BM25 does over that set of
//! sections, on the query's terms (question words left out, as search leaves them out),
//! with the page title and the headings above it as a field of their own
//! ([`HEADING_BOOST`]); a word of four letters or more matches the terms its stem starts
//! ([`dochub_search::stem`]). The page's place in search's answer adds a little
//! ([`page_prior`]). The best sections are taken while they fit the budget; the first one that
//! does not fit is cut at a block boundary when enough room is left. `search_docs` ranks the
//! pages it answers with by the same scores ([`search_by_section`]).
//!
//! ```
//! use dochub_app::agents::{ReadRequest, read_page};
//! let page = b"---\ntitle: T\n---\nIntro.\n\n## Set up\n\nRun it.\n\n## Use\n\nUse it.\n";
//! let read = ReadRequest { anchor: Some("set-up"), max_tokens: None, offset: 0 };
//! assert_eq!(read_page(page, "p/s/page", &read).unwrap().text, "## Set up\n\nRun it.\n\n");
//! ```

use std::collections::HashMap;

use serde::Serialize;

use dochub_content::{
    Catalog, CatalogError, ProjectOutline, count_tokens, cut, known_versions, page_text,
    plain_text, sections, split_frontmatter, version_scope,
};
use dochub_search::{
    MAX_RESULTS, RankedQuery, SearchHit, SearchResults, Within, excerpt, stem, terms,
};

/// `query_docs`' budget when the caller names none.
pub const DEFAULT_QUERY_TOKENS: usize = 2_000;
/// The smallest budget taken: room for a heading and a paragraph, and the line saying how
/// to read on.
pub const MIN_MAX_TOKENS: usize = 100;
/// The largest budget taken.
pub const MAX_MAX_TOKENS: usize = 100_000;
/// Pages of search's answer whose sections `query_docs` ranks.
pub const CANDIDATE_PAGES: usize = 10;
/// Sections one `query_docs` answer holds at most.
pub const MAX_SECTIONS: usize = 8;
/// Weight of a term in the page title or the headings above a section, against one in its text.
pub const HEADING_BOOST: f64 = 2.0;
/// The least room, in tokens, worth cutting a section into rather than leaving it out.
const MIN_CUT_TOKENS: usize = 150;
/// The least text, in bytes, a cut must have room for beside the line saying how to read on.
const MIN_ROOM_BYTES: usize = 16;
/// BM25's saturation and length normalisation, for sections.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Why an agent's read cannot be answered: each a 4xx naming what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// `max_tokens` out of range.
    #[error("`max_tokens` must be from {MIN_MAX_TOKENS} to {MAX_MAX_TOKENS}, not {0}")]
    Budget(String),
    /// `offset` not a number, or past the end.
    #[error("`offset` must be a byte offset within the text (0 to {len}), not {given}")]
    Offset {
        /// What was given.
        given: String,
        /// The text's length.
        len: usize,
    },
    /// No heading of the page has this id.
    #[error("no section `{anchor}` on this page; its sections are: {known}")]
    NoSuchAnchor {
        /// The anchor asked for.
        anchor: String,
        /// The page's anchors, comma-separated (the first 50).
        known: String,
    },
    /// A `project=` that is not a project.
    #[error("unknown project `{0}`; list them with /api/manifest")]
    UnknownProject(String),
    /// A `version=` no project lists.
    #[error("{0}")]
    UnknownVersion(String),
    /// The query is too short, or empty.
    #[error("{0}")]
    Query(String),
    /// A budget that leaves no room for text beside the line saying how to read on.
    #[error(
        "`max_tokens` {0} leaves no room for text beside the line saying how to read on this page; ask for more"
    )]
    NoRoom(usize),
    /// A `rank=` that is neither `page` nor `section`.
    #[error("`rank` must be `page` or `section`, not `{0}`")]
    Rank(String),
    /// A `limit=` out of range.
    #[error("`limit` must be from 1 to {MAX_RESULTS}, not {0}")]
    Limit(String),
}

/// A budget as given (`max_tokens=`): a number in range, or the reason it is refused.
pub fn parse_budget(given: &str) -> Result<usize, AgentError> {
    match given.trim().parse::<usize>() {
        Ok(n) if (MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&n) => Ok(n),
        _ => Err(AgentError::Budget(given.to_owned())),
    }
}

/// What part of a page to read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadRequest<'a> {
    /// Only the section under the heading with this id (to the next heading of the same or a
    /// higher level); `None`, the whole file with its frontmatter.
    pub anchor: Option<&'a str>,
    /// Cut the text at a block boundary to at most this many tokens, the line saying how to
    /// read on included.
    pub max_tokens: Option<usize>,
    /// Where to start, in bytes of the section (or file): the `offset` a cut names.
    pub offset: usize,
}

/// A page (or a section of it) as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadAnswer {
    /// The text, ending with the line saying how to read on when it was cut.
    pub text: String,
    /// Where the next read starts, when the text was cut.
    pub next_offset: Option<usize>,
}

/// The line that ends a cut text. At most [`read_on_len`] bytes.
fn read_on(path: &str, anchor: Option<&str>, shown: usize, total: usize, next: usize) -> String {
    let anchor = anchor
        .map(|a| format!(", anchor `{a}`"))
        .unwrap_or_default();
    format!(
        "\n\n[Cut to fit max_tokens: {shown} of {total} tokens shown. Read on with path \
         `{path}`{anchor}, offset {next}.]\n"
    )
}

/// The most bytes [`read_on`] writes for this path and anchor.
fn read_on_len(path: &str, anchor: Option<&str>) -> usize {
    read_on(path, anchor, usize::MAX, usize::MAX, usize::MAX).len()
}

/// Reads a page's file as `read` asks: a section, from an offset, within a budget. `path`
/// (`<project>/<subproject>/<page>`) is what the line saying how to read on names.
pub fn read_page(raw: &[u8], path: &str, read: &ReadRequest<'_>) -> Result<ReadAnswer, AgentError> {
    // The whole file as it is (a BOM kept), so that its parts put together are the file.
    let file = String::from_utf8_lossy(raw);
    let text = page_text(raw);
    let document = match read.anchor {
        None => &file[..],
        Some(anchor) => {
            let body = split_frontmatter(&text).map_or(&text[..], |(_, body)| body);
            let found = sections(body);
            match found.iter().find(|s| s.id == anchor) {
                Some(section) => &body[section.range()],
                None => {
                    let known: Vec<&str> = found.iter().take(50).map(|s| s.id.as_str()).collect();
                    return Err(AgentError::NoSuchAnchor {
                        anchor: anchor.to_owned(),
                        known: if known.is_empty() {
                            "none (the page has no headings)".to_owned()
                        } else {
                            known.join(", ")
                        },
                    });
                }
            }
        }
    };
    if read.offset > document.len() {
        return Err(AgentError::Offset {
            given: read.offset.to_string(),
            len: document.len(),
        });
    }
    let Some(max_tokens) = read.max_tokens else {
        let start = document.ceil_char_boundary(read.offset);
        return Ok(ReadAnswer {
            text: document[start..].to_owned(),
            next_offset: None,
        });
    };
    // A long path and anchor can leave no room at the smallest budgets: refused, never over.
    let room = (max_tokens * dochub_content::BYTES_PER_TOKEN)
        .checked_sub(read_on_len(path, read.anchor))
        .filter(|&room| room >= MIN_ROOM_BYTES)
        .ok_or(AgentError::NoRoom(max_tokens))?;
    let part = cut(document, read.offset, room);
    let mut text = part.text.to_owned();
    if let Some(next) = part.next {
        text.push_str(&read_on(
            path,
            read.anchor,
            count_tokens(part.text),
            count_tokens(document),
            next,
        ));
    }
    Ok(ReadAnswer {
        text,
        next_offset: part.next,
    })
}

/// Which versions of a versioned project answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions<'a> {
    /// All of them (`/api/search` without `version=`).
    All,
    /// Its latest, the first it lists (`version=latest`, and the agents' default).
    Latest,
    /// This one, in each project that lists it; the others' pages as usual.
    Named(&'a str),
}

impl<'a> Versions<'a> {
    /// A `version=` as given: `latest` is [`Versions::Latest`] unless a project lists a
    /// version of that name; absent or blank, `default`.
    pub fn parse(given: Option<&'a str>, default: Versions<'a>) -> Versions<'a> {
        match given.map(str::trim) {
            None | Some("") => default,
            Some(LATEST) => Versions::Latest,
            Some(name) => Versions::Named(name),
        }
    }
}

/// The `version=` that keeps each versioned project to its latest version.
pub const LATEST: &str = "latest";

/// Which pages an agent's search or question keeps to: one project or all, and which
/// versions.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// Only this project's pages.
    pub project: Option<&'a str>,
    /// Which versions of each versioned project.
    pub versions: Versions<'a>,
}

impl Scope<'_> {
    /// The subprojects this scope admits, from the catalog's outline.
    pub fn within(&self, outline: &[ProjectOutline]) -> Result<Within, AgentError> {
        if let Some(project) = self.project
            && !outline.iter().any(|p| p.id == project)
        {
            return Err(AgentError::UnknownProject(project.to_owned()));
        }
        let mut left_out: Vec<(String, String)> = Vec::new();
        let listed = |name: &str| outline.iter().any(|p| p.versions.iter().any(|v| v == name));
        let versions = match self.versions {
            // A project that calls a version `latest` means that one.
            Versions::Latest if listed(LATEST) => Versions::Named(LATEST),
            other => other,
        };
        match versions {
            Versions::All => {}
            Versions::Named(version) => match version_scope(outline, version) {
                Some(within) => {
                    left_out.extend(within.left_out().map(|(p, s)| (p.to_owned(), s.to_owned())))
                }
                None => {
                    return Err(AgentError::UnknownVersion(unknown_version(
                        version,
                        &known_versions(outline),
                    )));
                }
            },
            Versions::Latest => {
                for p in outline {
                    for old in p.versions.iter().skip(1) {
                        left_out.push((p.id.clone(), old.clone()));
                    }
                }
            }
        }
        if let Some(project) = self.project {
            for p in outline.iter().filter(|p| p.id != project) {
                left_out.extend(p.subprojects.iter().map(|(s, _)| (p.id.clone(), s.clone())));
            }
        }
        Ok(Within::leaving_out(left_out))
    }
}

/// Why a `version=` no project lists is refused, naming those that are listed.
pub fn unknown_version(version: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("Unknown version `{version}`: no project lists versions")
    } else {
        format!(
            "Unknown version `{version}`; the versions are: {}",
            known.join(", ")
        )
    }
}

/// Search kept to `scope`, at most `limit` hits (1 to [`dochub_search::MAX_RESULTS`]), ranked
/// by page: what `/api/search` and the search page answer ([`search_by_section`] for
/// `search_docs`).
pub fn search(
    catalog: &dyn Catalog,
    query: &str,
    scope: &Scope<'_>,
    limit: usize,
) -> Result<Result<SearchResults, AgentError>, CatalogError> {
    if let Err(e) = check_limit(limit) {
        return Ok(Err(e));
    }
    let within = match scope.within(&catalog.outline()?) {
        Ok(within) => within,
        Err(e) => return Ok(Err(e)),
    };
    match catalog.search_within(query, &within) {
        Ok(mut found) => {
            found.results.truncate(limit);
            Ok(Ok(found))
        }
        Err(CatalogError::Query(e)) => Ok(Err(AgentError::Query(e.to_string()))),
        Err(e) => Err(e),
    }
}

/// How a search's pages are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ranking {
    /// By the whole page's score (search's own order).
    #[default]
    Page,
    /// By each page's best-matching section ([`search_by_section`]).
    Section,
}

impl Ranking {
    /// `rank=` as given: `page` or `section`, or the reason it is refused.
    pub fn parse(given: Option<&str>) -> Result<Ranking, AgentError> {
        match given.map(str::trim) {
            None | Some("" | "page") => Ok(Ranking::Page),
            Some("section") => Ok(Ranking::Section),
            Some(other) => Err(AgentError::Rank(other.to_owned())),
        }
    }
}

/// [`search`] with its pages ranked as `rank` says.
pub fn search_ranked(
    catalog: &dyn Catalog,
    query: &str,
    scope: &Scope<'_>,
    limit: usize,
    rank: Ranking,
) -> Result<Result<SearchResults, AgentError>, CatalogError> {
    match rank {
        Ranking::Page => search(catalog, query, scope, limit),
        Ranking::Section => search_by_section(catalog, query, scope, limit),
    }
}

/// [`search`], its pages ranked by their best-matching section: the pages search finds first
/// (`limit` of them, at least [`CANDIDATE_PAGES`]) are split into sections and scored as
/// [`query_docs`] scores them, and each page goes by its best section's score; a hit's
/// `section`, `anchor` and `excerpt` are that section's. Pages without a scored section (found
/// by their summary or a misspelt word) follow, in search's order.
pub fn search_by_section(
    catalog: &dyn Catalog,
    query: &str,
    scope: &Scope<'_>,
    limit: usize,
) -> Result<Result<SearchResults, AgentError>, CatalogError> {
    if let Err(e) = check_limit(limit) {
        return Ok(Err(e));
    }
    let considered = limit.max(CANDIDATE_PAGES);
    let mut found = match search(catalog, query, scope, considered)? {
        Ok(found) => found,
        Err(e) => return Ok(Err(e)),
    };
    let Ok(ranked) = RankedQuery::new(query) else {
        found.results.truncate(limit);
        return Ok(Ok(found));
    };
    let mut candidates = Vec::new();
    for (page, hit) in found.results.iter().enumerate() {
        if let Some(raw) = page_raw(catalog, &hit.path)? {
            candidates.extend(page_sections(page, &hit.path, &hit.title, &raw));
        }
    }
    let scores = score_sections(&ranked.terms, &candidates);
    // Each page's best section: (score, candidate), the first of equals.
    let mut best: Vec<Option<(f64, usize)>> = vec![None; found.results.len()];
    for (i, c) in candidates.iter().enumerate() {
        let score = scores[i];
        if score > 0.0 && best[c.page].is_none_or(|(top, _)| score > top) {
            best[c.page] = Some((score, i));
        }
    }
    let mut order: Vec<usize> = (0..found.results.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |page: usize| best[page].map_or(0.0, |(score, _)| score);
        key(b).total_cmp(&key(a)).then(a.cmp(&b))
    });
    let mut hits: Vec<Option<SearchHit>> = found.results.into_iter().map(Some).collect();
    found.results = order
        .into_iter()
        .take(limit)
        .filter_map(|page| {
            let mut hit = hits[page].take()?;
            if let Some((_, i)) = best[page] {
                let c = &candidates[i];
                let (plain, _) = plain_text(&c.markdown);
                let (start, end) = ranked.excerpt_range(&plain).unwrap_or((0, 0));
                hit.excerpt = excerpt(&plain, start, end);
                hit.section = c.section.clone();
                hit.anchor = c.anchor.clone();
            }
            Some(hit)
        })
        .collect();
    Ok(Ok(found))
}

/// `limit` if it is from 1 to [`MAX_RESULTS`].
fn check_limit(limit: usize) -> Result<(), AgentError> {
    if (1..=MAX_RESULTS).contains(&limit) {
        Ok(())
    } else {
        Err(AgentError::Limit(limit.to_string()))
    }
}

/// The raw file of the page at `<project>/<subproject>/<page>`.
fn page_raw(catalog: &dyn Catalog, path: &str) -> Result<Option<Vec<u8>>, CatalogError> {
    let mut parts = path.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(p), Some(s), Some(id)) => catalog.raw(p, s, id),
        _ => Ok(None),
    }
}

/// One section of a `query_docs` answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerSection {
    /// The page, `<project>/<subproject>/<page>`.
    pub path: String,
    /// The section's heading id on the page; absent for the text before the first heading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The page's title.
    pub title: String,
    /// The section's heading; absent for the text before the first heading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The section's markdown, cut when it did not fit whole.
    pub text: String,
    /// Where the rest of the section starts (read it with `read_doc` and this offset), when
    /// it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

impl AnswerSection {
    /// The line that heads the section in the answer's text.
    fn header(&self) -> String {
        let place = match &self.anchor {
            Some(anchor) => format!("{}#{anchor}", self.path),
            None => self.path.clone(),
        };
        match &self.section {
            Some(section) => format!("--- {place} ({} › {section}) ---\n", self.title),
            None => format!("--- {place} ({}) ---\n", self.title),
        }
    }
}

/// The answer of `query_docs` (and `/api/query`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryAnswer {
    /// The question as asked.
    pub query: String,
    /// The budget.
    pub max_tokens: usize,
    /// The tokens `text` counts: never more than `max_tokens`.
    pub tokens: usize,
    /// The answer as one text, as the `query_docs` tool returns it: each section headed by
    /// a line with its `path#anchor` and titles.
    pub text: String,
    /// The sections, best first.
    pub sections: Vec<AnswerSection>,
}

impl QueryAnswer {
    /// The sections as one text ([`QueryAnswer::text`]).
    fn joined(&self) -> String {
        if self.sections.is_empty() {
            return format!(
                "No section answers `{}`. Try other words, or search_docs.\n",
                self.query
            );
        }
        let mut out = String::new();
        for section in &self.sections {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&section.header());
            out.push_str(&section.text);
            if !section.text.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

/// A section of a candidate page, before ranking.
struct Candidate {
    page: usize,
    path: String,
    title: String,
    anchor: Option<String>,
    section: Option<String>,
    markdown: String,
    /// Terms of the page title and the headings above the section (its own included).
    heading_terms: Vec<String>,
    /// Terms of its text.
    text_terms: Vec<String>,
}

/// The sections that best answer `query` within `scope`, together at most `max_tokens` as
/// its text counts them.
pub fn query_docs(
    catalog: &dyn Catalog,
    query: &str,
    scope: &Scope<'_>,
    max_tokens: usize,
) -> Result<Result<QueryAnswer, AgentError>, CatalogError> {
    let within = match scope.within(&catalog.outline()?) {
        Ok(within) => within,
        Err(e) => return Ok(Err(e)),
    };
    let hits = match catalog.search_within(query, &within) {
        Ok(hits) => hits,
        Err(CatalogError::Query(e)) => return Ok(Err(AgentError::Query(e.to_string()))),
        Err(e) => return Err(e),
    };
    let Ok(ranked) = RankedQuery::new(query) else {
        return Ok(Err(AgentError::Query(format!(
            "the query must be at least {} characters",
            dochub_search::MIN_QUERY_CHARS
        ))));
    };
    let mut candidates = Vec::new();
    for (page, hit) in hits.results.iter().take(CANDIDATE_PAGES).enumerate() {
        if let Some(raw) = page_raw(catalog, &hit.path)? {
            candidates.extend(page_sections(page, &hit.path, &hit.title, &raw));
        }
    }
    let scores = score_sections(&ranked.terms, &candidates);
    let mut order: Vec<usize> = (0..candidates.len()).filter(|&i| scores[i] > 0.0).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));

    let mut answer = QueryAnswer {
        query: query.to_owned(),
        max_tokens,
        tokens: 0,
        text: String::new(),
        sections: Vec::new(),
    };
    let budget = max_tokens * dochub_content::BYTES_PER_TOKEN;
    let mut used = 0;
    for i in order {
        if answer.sections.len() == MAX_SECTIONS {
            break;
        }
        let c = &candidates[i];
        let mut section = AnswerSection {
            path: c.path.clone(),
            anchor: c.anchor.clone(),
            title: c.title.clone(),
            section: c.section.clone(),
            text: String::new(),
            next_offset: None,
        };
        // The header, the text, a newline after it and one between sections.
        let frame = section.header().len() + 2;
        let room = budget.saturating_sub(used + frame);
        if c.markdown.len() < room {
            section.text = c.markdown.clone();
        } else if let Some(space) = room
            .checked_sub(read_on_len(&c.path, c.anchor.as_deref()))
            .filter(|_| room >= MIN_CUT_TOKENS * dochub_content::BYTES_PER_TOKEN)
            .filter(|&space| space >= MIN_ROOM_BYTES)
        {
            let part = cut(&c.markdown, 0, space);
            let next = part.next.unwrap_or(c.markdown.len());
            section.text = format!(
                "{}{}",
                part.text,
                read_on(
                    &c.path,
                    c.anchor.as_deref(),
                    count_tokens(part.text),
                    count_tokens(&c.markdown),
                    next
                )
            );
            section.next_offset = part.next;
        } else {
            continue;
        }
        used += frame + section.text.len();
        answer.sections.push(section);
    }
    answer.text = answer.joined();
    answer.tokens = count_tokens(&answer.text);
    Ok(Ok(answer))
}

/// A page's sections as candidates: the text before its first heading (when it holds any
/// words), then each heading with its text up to the next heading.
fn page_sections(page: usize, path: &str, title: &str, raw: &[u8]) -> Vec<Candidate> {
    let text = page_text(raw);
    let body = split_frontmatter(&text).map_or(&text[..], |(_, body)| body);
    let found = sections(body);
    let mut out = Vec::new();
    let title_terms: Vec<String> = terms(title).collect();
    let intro_end = found.first().map_or(body.len(), |s| s.start);
    let intro = &body[..intro_end];
    let intro_terms: Vec<String> = terms(&plain_text(intro).0).collect();
    if !intro_terms.is_empty() {
        out.push(Candidate {
            page,
            path: path.to_owned(),
            title: title.to_owned(),
            anchor: None,
            section: None,
            markdown: intro.trim_start().to_owned(),
            heading_terms: title_terms.clone(),
            text_terms: intro_terms,
        });
    }
    // The headings above each section: a stack of (level, terms).
    let mut above: Vec<(u8, Vec<String>)> = Vec::new();
    for section in &found {
        above.retain(|(level, _)| *level < section.level);
        above.push((section.level, terms(&section.title).collect()));
        let markdown = &body[section.own_range()];
        let (plain, _) = plain_text(markdown);
        let mut heading_terms = title_terms.clone();
        heading_terms.extend(above.iter().flat_map(|(_, t)| t.iter().cloned()));
        out.push(Candidate {
            page,
            path: path.to_owned(),
            title: title.to_owned(),
            anchor: Some(section.id.clone()),
            section: Some(section.title.clone()),
            markdown: markdown.to_owned(),
            heading_terms,
            text_terms: terms(&plain).collect(),
        });
    }
    out
}

/// Whether a section's term answers a query term: the term itself, or for a query word of
/// four letters or more, a term its stem starts.
fn matches(query_term: &str, term: &str) -> bool {
    if term == query_term {
        return true;
    }
    let stem = stem(query_term);
    stem.chars().nth(3).is_some() && term.starts_with(stem)
}

/// What a page's place in search's answer adds to its sections' scores: a factor from 1.5
/// for the first page down towards 1.
pub fn page_prior(place: usize) -> f64 {
    1.0 + 0.5 / (1.0 + place as f64 / 2.0)
}

/// BM25 over the candidate sections, each section a document of two fields.
fn score_sections(query_terms: &[String], candidates: &[Candidate]) -> Vec<f64> {
    if candidates.is_empty() {
        return Vec::new();
    }
    let n = candidates.len() as f64;
    let avg_len = candidates
        .iter()
        .map(|c| c.text_terms.len() as f64)
        .sum::<f64>()
        / n;
    let mut counts: Vec<HashMap<&str, (f64, f64)>> = Vec::with_capacity(candidates.len());
    for c in candidates {
        let mut tf: HashMap<&str, (f64, f64)> = HashMap::new();
        for q in query_terms {
            let in_heading = c.heading_terms.iter().filter(|t| matches(q, t)).count() as f64;
            let in_text = c.text_terms.iter().filter(|t| matches(q, t)).count() as f64;
            if in_heading + in_text > 0.0 {
                tf.insert(q.as_str(), (in_heading, in_text));
            }
        }
        counts.push(tf);
    }
    let idf: HashMap<&str, f64> = query_terms
        .iter()
        .map(|q| {
            let df = counts
                .iter()
                .filter(|tf| tf.contains_key(q.as_str()))
                .count() as f64;
            (q.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .collect();
    candidates
        .iter()
        .zip(&counts)
        .map(|(c, tf)| {
            let len_norm = 1.0 - B + B * c.text_terms.len() as f64 / avg_len.max(1.0);
            let score: f64 = tf
                .iter()
                .map(|(q, &(in_heading, in_text))| {
                    let f = HEADING_BOOST * in_heading.min(1.0) + in_text;
                    idf[q] * f * (K1 + 1.0) / (f + K1 * len_norm)
                })
                .sum();
            score * page_prior(c.page)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &[u8] = b"---\ntitle: Store\n---\nIntro text.\n\n## Set up\n\nRun `spin up`.\n\n\
                          ### Details\n\nMore words here.\n\n## Use\n\nUse it.\n";

    #[test]
    fn an_anchor_reads_its_section_with_its_subsections() {
        let read = ReadRequest {
            anchor: Some("set-up"),
            ..ReadRequest::default()
        };
        let answer = read_page(PAGE, "p/s/store", &read).unwrap();
        assert_eq!(
            answer.text,
            "## Set up\n\nRun `spin up`.\n\n### Details\n\nMore words here.\n\n"
        );
        let missing = ReadRequest {
            anchor: Some("nope"),
            ..ReadRequest::default()
        };
        assert_eq!(
            read_page(PAGE, "p/s/store", &missing)
                .unwrap_err()
                .to_string(),
            "no section `nope` on this page; its sections are: set-up, details, use"
        );
    }

    #[test]
    fn a_budget_is_never_exceeded_and_reading_on_gives_the_rest() {
        let long: String = (0..200)
            .map(|i| format!("Paragraph {i} says something.\n\n"))
            .collect();
        let raw = format!("# Long\n\n{long}");
        let mut offset = 0;
        let mut whole = String::new();
        let mut reads = 0;
        loop {
            let read = ReadRequest {
                anchor: None,
                max_tokens: Some(MIN_MAX_TOKENS),
                offset,
            };
            let answer = read_page(raw.as_bytes(), "p/s/long", &read).unwrap();
            assert!(count_tokens(&answer.text) <= MIN_MAX_TOKENS);
            reads += 1;
            match answer.next_offset {
                Some(next) => {
                    assert!(answer.text.contains(&format!("offset {next}.]")));
                    whole.push_str(answer.text.split("\n\n[Cut to fit").next().unwrap());
                    offset = next;
                }
                None => {
                    whole.push_str(&answer.text);
                    break;
                }
            }
        }
        assert_eq!(whole, raw);
        assert!(reads > 10);
        let past = ReadRequest {
            offset: raw.len() + 1,
            ..ReadRequest::default()
        };
        assert!(matches!(
            read_page(raw.as_bytes(), "p", &past),
            Err(AgentError::Offset { .. })
        ));
    }

    #[test]
    fn a_path_too_long_for_the_budget_is_refused_not_exceeded() {
        let path = format!(
            "{}/{}/{}",
            "p".repeat(100),
            "s".repeat(100),
            "x".repeat(100)
        );
        let read = ReadRequest {
            anchor: Some("set-up"),
            max_tokens: Some(MIN_MAX_TOKENS),
            offset: 0,
        };
        let long = format!("## Set up\n\n{}\n", "word ".repeat(200));
        assert!(matches!(
            read_page(long.as_bytes(), &path, &read),
            Err(AgentError::NoRoom(100))
        ));
        let fits = ReadRequest {
            max_tokens: Some(1000),
            ..read
        };
        let answer = read_page(long.as_bytes(), &path, &fits).unwrap();
        assert!(count_tokens(&answer.text) <= 1000);
    }

    #[test]
    fn budgets_out_of_range_are_refused() {
        assert_eq!(parse_budget("2000"), Ok(2000));
        for bad in ["99", "100001", "x", "-1", ""] {
            assert!(parse_budget(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stems_match_other_endings() {
        assert!(matches("latencies", "latency") || matches("latency", "latencies"));
        assert!(matches("configure", "configuration"));
        assert!(!matches("run", "runtime"));
        assert!(matches("run", "run"));
    }
}
