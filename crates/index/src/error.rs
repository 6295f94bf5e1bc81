//! The index's own failures, apart from the content's.

use std::path::PathBuf;

use dochub_content::{CatalogError, ContentError};

/// What can go wrong writing or reading the prebuilt build.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The content, or a file of the build, could not be read or written.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// A prebuilt build directory is missing or incomplete.
    #[error("prebuilt build directory `{}` has no manifest.json (run `dochub build CONTENT_DIR OUT_DIR`)", path.display())]
    PrebuiltMissing {
        /// The build directory.
        path: PathBuf,
    },
    /// The index was written by another version of dochub.
    #[error(
        "the search index has format {found}, this dochub reads {expected} (rebuild with `dochub build`)"
    )]
    Format {
        /// The format found.
        found: u32,
        /// The format this code reads.
        expected: u32,
    },
    /// A page too large for the index's page table (4 GiB or more).
    #[error("page `{page}` is too large to index")]
    PageTooLarge {
        /// The page's id.
        page: String,
    },
    /// An index file is not what its format says.
    #[error("index file `{}` is damaged (rebuild with `dochub build`)", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
    },
    /// Writing an index file's navigation data failed (only possible on a bug).
    #[error("cannot encode the index: {0}")]
    Encode(String),
}

impl IndexError {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IndexError::Content(ContentError::io(path, source))
    }
}

impl From<serde_json::Error> for IndexError {
    fn from(e: serde_json::Error) -> Self {
        IndexError::Content(e.into())
    }
}

impl From<IndexError> for CatalogError {
    /// A damaged index file is the index's failure, not the content's: the live tree answers
    /// instead (only the index reads index files).
    fn from(e: IndexError) -> Self {
        match e {
            IndexError::Content(e) => CatalogError::Content(e),
            e @ IndexError::Damaged { .. } => CatalogError::Stale(e.to_string()),
            e => CatalogError::Prebuilt(Box::new(e)),
        }
    }
}
