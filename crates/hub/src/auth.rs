//! Hub authentication: per-machine tokens (see `content/dochub/deployment/auth.md`).
//!
//! Outside the `development` environment (see `dochub_http::Environment`; a misspelt value
//! stays closed) every hub route needs `Authorization: Bearer <token>` (or HTTP
//! Basic with the token as the password). The variable `hub_tokens` binds each token to one
//! machine as `machine=sha256hex` pairs, comma-separated, so the configuration holds no secret. A
//! presented token is hashed and compared with every digest in constant time; the machine it is
//! bound to may send only as itself and read only its own inbox.

use dochub_auth::{Digest, digest_eq, parse_digest, presented_digest};
use dochub_http::Environment;
use dochub_http::auth::token_entries;

pub use dochub_auth::token_digest;

use crate::model::MachineName;

/// The `WWW-Authenticate` value sent with a 401.
pub const CHALLENGE: &str = "Bearer realm=\"dochub hub\"";

/// Who may do what, decided from the `Authorization` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Not in production: anyone may do anything.
    Open,
    /// A valid token of this machine.
    Machine(MachineName),
    /// Production, and no valid token: 401.
    Denied,
}

impl Access {
    /// Whether this access may act as `machine` (send from it, read its inbox).
    pub fn may_act_as(&self, machine: &MachineName) -> bool {
        match self {
            Access::Open => true,
            Access::Machine(m) => m == machine,
            Access::Denied => false,
        }
    }
}

/// The hub's auth settings, read once per request from the Spin variables `environment` and
/// `hub_tokens`.
///
/// ```
/// use dochub_hub::auth::{Access, HubAuth, token_digest};
/// let tokens = format!("laptop={}", token_digest("s3cret"));
/// let auth = HubAuth::new("production", &tokens);
/// assert!(matches!(auth.access(Some("Bearer s3cret")), Access::Machine(m) if m.as_str() == "laptop"));
/// assert_eq!(auth.access(Some("Bearer nope")), Access::Denied);
/// assert_eq!(HubAuth::new("development", "").access(None), Access::Open);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubAuth {
    required: bool,
    tokens: Vec<(MachineName, Digest)>,
    invalid_entries: usize,
}

impl HubAuth {
    /// Auth is required unless `environment` is `development` (case-insensitive, surrounding
    /// space ignored). Entries of `hub_tokens` that are not `machine=<64 hex digits>` with a valid
    /// machine name are ignored and counted in [`HubAuth::invalid_entries`]; with no valid entry
    /// in production, every request is refused.
    pub fn new(environment: &str, hub_tokens: &str) -> Self {
        let mut tokens = Vec::new();
        let mut invalid_entries = 0;
        for entry in token_entries(hub_tokens) {
            let parsed = entry.split_once('=').and_then(|(name, hex)| {
                let name = MachineName::parse(name.trim(), "machine").ok()?;
                Some((name, parse_digest(hex.trim())?))
            });
            match parsed {
                Some(pair) => tokens.push(pair),
                None => invalid_entries += 1,
            }
        }
        Self {
            required: Environment::parse(environment) != Ok(Environment::Development),
            tokens,
            invalid_entries,
        }
    }

    /// Whether requests must carry a token.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Whether no valid token is configured (in production nobody gets in: worth a log line).
    pub fn no_tokens(&self) -> bool {
        self.tokens.is_empty()
    }

    /// How many configured entries were malformed (worth a log line).
    pub fn invalid_entries(&self) -> usize {
        self.invalid_entries
    }

    /// What a request with this `Authorization` header value may do.
    pub fn access(&self, authorization: Option<&str>) -> Access {
        if !self.required {
            return Access::Open;
        }
        let Some(presented) = authorization.and_then(presented_digest) else {
            return Access::Denied;
        };
        // Compare with every digest, without stopping early, each in constant time.
        let mut found = None;
        for (machine, digest) in &self.tokens {
            if digest_eq(&presented, digest) && found.is_none() {
                found = Some(machine);
            }
        }
        found.map_or(Access::Denied, |m| Access::Machine(m.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> MachineName {
        MachineName::parse(n, "machine").unwrap()
    }

    fn auth() -> HubAuth {
        HubAuth::new(
            " Production ",
            &format!(
                "laptop={} , ci-runner = {},broken,all={},x=abc,ci-runner={}",
                token_digest("t-laptop"),
                token_digest("t-ci").to_uppercase(),
                token_digest("t-all"),
                token_digest("t-ci-2"),
            ),
        )
    }

    #[test]
    fn tokens_are_bound_to_their_machine() {
        let a = auth();
        assert!(a.required());
        assert_eq!(a.invalid_entries(), 3);
        assert_eq!(
            a.access(Some("Bearer t-laptop")),
            Access::Machine(name("laptop"))
        );
        assert_eq!(
            a.access(Some("bearer  t-ci ")),
            Access::Machine(name("ci-runner"))
        );
        // A machine may hold several tokens.
        assert_eq!(
            a.access(Some("Bearer t-ci-2")),
            Access::Machine(name("ci-runner"))
        );
        // base64("whoever:t-laptop")
        assert_eq!(
            a.access(Some("Basic d2hvZXZlcjp0LWxhcHRvcA==")),
            Access::Machine(name("laptop"))
        );
    }

    #[test]
    fn anything_else_is_denied() {
        let a = auth();
        for header in [
            None,
            Some(""),
            Some("Bearer"),
            Some("Bearer t-all"),
            Some("Bearer nope"),
            Some("Token t-laptop"),
            Some("Basic !!!"),
        ] {
            assert_eq!(a.access(header), Access::Denied, "{header:?}");
        }
        assert_eq!(
            HubAuth::new("production", "").access(Some("Bearer x")),
            Access::Denied
        );
    }

    #[test]
    fn acting_as_another_machine_is_refused() {
        let laptop = Access::Machine(name("laptop"));
        assert!(laptop.may_act_as(&name("laptop")));
        assert!(!laptop.may_act_as(&name("ci-runner")));
        assert!(Access::Open.may_act_as(&name("ci-runner")));
        assert!(!Access::Denied.may_act_as(&name("laptop")));
    }

    #[test]
    fn only_development_is_open() {
        assert_eq!(HubAuth::new("development", "").access(None), Access::Open);
        for misspelt in ["staging", "prod", ""] {
            assert!(HubAuth::new(misspelt, "laptop=00").required(), "{misspelt}");
            assert_eq!(HubAuth::new(misspelt, "").access(None), Access::Denied);
        }
    }
}
