//! A page's score for a query (see the crate docs for the formula): the impact of a term in a
//! page, the weight of a matched term, and which terms a query word matches ([`Expansion`]).

use crate::terms::{FIELDS, FieldCounts, stem};

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
/// A query word this long or longer that matches no term at all also matches the terms a
/// typo away from it ([`Expansion::typos`]).
pub const TYPO_MIN_CHARS: usize = 5;
/// Words of this many characters or more may be two typos away from a term, shorter ones one.
pub const TWO_TYPOS_MIN_CHARS: usize = 8;
/// What a term a typo away weighs, as a share of the word itself.
pub const TYPO_WEIGHT: f64 = 0.5;
/// An impact of 1.0 is stored as this.
pub const IMPACT_SCALE: f64 = 4096.0;

const BOOSTS: [f64; FIELDS] = [TITLE_BOOST, HEADINGS_BOOST, ID_BOOST, BODY_BOOST];
const B: [f64; FIELDS] = [B_SHORT, B_SHORT, B_SHORT, B_BODY];

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

/// Which page terms a query word matches, offered in byte order from [`Expansion::start`] on:
/// the word itself, and, for a word of [`PREFIX_MIN_CHARS`] characters or more, the first
/// [`MAX_EXPANSIONS`] other terms that start with its [`stem`]. The live scan and the index
/// walk their sorted terms through it, so both take the same ones.
pub struct Expansion<'a> {
    word: &'a str,
    stem: &'a str,
    expands: bool,
    others: usize,
    /// For a walk of the terms a typo away ([`Expansion::typos`]): the most edits, and the
    /// word's first character, which every term it takes shares.
    typos: Option<(usize, &'a str)>,
}

impl<'a> Expansion<'a> {
    /// Starts the walk for `word`.
    pub fn new(word: &'a str) -> Expansion<'a> {
        Expansion {
            word,
            stem: stem(word),
            expands: word.chars().nth(PREFIX_MIN_CHARS - 1).is_some(),
            others: 0,
            typos: None,
        }
    }

    /// The walk for a word that matched no term: the first [`MAX_EXPANSIONS`] terms, in byte
    /// order, that start with the word's first character and are at most one edit away from it
    /// (two from a word of [`TWO_TYPOS_MIN_CHARS`] characters or more), an edit being a
    /// character added, removed, replaced, or two neighbours swapped. Typos in the first
    /// letter are rare, and keeping it keeps the walk to one stretch of the sorted terms.
    /// `None` for a word shorter than [`TYPO_MIN_CHARS`].
    pub fn typos(word: &'a str) -> Option<Expansion<'a>> {
        let chars = word.chars().count();
        if chars < TYPO_MIN_CHARS {
            return None;
        }
        let first = word.chars().next()?.len_utf8();
        let edits = if chars >= TWO_TYPOS_MIN_CHARS { 2 } else { 1 };
        Some(Expansion {
            word,
            stem: word,
            expands: false,
            others: 0,
            typos: Some((edits, &word[..first])),
        })
    }

    /// Whether this walk takes terms a typo away rather than terms that start with the word.
    pub fn is_typos(&self) -> bool {
        self.typos.is_some()
    }

    /// Where the walk starts: every term it may take sorts at or after this.
    pub fn start(&self) -> &'a str {
        match self.typos {
            Some((_, first)) => first,
            None if self.expands => self.stem,
            None => self.word,
        }
    }

    /// Whether `term` is within the typos this walk forgives.
    fn a_typo_away(&self, edits: usize, term: &str) -> bool {
        let (a, b) = (self.word.chars().count(), term.chars().count());
        a.abs_diff(b) <= edits && strsim::osa_distance(self.word, term) <= edits
    }

    /// Whether to take `term`, the next in byte order (`None`: no later term is taken).
    pub fn offer(&mut self, term: &str) -> Option<bool> {
        if let Some((edits, first)) = self.typos {
            if !term.starts_with(first) || self.others == MAX_EXPANSIONS {
                return None;
            }
            let take = self.a_typo_away(edits, term);
            self.others += usize::from(take);
            return Some(take);
        }
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
        match self.typos {
            Some((edits, first)) => term.starts_with(first) && self.a_typo_away(edits, term),
            None => term == self.word || (self.expands && term.starts_with(self.stem)),
        }
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

/// One word's contribution from a matched term of `impact`, weighted by [`term_weight`].
pub fn contribution(weight: f64, impact: u16) -> f64 {
    weight * f64::from(impact) / IMPACT_SCALE
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The terms a typo walk over `sorted` takes for `word`.
    fn typos<'a>(word: &str, sorted: &[&'a str]) -> Vec<&'a str> {
        let mut walk = Expansion::typos(word).unwrap();
        let start = walk.start();
        let mut out = Vec::new();
        for term in sorted.iter().filter(|t| **t >= start) {
            match walk.offer(term) {
                None => break,
                Some(true) => {
                    assert!(walk.may_take(term));
                    out.push(*term)
                }
                Some(false) => assert!(!walk.may_take(term)),
            }
        }
        out
    }

    #[test]
    fn long_words_forgive_typos_but_not_in_the_first_letter() {
        let mut sorted = vec![
            "dependencies",
            "dependency",
            "depends",
            "preprocessor",
            "preprocessors",
            "processor",
            "recieve",
            "receive",
            "receiver",
            "route",
            "router",
            "routes",
            "xreceive",
        ];
        sorted.sort();
        // Two edits for a word of eight characters or more.
        assert_eq!(typos("dependancies", &sorted), ["dependencies"]);
        assert_eq!(
            typos("preprocesor", &sorted),
            ["preprocessor", "preprocessors"]
        );
        // A swap of neighbours is one edit; one edit only under eight characters.
        assert_eq!(typos("recieve", &sorted), ["receive", "recieve"]);
        assert_eq!(typos("ruote", &sorted), ["route"]);
        // A typo in the first letter is not forgiven.
        assert!(typos("eceive", &sorted).is_empty());
        // Short words have no typo walk.
        assert!(Expansion::typos("rout").is_none());
        assert!(Expansion::typos("routé").is_some());
        // The walk stops at the cap.
        let mut many: Vec<String> = (1..5)
            .flat_map(|at| {
                ('a'..='z').map(move |c| {
                    let mut word: Vec<char> = "abcde".chars().collect();
                    word[at] = c;
                    word.into_iter().collect()
                })
            })
            .collect();
        many.sort();
        many.dedup();
        let sorted: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(sorted.len() > MAX_EXPANSIONS);
        assert_eq!(typos("abcde", &sorted).len(), MAX_EXPANSIONS);
    }
}
