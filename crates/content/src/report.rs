//! Daily agent reports: `reports/YYYY-MM-DD.json` under the content root (spec 4.1 rule 3).

use chrono::NaiveDate;

use crate::error::ContentError;
use crate::fsio::read_file;
use crate::tree::{ContentRoot, REPORTS_DIR};

/// The latest report, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// File name, `YYYY-MM-DD.json`.
    pub name: String,
    /// The file's bytes (checked to be a JSON object).
    pub bytes: Vec<u8>,
}

/// Whether a file name is a report name: a real calendar date, then `.json`.
///
/// ```
/// assert!(dochub_content::is_report_name("2025-01-31.json"));
/// assert!(!dochub_content::is_report_name("2025-02-31.json"));
/// assert!(!dochub_content::is_report_name("latest.json"));
/// ```
pub fn is_report_name(name: &str) -> bool {
    name.strip_suffix(".json").is_some_and(|date| {
        date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            })
            && NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok()
    })
}

impl ContentRoot {
    /// Whether the reports directory holds a file named `YYYY-MM-DD.json` (what decides
    /// whether pages link to the latest report).
    pub fn has_reports(&self) -> Result<bool, ContentError> {
        let dir = self.path().join(REPORTS_DIR);
        match std::fs::read_dir(&dir) {
            Ok(entries) => Ok(entries.filter_map(Result::ok).any(|entry| {
                entry.file_name().to_str().is_some_and(is_report_name)
                    && entry.file_type().is_ok_and(|t| t.is_file())
            })),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(ContentError::io(dir, e)),
        }
    }

    /// The report whose name sorts last, or `None` when the reports directory
    /// is missing or holds no file named `YYYY-MM-DD.json`.
    pub fn latest_report(&self) -> Result<Option<Report>, ContentError> {
        let dir = self.path().join(REPORTS_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(ContentError::io(dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| ContentError::io(&dir, e))?;
            if let Ok(name) = entry.file_name().into_string()
                && is_report_name(&name)
                && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file())
            {
                names.push(name);
            }
        }
        let Some(name) = names.into_iter().max() else {
            return Ok(None);
        };
        let Some(bytes) = read_file(&dir.join(&name))? else {
            return Ok(None);
        };
        match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(serde_json::Value::Object(_)) => Ok(Some(Report { name, bytes })),
            Ok(_) => Err(ContentError::BadReport {
                name,
                reason: "the top level is not an object".into(),
            }),
            Err(e) => Err(ContentError::BadReport {
                name,
                reason: e.to_string(),
            }),
        }
    }
}
