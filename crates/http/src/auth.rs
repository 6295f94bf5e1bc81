//! Bearer-token checks shared by the docs, API and overview (`content/dochub/deployment/auth.md`).
//!
//! Only the `development` environment is open; `production`, and any value that is not one of
//! [`crate::Environment`]'s, needs a token (the component refuses to serve an unknown value
//! before it gets here; this is the second lock). In production every protected route needs
//! `Authorization: Bearer <token>` (or, for browsers, HTTP Basic with the token
//! as the password). Tokens are configured as SHA-256 hex digests, so the
//! configuration holds no secret; a presented token is hashed and compared with
//! every digest in constant time.
//!
//! ```
//! use dochub_http::auth::AuthConfig;
//! // sha256("secret")
//! let digest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
//! let auth = AuthConfig::new("production", digest);
//! assert!(auth.allows(Some("Bearer secret")));
//! assert!(!auth.allows(Some("Bearer wrong")));
//! assert!(!auth.allows(None));
//! assert!(AuthConfig::new("development", "").allows(None));
//! ```

use dochub_auth::{Digest, digest_eq, parse_digest, presented_digest};

use crate::settings::Environment;

pub use dochub_auth::token_digest;

/// The `WWW-Authenticate` value sent with a 401 from a JSON route.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"dochub\"";
/// The `WWW-Authenticate` value for browser routes: makes a browser ask for credentials.
pub const BASIC_CHALLENGE: &str = "Basic realm=\"dochub\", charset=\"UTF-8\"";

/// Auth settings, read once per request from the Spin variables `environment`
/// and `auth_tokens`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthConfig {
    required: bool,
    digests: Vec<Digest>,
    invalid_entries: usize,
}

impl AuthConfig {
    /// Auth is required unless `environment` is `development` (case-insensitive, surrounding
    /// space ignored): a misspelt environment stays closed. `auth_tokens` is a comma-separated list of
    /// SHA-256 hex digests; entries that are not 64 hex digits are ignored and
    /// counted in [`AuthConfig::invalid_entries`]. With no valid digest in
    /// production, every request is refused.
    pub fn new(environment: &str, auth_tokens: &str) -> AuthConfig {
        let mut digests = Vec::new();
        let mut invalid_entries = 0;
        for entry in token_entries(auth_tokens) {
            match parse_digest(entry) {
                Some(d) => digests.push(d),
                None => invalid_entries += 1,
            }
        }
        AuthConfig {
            required: Environment::parse(environment) != Ok(Environment::Development),
            digests,
            invalid_entries,
        }
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Whether no valid token is configured (worth a log line in production: nobody gets in).
    pub fn no_tokens(&self) -> bool {
        self.digests.is_empty()
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
        let Some(presented) = authorization.and_then(presented_digest) else {
            return false;
        };
        // Compare with every digest, without stopping early.
        self.digests
            .iter()
            .fold(false, |ok, d| digest_eq(&presented, d) | ok)
    }
}

/// The non-empty, trimmed entries of a comma-separated token list (`auth_tokens`,
/// `hub_tokens`).
pub fn token_entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|e| !e.is_empty())
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
        // base64("anyone:two"), base64("two:")
        assert!(a.allows(Some("Basic YW55b25lOnR3bw==")));
        assert!(!a.allows(Some("Basic dHdvOg==")));
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
    fn only_development_is_open() {
        assert!(!AuthConfig::new("development", "").required());
        assert!(AuthConfig::new(" Development ", "").allows(None));
        for misspelt in ["staging", "prod", "", "dev", "production "] {
            assert!(AuthConfig::new(misspelt, "").required(), "{misspelt:?}");
            assert!(!AuthConfig::new(misspelt, "").allows(None), "{misspelt:?}");
        }
    }
}
