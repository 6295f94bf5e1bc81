//! Ranking: what a page is scored on, its score for a query, and the order of an answer. The
//! live scan ([`crate::ContentRoot::search`]) and the prebuilt index compute every number here
//! with the same functions, from the same integers, so both give the same order.
//!
//! **Which pages answer.** Tier 1: every page whose file (frontmatter included) or page id
//! holds the whole query as a case-insensitive substring. Tier 2, when the query's words (runs
//! of non-space of two characters or more, each standing for its [`stem`]) are not just the
//! query itself: pages that hold every such word, in any order, and are not in tier 1. Tier 1
//! comes first: an exact phrase beats scattered words.
//!
//! **What a page is scored on.** Its terms: runs of letters and digits of the case-folded text
//! ([`crate::fold`]), of 2 characters to [`MAX_TERM_BYTES`] bytes, in four fields: the title,
//! the headings, the page id, and the body (the summary and the page's markdown reduced to
//! plain text: no frontmatter, link targets, fence markers or `#`).
//!
//! **The score.** Each field is scored as in BM25 and the fields are added with a boost
//! (as lunr and MiniSearch do, rather than pooling their frequencies as BM25F does: a word in
//! the title should outweigh any number of it in the body):
//!
//! ```text
//! impact(t, d)  = Σ_f  boost_f · tf_f / (tf_f + K1 · (1 − b_f + b_f · len_f / avglen_f))
//! idf(w)        = ln(1 + (N − df + 0.5) / (df + 0.5))
//! score(q, d)   = Σ_{w in q}  max over terms t matching w of  idf(w) · impact(t, d) · r(w, t)
//! ```
//!
//! `tf_f` is how often term `t` is in field `f` of page `d`, `len_f` how many terms that field
//! has, `avglen_f` its mean over all `N` pages and `df` the most pages any term `w` matches is
//! in. A query word `w` of [`PREFIX_MIN_CHARS`] characters or more matches itself and the first
//! [`MAX_EXPANSIONS`] other terms that start with its [`stem`] (in byte order, see
//! [`Expansion`]); `r(w, t)` is 1 for the word itself, else the shorter of their lengths in
//! characters over the longer (`config` finds `configuration` at 6/13 of the weight). A
//! shorter word matches only itself. Boosts: title [`TITLE_BOOST`], headings
//! [`HEADINGS_BOOST`], page id [`ID_BOOST`], body [`BODY_BOOST`]; `b` is [`B_SHORT`] for the
//! three short fields and [`B_BODY`] for the body; [`K1`].
//!
//! Tier 2 and the matching of terms forgive English endings: a query word of five letters or
//! more stands for its [`stem`], so `migrate` finds `migrating` and `migration`.
//!
//! Impacts are stored in 16 bits ([`IMPACT_SCALE`]) and scores compared as integers
//! ([`score_key`]), so the two paths cannot differ by rounding. Within a tier, a higher score
//! comes first and ties keep path order; then versions of one page are spread out
//! ([`spread_versions`]).

use std::collections::BTreeMap;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::error::ContentError;
use crate::frontmatter::ParsedPage;
use crate::search::{Query, SearchHit, fold};

/// Boost of a term in the page's title.
pub const TITLE_BOOST: f64 = 5.0;
/// Boost of a term in the page's headings.
pub const HEADINGS_BOOST: f64 = 2.0;
/// Boost of a term in the page's id (`key-value-store` holds `key`, `value`, `store`).
pub const ID_BOOST: f64 = 1.5;
/// Boost of a term in the summary or body text.
pub const BODY_BOOST: f64 = 1.0;
/// BM25's term-frequency saturation.
pub const K1: f64 = 1.2;
/// BM25's length normalisation of the title, headings and id.
pub const B_SHORT: f64 = 0.5;
/// BM25's length normalisation of the body.
pub const B_BODY: f64 = 0.75;
/// A query word this long or longer also matches longer terms that start with it.
pub const PREFIX_MIN_CHARS: usize = 3;
/// How many longer terms one query word matches at most.
pub const MAX_EXPANSIONS: usize = 64;
/// Longest term indexed, in bytes (longer runs are identifiers, hashes or base64).
pub const MAX_TERM_BYTES: usize = 64;
/// Most distinct words and terms one query is split into: the rest of a longer query (a
/// pasted paragraph) still has to match as a phrase, but adds no cost per word.
pub const MAX_QUERY_TERMS: usize = 16;
/// An impact of 1.0 is stored as this.
pub const IMPACT_SCALE: f64 = 4096.0;

