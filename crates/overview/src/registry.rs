//! The registered overview pages and the rule their ids follow.

use thiserror::Error;

/// One registered overview page, served at `/overview/<id>` from `_overviews/<id>.html`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overview {
    /// URL segment and file stem, e.g. `architecture`.
    pub id: &'static str,
    /// Card and page title.
    pub title: &'static str,
    /// One sentence under the title on the landing page.
    pub subtitle: &'static str,
}

impl Overview {
    /// Whether `name` is this overview's file name, `<id>.html`.
    pub fn is_file_name(&self, name: &str) -> bool {
        name.strip_suffix(".html") == Some(self.id)
    }
}

/// Every overview page, in the order the landing page shows them.
///
/// Adding an overview takes an entry here and a file `content/_overviews/<id>.html`;
/// [`crate::check_dir`] (and this crate's tests) report one without the other.
pub const OVERVIEWS: &[Overview] = &[
    Overview {
        id: "architecture",
        title: "System Architecture",
        subtitle: "Four WebAssembly components behind one Spin router: who calls dochub, \
                   which component answers, and what each one reads or stores.",
    },
    Overview {
        id: "content-pipeline",
        title: "Content & Rendering Pipeline",
        subtitle: "From markdown and YAML on disk to JSON manifests, rendered HTML pages \
                   and search results, at request time or prebuilt by dochub build.",
    },
    Overview {
        id: "auth-deployment",
        title: "Authentication & Deployment",
        subtitle: "Bearer tokens stored as SHA-256 digests in production, and running the same \
                   spin.toml locally, under spin up, on Fermyon Cloud, Akamai Functions or SpinKube.",
    },
];

/// Longest id accepted; ids are URL segments and file names, so they stay short.
pub const MAX_ID_LEN: usize = 64;

/// Why a string is not a valid overview id.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IdError {
    /// The id is empty.
    #[error("invalid overview id: it is empty")]
    Empty,
    /// The id is longer than [`MAX_ID_LEN`] bytes.
    #[error("invalid overview id: {len} bytes, at most {MAX_ID_LEN} allowed")]
    TooLong {
        /// Length of the rejected id in bytes.
        len: usize,
    },
    /// The id holds a character other than `a-z`, `0-9` and `-`.
    #[error("invalid overview id `{id}`: {ch:?} is not allowed (use a-z, 0-9 and -)")]
    BadChar {
        /// The rejected id.
        id: String,
        /// The first character that is not allowed.
        ch: char,
    },
    /// The id starts or ends with `-`, or has two in a row.
    #[error("invalid overview id `{id}`: hyphens only between letters or digits")]
    BadHyphen {
        /// The rejected id.
        id: String,
    },
}

/// Checks that `id` is a lowercase slug (`a-z`, `0-9`, single inner hyphens, at most 64 bytes).
///
/// Anything else — dots, slashes, percent escapes, uppercase — is refused, so an id that passes
/// can be joined to a directory path without leaving it.
pub fn validate_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() {
        return Err(IdError::Empty);
    }
    if id.len() > MAX_ID_LEN {
        return Err(IdError::TooLong { len: id.len() });
    }
    if let Some(ch) = id
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(IdError::BadChar {
            id: id.to_owned(),
            ch,
        });
    }
    if id.starts_with('-') || id.ends_with('-') || id.contains("--") {
        return Err(IdError::BadHyphen { id: id.to_owned() });
    }
    Ok(())
}

/// The registered overview with this id, if any. Invalid ids are never registered.
pub fn find(id: &str) -> Option<&'static Overview> {
    OVERVIEWS.iter().find(|o| o.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_matches_the_spec() {
        let ids: Vec<_> = OVERVIEWS.iter().map(|o| (o.id, o.title)).collect();
        assert_eq!(
            ids,
            [
                ("architecture", "System Architecture"),
                ("content-pipeline", "Content & Rendering Pipeline"),
                ("auth-deployment", "Authentication & Deployment"),
            ]
        );
    }

    #[test]
    fn registered_ids_are_valid_and_unique() {
        for (i, o) in OVERVIEWS.iter().enumerate() {
            assert_eq!(validate_id(o.id), Ok(()), "{}", o.id);
            assert!(!o.subtitle.trim().is_empty(), "{} has no subtitle", o.id);
            assert!(
                OVERVIEWS[i + 1..].iter().all(|p| p.id != o.id),
                "{} registered twice",
                o.id
            );
        }
    }

    #[test]
    fn accepts_slugs() {
        for id in ["a", "architecture", "content-pipeline", "v2-notes", "0"] {
            assert_eq!(validate_id(id), Ok(()), "{id}");
        }
        assert_eq!(validate_id(&"a".repeat(MAX_ID_LEN)), Ok(()));
    }

    #[test]
    fn rejects_everything_else() {
        assert_eq!(validate_id(""), Err(IdError::Empty));
        assert_eq!(
            validate_id(&"a".repeat(MAX_ID_LEN + 1)),
            Err(IdError::TooLong {
                len: MAX_ID_LEN + 1
            })
        );
        for id in [
            "..",
            "../etc",
            "a/b",
            "a\\b",
            "%2e%2e",
            "Architecture",
            "a.html",
            "a b",
            "a\0",
            "é",
        ] {
            assert!(
                matches!(validate_id(id), Err(IdError::BadChar { .. })),
                "{id:?} accepted"
            );
        }
        for id in ["-a", "a-", "a--b", "-"] {
            assert_eq!(
                validate_id(id),
                Err(IdError::BadHyphen { id: id.to_owned() }),
                "{id:?}"
            );
        }
    }

    #[test]
    fn finds_only_registered_ids() {
        assert_eq!(
            find("architecture").map(|o| o.title),
            Some("System Architecture")
        );
        assert_eq!(find("Architecture"), None);
        assert_eq!(find("missing"), None);
        assert_eq!(find(""), None);
    }
}
