//! The one time format of every body dochub writes: ISO 8601 UTC with milliseconds.

use chrono::{DateTime, SecondsFormat, Utc};

/// `2026-01-02T03:04:05.678Z`.
///
/// ```
/// let t = chrono::DateTime::from_timestamp_millis(1_767_323_045_678).unwrap();
/// assert_eq!(dochub_http::iso8601(t), "2026-01-02T03:04:05.678Z");
/// ```
pub fn iso8601(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Milliseconds since the Unix epoch in the same format (out-of-range values read as the epoch).
pub fn iso8601_millis(ms: i64) -> String {
    iso8601(DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default())
}