const BOOSTS: [f64; FIELDS] = [TITLE_BOOST, HEADINGS_BOOST, ID_BOOST, BODY_BOOST];
const B: [f64; FIELDS] = [B_SHORT, B_SHORT, B_SHORT, B_BODY];
/// Title, headings, id, body.
pub const FIELDS: usize = 4;

/// How often a term is in each field of a page: title, headings, id, body.
pub type FieldCounts = [u32; FIELDS];

/// The markdown dialect of dochub pages, in one place: CommonMark plus tables, footnotes,
/// strikethrough, task lists and heading attributes (`# Title {#id .class}`).
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// What ranking needs of one page, found once (at build time for the prebuilt index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageTerms {
    /// The body as plain text, whitespace collapsed: what excerpts are cut from.
    pub plain: String,
    /// Terms in each field.
    pub lengths: FieldCounts,
    /// Each distinct term with its counts, sorted by term.
    pub terms: Vec<(String, FieldCounts)>,
}

/// The terms of a text: runs of letters and digits of its folded form, of 2 characters to
/// [`MAX_TERM_BYTES`] bytes.
///
/// ```
/// let terms: Vec<String> = dochub_content::terms("Spin's KEY-value store, v2 (ü) x").collect();
/// assert_eq!(terms, ["spin", "key", "value", "store", "v2"]);
/// ```
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    let folded = fold(text);
    let mut out = Vec::new();
    for run in folded.split(|c: char| !c.is_alphanumeric()) {
        if run.len() <= MAX_TERM_BYTES && run.chars().nth(1).is_some() {
            out.push(run.to_owned());
        }
    }
    out.into_iter()
}

/// A page's markdown body as plain text, and the text of its headings: text and code kept,
/// markup, link targets, raw HTML tags and fence markers dropped, whitespace collapsed.
///
/// ```
/// let (plain, headings) = dochub_content::plain_text("# Title {#t}\n\nSee [the *docs*](x.md).\n\n```sh\nspin up\n```\n");
/// assert_eq!(plain, "Title See the docs. spin up");
/// assert_eq!(headings, "Title");
/// ```
pub fn plain_text(markdown: &str) -> (String, String) {
    let mut plain = String::with_capacity(markdown.len());
    let mut headings = String::new();
    let mut in_heading = false;
    for event in Parser::new_ext(markdown, markdown_options()) {
        let text = match event {
            Event::Text(t) | Event::Code(t) => t.into_string(),
            // A tag inside a word (`H<sub>2</sub>O`) leaves it whole; a block of HTML does not.
            Event::InlineHtml(t) => strip_tags(&t, ""),
            Event::Html(t) => strip_tags(&t, " "),
            Event::SoftBreak | Event::HardBreak | Event::Rule => " ".to_owned(),
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                " ".to_owned()
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
                headings.push(' ');
                " ".to_owned()
            }
            Event::End(end) if is_block_end(end) => " ".to_owned(),
            _ => continue,
        };
        plain.push_str(&text);
        if in_heading {
            headings.push_str(&text);
        }
    }
    (collapse(&plain), collapse(&headings))
}

fn is_block_end(end: TagEnd) -> bool {
    !matches!(
        end,
        TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Link
            | TagEnd::Image
            | TagEnd::Superscript
            | TagEnd::Subscript
    )
}

/// Raw HTML without its tags, each replaced by `sep` (`<b>Text</b>` is `Text`).
fn strip_tags(html: &str, sep: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push_str(sep);
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whitespace runs as one space, none at the ends.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// What ranking needs of a page (see the module docs for the fields).
pub fn page_terms(id: &str, page: &ParsedPage) -> PageTerms {
    let (plain, headings) = plain_text(&page.body);
    let mut counts: BTreeMap<String, FieldCounts> = BTreeMap::new();
    let mut lengths = [0; FIELDS];
    let fields: [&[&str]; FIELDS] = [
        &[&page.title],
        &[&headings],
        &[id],
        &[&page.summary, &plain],
    ];
    for (f, texts) in fields.iter().enumerate() {
        for text in *texts {
            for term in terms(text) {
                lengths[f] += 1;
                counts.entry(term).or_default()[f] += 1;
            }
        }
    }
    PageTerms {
        plain,
        lengths,
        terms: counts.into_iter().collect(),
    }
}

/// Field lengths summed over every page: what the average lengths come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CorpusStats {
    /// Pages counted.
    pub pages: u32,
    /// Terms in each field, summed over the pages.
    pub length_sums: [u64; FIELDS],
}

