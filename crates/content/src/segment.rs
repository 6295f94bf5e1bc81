//! Validation of path segments: every id that reaches the file system passes
//! through [`is_valid_id`], so no request can name a file outside the root.

/// Longest id accepted, in bytes (the usual file-name limit).
pub const MAX_ID_BYTES: usize = 255;

/// Whether `s` is acceptable as a project, subproject, page or report id.
///
/// Rejects the empty string, `.` and `..`, anything starting with `.` (hidden
/// files) or `_` (the service's own files such as `_master`), separators `/`
/// and `\`, NUL and other control characters, a `:` (drive letters and
/// alternate streams), and ids longer than [`MAX_ID_BYTES`]. Listings skip
/// entries whose names fail this test, so every listed id can be requested.
///
/// ```
/// use dochub_content::is_valid_id;
/// assert!(is_valid_id("getting-started"));
/// assert!(is_valid_id("überblick"));
/// assert!(!is_valid_id(".."));
/// assert!(!is_valid_id("a/b"));
/// assert!(!is_valid_id("_master"));
/// ```
pub fn is_valid_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID_BYTES
        && !s.starts_with('.')
        && !s.starts_with('_')
        && !s
            .chars()
            .any(|c| c == '/' || c == '\\' || c == ':' || c.is_control())
}
