//! The case-insensitive substring match every search is built on, and the one case-folding
//! rule of dochub ([`fold`]).

use memchr::memmem::Finder;

/// Shortest accepted query, in characters, after trimming surrounding whitespace.
pub const MIN_QUERY_CHARS: usize = 2;
/// Bytes of text an ASCII query's search lowercases first, and at most at a time.
const FIRST_WINDOW: usize = 512;
const LAST_WINDOW: usize = 64 * 1024;

/// A query shorter than [`MIN_QUERY_CHARS`] characters: nothing is searched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("query parameter `q` must be at least {MIN_QUERY_CHARS} characters")]
pub struct QueryTooShort;

/// A prepared case-insensitive substring query.
///
/// ```
/// let q = dochub_search::Query::new("ÜBER Spin").unwrap();
/// assert_eq!(q.find("Alles über spin."), Some((6, 16)));
/// assert!(dochub_search::Query::new(" a ").is_err());
/// ```
pub struct Query {
    folded: String,
    finder: Finder<'static>,
}

/// The one case-folding rule of dochub, used on both sides of a search and by the docs site's
/// highlighting: each character's lowercase mapping (no full case folding: `ß` stays `ß`).
fn fold_char(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
    } else {
        out.extend(c.to_lowercase());
    }
}

/// The only characters above ASCII whose lowercase holds ASCII: `İ` (to `i̇`) and the Kelvin
/// sign `K` (to `k`). A test checks every character.
const ASCII_FOLDING: [char; 2] = ['\u{130}', '\u{212a}'];

/// `src` with its ASCII letters lowercased, into `dst` (of the same length), eight bytes at a
/// time: at the `wasm` profile's `opt-level = "s"` the byte loop of `make_ascii_lowercase` is
/// not vectorised and was most of an ASCII search's time per page.
fn ascii_lowercase_into(src: &[u8], dst: &mut [u8]) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = src.chunks_exact(8);
    let mut out = dst.chunks_exact_mut(8);
    for (word, out) in (&mut words).zip(&mut out) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        // Per byte, the high bit of: its low seven bits >= 'A', and > 'Z' (no carries: each
        // sum stays under 0x100); an upper-case ASCII letter has the first, not the second,
        // and no high bit of its own. Its 0x20 bit is then set.
        let low = w & !HIGH;
        let from_a = low + ONES * u64::from(0x80 - b'A');
        let past_z = low + ONES * u64::from(0x80 - b'Z' - 1);
        let upper = from_a & !past_z & !w & HIGH;
        out.copy_from_slice(&(w | (upper >> 2)).to_le_bytes());
    }
    for (b, out) in words.remainder().iter().zip(out.into_remainder()) {
        *out = b.to_ascii_lowercase();
    }
}

/// Whether `bytes` hold a character of [`ASCII_FOLDING`].
fn has_ascii_folding_non_ascii(bytes: &[u8]) -> bool {
    // Both start with a byte that is rare in text (0xC4 is also `Ā`..`Ŀ`, 0xE2 punctuation).
    memchr::memchr2(0xc4, 0xe2, bytes).is_some()
        && ASCII_FOLDING.iter().any(|c| {
            let mut buf = [0; 4];
            memchr::memmem::find(bytes, c.encode_utf8(&mut buf).as_bytes()).is_some()
        })
}

/// The whole text folded as [`Query::find`] folds it: a query matches a text exactly when
/// the folded query is a substring of the folded text (the prebuilt index relies on it).
pub fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        fold_char(c, &mut out);
    }
    out
}

impl Query {
    /// Prepares a query: trims it and checks the [`MIN_QUERY_CHARS`] minimum.
    pub fn new(query: &str) -> Result<Query, QueryTooShort> {
        let trimmed = query.trim();
        if trimmed.chars().count() < MIN_QUERY_CHARS {
            return Err(QueryTooShort);
        }
        let mut folded = String::with_capacity(trimmed.len());
        for c in trimmed.chars() {
            fold_char(c, &mut folded);
        }
        let finder = Finder::new(folded.as_bytes()).into_owned();
        Ok(Query { folded, finder })
    }

    /// A query for one word of a longer one, of any length (see [`crate::RankedQuery::words`]).
    pub(crate) fn word(word: &str) -> Query {
        let mut folded = String::with_capacity(word.len());
        for c in word.chars() {
            fold_char(c, &mut folded);
        }
        let finder = Finder::new(folded.as_bytes()).into_owned();
        Query { folded, finder }
    }

    /// Whether the query could be searched for alone (it has [`MIN_QUERY_CHARS`] characters).
    pub fn searchable(&self) -> bool {
        self.folded.chars().nth(MIN_QUERY_CHARS - 1).is_some()
    }

