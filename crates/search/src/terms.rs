//! What a page is scored on: its terms, counted in four fields, and the stems that let a query
//! word forgive English endings.

use std::collections::BTreeMap;

use crate::query::fold;

/// Longest term indexed, in bytes (longer runs are identifiers, hashes or base64).
pub const MAX_TERM_BYTES: usize = 64;
/// Title, headings, id, body.
pub const FIELDS: usize = 4;

/// How often a term is in each field of a page: title, headings, id, body.
pub type FieldCounts = [u32; FIELDS];

/// A page's fields as plain text: what [`PageTerms::new`] counts the terms of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageFields<'a> {
    /// The page id (`key-value-store` holds `key`, `value`, `store`).
    pub id: &'a str,
    /// The title, with fallbacks.
    pub title: &'a str,
    /// The text of its headings.
    pub headings: &'a str,
    /// The summary, scored with the body.
    pub summary: &'a str,
    /// The markdown body as plain text, whitespace collapsed.
    pub plain: String,
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
/// let terms: Vec<String> = dochub_search::terms("Spin's KEY-value store, v2 (ü) x").collect();
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

impl PageTerms {
    /// Counts the terms of each field (see the crate docs for the fields).
    pub fn new(page: PageFields<'_>) -> PageTerms {
        let mut counts: BTreeMap<String, FieldCounts> = BTreeMap::new();
        let mut lengths = [0; FIELDS];
        let fields: [&[&str]; FIELDS] = [
            &[page.title],
            &[page.headings],
            &[page.id],
            &[page.summary, &page.plain],
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
            plain: page.plain,
            lengths,
            terms: counts.into_iter().collect(),
        }
    }
}

/// English words that carry the form of a question or a sentence rather than what it is
/// about: a query leaves them out of the words a page must hold and of its score, unless it
/// is made of nothing else ([`crate::RankedQuery`]). Sorted, for a binary search.
const STOP_WORDS: [&str; 64] = [
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can", "could",
    "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is",
    "it", "its", "me", "my", "of", "on", "or", "our", "should", "so", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was",
    "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would",
];

/// Whether a folded word is one of the words a question is made of ([`STOP_WORDS`]).
///
/// ```
/// assert!(dochub_search::is_stop_word("how"));
/// assert!(!dochub_search::is_stop_word("store"));
/// ```
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Suffixes [`stem`] takes off, longest first.
const SUFFIXES: [&str; 10] = [
    "ations", "ation", "ings", "ing", "ies", "es", "ed", "s", "e", "y",
];
/// Shortest stem [`stem`] leaves.
const MIN_STEM_CHARS: usize = 4;

/// The stem of a folded word of ASCII letters: the word without the longest of a few English
/// suffixes that leaves at least [`MIN_STEM_CHARS`] letters (`migrate` and `migrating` are both
/// `migrat`, `triggers` is `trigger`, `stores` `stor`, `latency` and `latencies` both
/// `latenc`). Any other word is its own stem.
///
/// ```
/// assert_eq!(dochub_search::stem("configuring"), "configur");
/// assert_eq!(dochub_search::stem("files"), "file");
/// assert_eq!(dochub_search::stem("apps"), "apps");
/// assert_eq!(dochub_search::stem("über"), "über");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_terms_count_each_field() {
        let t = PageTerms::new(PageFields {
            id: "key-value",
            title: "Key Value Store",
            headings: "Using it",
            summary: "Store data",
            plain: "Using it The store keeps a key.".into(),
        });
        assert_eq!(t.plain, "Using it The store keeps a key.");
        assert_eq!(t.lengths, [3, 2, 2, 8]);
        let store = t.terms.iter().find(|(term, _)| term == "store").unwrap();
        assert_eq!(store.1, [1, 0, 0, 2]);
        let key = t.terms.iter().find(|(term, _)| term == "key").unwrap();
        assert_eq!(key.1, [1, 0, 1, 1]);
    }

    #[test]
    fn stop_words_are_sorted() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
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
            ("latency", "latenc"),
            ("latencies", "latenc"),
            ("key", "key"),
            ("x86_64", "x86_64"),
        ] {
            assert_eq!(stem(word), want, "{word}");
        }
    }
}
