//! The live tree as a search backend ([`TreeScan`]); which pages answer and in what order is
//! `dochub_search`'s.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, ControlFlow};

use dochub_search::{
    CorpusStats, Expansion, FieldCounts, FoundPage, MatchedTerm, RankedQuery, SearchBackend, Tier,
    Within,
};

use crate::error::ContentError;
use crate::frontmatter::{page_text, parse_page};
use crate::plain::page_analysis;
use crate::tree::ContentRoot;

/// The content tree read for one query: every page read and analysed once, as it is now.
/// Ranking needs the whole tree's term statistics, so nothing is answered before every page
/// was read (the prebuilt index keeps them); what is kept is what the query can use: the
/// pages in its first two tiers or holding a term its words may match (the partial tier's
/// candidates), and those terms.
pub struct TreeScan {
    stats: CorpusStats,
    /// Pages holding each term some query term may match, by term in byte order.
    pages_with: BTreeMap<String, u32>,
    /// Of those terms, the counts in each page that answers, by term.
    counts: HashMap<String, Vec<(u32, FieldCounts)>>,
    /// The field lengths of each page that answers, by number.
    lengths: HashMap<u32, FieldCounts>,
    /// The pages of the phrase tier, and of the words tier, found with the same test as the
    /// index checks its candidates with.
    phrase_tier: Vec<u32>,
    words_tier: Vec<u32>,
    /// The pages in neither that hold a term some query term may match.
    holding_terms: Vec<u32>,
    /// What a hit shows of each page that answers, by number.
    found: HashMap<u32, FoundPage>,
}

impl TreeScan {
    /// Reads and analyses every page of `root` for `query`.
    pub fn new(root: &ContentRoot, query: &RankedQuery) -> Result<TreeScan, ContentError> {
        TreeScan::within(root, query, &Within::everything())
    }

    /// [`TreeScan::new`], with only the pages of the subprojects `within` admits answering;
    /// every page still counts in the statistics, as the index counts them.
    pub fn within(
        root: &ContentRoot,
        query: &RankedQuery,
        within: &Within,
    ) -> Result<TreeScan, ContentError> {
        // Every term a query term may take, as itself, by prefix or as a typo of it.
        let walks: Vec<Expansion> = query
            .terms
            .iter()
            .map(|w| Expansion::new(w))
            .chain(query.terms.iter().filter_map(|w| Expansion::typos(w)))
            .collect();
        let mut scan = TreeScan {
            stats: CorpusStats::default(),
            pages_with: BTreeMap::new(),
            counts: HashMap::new(),
            lengths: HashMap::new(),
            phrase_tier: Vec::new(),
            words_tier: Vec::new(),
            holding_terms: Vec::new(),
            found: HashMap::new(),
        };
        for (p, s, id) in root.all_page_paths()? {
            // A page removed since the listing is left out, as the index leaves it out.
            let Some(raw) = root.raw(&p, &s, &id)? else {
                continue;
            };
            let number = scan.stats.pages;
            let text = page_text(&raw);
            let admitted = within.admits(&p, &s);
            let tier = if !admitted {
                None
            } else if query.in_tier(Tier::Phrase, &text, &id) {
                Some(Tier::Phrase)
            } else if query.in_tier(Tier::Words, &text, &id) {
                Some(Tier::Words)
            } else {
                None
            };
            let parsed = parse_page(&id, &raw);
            let (analysed, headings) = page_analysis(&id, &parsed);
            scan.stats.add(&analysed.lengths);
            let mut holds_a_term = false;
            for (term, counts) in analysed.terms {
                if walks.iter().any(|walk| walk.may_take(&term)) {
                    *scan.pages_with.entry(term.clone()).or_default() += 1;
                    holds_a_term = true;
                    if admitted {
                        scan.counts.entry(term).or_default().push((number, counts));
                    }
                }
            }
            match tier {
                Some(Tier::Phrase) => scan.phrase_tier.push(number),
                Some(Tier::Words) => scan.words_tier.push(number),
                _ if admitted && holds_a_term => scan.holding_terms.push(number),
                _ => continue,
            }
            scan.lengths.insert(number, analysed.lengths);
            scan.found.insert(
                number,
                FoundPage {
                    number,
                    path: format!("{p}/{s}/{id}"),
                    title: parsed.title,
                    plain: analysed.plain,
                    summary: parsed.summary,
                    headings,
                },
            );
        }
        Ok(scan)
    }
}

impl SearchBackend for TreeScan {
    type Error = ContentError;

    fn page_count(&self) -> u32 {
        self.stats.pages
    }

    /// Walks the terms the scan kept: every term a walk may take is among them.
    fn matching_terms(
        &mut self,
        walks: Vec<Expansion<'_>>,
    ) -> Result<Vec<Vec<MatchedTerm>>, ContentError> {
        let mut out = Vec::with_capacity(walks.len());
        for mut walk in walks {
            let mut taken = Vec::new();
            let from = (Bound::Included(walk.start()), Bound::Unbounded);
            for (term, &pages) in self.pages_with.range::<str, _>(from) {
                match walk.offer(term) {
                    None => break,
                    Some(false) => {}
                    Some(true) => {
                        let counts = self.counts.get(term).map_or(&[][..], Vec::as_slice);
                        let impacts = counts
                            .iter()
                            .filter_map(|(page, counts)| {
                                let lengths = self.lengths.get(page)?;
                                Some((*page, self.stats.impact(counts, lengths)))
                            })
                            .collect();
                        taken.push(MatchedTerm {
                            term: term.clone(),
                            pages,
                            impacts,
                        });
                    }
                }
            }
            out.push(taken);
        }
        Ok(out)
    }

    /// The phrase tier, exactly: the scan tested every page.
    fn phrase_candidates(&mut self, _query: &RankedQuery) -> Result<Vec<u32>, ContentError> {
        Ok(std::mem::take(&mut self.phrase_tier))
    }

    /// The words tier, exactly.
    fn word_candidates(&mut self, _query: &RankedQuery) -> Result<Vec<u32>, ContentError> {
        Ok(std::mem::take(&mut self.words_tier))
    }

    /// Only the pages kept as holding a term can be in the partial tier.
    fn partial_candidates(&mut self, mut pages: Vec<u32>) -> Result<Vec<u32>, ContentError> {
        pages.retain(|n| self.holding_terms.binary_search(n).is_ok());
        Ok(pages)
    }

    /// The candidates are exact, so each page of a run is in its tier; each is handed out once.
    fn read(
        &mut self,
        _query: &RankedQuery,
        _tier: Tier,
        run: &[u32],
        take: &mut dyn FnMut(FoundPage) -> ControlFlow<()>,
    ) -> Result<(), ContentError> {
        for page in run.iter().filter_map(|n| self.found.remove(n)) {
            if take(page).is_break() {
                break;
            }
        }
        Ok(())
    }
}
