//! Excerpts: about [`EXCERPT_CHARS`] characters of plain text around a match.

/// Length of an excerpt in characters, not counting the `…` marks.
pub const EXCERPT_CHARS: usize = 150;

/// About [`EXCERPT_CHARS`] characters of `text` centred on the byte range
/// `start..end`, never splitting a character, newlines and tabs turned into
/// spaces, `…` where the text was cut.
///
/// ```
/// let text = format!("{}needle{}", "x".repeat(300), "y".repeat(300));
/// let e = dochub_search::excerpt(&text, 300, 306);
/// assert_eq!(e.chars().count(), 152);
/// assert!(e.starts_with('…') && e.ends_with('…') && e.contains("needle"));
/// ```
pub fn excerpt(text: &str, start: usize, end: usize) -> String {
    // Walks characters outwards from the match instead of counting the whole text: a search
    // builds 50 excerpts, most from pages of several kilobytes.
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let match_chars = text[start..end].chars().count();
    let centre = text[start..]
        .char_indices()
        .nth(match_chars / 2)
        .map_or(text.len(), |(i, _)| start + i);
    // The byte index `n` characters before `at` (or the start).
    let back = |at: usize, n: usize| {
        text[..at]
            .char_indices()
            .rev()
            .take(n)
            .last()
            .map_or(at, |(i, _)| i)
    };
    let mut from = back(centre, EXCERPT_CHARS / 2);
    // `EXCERPT_CHARS` characters on from `from`, or as many as there are.
    let mut walked = 0;
    let mut to = text.len();
    for (i, _) in text[from..].char_indices() {
        if walked == EXCERPT_CHARS {
            to = from + i;
            break;
        }
        walked += 1;
    }
    // Near the end, the excerpt starts earlier to stay as long.
    if walked < EXCERPT_CHARS {
        from = back(from, EXCERPT_CHARS - walked);
    }
    let mut out = String::with_capacity(to - from + 8);
    if from > 0 {
        out.push('…');
    }
    out.extend(text[from..to].chars().map(|c| {
        if matches!(c, '\n' | '\r' | '\t') {
            ' '
        } else {
            c
        }
    }));
    if to < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The excerpt by its definition: counted in characters over the whole text.
    fn excerpt_by_counting(text: &str, start: usize, end: usize) -> String {
        let total = text.chars().count();
        let m_start = text[..start].chars().count();
        let m_len = text[start..end].chars().count();
        let centre = m_start + m_len / 2;
        let mut from = centre.saturating_sub(EXCERPT_CHARS / 2);
        let to = (from + EXCERPT_CHARS).min(total);
        from = to.saturating_sub(EXCERPT_CHARS).min(from);
        let mut out = String::new();
        if from > 0 {
            out.push('…');
        }
        let body: String = text.chars().skip(from).take(to - from).collect();
        out.push_str(&body.replace(['\n', '\r', '\t'], " "));
        if to < total {
            out.push('…');
        }
        out
    }

    #[test]
    fn excerpts_walked_from_the_match_are_the_counted_ones() {
        for text in [
            String::new(),
            "ab".into(),
            "x".repeat(149),
            "x".repeat(150),
            "x".repeat(151),
            format!(
                "{}é\n日{}\t{}",
                "a".repeat(120),
                "ü".repeat(90),
                "z".repeat(160)
            ),
            "日本".repeat(170),
        ] {
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            for (n, &start) in bounds.iter().enumerate() {
                for &end in bounds[n..].iter().take(4) {
                    assert_eq!(
                        excerpt(&text, start, end),
                        excerpt_by_counting(&text, start, end),
                        "{} chars, {start}..{end}",
                        text.chars().count()
                    );
                }
            }
        }
    }

    #[test]
    fn excerpt_at_edges() {
        assert_eq!(excerpt("short\ntext", 0, 5), "short text");
        let text = "a".repeat(10) + "MATCH" + "b".repeat(500).as_str();
        let e = excerpt(&text, 10, 15);
        assert!(e.starts_with("aaaaaaaaaaMATCH"));
        assert!(e.ends_with('…'));
        assert_eq!(e.chars().count(), 151);
        let text = "b".repeat(500) + "MATCH";
        let e = excerpt(&text, 500, 505);
        assert!(e.starts_with('…') && e.ends_with("MATCH"));
        assert_eq!(e.chars().count(), 151);
    }

    #[test]
    fn excerpt_is_centred_and_char_safe() {
        let text = "é".repeat(200) + "needle" + "日".repeat(200).as_str();
        let start = 400;
        let e = excerpt(&text, start, start + 6);
        let inner: String = e.trim_matches('…').to_owned();
        assert_eq!(inner.chars().count(), 150);
        let pos = inner.find("needle").unwrap();
        let before = inner[..pos].chars().count();
        let after = inner[pos + 6..].chars().count();
        assert!(before.abs_diff(after) <= 1, "{before} vs {after}");
    }
}
