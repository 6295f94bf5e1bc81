//! The prebuilt index as a search backend ([`IndexSearch`]): candidates from the key table's
//! posting lists, terms and impacts from the term table, pages from the page table. Which
//! pages answer and in what order is `dochub_search`'s.

use std::ops::ControlFlow;

use dochub_content::{CatalogError, page_text};
use dochub_search::{Expansion, FoundPage, MatchedTerm, RankedQuery, SearchBackend, Tier, Within};

use crate::format::{self, PagesFile, Postings, TermEntry, Terms, decode_impacts};
use crate::{IMPACTS_FILE, Index, IndexError, PAGES_FILE, TERMS_FILE, rebuilding};

/// The index read for one query.
pub(crate) struct IndexSearch<'a> {
    index: &'a Index,
    /// The page table, opened when the first candidates are read.
    pages: Option<PagesFile>,
    /// The posting lists of the words, read with the phrase's; intersected only when the
    /// words tier is asked for.
    word_lists: Vec<Vec<u32>>,
    /// The page numbers of the subprojects the search leaves out, `start..end` each.
    left_out: Vec<(u32, u32)>,
}

impl<'a> IndexSearch<'a> {
    pub(crate) fn new(index: &'a Index, within: &Within) -> IndexSearch<'a> {
        let left_out = within
            .left_out()
            .filter_map(|(p, s)| index.subproject(p, s))
            .map(|s| s.pages)
            .collect();
        IndexSearch {
            index,
            pages: None,
            word_lists: Vec::new(),
            left_out,
        }
    }

    /// `candidates` without the pages of the subprojects left out.
    fn admitted(&self, mut candidates: Vec<u32>) -> Vec<u32> {
        if !self.left_out.is_empty() {
            candidates.retain(|n| {
                !self
                    .left_out
                    .iter()
                    .any(|&(start, end)| (start..end).contains(n))
            });
        }
        candidates
    }

    /// The page table, opened the first time; another build's is [`rebuilding`].
    fn pages(&mut self) -> Result<&mut PagesFile, CatalogError> {
        if self.pages.is_none() {
            let pages = PagesFile::open(&self.index.dir.join(PAGES_FILE))?;
            if pages.build_id() != self.index.nav.build_id {
                return Err(rebuilding());
            }
            self.pages = Some(pages);
        }
        self.pages.as_mut().ok_or_else(rebuilding)
    }
}

impl SearchBackend for IndexSearch<'_> {
    type Error = CatalogError;

    fn page_count(&self) -> u32 {
        self.index.nav.pages
    }

    /// One block of the term table per query term, then the impacts of every matched term
    /// together.
    fn matching_terms(
        &mut self,
        walks: Vec<Expansion<'_>>,
    ) -> Result<Vec<Vec<MatchedTerm>>, CatalogError> {
        let index = self.index;
        let mut terms = Terms::open(&index.dir.join(TERMS_FILE))?;
        if terms.build_id() != index.nav.build_id {
            return Err(rebuilding());
        }
        let words = walks.len();
        let mut matched: Vec<(usize, TermEntry)> = Vec::new();
        for (w, mut walk) in walks.into_iter().enumerate() {
            let entries = terms.scan(walk.start(), |t| walk.offer(t))?;
            matched.extend(entries.into_iter().map(|e| (w, e)));
        }
        let path = index.dir.join(IMPACTS_FILE);
        let mut file = format::open(&path)?;
        let ranges: Vec<(u64, usize)> = matched
            .iter()
            .map(|(_, e)| (e.offset, e.len as usize))
            .collect();
        let read = format::read_ranges(&mut file, &path, &ranges)?;
        let mut out: Vec<Vec<MatchedTerm>> = Vec::new();
        out.resize_with(words, Vec::new);
        for ((w, entry), bytes) in matched.into_iter().zip(read) {
            let impacts = decode_impacts(&bytes, index.nav.pages)
                .ok_or_else(|| IndexError::Damaged { path: path.clone() })?;
            out[w].push(MatchedTerm {
                term: entry.term,
                pages: entry.df,
                impacts,
            });
        }
        Ok(out)
    }

    /// The posting lists of the phrase and of each word that can be looked up, read
    /// together; the phrase's are its candidates.
    fn phrase_candidates(&mut self, query: &RankedQuery) -> Result<Vec<u32>, CatalogError> {
        let mut texts = vec![query.phrase.folded().as_bytes()];
        texts.extend(query.searchable_words().map(|w| w.folded().as_bytes()));
        let Some(mut lists) = self.index.candidates(&texts)? else {
            return Err(rebuilding());
        };
        let phrase = lists.remove(0);
        self.word_lists = lists;
        Ok(self.admitted(phrase))
    }

    /// The pages on every word's list.
    fn word_candidates(&mut self, _query: &RankedQuery) -> Result<Vec<u32>, CatalogError> {
        if self.word_lists.is_empty() {
            return Ok(Vec::new());
        }
        let lists: Vec<Postings> = std::mem::take(&mut self.word_lists)
            .into_iter()
            .map(Postings::List)
            .collect();
        let lists: Vec<&Postings> = lists.iter().collect();
        Ok(self.admitted(Postings::intersect(&lists, self.index.nav.pages)))
    }

    /// The pages the search may answer with.
    fn partial_candidates(&mut self, pages: Vec<u32>) -> Result<Vec<u32>, CatalogError> {
        Ok(self.admitted(pages))
    }

    /// Where each entry starts in one round of reads, the entries in a second; a candidate
    /// not in `tier` unpacks only its file.
    fn read(
        &mut self,
        query: &RankedQuery,
        tier: Tier,
        run: &[u32],
        take: &mut dyn FnMut(FoundPage) -> ControlFlow<()>,
    ) -> Result<(), CatalogError> {
        let index = self.index;
        let pages = self.pages()?;
        for record in pages.records(run)? {
            let Some((p, s)) = index.subs.get(record.sub as usize) else {
                return Err(CatalogError::Stale("the index is damaged".into()));
            };
            let raw = pages.raw(&record)?;
            if !query.in_tier(tier, &page_text(&raw), &record.id) {
                continue;
            }
            let text = pages.text(&record, &raw)?;
            let page = FoundPage {
                number: record.number,
                path: format!("{p}/{s}/{}", record.id),
                title: record.title,
                plain: text.plain,
                summary: text.summary,
                headings: text.headings,
            };
            if take(page).is_break() {
                break;
            }
        }
        Ok(())
    }
}
