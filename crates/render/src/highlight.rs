//! Marking the occurrences of a search query in an excerpt.

use dochub_search::RankedQuery;

/// A piece of an excerpt: either plain text or an occurrence of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The text of this piece, unescaped.
    pub text: String,
    /// Whether this piece is an occurrence of the query (shown in `<mark>`).
    pub is_match: bool,
}

/// Splits `text` into segments, marking every non-overlapping occurrence of `query`, or of
/// one of its words, that search would match: the same [`RankedQuery`] decides, so what is
/// marked is what was found (one case-folding rule for both), the longest first where two
/// overlap. A query search refuses (under two characters) marks nothing.
///
/// ```
/// let segments = dochub_render::highlight("Render the RENDERED page", "render");
/// let marked: Vec<_> = segments.iter().filter(|s| s.is_match).map(|s| s.text.as_str()).collect();
/// assert_eq!(marked, ["Render", "RENDER"]);
/// ```
pub fn highlight(text: &str, query: &str) -> Vec<Segment> {
    let mut found = Vec::new();
    if let Ok(q) = RankedQuery::new(query) {
        found.extend(q.phrase.find_all(text, usize::MAX));
        // A word stands for its stem: the rest of the word it ends in is marked with it.
        for word in q.searchable_words() {
            found.extend(
                word.find_all(text, usize::MAX)
                    .into_iter()
                    .map(|(start, end)| {
                        let rest = text[end..]
                            .find(|c: char| !c.is_alphanumeric())
                            .unwrap_or(text.len() - end);
                        (start, end + rest)
                    }),
            );
        }
    }
    // Earliest first, the longest of those starting together; then drop what overlaps.
    found.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
    let mut ranges: Vec<(usize, usize)> = Vec::with_capacity(found.len());
    for (start, end) in found {
        if ranges.last().is_none_or(|&(_, last_end)| start >= last_end) {
            ranges.push((start, end));
        }
    }
    let mut segments = Vec::with_capacity(ranges.len() * 2 + 1);
    let mut plain_start = 0;
    for (start, end) in ranges {
        if plain_start < start {
            segments.push(Segment {
                text: text[plain_start..start].to_owned(),
                is_match: false,
            });
        }
        segments.push(Segment {
            text: text[start..end].to_owned(),
            is_match: true,
        });
        plain_start = end;
    }
    if plain_start < text.len() {
        segments.push(Segment {
            text: text[plain_start..].to_owned(),
            is_match: false,
        });
    }
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(text: &str, query: &str) -> String {
        highlight(text, query)
            .iter()
            .map(|s| {
                if s.is_match {
                    format!("[{}]", s.text)
                } else {
                    s.text.clone()
                }
            })
            .collect()
    }

    #[test]
    fn marks_every_occurrence() {
        assert_eq!(
            marks("a cat, a Cat, a CAT", "cat"),
            "a [cat], a [Cat], a [CAT]"
        );
        assert_eq!(marks("aaaa", "aa"), "[aa][aa]");
        assert_eq!(marks("xyz", "xyz"), "[xyz]");
    }

    #[test]
    fn marks_the_phrase_and_each_word() {
        assert_eq!(
            marks("a Key Value store; the value of a key", "key value"),
            "a [Key Value] store; the [value] of a [key]"
        );
        assert_eq!(marks("store the key", "  store  key "), "[store] the [key]");
        // One-character words are not searched for alone.
        assert_eq!(marks("a b ab", "a b"), "[a b] ab");
        // A word marks the other endings search finds for it, whole.
        assert_eq!(
            marks("Migrating triggers: migrate a trigger", "migrate triggers"),
            "[Migrating] [triggers]: [migrate] a [trigger]"
        );
    }

    #[test]
    fn no_match_or_empty_query() {
        assert_eq!(marks("nothing here", "zzz"), "nothing here");
        assert_eq!(marks("text", ""), "text");
        assert_eq!(marks("text", "t"), "text"); // search needs two characters
        assert_eq!(marks("text", " ex "), "t[ex]t"); // trimmed, as search trims
        assert_eq!(marks("ab", "abc"), "ab");
        assert!(highlight("", "a").is_empty());
    }

    #[test]
    fn multibyte_text() {
        assert_eq!(marks("…Größe und größe…", "GRÖSSE"), "…Größe und größe…");
        assert_eq!(marks("…Größe und größe…", "größe"), "…[Größe] und [größe]…");
        assert_eq!(marks("日本語のテキスト", "テキ"), "日本語の[テキ]スト");
        // A character whose lowercase is longer is marked whole, as search finds it.
        assert_eq!(marks("aİx and İX", "i̇x"), "a[İx] and [İX]");
        assert_eq!(marks("ΣΟΦΊΑ σοφία", "σοφία"), "[ΣΟΦΊΑ] [σοφία]");
    }

    #[test]
    fn markup_in_text_is_kept_verbatim_for_the_template_to_escape() {
        let segments = highlight("<script>alert(1)</script>", "<script>");
        assert_eq!(segments[0].text, "<script>");
        assert!(segments[0].is_match);
    }
}
