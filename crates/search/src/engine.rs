//! The one search algorithm ([`search`]) and the trait its backends implement
//! ([`SearchBackend`]): the live tree (`dochub_content`) and the prebuilt index
//! (`dochub_index`).

use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::excerpt::excerpt;
use crate::query::Query;
use crate::ranked::{RankedQuery, Tier};
use crate::score::{Expansion, TYPO_WEIGHT, contribution, score_key, term_weight};

/// Most results one search returns.
pub const MAX_RESULTS: usize = 50;

/// The share of a query's weight (the idf of its terms, summed) that the terms a page holds
/// must carry for the page to be in the partial tier, for a query of up to
/// [`PARTIAL_FULL_SHARE_TERMS`] terms: `registry` alone answers `private registry` when
/// `private` is the commoner word, and a page holding only `to` does not answer `to deploy`.
pub const PARTIAL_MIN_SHARE: f64 = 0.5;

/// Terms a query may have before the partial tier asks less than [`PARTIAL_MIN_SHARE`]: a
/// longer query (a question: "does mdbook build copy images and other files into the output
/// folder") is rarely answered by a page holding half its weight, so the share asked is that
/// of this many terms of average weight, half of four: two of ten terms' worth.
pub const PARTIAL_FULL_SHARE_TERMS: usize = 4;

/// The share of the query's weight a page of the partial tier must hold, for `terms` terms.
///
/// ```
/// use dochub_search::partial_share;
/// assert_eq!(partial_share(2), 0.5);
/// assert_eq!(partial_share(4), 0.5);
/// assert_eq!(partial_share(8), 0.25);
/// ```
pub fn partial_share(terms: usize) -> f64 {
    let full = PARTIAL_MIN_SHARE * PARTIAL_FULL_SHARE_TERMS as f64;
    PARTIAL_MIN_SHARE.min(full / terms.max(1) as f64)
}

/// The answer to `GET /api/search?q=...`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query as submitted.
    pub query: String,
    /// Matching pages, best first, at most [`MAX_RESULTS`].
    pub results: Vec<SearchHit>,
}

/// One matching page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    /// `<project>/<subproject>/<page>`.
    pub path: String,
    /// The page's title (with fallbacks).
    pub title: String,
    /// Text around the first match.
    pub excerpt: String,
    /// The text of the heading the match lies under (the nearest one before it, any level);
    /// absent when the match is before the first heading, or not in the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// That heading's `id` on the rendered page, present exactly when `section` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
}

/// A heading of a page's body, where its text lies in the body's plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Byte range of its text in the plain text (empty for a heading without text).
    pub text: std::ops::Range<usize>,
    /// Its `id` on the rendered page.
    pub id: String,
}

/// A store of pages that a search reads. Pages are numbered `0..page_count()` in path order
/// (`<project>/<subproject>/<page>`), which is also the order of ties.
///
/// Two stores implement it: the live tree, which reads and analyses every page for each
/// query (`dochub_content::TreeScan`), and the prebuilt index, which reads only what a query
/// needs (`dochub_index`). Which pages answer, their order and their excerpts are
/// [`search`]'s alone.
pub trait SearchBackend {
    /// What can go wrong reading the store.
    type Error;

    /// Pages in the store: the `N` of the idf.
    fn page_count(&self) -> u32;

    /// For each walk, one per query term in query order: the store's terms that it takes,
    /// offered to [`Expansion::offer`] in byte order from [`Expansion::start`] on, each with
    /// the number of pages holding it and its impact in them ([`crate::CorpusStats::impact`]).
    /// A store may leave out the impacts in pages that it never offers as candidates.
    fn matching_terms(
        &mut self,
        walks: Vec<Expansion<'_>>,
    ) -> Result<Vec<Vec<MatchedTerm>>, Self::Error>;

    /// Every page of the phrase tier, and maybe others, ascending. Asked first.
    fn phrase_candidates(&mut self, query: &RankedQuery) -> Result<Vec<u32>, Self::Error>;

    /// Every page holding every word that is not in the phrase tier, and maybe others,
    /// ascending. Asked only when the phrase tier leaves room in the answer.
    fn word_candidates(&mut self, query: &RankedQuery) -> Result<Vec<u32>, Self::Error>;

