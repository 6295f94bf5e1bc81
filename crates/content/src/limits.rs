//! What one file in the content tree may cost to read, and what happens over each limit.
//!
//! A content tree is written by many hands; one careless or hostile file must not take down
//! more than itself. Every reader (the live tree, the prebuilt build and `dochub check`)
//! applies the same limits, so `check` fails on exactly the files the server falls back on.
//!
//! | Limit | Default | Over it |
//! |---|---|---|
//! | [`MAX_YAML_BYTES`] | 64 KiB | frontmatter or `_project.yaml`/`_subproject.yaml` read as invalid YAML: fallbacks |
//! | [`MAX_YAML_DEPTH`] | 32 | the same |
//! | [`MAX_YAML_NODES`] | 10,000 | the same |
//! | [`MAX_PAGE_BYTES`] | 256 KiB | a short page saying so is served in its place ([`oversized_page`]): listed, but not rendered, searched or sent to agents |
//!
//! The YAML limits are far above any real metadata (a page's frontmatter is a title, a summary
//! and a few references) and keep the worst document under them to milliseconds: YAML parsing
//! costs grow with the square of the nesting depth, and aliases expand a small document into a
//! huge value, so nodes are counted as expanded, not as written.

/// The most bytes a YAML document (frontmatter, `_project.yaml`, `_subproject.yaml`) may have.
pub const MAX_YAML_BYTES: usize = 64 * 1024;

/// The deepest a YAML document may nest sequences and mappings.
pub const MAX_YAML_DEPTH: usize = 32;

/// The most nodes (scalars, sequences, mappings) a YAML document may hold with every alias
/// expanded: what building its value costs.
pub const MAX_YAML_NODES: usize = 10_000;

/// The most bytes a page may have for its text to be rendered, searched and listed for agents.
///
/// Chosen from what the worst page costs a component limited to 64 MiB (the edge hosts' limit,
/// which `dochub-host` applies to every instance): markdown is rendered from pulldown-cmark's
/// events, 64 bytes each, and a page of nothing but links (`[a](b) ` repeated) makes four per
/// 7 bytes. At 1 MiB such a page, or one of quotes nested half a million deep, runs the docs
/// component out of memory; at 256 KiB the worst of them renders in under 100 ms (measured by
/// `examples/hostile_bench.rs` in the tests). Real pages are a few to a few dozen KiB.
pub const MAX_PAGE_BYTES: u64 = 256 * 1024;

/// What is served in place of a page over [`MAX_PAGE_BYTES`]: a page of the same id saying why,
/// so its link in the sidebar and the manifests leads to an answer, and nothing else of the
/// site changes.
///
/// ```
/// let page = dochub_content::limits::oversized_page("huge", 50 * 1024 * 1024);
/// let parsed = dochub_content::parse_page("huge", &page);
/// assert_eq!(parsed.title, "huge");
/// assert!(parsed.body.contains("52428800 bytes (50 MiB), over the limit of 256 KiB"));
/// ```
pub fn oversized_page(id: &str, size: u64) -> Vec<u8> {
    let shown = human_size(size);
    let limit = human_size(MAX_PAGE_BYTES);
    format!(
        "---\ntitle: {id}\nsummary: Not shown; the file is {shown}, over the {limit} a page may have.\n---\n\
         This page is not shown: its file is {size} bytes ({shown}), over the limit of {limit} \
         for a page, so it is neither rendered, searched nor listed for agents. Split it into \
         smaller pages; `dochub check` names every page over the limit.\n"
    )
    .into_bytes()
}

/// A size for people: KiB under a MiB, else MiB with one decimal (none when whole).
pub(crate) fn human_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes < MIB {
        return format!("{} KiB", bytes.div_ceil(1024));
    }
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}
