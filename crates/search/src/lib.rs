//! dochub's search, written once: the case-insensitive match, query parsing, terms, ranking,
//! excerpts and the order of an answer ([`search`]), over [`SearchBackend`], a small trait that
//! each store of pages implements: the live tree (`dochub_content::TreeScan`, which reads and
//! analyses every page for each query) and the prebuilt index (`dochub_index`, which reads
//! only what a query needs). A backend says which pages may answer, which of its terms a query
//! term matches and with what impact, and reads pages; every decision about the answer is made
//! here, so the two stores cannot drift apart. This crate knows nothing of files or of Spin.
//!
//! ```
//! use dochub_search::{Query, RankedQuery, excerpt, fold};
//! let q = RankedQuery::new("Key VALUE").unwrap();
//! assert!(q.in_phrase_tier("the key value store", "kv"));
//! assert_eq!(fold("ÜBER"), "über");
//! assert_eq!(Query::new("spin").unwrap().find("Fermyon SPIN"), Some((8, 12)));
//! assert_eq!(excerpt("short\ntext", 0, 5), "short text");
//! ```
//!
//! **Which pages answer.** Tier 1: every page whose file (frontmatter included) or page id
//! holds the whole query as a case-insensitive substring. Tier 2, when the query's words (runs
//! of non-space of two characters or more, each standing for its [`stem`]) are not just the
//! query itself: pages that hold every such word, in any order, and are not in tier 1. Tier 3,
//! for a query of two terms or more or with a misspelt word: pages in neither whose terms
//! match words carrying at least [`partial_share`] of the query's weight (half for up to four
//! terms, then two average terms' worth: the idf of its
//! terms, summed; a term in no page weighs as the rarest one that is). Tier 1 comes first: an
//! exact phrase beats scattered words, and every word beats some of them.
//!
//! **Typos.** A query term of [`TYPO_MIN_CHARS`] characters or more that matches no term at
//! all matches the terms one edit away from it (two from [`TWO_TYPOS_MIN_CHARS`] on) that
//! share its first letter, at [`TYPO_WEIGHT`] of the weight ([`Expansion::typos`]); such pages
//! can only be in tier 3, and their excerpts centre on the term found.
//!
//! **What a page is scored on.** Its terms: runs of letters and digits of the case-folded text
//! ([`fold`]), of 2 characters to [`MAX_TERM_BYTES`] bytes, in four fields: the title,
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
//!
//! **Excerpts.** About [`EXCERPT_CHARS`] characters of the body's plain text, centred on the
//! first match of the phrase, else of the earliest word or term ([`RankedQuery::excerpt_range`]),
//! never splitting a character, `…` at cut ends. A hit whose excerpt is centred on a match in
//! the body names the section it lies under: the nearest [`Heading`] (any level) that starts
//! at or before the match, with the `id` the rendered page gives it; a match before the first
//! heading, or only in the summary, has none.
#![deny(missing_docs)]

mod engine;
mod excerpt;
mod query;
mod ranked;
mod score;
mod terms;
mod within;

pub use engine::{
    FoundPage, Heading, MAX_RESULTS, MatchedTerm, PARTIAL_FULL_SHARE_TERMS, PARTIAL_MIN_SHARE,
    SearchBackend, SearchHit, SearchResults, partial_share, search, spread_versions, version_group,
};
pub use excerpt::{EXCERPT_CHARS, excerpt};
pub use query::{MIN_QUERY_CHARS, Query, QueryTooShort, fold};
pub use ranked::{MAX_QUERY_TERMS, RankedQuery, Tier};
pub use score::{
    B_BODY, B_SHORT, BODY_BOOST, CorpusStats, Expansion, HEADINGS_BOOST, ID_BOOST, IMPACT_SCALE,
    K1, MAX_EXPANSIONS, PREFIX_MIN_CHARS, TITLE_BOOST, TWO_TYPOS_MIN_CHARS, TYPO_MIN_CHARS,
    TYPO_WEIGHT, contribution, score_key, term_weight,
};
pub use terms::{
    FIELDS, FieldCounts, MAX_TERM_BYTES, PageFields, PageTerms, is_stop_word, stem, terms,
};
pub use within::Within;