    /// Of `pages` (ascending, each holding terms the query's terms matched), those that may
    /// answer: not in a subproject the search leaves out. Asked only when the first two tiers
    /// leave room in the answer.
    fn partial_candidates(&mut self, pages: Vec<u32>) -> Result<Vec<u32>, Self::Error>;

    /// Reads the pages numbered `run`, in that order, and hands each that is in `tier`
    /// ([`RankedQuery::in_tier`] on the page's file as text and its id) to `take`, with what
    /// a hit shows of it, until `take` breaks (the answer is full) or the run ends.
    fn read(
        &mut self,
        query: &RankedQuery,
        tier: Tier,
        run: &[u32],
        take: &mut dyn FnMut(FoundPage) -> ControlFlow<()>,
    ) -> Result<(), Self::Error>;
}

/// A term of a store that a query term matches.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchedTerm {
    /// The term.
    pub term: String,
    /// How many pages hold it.
    pub pages: u32,
    /// `(page number, impact)` for the pages holding it.
    pub impacts: Vec<(u32, u16)>,
}

/// A page of the answer, as a store has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundPage {
    /// Its number.
    pub number: u32,
    /// `<project>/<subproject>/<page>`.
    pub path: String,
    /// Its title, with fallbacks.
    pub title: String,
    /// Its body as plain text: what its excerpt is cut from.
    pub plain: String,
    /// Its summary (a page found by its summary shows it).
    pub summary: String,
    /// Its body's headings, in page order.
    pub headings: Vec<Heading>,
}

/// Searches `backend` for `query`: the phrase tier, then, while the answer has room, the words
/// tier, then the partial tier; each ranked by score, ties in path order, versions of a page
/// spread out ([`spread_versions`]), at most [`MAX_RESULTS`] hits.
pub fn search<B: SearchBackend>(
    query: &RankedQuery,
    backend: &mut B,
) -> Result<SearchResults, B::Error> {
    let phrase = backend.phrase_candidates(query)?;
    let scores = Scores::of(query, backend)?;
    let mut results = Vec::new();
    let mut found = Vec::new();
    let phrase = Ranked::new(phrase, &scores.score);
    walk(
        backend,
        query,
        Tier::Phrase,
        phrase,
        &mut results,
        &mut found,
        &scores,
    )?;
    // Each later tier runs only when every page of the ones before was read.
    if results.len() < MAX_RESULTS && !query.words.is_empty() {
        found.sort_unstable();
        let words = backend
            .word_candidates(query)?
            .into_iter()
            .filter(|n| found.binary_search(n).is_err())
            .collect();
        let words = Ranked::new(words, &scores.score);
        walk(
            backend,
            query,
            Tier::Words,
            words,
            &mut results,
            &mut found,
            &scores,
        )?;
    }
    if results.len() < MAX_RESULTS {
        found.sort_unstable();
        let partial = backend.partial_candidates(scores.partial(&found))?;
        let partial = Ranked::new(partial, &scores.score);
        walk(
            backend,
            query,
            Tier::Partial,
            partial,
            &mut results,
            &mut found,
            &scores,
        )?;
    }
    Ok(SearchResults {
        query: query.submitted().to_owned(),
        results,
    })
}

/// What the store's terms say of each page for one query.
struct Scores {
    /// Each page's score, by page number: for each query term, the best contribution of the
    /// store's terms it matches, summed in query term order.
    score: Vec<f64>,
    /// Each page's share of the query's weight, unnormalised: the idf of each query term
    /// the page holds a term of, summed in query term order.
    held: Vec<f64>,
    /// The query's weight: the idf of every query term, summed in query term order; a term
    /// that matches nothing counts as the rarest one that does (`keyboard shortcuts` finds
    /// the pages about the keyboard in a book that never says "shortcut").
    whole: f64,
    /// The terms taken as typos of query terms: excerpts centre on them when nothing else
    /// of the query is in a page.
    typos: Vec<Query>,
    /// Whether there is a partial tier: for a query of two terms or more, or with a typo.
    /// One term (`page 7` has one: `7` is too short to be a term) is all tier 2 needs.
    partial_tier: bool,
    /// The query's terms.
    terms: usize,
}