impl CorpusStats {
    /// Counts one more page.
    pub fn add(&mut self, lengths: &FieldCounts) {
        self.pages += 1;
        for (sum, len) in self.length_sums.iter_mut().zip(lengths) {
            *sum += u64::from(*len);
        }
    }

    /// How much `counts` of a term weigh in a page of field `lengths`, stored as an integer
    /// (see the module docs). At least 1 for a term that is there at all.
    pub fn impact(&self, counts: &FieldCounts, lengths: &FieldCounts) -> u16 {
        let mut impact = 0.0;
        for f in 0..FIELDS {
            let tf = f64::from(counts[f]);
            if tf == 0.0 {
                continue;
            }
            let avg = if self.pages == 0 || self.length_sums[f] == 0 {
                1.0
            } else {
                self.length_sums[f] as f64 / f64::from(self.pages)
            };
            let norm = 1.0 - B[f] + B[f] * f64::from(lengths[f]) / avg;
            impact += BOOSTS[f] * tf / (tf + K1 * norm);
        }
        let stored = (impact * IMPACT_SCALE)
            .round()
            .clamp(1.0, f64::from(u16::MAX));
        stored as u16
    }
}

/// The weight of page term `term` for query word `word`: the word's idf, times the ratio of
/// the shorter of the two lengths to the longer (1 for the word itself). `df` is the most
/// pages any term the word matches is in: every form of the word weighs by how common the
/// word is (else a rare plural, `triggers`, would outweigh the word itself).
pub fn term_weight(word: &str, term: &str, df: u32, pages: u32) -> f64 {
    let n = f64::from(pages.max(df));
    let df = f64::from(df);
    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    if word == term {
        return idf;
    }
    let (a, b) = (word.chars().count() as f64, term.chars().count() as f64);
    idf * a.min(b) / a.max(b)
}

/// Suffixes [`stem`] takes off, longest first.
const SUFFIXES: [&str; 9] = [
    "ations", "ation", "ings", "ing", "ies", "es", "ed", "s", "e",
];
/// Shortest stem [`stem`] leaves.
const MIN_STEM_CHARS: usize = 4;

/// The stem of a folded word of ASCII letters: the word without the longest of a few English
/// suffixes that leaves at least [`MIN_STEM_CHARS`] letters (`migrate` and `migrating` are both
/// `migrat`, `triggers` is `trigger`, `stores` `stor`). Any other word is its own stem.
///
/// ```
/// assert_eq!(dochub_content::stem("configuring"), "configur");
/// assert_eq!(dochub_content::stem("files"), "file");
/// assert_eq!(dochub_content::stem("apps"), "apps");
/// assert_eq!(dochub_content::stem("über"), "über");
/// ```
pub fn stem(word: &str) -> &str {
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word;
    }
    SUFFIXES
        .iter()
        .find_map(|suffix| {
            word.strip_suffix(suffix)
                .filter(|stem| stem.len() >= MIN_STEM_CHARS)
        })
        .unwrap_or(word)
}

/// Which page terms a query word matches, offered in byte order from [`Expansion::start`] on:
/// the word itself, and, for a word of [`PREFIX_MIN_CHARS`] characters or more, the first
/// [`MAX_EXPANSIONS`] other terms that start with its [`stem`]. The live scan and the index
/// walk their sorted terms through it, so both take the same ones.
pub struct Expansion<'a> {
    word: &'a str,
    stem: &'a str,
    expands: bool,
    others: usize,
}

impl<'a> Expansion<'a> {
    /// Starts the walk for `word`.
    pub fn new(word: &'a str) -> Expansion<'a> {
        Expansion {
            word,
            stem: stem(word),
            expands: word.chars().nth(PREFIX_MIN_CHARS - 1).is_some(),
            others: 0,
        }
    }

    /// Where the walk starts: every term it may take sorts at or after this.
    pub fn start(&self) -> &'a str {
        if self.expands { self.stem } else { self.word }
    }

