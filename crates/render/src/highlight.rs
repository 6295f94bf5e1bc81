//! Marking the occurrences of a search query in an excerpt.

/// A piece of an excerpt: either plain text or an occurrence of the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The text of this piece, unescaped.
    pub text: String,
    /// Whether this piece is an occurrence of the query (shown in `<mark>`).
    pub is_match: bool,
}

/// Whether two chars are equal ignoring case (per char, as search does).
fn same_char(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// Splits `text` into segments, marking every non-overlapping case-insensitive occurrence of
/// `query`. An empty query marks nothing.
///
/// ```
/// let segments = dochub_render::highlight("Render the RENDERED page", "render");
/// let marked: Vec<_> = segments.iter().filter(|s| s.is_match).map(|s| s.text.as_str()).collect();
/// assert_eq!(marked, ["Render", "RENDER"]);
/// ```
pub fn highlight(text: &str, query: &str) -> Vec<Segment> {
    let needle: Vec<char> = query.chars().collect();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut segments = Vec::new();
    if needle.is_empty() || needle.len() > chars.len() {
        if !text.is_empty() {
            segments.push(Segment {
                text: text.to_owned(),
                is_match: false,
            });
        }
        return segments;
    }
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut plain_start = 0; // char index where the current plain run began
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        let found = needle
            .iter()
            .zip(&chars[i..])
            .all(|(&q, &(_, c))| same_char(q, c));
        if !found {
            i += 1;
            continue;
        }
        if plain_start < i {
            segments.push(Segment {
                text: text[byte_at(plain_start)..byte_at(i)].to_owned(),
                is_match: false,
            });
        }
        let end = i + needle.len();
        segments.push(Segment {
            text: text[byte_at(i)..byte_at(end)].to_owned(),
            is_match: true,
        });
        i = end;
        plain_start = end;
    }
    if byte_at(plain_start) < text.len() {
        segments.push(Segment {
            text: text[byte_at(plain_start)..].to_owned(),
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
    fn no_match_or_empty_query() {
        assert_eq!(marks("nothing here", "zzz"), "nothing here");
        assert_eq!(marks("text", ""), "text");
        assert_eq!(marks("ab", "abc"), "ab");
        assert!(highlight("", "a").is_empty());
    }

    #[test]
    fn multibyte_text() {
        assert_eq!(marks("…Größe und größe…", "GRÖSSE"), "…Größe und größe…");
        assert_eq!(marks("…Größe und größe…", "größe"), "…[Größe] und [größe]…");
        assert_eq!(marks("日本語のテキスト", "テキ"), "日本語の[テキ]スト");
    }

    #[test]
    fn markup_in_text_is_kept_verbatim_for_the_template_to_escape() {
        let segments = highlight("<script>alert(1)</script>", "<script>");
        assert_eq!(segments[0].text, "<script>");
        assert!(segments[0].is_match);
    }
}