impl Scores {
    fn of<B: SearchBackend>(query: &RankedQuery, backend: &mut B) -> Result<Scores, B::Error> {
        let pages = backend.page_count();
        let mut scores = Scores {
            score: vec![0.0; pages as usize],
            held: vec![0.0; pages as usize],
            whole: 0.0,
            typos: Vec::new(),
            partial_tier: query.terms.len() > 1,
            terms: query.terms.len(),
        };
        if query.terms.is_empty() {
            return Ok(scores);
        }
        let walks = query.terms.iter().map(|w| Expansion::new(w)).collect();
        let mut matched = backend.matching_terms(walks)?;
        matched.resize_with(query.terms.len(), Vec::new);
        // A word that matches no term at all may be misspelt: the terms a typo away.
        let (misspelt, typo_walks): (Vec<usize>, Vec<Expansion>) = query
            .terms
            .iter()
            .zip(&matched)
            .enumerate()
            .filter(|(_, (_, terms))| terms.is_empty())
            .filter_map(|(n, (word, _))| Some((n, Expansion::typos(word)?)))
            .unzip();
        if !typo_walks.is_empty() {
            scores.partial_tier = true;
            for (&n, terms) in misspelt.iter().zip(backend.matching_terms(typo_walks)?) {
                scores
                    .typos
                    .extend(terms.iter().map(|t| Query::word(&t.term)));
                matched[n] = terms;
            }
        }
        let mut best = vec![0.0; pages as usize];
        let mut touched = Vec::new();
        // A word in no page weighs as much as the rarest word that is in some.
        let (mut absent, mut rarest) = (0u32, 0.0);
        for (n, (word, terms)) in query.terms.iter().zip(&matched).enumerate() {
            let typo = if misspelt.contains(&n) {
                TYPO_WEIGHT
            } else {
                1.0
            };
            // Every form of the word weighs by how common the word is.
            let word_df = terms.iter().map(|t| t.pages).max().unwrap_or(0);
            let idf = term_weight(word, word, word_df, pages);
            if terms.is_empty() {
                absent += 1;
            } else {
                scores.whole += idf;
                rarest = f64::max(rarest, idf);
            }
            for term in terms {
                let weight = term_weight(word, &term.term, word_df, pages) * typo;
                for &(page, impact) in &term.impacts {
                    let Some(slot) = best.get_mut(page as usize) else {
                        continue;
                    };
                    if *slot == 0.0 {
                        touched.push(page as usize);
                    }
                    *slot = f64::max(*slot, contribution(weight, impact));
                }
            }
            for page in touched.drain(..) {
                scores.score[page] += best[page];
                scores.held[page] += idf;
                best[page] = 0.0;
            }
        }
        scores.whole += f64::from(absent) * rarest;
        Ok(scores)
    }

    /// The pages of the partial tier that are not in `found` (sorted): those holding terms
    /// of at least [`PARTIAL_MIN_SHARE`] of the query's weight, ascending.
    fn partial(&self, found: &[u32]) -> Vec<u32> {
        if !self.partial_tier {
            return Vec::new();
        }
        let needed = self.whole * partial_share(self.terms);
        (0u32..)
            .zip(&self.held)
            .filter(|&(n, &held)| held > 0.0 && held >= needed && found.binary_search(&n).is_err())
            .map(|(n, _)| n)
            .collect()
    }
}