    /// Whether to take `term`, the next in byte order (`None`: no later term is taken).
    pub fn offer(&mut self, term: &str) -> Option<bool> {
        if term == self.word {
            return Some(true);
        }
        let past_word = term > self.word;
        if !self.expands || !term.starts_with(self.stem) {
            return if past_word || !term.starts_with(self.start()) {
                None
            } else {
                Some(false)
            };
        }
        if self.others < MAX_EXPANSIONS {
            self.others += 1;
            Some(true)
        } else if past_word {
            None
        } else {
            Some(false)
        }
    }

    /// Whether the walk may take `term` (a cheap test before the walk).
    pub fn may_take(&self, term: &str) -> bool {
        term == self.word || (self.expands && term.starts_with(self.stem))
    }
}

/// A page's score as compared: the sum over query words of their best contribution, in
/// query word order, scaled to an integer.
pub fn score_key(best_per_word: impl IntoIterator<Item = f64>) -> u64 {
    let mut sum = 0.0;
    for best in best_per_word {
        sum += best;
    }
    (sum * 1e6).round() as u64
}

/// The version group of a hit: pages of one project with the same id and title are versions
/// of one page (a guide in the `v1` … `v4` subprojects).
pub fn version_group(hit: &SearchHit) -> (&str, &str, &str) {
    let project = hit.path.split('/').next().unwrap_or_default();
    let id = hit.path.rsplit('/').next().unwrap_or_default();
    (project, id, &hit.title)
}

/// Hits of one tier, best first, with versions of one page spread out: the best version of
/// every page first, then the second best of those that have one, and so on, each round in
/// the order given. Four versions of the best guide would otherwise fill the first four places
/// and push the second-best page to the fifth.
pub fn spread_versions(hits: Vec<SearchHit>) -> Vec<SearchHit> {
    let mut seen: std::collections::HashMap<(String, String, String), usize> =
        std::collections::HashMap::new();
    let mut rounds: Vec<(usize, SearchHit)> = hits
        .into_iter()
        .map(|hit| {
            let (p, id, title) = version_group(&hit);
            let n = seen
                .entry((p.to_owned(), id.to_owned(), title.to_owned()))
                .or_default();
            *n += 1;
            (*n, hit)
        })
        .collect();
    rounds.sort_by_key(|(round, _)| *round);
    rounds.into_iter().map(|(_, hit)| hit).collect()
}

/// One word's contribution from a matched term of `impact`, weighted by [`term_weight`].
pub fn contribution(weight: f64, impact: u16) -> f64 {
    weight * f64::from(impact) / IMPACT_SCALE
}

/// A search query split for ranking: the phrase (tier 1), the words (tier 2) and the terms
/// that are scored.
pub struct RankedQuery {
    /// The whole query.
    pub phrase: Query,
    /// Its words, each standing for its [`stem`], when tier 2 applies (one of them has
    /// [`crate::MIN_QUERY_CHARS`] characters or more, and they are not just the phrase),
    /// else empty. A shorter word (`7` in `page 7`) is only checked in the pages the longer
    /// ones find.
    pub words: Vec<Query>,
    /// Its terms, in query order, without repeats.
    pub terms: Vec<String>,
    /// Its terms as queries, to centre excerpts on (made once, not once a hit).
    term_queries: Vec<Query>,
}

impl RankedQuery {
    /// Prepares a query: [`ContentError::QueryTooShort`] under [`crate::MIN_QUERY_CHARS`]
    /// characters.
    pub fn new(query: &str) -> Result<RankedQuery, ContentError> {
        let trimmed = query.trim();
        let phrase = Query::new(trimmed)?;
        let mut words: Vec<Query> = Vec::new();
        for word in trimmed.split_whitespace() {
            // A page holding `migrating` holds the word `migrate`.
            let q = Query::word(stem(&fold(word)));
            if !words.iter().any(|w| w.folded() == q.folded()) && words.len() < MAX_QUERY_TERMS {
                words.push(q);
            }
        }
        let only_phrase = words.len() == 1 && words[0].folded() == phrase.folded();
        if only_phrase || words.iter().all(|w| !w.searchable()) {
            words.clear();
        }
        let mut query_terms: Vec<String> = Vec::new();
        for term in terms(trimmed) {
            if !query_terms.contains(&term) && query_terms.len() < MAX_QUERY_TERMS {
                query_terms.push(term);
            }
        }
        let term_queries = query_terms.iter().map(|t| Query::word(t)).collect();
        Ok(RankedQuery {
            phrase,
            words,
            terms: query_terms,
            term_queries,
        })
    }

