//! A request body read up to a limit, the same way whichever host stream delivers it: a
//! component reads the body chunk by chunk into a [`BodyReader`], which says when to stop.

/// A request body as a component read it, for a route that reads one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// The whole body.
    Bytes(Vec<u8>),
    /// Longer than the limit it was read with; not read further.
    TooLarge,
}

/// A body being read, kept only while it is within its limit.
///
/// ```
/// use dochub_http::{Body, BodyReader};
/// let mut body = BodyReader::new(4, Some("3"));
/// for chunk in [&b"ab"[..], b"c"] {
///     body.add(chunk);
/// }
/// assert_eq!(body.finish(), Body::Bytes(b"abc".to_vec()));
/// assert!(!BodyReader::new(4, Some("5")).wants_more());
/// ```
#[derive(Debug)]
pub struct BodyReader {
    max: usize,
    /// What was read; `None` once past `max`.
    bytes: Option<Vec<u8>>,
}

impl BodyReader {
    /// Reads at most `max` bytes of a body whose `Content-Length` is `declared`: a declared
    /// length over `max` is believed, so nothing need be read.
    pub fn new(max: usize, declared: Option<&str>) -> BodyReader {
        let too_large = declared
            .and_then(|length| length.trim().parse::<u64>().ok())
            .is_some_and(|length| length > max as u64);
        BodyReader {
            max,
            bytes: (!too_large).then(Vec::new),
        }
    }

    /// Whether to read on: not once the body is over the limit.
    pub fn wants_more(&self) -> bool {
        self.bytes.is_some()
    }

    /// Adds the next chunk; one that takes the body over the limit drops what was read.
    pub fn add(&mut self, chunk: &[u8]) {
        if let Some(bytes) = &mut self.bytes {
            if bytes.len() + chunk.len() > self.max {
                self.bytes = None;
            } else {
                bytes.extend_from_slice(chunk);
            }
        }
    }

    /// The body as read.
    pub fn finish(self) -> Body {
        self.bytes.map_or(Body::TooLarge, Body::Bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_may_fill_the_limit_but_not_pass_it() {
        let read = |chunks: &[&[u8]]| {
            let mut body = BodyReader::new(4, None);
            for chunk in chunks {
                body.add(chunk);
            }
            body.finish()
        };
        assert_eq!(read(&[b"ab", b"cd"]), Body::Bytes(b"abcd".to_vec()));
        assert_eq!(read(&[b"ab", b"cde"]), Body::TooLarge);
        assert_eq!(read(&[b"abcde", b""]), Body::TooLarge);
        assert_eq!(read(&[]), Body::Bytes(Vec::new()));
    }

    #[test]
    fn a_declared_length_over_the_limit_reads_nothing() {
        assert!(!BodyReader::new(4, Some(" 5 ")).wants_more());
        assert_eq!(BodyReader::new(4, Some("5")).finish(), Body::TooLarge);
        for fits_or_unknown in [Some("4"), Some("0"), Some("many"), Some(""), None] {
            assert!(
                BodyReader::new(4, fits_or_unknown).wants_more(),
                "{fits_or_unknown:?}"
            );
        }
    }
}