/// Reads candidates best first, in runs, keeping those in `tier`, until they hold as many
/// version groups as the answer still needs or run out; then adds them to `results` with
/// versions spread out ([`spread_versions`]). The numbers of the pages found go to `found`.
fn walk<B: SearchBackend>(
    backend: &mut B,
    query: &RankedQuery,
    tier: Tier,
    mut ranked: Ranked,
    results: &mut Vec<SearchHit>,
    found: &mut Vec<u32>,
    scores: &Scores,
) -> Result<(), B::Error> {
    let need = MAX_RESULTS.saturating_sub(results.len());
    let mut hits = Vec::new();
    let mut groups = HashSet::new();
    let mut run_len = 0;
    while groups.len() < need {
        // As many as the answer still needs and a few more (most candidates are hits),
        // doubling when they were not: a run of the index costs two rounds of reads.
        run_len = (need + need / 8 + 2).max(run_len * 2);
        let run = ranked.next_run(run_len);
        if run.is_empty() {
            break;
        }
        backend.read(query, tier, &run, &mut |page| {
            found.push(page.number);
            let hit = hit(query, page, &scores.typos);
            let (p, id, title) = version_group(&hit);
            groups.insert((p.to_owned(), id.to_owned(), title.to_owned()));
            hits.push(hit);
            // The best of `need` groups: nothing later comes before them.
            if groups.len() == need {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
    }
    let mut spread = spread_versions(hits);
    spread.truncate(need);
    results.extend(spread);
    Ok(())
}

/// The hit for one page of the answer: its excerpt is cut from the body's plain text, centred
/// as [`RankedQuery::excerpt_range`] says; when the body holds no match and the summary does
/// (a page found by its summary), from the summary; else it is the body's start.
/// Its section is the heading the body's match lies under, if any. A page found only by
/// `typos` of the query's words centres on the first of them instead.
fn hit(query: &RankedQuery, page: FoundPage, typos: &[Query]) -> SearchHit {
    let (plain, summary) = (&page.plain, &page.summary);
    let range = |text: &str| {
        query.excerpt_range(text).or_else(|| {
            typos
                .iter()
                .filter_map(|t| t.find(text))
                .min_by_key(|found| found.0)
        })
    };
    let mut section = None;
    let excerpt = if let Some((start, end)) = range(plain) {
        section = section_at(&page.headings, start);
        excerpt(plain, start, end)
    } else if let Some((start, end)) = range(summary) {
        excerpt(summary, start, end)
    } else {
        excerpt(plain, 0, 0)
    };
    let (section, anchor) = section
        .map(|h| (plain.get(h.text.clone()).unwrap_or_default(), &h.id))
        .unzip();
    SearchHit {
        section: section.map(str::to_owned),
        anchor: anchor.cloned(),
        path: page.path,
        title: page.title,
        excerpt,
    }
}

/// The nearest heading that starts at or before byte `at` of the plain text.
fn section_at(headings: &[Heading], at: usize) -> Option<&Heading> {
    let after = headings.partition_point(|h| h.text.start <= at);
    after.checked_sub(1).and_then(|i| headings.get(i))
}

/// Candidates handed out best first, a run at a time: only what the answer reaches is sorted.
struct Ranked {
    /// (score, page number) in the order wanted: higher score first, then path order.
    keys: Vec<(Reverse<u64>, u32)>,
    taken: usize,
}

impl Ranked {
    fn new(candidates: Vec<u32>, scores: &[f64]) -> Ranked {
        let keys = candidates
            .into_iter()
            .map(|n| {
                let score = scores.get(n as usize).copied().unwrap_or_default();
                (Reverse(score_key([score])), n)
            })
            .collect();
        Ranked { keys, taken: 0 }
    }

    /// The next `n` candidates, or fewer at the end.
    fn next_run(&mut self, n: usize) -> Vec<u32> {
        let rest = &mut self.keys[self.taken..];
        let n = n.min(rest.len());
        if n == 0 {
            return Vec::new();
        }
        if n < rest.len() {
            rest.select_nth_unstable(n - 1);
        }
        let run = &mut rest[..n];
        run.sort_unstable();
        self.taken += n;
        run.iter().map(|&(_, page)| page).collect()
    }
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
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_of_a_page_are_spread_out() {
        let hit = |path: &str, title: &str| SearchHit {
            path: path.to_owned(),
            title: title.to_owned(),
            excerpt: String::new(),
            section: None,
            anchor: None,
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

    /// The simplest backend: pages in memory, every page a candidate of both tiers (a
    /// superset, as the index's are), every term's impacts computed on demand.
    struct Memory {
        /// (path, file text, plain body) in path order.
        pages: Vec<(String, String, String)>,
        terms: Vec<crate::PageTerms>,
        stats: crate::CorpusStats,
    }

    impl Memory {
        fn new(pages: &[(&str, &str)]) -> Memory {
            let mut stats = crate::CorpusStats::default();
            let mut terms = Vec::new();
            for (path, text) in pages {
                let id = path.rsplit('/').next().unwrap();
                let t = crate::PageTerms::new(crate::PageFields {
                    id,
                    title: id,
                    headings: "",
                    summary: "",
                    plain: (*text).to_owned(),
                });
                stats.add(&t.lengths);
                terms.push(t);
            }
            let pages = pages
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned(), (*t).to_owned()))
                .collect();
            Memory {
                pages,
                terms,
                stats,
            }
        }
    }

    impl SearchBackend for Memory {
        type Error = std::convert::Infallible;

        fn page_count(&self) -> u32 {
            self.pages.len() as u32
        }

        fn matching_terms(
            &mut self,
            walks: Vec<Expansion<'_>>,
        ) -> Result<Vec<Vec<MatchedTerm>>, Self::Error> {
            let mut vocabulary: Vec<&str> = self
                .terms
                .iter()
                .flat_map(|t| t.terms.iter().map(|(term, _)| term.as_str()))
                .collect();
            vocabulary.sort_unstable();
            vocabulary.dedup();
            Ok(walks
                .into_iter()
                .map(|mut walk| {
                    let start = walk.start();
                    let mut taken = Vec::new();
                    for term in vocabulary.iter().filter(|t| **t >= start) {
                        match walk.offer(term) {
                            None => break,
                            Some(false) => {}
                            Some(true) => {
                                let impacts: Vec<(u32, u16)> = (0u32..)
                                    .zip(&self.terms)
                                    .filter_map(|(n, t)| {
                                        let (_, counts) =
                                            t.terms.iter().find(|(x, _)| x == term)?;
                                        Some((n, self.stats.impact(counts, &t.lengths)))
                                    })
                                    .collect();
                                taken.push(MatchedTerm {
                                    term: (*term).to_owned(),
                                    pages: impacts.len() as u32,
                                    impacts,
                                });
                            }
                        }
                    }
                    taken
                })
                .collect())
        }

        fn phrase_candidates(&mut self, _query: &RankedQuery) -> Result<Vec<u32>, Self::Error> {
            Ok((0..self.page_count()).collect())
        }

        fn word_candidates(&mut self, query: &RankedQuery) -> Result<Vec<u32>, Self::Error> {
            self.phrase_candidates(query)
        }

        fn partial_candidates(&mut self, pages: Vec<u32>) -> Result<Vec<u32>, Self::Error> {
            Ok(pages)
        }

        fn read(
            &mut self,
            query: &RankedQuery,
            tier: Tier,
            run: &[u32],
            take: &mut dyn FnMut(FoundPage) -> ControlFlow<()>,
        ) -> Result<(), Self::Error> {
            for &n in run {
                let (path, text, plain) = &self.pages[n as usize];
                let id = path.rsplit('/').next().unwrap_or_default();
                if query.in_tier(tier, text, id) {
                    let page = FoundPage {
                        number: n,
                        path: path.clone(),
                        title: id.to_owned(),
                        plain: plain.clone(),
                        summary: String::new(),
                        headings: headings_of(plain),
                    };
                    if take(page).is_break() {
                        break;
                    }
                }
            }
            Ok(())
        }
    }

    /// Headings for the test pages: each `## ` starts one, up to the next `.`, its id the
    /// text's first word.
    fn headings_of(plain: &str) -> Vec<Heading> {
        plain
            .match_indices("## ")
            .map(|(at, _)| {
                let start = at + 3;
                let end = plain[start..].find('.').map_or(plain.len(), |e| start + e);
                let id = plain[start..end].split(' ').next().unwrap_or_default();
                Heading {
                    text: start..end,
                    id: id.to_lowercase(),
                }
            })
            .collect()
    }

    #[test]
    fn a_hit_names_the_heading_its_match_lies_under() {
        let pages = [
            (
                "p/s/a",
                "Intro text. ## Setup steps. Install the cli. ## Usage. Run it.",
            ),
            ("p/s/b", "The cli before any heading. ## Other. Nothing."),
            ("p/s/c", "Words. ## Install cli. The end."),
        ];
        let query = RankedQuery::new("cli").unwrap();
        let Ok(results) = search(&query, &mut Memory::new(&pages));
        let mut hits = results.results.clone();
        hits.sort_by(|a, b| a.path.cmp(&b.path));
        let sections: Vec<(&str, Option<&str>, Option<&str>)> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.section.as_deref(), h.anchor.as_deref()))
            .collect();
        assert_eq!(
            sections,
            [
                // A match under a heading names it (the nearest before, not the next).
                ("p/s/a", Some("Setup steps"), Some("setup")),
                // Before the first heading: no section.
                ("p/s/b", None, None),
                // A match in the heading's own text lies under it.
                ("p/s/c", Some("Install cli"), Some("install")),
            ]
        );
        // No section: neither field is in the JSON; with one, both follow the excerpt.
        let json = serde_json::to_string(&hits[1]).unwrap();
        assert!(
            !json.contains("section") && !json.contains("anchor"),
            "{json}"
        );
        let json = serde_json::to_string(&hits[0]).unwrap();
        assert!(
            json.ends_with(r#""excerpt":"Intro text. ## Setup steps. Install the cli. ## Usage. Run it.","section":"Setup steps","anchor":"setup"}"#),
            "{json}"
        );
    }

    fn paths(pages: &[(&str, &str)], query: &str) -> Vec<String> {
        let query = RankedQuery::new(query).unwrap();
        let Ok(results) = search(&query, &mut Memory::new(pages));
        results.results.into_iter().map(|h| h.path).collect()
    }

    #[test]
    fn the_phrase_first_then_every_word_each_by_score_ties_in_path_order() {
        let pages = [
            ("p/s/a", "the value of a key"),
            ("p/s/b", "a key value store keeps a key value"),
            ("p/s/c", "nothing to see"),
            ("p/s/d", "key value pairs"),
            ("p/s/e", "key value pairs"),
        ];
        // The phrase tier: `b` holds each word twice, `d` and `e` tie and keep path order;
        // then `a`, which has the words apart; `c` has neither.
        assert_eq!(
            paths(&pages, "key value"),
            ["p/s/b", "p/s/d", "p/s/e", "p/s/a"]
        );
        // No page holds this phrase: all four come by their words, best first.
        assert_eq!(
            paths(&pages, "value key"),
            ["p/s/b", "p/s/d", "p/s/e", "p/s/a"]
        );
        assert!(paths(&pages, "zebra").is_empty());
    }

    #[test]
    fn pages_with_enough_of_the_words_or_a_typo_of_one_come_last() {
        let pages = [
            ("p/s/a", "private registry setup"),
            ("p/s/b", "a registry of crates and more words"),
            ("p/s/c", "private notes only"),
            ("p/s/d", "the dependencies of a crate"),
            ("p/s/e", "registry words: private and more"),
            ("p/s/f", "private notes"),
            ("p/s/g", "private"),
        ];
        // The phrase, then every word, then the page holding the rarer word alone; the
        // pages holding only `private`, in five of seven, hold too little of the query.
        assert_eq!(
            paths(&pages, "private registry"),
            ["p/s/a", "p/s/e", "p/s/b"]
        );
        // `crates` also matches `crate`, a longer word's stem.
        let mut found = paths(&pages, "private crates");
        found.sort();
        assert_eq!(found, ["p/s/b", "p/s/d"]);
        // A misspelt word finds the terms a typo away, with an excerpt centred on one.
        let query = RankedQuery::new("dependancies").unwrap();
        let Ok(results) = search(&query, &mut Memory::new(&pages));
        assert_eq!(results.results.len(), 1);
        assert_eq!(results.results[0].path, "p/s/d");
        assert_eq!(results.results[0].excerpt, "the dependencies of a crate");
        // A word in no page, nor a typo away from one, weighs as much as the rarest word
        // that is: a page holding that one holds half the query.
        assert_eq!(paths(&pages, "dependancies zzzzzzz"), ["p/s/d"]);
        // (the shorter page first)
        assert_eq!(paths(&pages, "notes zzzzzzz"), ["p/s/f", "p/s/c"]);
        assert!(paths(&pages, "zzzzzzz yyyyyyy").is_empty());
        assert!(paths(&pages, "zebra").is_empty());
    }

    #[test]
    fn at_most_fifty_hits_with_excerpts() {
        let texts: Vec<(String, String)> = (0..70)
            .map(|n| (format!("p/s/page{n:02}"), format!("common words here {n}")))
            .collect();
        let pages: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let query = RankedQuery::new("Common").unwrap();
        let Ok(results) = search(&query, &mut Memory::new(&pages));
        assert_eq!(results.query, "Common");
        assert_eq!(results.results.len(), MAX_RESULTS);
        assert_eq!(results.results[0].path, "p/s/page00");
        assert_eq!(results.results[0].excerpt, "common words here 0");
    }
}