    /// Whether a page of this text and id is in tier 1.
    pub fn in_phrase_tier(&self, text: &str, id: &str) -> bool {
        self.phrase.find(text).is_some() || self.phrase.find(id).is_some()
    }

    /// Whether a page of this text and id holds every word (tier 2, when not in tier 1).
    pub fn in_words_tier(&self, text: &str, id: &str) -> bool {
        !self.words.is_empty()
            && self
                .words
                .iter()
                .all(|w| w.find(text).is_some() || w.find(id).is_some())
    }

    /// The words a page can be looked up by and marked with: those of
    /// [`crate::MIN_QUERY_CHARS`] characters or more.
    pub fn searchable_words(&self) -> impl Iterator<Item = &Query> {
        self.words.iter().filter(|w| w.searchable())
    }

    /// Where an excerpt of `text` is centred: the first match of the phrase, else the
    /// earliest of a searchable word or a term; `None` when there is none.
    pub fn excerpt_range(&self, text: &str) -> Option<(usize, usize)> {
        if let Some(found) = self.phrase.find(text) {
            return Some(found);
        }
        let mut best: Option<(usize, usize)> = None;
        for q in self.searchable_words().chain(&self.term_queries) {
            if let Some(found) = q.find(text)
                && best.is_none_or(|b| found.0 < b.0)
            {
                best = Some(found);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_page;

    #[test]
    fn plain_text_drops_markup_and_keeps_words() {
        let (plain, headings) = plain_text(
            "Intro <span class=\"x\">inline</span> text.\n\n## Set **up**\n\n- [x] done\n- item with `code`\n\n| a | b |\n|---|---|\n| c | d |\n\n![alt text](img.png)\n\n<div>\nblock html\n</div>\n\n~~~toml\nkey = 1\n~~~\n",
        );
        assert_eq!(
            plain,
            "Intro inline text. Set up done item with code a b c d alt text block html key = 1"
        );
        assert_eq!(headings, "Set up");
    }

    #[test]
    fn page_terms_count_each_field() {
        let page = parse_page(
            "key-value",
            b"---\ntitle: Key Value Store\nsummary: Store data\n---\n# Using it\n\nThe store keeps a key.\n",
        );
        let t = page_terms("key-value", &page);
        assert_eq!(t.plain, "Using it The store keeps a key.");
        assert_eq!(t.lengths, [3, 2, 2, 8]);
        let store = t.terms.iter().find(|(term, _)| term == "store").unwrap();
        assert_eq!(store.1, [1, 0, 0, 2]);
        let key = t.terms.iter().find(|(term, _)| term == "key").unwrap();
        assert_eq!(key.1, [1, 0, 1, 1]);
    }

    #[test]
    fn a_title_outweighs_a_body_full_of_the_term() {
        let stats = CorpusStats {
            pages: 10,
            length_sums: [30, 50, 20, 5000],
        };
        let lengths = [3, 5, 2, 500];
        let in_title = stats.impact(&[1, 0, 0, 1], &lengths);
        let in_body = stats.impact(&[0, 0, 0, 40], &lengths);
        assert!(in_title > in_body, "{in_title} vs {in_body}");
        assert!(stats.impact(&[0, 0, 0, 1], &[0, 0, 0, 100_000]) >= 1);
    }

    #[test]
    fn query_words_and_terms() {
        let q = RankedQuery::new("  store  Key value key ").unwrap();
        assert_eq!(q.terms, ["store", "key", "value"]);
        // Words stand for their stems.
        let words: Vec<&str> = q.words.iter().map(|w| w.folded()).collect();
        assert_eq!(words, ["stor", "key", "valu"]);
        assert!(RankedQuery::new("quickstart").unwrap().words.is_empty());
        // A one-character word is checked, not looked up.
        let q = RankedQuery::new("page 7").unwrap();
        assert_eq!(q.words.len(), 2);
        assert_eq!(q.searchable_words().count(), 1);
        assert!(q.in_words_tier("Page 17", "x"));
        assert!(!q.in_words_tier("Page 18", "x"));
        assert!(RankedQuery::new("a b").unwrap().words.is_empty());
        let long = RankedQuery::new(&"word ".repeat(2000)).unwrap();
        assert_eq!(long.words.len(), 1);
        assert_eq!(long.excerpt_range("a word"), Some((2, 6)));
        assert_eq!(long.excerpt_range("nothing"), None);
        let many: String = (0..100).map(|n| format!("w{n} ")).collect();
        let many = RankedQuery::new(&many).unwrap();
        assert_eq!(
            (many.words.len(), many.terms.len()),
            (MAX_QUERY_TERMS, MAX_QUERY_TERMS)
        );
        assert!(RankedQuery::new("!!").unwrap().terms.is_empty());
    }

    /// The terms a walk over `sorted` takes for `word`.
    fn taken<'a>(word: &str, sorted: &[&'a str]) -> Vec<&'a str> {
        let mut walk = Expansion::new(word);
        let start = walk.start();
        let mut out = Vec::new();
        for term in sorted.iter().filter(|t| **t >= start) {
            match walk.offer(term) {
                None => break,
                Some(true) => out.push(*term),
                Some(false) => {}
            }
        }
        out
    }

