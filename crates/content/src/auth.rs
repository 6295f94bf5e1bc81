//! Bearer-token checks shared by the components (DESIGN, "Auth").
//!
//! In the `production` environment every protected route needs
//! `Authorization: Bearer <token>` (or, for browsers, HTTP Basic with the token
//! as the password). Tokens are configured as SHA-256 hex digests, so the
//! configuration holds no secret; a presented token is hashed and compared with
//! every digest in constant time.
//!
//! ```
//! use dochub_content::auth::AuthConfig;
//! // sha256("secret")
//! let digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
//! let auth = AuthConfig::new("production", digest);
//! assert!(auth.allows(Some("Bearer secret")));
//! assert!(!auth.allows(Some("Bearer wrong")));
//! assert!(!auth.allows(None));
//! assert!(AuthConfig::new("development", "").allows(None));
//! ```

use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The `WWW-Authenticate` value sent with a 401 from a JSON route.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"dochub\"";
/// The `WWW-Authenticate` value for browser routes: makes a browser ask for credentials.
pub const BASIC_CHALLENGE: &str = "Basic realm=\"dochub\", charset=\"UTF-8\"";

/// Auth settings, read once per request from the Spin variables `environment`
/// and `auth_tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    required: bool,
    digests: Vec<[u8; 32]>,
    invalid_entries: usize,
}

impl AuthConfig {
    /// Auth is required when `environment` is `production` (case-insensitive,
    /// surrounding space ignored). `auth_tokens` is a comma-separated list of
    /// SHA-256 hex digests; entries that are not 64 hex digits are ignored and
    /// counted in [`AuthConfig::invalid_entries`]. With no valid digest in
    /// production, every request is refused.
    pub fn new(environment: &str, auth_tokens: &str) -> AuthConfig {
        let mut digests = Vec::new();
        let mut invalid_entries = 0;
        for entry in auth_tokens
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            match parse_digest(entry) {
                Some(d) => digests.push(d),
                None => invalid_entries += 1,
            }
        }
        AuthConfig {
            required: environment.trim().eq_ignore_ascii_case("production"),
            digests,
            invalid_entries,
        }
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        self.required
    }

    /// How many configured entries were not valid digests (worth a log line).
    pub fn invalid_entries(&self) -> usize {
        self.invalid_entries
    }

    /// Whether a request with this `Authorization` header value may proceed.
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        if !self.required {
            return true;
        }
        let Some(token) = authorization.and_then(presented_token) else {
            return false;
        };
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Compare with every digest, without stopping early, in constant time.
        let mut ok = subtle::Choice::from(0u8);
        for d in &self.digests {
            ok |= presented.ct_eq(d);
        }
        bool::from(ok)
    }
}

/// SHA-256 hex digest of a token: what goes into `auth_tokens`.
///
/// ```
/// assert_eq!(
///     dochub_content::auth::token_digest("secret"),
///     "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"
/// );
/// ```
pub fn token_digest(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The token in `Bearer <token>` or the password in `Basic base64(user:password)`.
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

    fn cfg() -> AuthConfig {
        AuthConfig::new(
            " Production ",
            &format!(
                "{}, nonsense ,{}",
                token_digest("one"),
                token_digest("two").to_uppercase()
            ),
        )
    }

    #[test]
    fn bearer_and_basic() {
        let a = cfg();
        assert!(a.required());
        assert_eq!(a.invalid_entries(), 1);
        assert!(a.allows(Some("Bearer one")));
        assert!(a.allows(Some("bearer   two ")));
        let basic = base64::engine::general_purpose::STANDARD.encode("anyone:two");
        assert!(a.allows(Some(&format!("Basic {basic}"))));
        let basic = base64::engine::general_purpose::STANDARD.encode("two:");
        assert!(!a.allows(Some(&format!("Basic {basic}"))));
        assert!(!a.allows(Some("Basic !!!")));
        assert!(!a.allows(Some("Bearer")));
        assert!(!a.allows(Some("Bearer three")));
        assert!(!a.allows(Some("Token one")));
        assert!(!a.allows(Some("")));
        assert!(!a.allows(None));
    }

    #[test]
    fn production_without_tokens_refuses_all() {
        let a = AuthConfig::new("production", "");
        assert!(!a.allows(Some("Bearer ")));
        assert!(!a.allows(Some("Bearer x")));
    }

    #[test]
    fn other_environments_are_open() {
        assert!(AuthConfig::new("staging", "").allows(None));
        assert!(!AuthConfig::new("development", "").required());
    }
}
