//! Content negotiation: whether a request's `Accept` header asks for a page's markdown twin
//! rather than its HTML.

/// Whether an `Accept` header asks for markdown rather than HTML: `text/markdown` must have
/// a higher quality than `text/html` (each weighed by its most specific matching range,
/// `*/*` and `text/*` included), so browsers, which accept `*/*`, keep getting HTML.
pub fn prefers_markdown(accept: &str) -> bool {
    let markdown = quality(accept, "text", "markdown");
    markdown > 0.0 && markdown > quality(accept, "text", "html")
}

/// The quality an `Accept` header gives `type/subtype` (0 when nothing matches).
fn quality(accept: &str, kind: &str, subtype: &str) -> f32 {
    let mut best: Option<(u8, f32)> = None;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        let Some((k, s)) = media.split_once('/') else {
            continue;
        };
        let specificity = match (k.trim(), s.trim()) {
            (k, s) if k.eq_ignore_ascii_case(kind) && s.eq_ignore_ascii_case(subtype) => 2,
            (k, "*") if k.eq_ignore_ascii_case(kind) => 1,
            ("*", "*") => 0,
            _ => continue,
        };
        let q = parts
            .filter_map(|p| p.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map_or(1.0, |(_, v)| v.trim().parse::<f32>().unwrap_or(0.0))
            .clamp(0.0, 1.0);
        if best.is_none_or(|(b, _)| specificity > b) {
            best = Some((specificity, q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_ranges_are_weighed_by_specificity_and_quality() {
        assert!(prefers_markdown("text/markdown"));
        assert!(prefers_markdown("TEXT/Markdown; charset=utf-8"));
        assert!(prefers_markdown("text/html;q=0.5, text/markdown"));
        assert!(prefers_markdown("text/*;q=0.2, text/markdown;q=0.3"));
        assert!(!prefers_markdown(""));
        assert!(!prefers_markdown("text/html"));
        assert!(!prefers_markdown("text/markdown;q=0"));
        assert!(!prefers_markdown("text/markdown, text/html"));
        assert!(!prefers_markdown("text/*"));
        assert!(!prefers_markdown("text/markdown;q=0.5, */*"));
        assert!(!prefers_markdown("text/markdown;q=bogus"));
        assert!(!prefers_markdown("garbage, ,;;"));
    }
}