    /// The trimmed query, case-folded.
    pub fn folded(&self) -> &str {
        &self.folded
    }

    /// Byte range in `text` of the first case-insensitive match.
    pub fn find(&self, text: &str) -> Option<(usize, usize)> {
        self.find_all(text, 1).into_iter().next()
    }

    /// Byte ranges in `text` of the first `limit` non-overlapping case-insensitive matches,
    /// each a whole number of characters of `text`.
    ///
    /// ```
    /// let q = dochub_search::Query::new("größe").unwrap();
    /// assert_eq!(q.find_all("Größe, GRÖSSE, größe", 9), [(0, 7), (18, 25)]);
    /// ```
    pub fn find_all(&self, text: &str, limit: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let ascii_query = self.folded.is_ascii();
        if !ascii_query && text.is_ascii() {
            return out;
        }
        if ascii_query && let Some(found) = self.find_ascii(text.as_bytes(), limit) {
            return found;
        }
        // Fold the text, remembering which original character each folded byte came from.
        let mut folded = String::with_capacity(text.len());
        let mut origin: Vec<(u32, u32)> = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            let before = folded.len();
            fold_char(c, &mut folded);
            let span = (i as u32, (i + c.len_utf8()) as u32);
            origin.extend(std::iter::repeat_n(span, folded.len() - before));
        }
        let mut from = 0;
        while out.len() < limit {
            let Some(i) = self.finder.find(&folded.as_bytes()[from..]) else {
                break;
            };
            let at = from + i;
            let end = at + self.folded.len();
            let range = (origin[at].0 as usize, origin[end - 1].1 as usize);
            // The next match starts after this one's last original character.
            from = end;
            while from < origin.len() && (origin[from].0 as usize) < range.1 {
                from += 1;
            }
            out.push(range);
        }
        out
    }

    /// [`Query::find_all`] for an ASCII query: lowercasing the ASCII bytes alone keeps byte
    /// offsets, and leaves every other character as bytes >= 0x80, which an ASCII query never
    /// matches; its folded form would be such bytes too (but for two characters, checked
    /// above). `None` when the text holds a character of [`ASCII_FOLDING`] where it was
    /// looked at: the caller then folds it whole.
    ///
    /// A window at a time, each twice the last: a common word's first match is near the
    /// start, so most of a page is never looked at.
    fn find_ascii(&self, bytes: &[u8], limit: usize) -> Option<Vec<(usize, usize)>> {
        let mut out = Vec::new();
        let len = self.folded.len();
        let mut window = FIRST_WINDOW.max(2 * len);
        let mut lower = Vec::new();
        let mut from = 0;
        while out.len() < limit && from < bytes.len() {
            let window_end = from.saturating_add(window).min(bytes.len());
            // Two bytes either side: a character cut by the window's edge is seen whole.
            let seen = &bytes[from.saturating_sub(2)..(window_end + 2).min(bytes.len())];
            if has_ascii_folding_non_ascii(seen) {
                return None;
            }
            lower.clear();
            lower.resize(window_end - from, 0);
            ascii_lowercase_into(&bytes[from..window_end], &mut lower);
            let mut at = 0;
            while out.len() < limit {
                let Some(i) = self.finder.find(&lower[at..]) else {
                    break;
                };
                let start = from + at + i;
                out.push((start, start + len));
                at += i + len;
            }
            if window_end == bytes.len() {
                break;
            }
            // A match the window cut off starts in its last `len - 1` bytes.
            from = (window_end + 1 - len).max(from + at);
            window = (window * 2).min(LAST_WINDOW);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_lowercasing_a_word_at_a_time_matches_the_byte_rule() {
        // Every byte value at every position of a word, and lengths around the word size.
        let all: Vec<u8> = (0..=255u8).collect();
        for shift in 0..8 {
            let src: Vec<u8> = all
                .iter()
                .cycle()
                .skip(shift)
                .take(256 + shift)
                .copied()
                .collect();
            for len in [0, 1, 7, 8, 9, 15, 16, 17, src.len()] {
                let mut dst = vec![0; len];
                ascii_lowercase_into(&src[..len], &mut dst);
                assert_eq!(
                    dst,
                    src[..len].to_ascii_lowercase(),
                    "shift {shift}, len {len}"
                );
            }
        }
    }

    #[test]
    fn ascii_and_unicode_folding() {
        let q = Query::new("Hello").unwrap();
        assert_eq!(q.find("say HELLO there"), Some((4, 9)));
        assert_eq!(q.find("say héllo"), None);
        let q = Query::new("straße").unwrap();
        assert_eq!(q.find("Die STRASSE"), None); // no full case folding: ß stays ß
        assert_eq!(q.find("Die STRAßE"), Some((4, 11)));
        let q = Query::new("ΣΟΦΊΑ").unwrap();
        assert_eq!(q.find("η σοφία"), Some((3, 13)));
        // A character whose lowercase is longer maps back to whole original characters.
        let q = Query::new("i̇x").unwrap();
        assert_eq!(q.find("aİx"), Some((1, 4)));
    }

    #[test]
    fn only_two_characters_above_ascii_fold_to_ascii() {
        let found: Vec<char> = (0x80..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| c.to_lowercase().any(|l| l.is_ascii()))
            .collect();
        assert_eq!(found, ASCII_FOLDING);
    }

    #[test]
    fn ascii_queries_in_text_with_other_characters() {
        let q = Query::new("kelvin").unwrap();
        assert_eq!(q.find("über KELVIN"), Some((6, 12)));
        // The Kelvin sign folds to an ASCII `k`.
        assert_eq!(q.find("über \u{212a}elvin"), Some((6, 14)));
        assert_eq!(q.find_all("\u{212a}elvin kelvin", 9), [(0, 8), (9, 15)]);
        // `İ` folds to `i` and a combining dot.
        let q = Query::new("xi").unwrap();
        assert_eq!(q.find("é Xİ"), Some((3, 6)));
        assert_eq!(q.find("é XĪ"), None);
    }

    #[test]
    fn every_match_without_overlap() {
        let q = Query::new("aa").unwrap();
        assert_eq!(q.find_all("aaaaa", 9), [(0, 2), (2, 4)]);
        assert_eq!(q.find_all("aaaaa", 1), [(0, 2)]);
        assert_eq!(q.find_all("AäAAa", 9), [(3, 5)]);
        let q = Query::new("i̇").unwrap();
        // İ folds to two characters; each match is the whole original character.
        assert_eq!(q.find_all("İİ i̇", 9), [(0, 2), (2, 4), (5, 8)]);
        assert!(Query::new("zz").unwrap().find_all("über", 9).is_empty());
    }

    #[test]
    fn ascii_matches_across_window_edges() {
        // Matches at every offset around the window edges, and a query longer than a window.
        let naive = |text: &str, folded: &str| {
            let lower = text.to_ascii_lowercase();
            let mut out = Vec::new();
            let mut from = 0;
            while let Some(i) = lower[from..].find(folded) {
                out.push((from + i, from + i + folded.len()));
                from += i + folded.len();
            }
            out
        };
        // Every offset across the first three window edges (at 512, about 1,530 and 3,570).
        for pad in 0..3700 {
            let text = format!(
                "{}QuaSar{}quasarquasar{}",
                "x".repeat(pad),
                "y".repeat(pad % 700),
                "z".repeat(3)
            );
            let q = Query::new("quasar").unwrap();
            assert_eq!(q.find_all(&text, 99), naive(&text, "quasar"), "{pad}");
            assert_eq!(q.find(&text), Some((pad, pad + 6)));
        }
        // A character folding to ASCII across a window's edge, or after the first window.
        let kelvin = Query::new("kelvin").unwrap();
        for pad in FIRST_WINDOW - 4..FIRST_WINDOW + 2 {
            let text = format!("{}\u{212a}elvin kelvin", "x".repeat(pad));
            assert_eq!(
                kelvin.find_all(&text, 9),
                [(pad, pad + 8), (pad + 9, pad + 15)]
            );
        }
        let text = format!("kelvin{}\u{212a}elvin", "x".repeat(2000));
        assert_eq!(kelvin.find_all(&text, 9), [(0, 6), (2006, 2014)]);
        assert_eq!(kelvin.find_all(&text, 1), [(0, 6)]);
        let long = "ab".repeat(FIRST_WINDOW);
        let text = format!("c{}{}", long.to_uppercase(), long);
        let q = Query::new(&long).unwrap();
        assert_eq!(q.find_all(&text, 9), naive(&text, &long));
        assert_eq!(q.find_all(&text, 9).len(), 2);
        let q = Query::new("aa").unwrap();
        let text = "a".repeat(3 * FIRST_WINDOW + 1);
        assert_eq!(q.find_all(&text, usize::MAX), naive(&text, "aa"));
    }

    #[test]
    fn short_queries() {
        assert!(Query::new("").is_err());
        assert!(Query::new("a").is_err());
        assert!(Query::new("  b  ").is_err());
        assert!(Query::new("é").is_err());
        assert!(Query::new("éé").is_ok());
        assert!(Query::new("日本").is_ok());
    }
}
