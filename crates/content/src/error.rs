//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong reading the content tree.
///
/// Messages name the file involved and, where there is one, the fix; they are
/// shown to operators as they are (the API returns them in a 500 body).
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    /// The content root does not exist.
    #[error("content root `{}` does not exist (check CONTENT_DIR and the files mount)", path.display())]
    RootMissing {
        /// The path that was opened.
        path: PathBuf,
    },
    /// The content root exists but is not a directory.
    #[error("content root `{}` is not a directory", path.display())]
    RootNotDirectory {
        /// The path that was opened.
        path: PathBuf,
    },
    /// A file or directory could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The latest report is not a JSON object.
    #[error("report `{name}` is not a JSON object: {reason}")]
    BadReport {
        /// File name of the report.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Serialising a manifest failed (only possible on a bug), or a prebuilt JSON file could
    /// not be read.
    #[error("cannot read or write JSON: {0}")]
    Json(#[from] serde_json::Error),
}

impl ContentError {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ContentError::Io {
            path: path.into(),
            source,
        }
    }
}
