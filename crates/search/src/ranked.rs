//! A query split for ranking: the phrase, its words and its terms, and which tier a page is in.

use crate::query::{Query, QueryTooShort, fold};
use crate::terms::{is_stop_word, stem, terms};

/// Most distinct words and terms one query is split into: the rest of a longer query (a
/// pasted paragraph) still has to match as a phrase, but adds no cost per word.
pub const MAX_QUERY_TERMS: usize = 16;

/// What a sentence or markdown puts around a word (`store?`, `(see`, `"quoted"`, `` `code` ``,
/// `<head>`): not part of the word a page must hold. A word's last `.` goes too.
const SENTENCE_MARKS: &[char] = &[
    '?', '!', ',', ';', ':', '"', '\'', '(', ')', '[', ']', '{', '}', '<', '>', '`', '*',
];

/// Which pages answer, in the order they come (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Pages holding the whole query ([`RankedQuery::in_phrase_tier`]).
    Phrase,
    /// Pages holding every word, in any order, and not in the phrase tier
    /// ([`RankedQuery::in_words_tier`]).
    Words,
    /// Pages in neither, holding terms of enough of the words (the engine decides which from
    /// the scores; every page read for it is in it).
    Partial,
}

/// A search query split for ranking: the phrase (tier 1), the words (tier 2) and the terms
/// that are scored.
pub struct RankedQuery {
    /// The query as submitted, untrimmed.
    submitted: String,
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
    /// Prepares a query: [`QueryTooShort`] under [`crate::MIN_QUERY_CHARS`] characters.
    pub fn new(query: &str) -> Result<RankedQuery, QueryTooShort> {
        let trimmed = query.trim();
        let phrase = Query::new(trimmed)?;
        // The words a question is made of ("how do I", "what is the") do not have to be on a
        // page and score nothing, unless the query is made of nothing else.
        let meaningful = |word: &str| !is_stop_word(&fold(word));
        let all_stop_words = !trimmed
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| !w.is_empty() && meaningful(w));
        let keep = |word: &str| all_stop_words || meaningful(word);
        let mut words: Vec<Query> = Vec::new();
        for word in trimmed
            .split_whitespace()
            .map(|w| w.trim_matches(SENTENCE_MARKS).trim_end_matches('.'))
            .filter(|w| !w.is_empty() && keep(w))
        {
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
        for term in terms(trimmed).filter(|t| keep(t)) {
            if !query_terms.contains(&term) && query_terms.len() < MAX_QUERY_TERMS {
                query_terms.push(term);
            }
        }
        let term_queries = query_terms.iter().map(|t| Query::word(t)).collect();
        Ok(RankedQuery {
            submitted: query.to_owned(),
            phrase,
            words,
            terms: query_terms,
            term_queries,
        })
    }

    /// The query as submitted, untrimmed (what an answer repeats).
    pub fn submitted(&self) -> &str {
        &self.submitted
    }

    /// Whether a page of this text and id is in `tier` (tier 2 is checked as if the page
    /// were not in tier 1; tier 3 is chosen by score, so every page is in it here).
    pub fn in_tier(&self, tier: Tier, text: &str, id: &str) -> bool {
        match tier {
            Tier::Phrase => self.in_phrase_tier(text, id),
            Tier::Words => self.in_words_tier(text, id),
            Tier::Partial => true,
        }
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

    #[test]
    fn question_words_are_left_out_unless_nothing_else_is_asked() {
        let q = RankedQuery::new("How do I configure the key-value store?").unwrap();
        assert_eq!(q.terms, ["configure", "key", "value", "store"]);
        let words: Vec<&str> = q.words.iter().map(|w| w.folded()).collect();
        assert_eq!(words, ["configur", "key-value", "stor"]);
        assert!(q.in_words_tier("Configuring a key-value store?", "x"));
        let q = RankedQuery::new("what is").unwrap();
        assert_eq!(q.terms, ["what", "is"]);
        assert_eq!(q.words.len(), 2);
    }

    #[test]
    fn words_stand_for_their_stems() {
        // Tier 2 holds a page with another ending of each word.
        let q = RankedQuery::new("migrate triggers").unwrap();
        assert!(q.in_words_tier("Migrating a trigger", "x"));
        assert!(!q.in_words_tier("Migrating", "x"));
        assert!(q.in_tier(Tier::Words, "Migrating a trigger", "x"));
        assert!(!q.in_tier(Tier::Phrase, "Migrating a trigger", "x"));
        assert_eq!(q.submitted(), "migrate triggers");
    }
}
