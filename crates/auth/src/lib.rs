//! Credentials shared by dochub's two kinds of auth (docs/API tokens, per-machine hub tokens):
//! tokens are configured as SHA-256 hex digests, so the configuration holds no secret, and a
//! presented token is hashed and compared in constant time.
//!
//! ```
//! use dochub_auth::{digest_eq, parse_digest, presented_digest, token_digest};
//! let configured = parse_digest(&token_digest("secret")).unwrap();
//! let presented = presented_digest("Bearer secret").unwrap();
//! assert!(digest_eq(&presented, &configured));
//! // Browsers send the token as the Basic-auth password: base64("any:secret").
//! assert!(digest_eq(&presented_digest("Basic YW55OnNlY3JldA==").unwrap(), &configured));
//! assert!(presented_digest("Bearer ").is_none());
//! ```
#![deny(missing_docs)]

use base64::Engine;
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

/// A SHA-256 digest of a token.
pub type Digest = [u8; 32];

/// SHA-256 hex digest of a token: what goes into `auth_tokens` and `hub_tokens`.
///
/// ```
/// assert_eq!(
///     dochub_auth::token_digest("secret"),
///     "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
/// );
/// ```
pub fn token_digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Parses a configured digest: exactly 64 hex digits.
pub fn parse_digest(hex: &str) -> Option<Digest> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The digest of the token in an `Authorization` value: `Bearer <token>`, or the password of
/// `Basic base64(user:password)`. `None` when there is no non-empty token.
pub fn presented_digest(authorization: &str) -> Option<Digest> {
    presented_token(authorization).map(|t| Sha256::digest(t.as_bytes()).into())
}

/// Compares two digests in constant time.
pub fn digest_eq(a: &Digest, b: &Digest) -> bool {
    bool::from(a.ct_eq(b))
}

fn presented_token(header: &str) -> Option<String> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return (!rest.is_empty()).then(|| rest.to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest)
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (_, password) = decoded.split_once(':')?;
        return (!password.is_empty()).then(|| password.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_must_be_64_hex_digits() {
        assert!(parse_digest(&"a".repeat(64)).is_some());
        assert!(parse_digest(&"a".repeat(63)).is_none());
        assert!(parse_digest(&"g".repeat(64)).is_none());
        assert!(parse_digest(&"é".repeat(32)).is_none());
    }

    #[test]
    fn only_bearer_and_basic_carry_tokens() {
        let secret = parse_digest(&token_digest("secret")).unwrap();
        assert_eq!(presented_digest("bearer   secret "), Some(secret));
        assert_eq!(presented_digest("Token secret"), None);
        assert_eq!(presented_digest("Basic not-base64!"), None);
        // base64("user:") has an empty password.
        assert_eq!(presented_digest("Basic dXNlcjo="), None);
        assert_eq!(presented_digest("Bearer"), None);
    }
}
