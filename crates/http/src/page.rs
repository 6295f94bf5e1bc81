//! What every HTML page dochub generates shares (the docs site and the overview landing page):
//! the one page script, which applies the reader's remembered colour scheme before the first
//! paint, shows the dark-mode switch and adds the copy buttons of code blocks, and the markup
//! of that switch. The script is inline (no second request before the first paint) and the
//! pages' Content-Security-Policy allows it by its hash, [`SCRIPT_HASH`], never with
//! `'unsafe-inline'`.

/// The page script, to be placed verbatim between `<script>` and `</script>` (its hash is
/// of these exact bytes).
pub const SCRIPT: &str = include_str!("page/site.js");

/// The CSP source that allows [`SCRIPT`]: `'sha256-<base64 of its SHA-256>'`. A test checks it
/// against the script; change both together.
pub const SCRIPT_HASH: &str = "'sha256-30TygC+e3/mJYFulOxmvQwgJg2YPGIDnmYBGlRYKhIo='";

/// The dark-mode switch, shown only when the script runs (the script marks the page
/// `scripted` before it is drawn; without it the switch could not work, and the system's
/// setting still applies). `aria-pressed` says whether the page is dark.
pub const THEME_SWITCH: &str = concat!(
    r#"<button type="button" id="theme-switch" class="theme-switch" aria-label="Dark mode" aria-pressed="false">"#,
    r#"<svg class="sun" viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="5"/>"#,
    r#"<path d="M11 1h2v4h-2zM11 19h2v4h-2zM1 11h4v2H1zM19 11h4v2h-4zM4.2 2.8l2.8 2.8-1.4 1.4-2.8-2.8zM17.6 16.2l2.8 2.8-1.4 1.4-2.8-2.8zM2.8 19.8l2.8-2.8 1.4 1.4-2.8 2.8zM16.2 6.4l2.8-2.8 1.4 1.4-2.8 2.8z"/></svg>"#,
    r#"<svg class="moon" viewBox="0 0 24 24" aria-hidden="true"><path d="M20 14.5A8.5 8.5 0 0 1 9.5 4a8.5 8.5 0 1 0 10.5 10.5z"/></svg>"#,
    "</button>"
);

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use sha2::{Digest, Sha256};

    #[test]
    fn the_hash_allows_the_script_as_it_is() {
        let digest = Sha256::digest(SCRIPT.as_bytes());
        let hash = base64::engine::general_purpose::STANDARD.encode(digest);
        assert_eq!(
            SCRIPT_HASH,
            format!("'sha256-{hash}'"),
            "the page script changed: update SCRIPT_HASH"
        );
    }

    #[test]
    fn the_script_cannot_close_its_element_early() {
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
    }
}