    #[test]
    fn words_expand_to_terms_that_share_their_stem() {
        let mut sorted = vec![
            "config",
            "configs",
            "configuration",
            "configure",
            "kv",
            "kvs",
            "migrat",
            "migrate",
            "migrating",
            "migration",
            "stor",
            "storage",
            "store",
            "stores",
            "style",
        ];
        sorted.sort();
        assert_eq!(
            taken("config", &sorted),
            ["config", "configs", "configuration", "configure"]
        );
        assert_eq!(taken("kv", &sorted), ["kv"]);
        assert_eq!(
            taken("migrate", &sorted),
            ["migrat", "migrate", "migrating", "migration"]
        );
        assert_eq!(
            taken("stores", &sorted),
            ["stor", "storage", "store", "stores"]
        );
        assert!(taken("zebra", &sorted).is_empty());
        // The word itself is taken even past the cap of others.
        let many: Vec<String> = (0..100).map(|n| format!("stor{n:03}")).collect();
        let mut sorted: Vec<&str> = many.iter().map(String::as_str).collect();
        sorted.push("store");
        sorted.sort();
        let got = taken("store", &sorted);
        assert_eq!(got.len(), MAX_EXPANSIONS + 1);
        assert!(got.contains(&"store"));
        let exact = term_weight("config", "config", 3, 100);
        let longer = term_weight("config", "configuration", 3, 100);
        assert!((longer / exact - 6.0 / 13.0).abs() < 1e-12);
        assert!(term_weight("ab", "ab", 1, 100) > term_weight("ab", "ab", 50, 100));
    }

    #[test]
    fn versions_of_a_page_are_spread_out() {
        let hit = |path: &str, title: &str| SearchHit {
            path: path.to_owned(),
            title: title.to_owned(),
            excerpt: String::new(),
        };
        let hits = vec![
            hit("spin/v1/kv", "Key Value"),
            hit("spin/v2/kv", "Key Value"),
            hit("spin/v3/kv", "Key Value"),
            hit("spin/v1/redis", "Redis"),
            // Another title, or another project: another page.
            hit("spin/v4/kv", "Key-Value Store"),
            hit("other/v1/kv", "Key Value"),
            hit("spin/v2/redis", "Redis"),
        ];
        let order: Vec<String> = spread_versions(hits).into_iter().map(|h| h.path).collect();
        assert_eq!(
            order,
            [
                "spin/v1/kv",
                "spin/v1/redis",
                "spin/v4/kv",
                "other/v1/kv",
                "spin/v2/kv",
                "spin/v2/redis",
                "spin/v3/kv"
            ]
        );
    }

    #[test]
    fn stems() {
        for (word, want) in [
            ("configurations", "configur"),
            ("migrating", "migrat"),
            ("libraries", "librar"),
            ("caches", "cach"),
            ("deployed", "deploy"),
            ("triggers", "trigger"),
            ("store", "stor"),
            ("uses", "uses"),
            ("name", "name"),
            ("x86_64", "x86_64"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
        // Tier 2 holds a page with another ending of each word.
        let q = RankedQuery::new("migrate triggers").unwrap();
        assert!(q.in_words_tier("Migrating a trigger", "x"));
        assert!(!q.in_words_tier("Migrating", "x"));
    }
}
