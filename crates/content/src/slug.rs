//! Heading ids: slugs, and a per-page allocator that keeps them unique. One implementation
//! for the rendered page's `id`s and the anchors search links to, so the two cannot differ.

use std::collections::{HashMap, HashSet};

use pulldown_cmark::Event;

/// The id given to a heading whose text yields an empty slug (only punctuation, or empty).
pub const FALLBACK_ID: &str = "section";

/// Slugs longer than this are cut, so that a heading of a whole paragraph still gives a usable anchor.
const MAX_SLUG_CHARS: usize = 80;

/// Turns heading text into an anchor slug: lowercase letters and digits (any script), `_` kept,
/// whitespace and `-` folded into single `-`, other punctuation dropped. May return `""`.
///
/// ```
/// assert_eq!(dochub_content::slugify("Hello, World!"), "hello-world");
/// assert_eq!(dochub_content::slugify("  Über  --  Größe "), "über-größe");
/// assert_eq!(dochub_content::slugify("?!"), "");
/// ```
pub fn slugify(text: &str) -> String {
    let mut slug = String::new();
    let mut chars = 0;
    let mut pending_dash = false;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
                chars += 1;
            }
            pending_dash = false;
            for lower in c.to_lowercase() {
                slug.push(lower);
                chars += 1;
            }
            if chars > MAX_SLUG_CHARS {
                // Cut at the last word boundary that fits, or mid-word if one word is too long.
                let cut = slug
                    .char_indices()
                    .nth(MAX_SLUG_CHARS)
                    .map_or(slug.len(), |(i, _)| i);
                slug.truncate(cut);
                if let Some(dash) = slug.rfind('-') {
                    slug.truncate(dash);
                }
                break;
            }
        } else if c.is_whitespace() || c == '-' {
            pending_dash = true;
        }
    }
    slug
}

/// What a heading's event adds to the text its id is made from: text and code as written,
/// and inline raw HTML as its source (the rendered page shows it escaped, as text), but not
/// an HTML comment (dropped from the page).
pub fn heading_id_text<'a>(event: &'a Event<'_>) -> Option<&'a str> {
    match event {
        Event::Text(t) | Event::Code(t) => Some(t),
        Event::InlineHtml(t) if !is_html_comment(t) => Some(t),
        _ => None,
    }
}

/// Whether a piece of raw HTML is nothing but a comment.
pub fn is_html_comment(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with("<!--") && raw.ends_with("-->")
}

/// Hands out heading ids for one page: a user's `{#id}` is kept, every other heading gets its
/// slug, and repeats get `-1`, `-2`, ... so that no two headings share an id. Every explicit
/// id of the page is [`reserve`](IdAllocator::reserve)d first, then each heading in page
/// order asks for its id, with the text [`heading_id_text`] collects, trimmed.
///
/// ```
/// let mut ids = dochub_content::IdAllocator::default();
/// ids.reserve("usage");
/// assert_eq!(ids.automatic("Usage"), "usage-1");
/// assert_eq!(ids.explicit("usage"), "usage");
/// ```
#[derive(Debug, Default)]
pub struct IdAllocator {
    /// Ids the author wrote explicitly; automatic slugs avoid them wherever they stand in the page.
    reserved: HashSet<String>,
    /// Ids already given out on this page.
    taken: HashSet<String>,
    /// Next suffix to try per base, so that many equal headings stay linear.
    next_suffix: HashMap<String, usize>,
}

impl IdAllocator {
    /// Records an id the author wrote, before any id is handed out.
    pub fn reserve(&mut self, id: &str) {
        self.reserved.insert(id.to_owned());
    }

    /// The id for a heading with an explicit `{#id}`: kept as written unless an earlier heading
    /// already has it.
    pub fn explicit(&mut self, id: &str) -> String {
        if self.taken.insert(id.to_owned()) {
            return id.to_owned();
        }
        self.suffixed(id)
    }

    /// The id for a heading without an explicit id.
    pub fn automatic(&mut self, text: &str) -> String {
        let slug = slugify(text);
        let base = if slug.is_empty() { FALLBACK_ID } else { &slug };
        if !self.reserved.contains(base) && self.taken.insert(base.to_owned()) {
            return base.to_owned();
        }
        self.suffixed(base)
    }

    fn suffixed(&mut self, base: &str) -> String {
        let n = self.next_suffix.entry(base.to_owned()).or_insert(1);
        loop {
            let candidate = format!("{base}-{n}");
            *n += 1;
            if !self.reserved.contains(&candidate) && self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("Getting Started"), "getting-started");
        assert_eq!(slugify("API: /api/raw/:project"), "api-apirawproject");
        assert_eq!(
            slugify("snake_case and CamelCase"),
            "snake_case-and-camelcase"
        );
        assert_eq!(slugify("--leading and trailing--"), "leading-and-trailing");
        assert_eq!(slugify("a - b"), "a-b");
        assert_eq!(slugify("日本語 テキスト"), "日本語-テキスト");
        assert_eq!(slugify("!!! ??? ..."), "");
        assert_eq!(slugify(""), "");
    }

    #[test]
    fn long_headings_are_cut() {
        let long = "word ".repeat(100);
        let slug = slugify(&long);
        assert!(slug.chars().count() <= MAX_SLUG_CHARS, "{slug}");
        assert!(slug.ends_with("word") && !slug.ends_with('-'), "{slug}");
        let one_word = "x".repeat(500);
        assert_eq!(slugify(&one_word).len(), MAX_SLUG_CHARS);
    }

    #[test]
    fn duplicates_get_suffixes() {
        let mut ids = IdAllocator::default();
        assert_eq!(ids.automatic("Usage"), "usage");
        assert_eq!(ids.automatic("Usage"), "usage-1");
        assert_eq!(ids.automatic("usage!"), "usage-2");
        assert_eq!(ids.automatic("?"), "section");
        assert_eq!(ids.automatic("!"), "section-1");
    }

    #[test]
    fn explicit_ids_win_over_slugs() {
        let mut ids = IdAllocator::default();
        // The author's `{#usage}` comes later in the page; the earlier automatic slug steps aside.
        ids.reserve("usage");
        assert_eq!(ids.automatic("Usage"), "usage-1");
        assert_eq!(ids.explicit("usage"), "usage");
        // A repeated explicit id is made unique rather than producing two equal anchors.
        assert_eq!(ids.explicit("usage"), "usage-2");
    }

    #[test]
    fn suffix_skips_reserved_ids() {
        let mut ids = IdAllocator::default();
        ids.reserve("faq-1");
        assert_eq!(ids.automatic("FAQ"), "faq");
        assert_eq!(ids.automatic("FAQ"), "faq-2");
    }
}
