//! The settings every component reads first, failing closed: an `environment` outside the
//! documented set, or a variable that cannot be read, refuses the request with a 500 that says
//! what to fix (never an open door).

use std::fmt;

/// The documented values of the Spin variable `environment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Environment {
    /// Open: no token needed, but only loopback `Host` names are answered ([`crate::host`]).
    Development,
    /// Every route but `/api/health` needs a token.
    Production,
}

impl Environment {
    /// The accepted spellings, for messages.
    pub const ACCEPTED: &'static str = "`development` or `production`";

    /// Parses `development` or `production` (case-insensitive, surrounding space ignored).
    ///
    /// ```
    /// use dochub_http::Environment;
    /// assert_eq!(Environment::parse(" Production"), Ok(Environment::Production));
    /// assert!(Environment::parse("prod").is_err());
    /// ```
    pub fn parse(value: &str) -> Result<Environment, SettingsError> {
        let value = value.trim();
        if value.eq_ignore_ascii_case("development") {
            Ok(Environment::Development)
        } else if value.eq_ignore_ascii_case("production") {
            Ok(Environment::Production)
        } else {
            Err(SettingsError::UnknownEnvironment(value.to_owned()))
        }
    }

    /// The canonical name.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Development => "development",
            Environment::Production => "production",
        }
    }
}

/// Why a component refuses to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// `environment` is not one of [`Environment::ACCEPTED`].
    UnknownEnvironment(String),
    /// A Spin variable could not be read.
    Unreadable {
        /// The variable.
        name: String,
        /// What the host said.
        reason: String,
    },
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingsError::UnknownEnvironment(value) => write!(
                f,
                "the variable `environment` is `{}`; set it to {} (SPIN_VARIABLE_ENVIRONMENT)",
                value.escape_debug(),
                Environment::ACCEPTED
            ),
            SettingsError::Unreadable { name, reason } => write!(
                f,
                "cannot read the variable `{name}` ({reason}); declare it in spin.toml under \
                 [variables] and the component's variables"
            ),
        }
    }
}

impl std::error::Error for SettingsError {}

/// What every component reads before it looks at a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The parsed `environment`.
    pub environment: Environment,
    /// The raw token list (`auth_tokens`, or `hub_tokens` for the hub); never logged.
    pub tokens: String,
    /// `allowed_hosts`: extra `Host` names answered in development, comma-separated.
    pub allowed_hosts: String,
}

impl Settings {
    /// Reads `environment`, the token variable `tokens_variable` and `allowed_hosts` through
    /// `get` (the component passes Spin's `variables::get`). Any read error, or an unknown
    /// environment, is an error: the caller answers with [`Settings::refusal`].
    pub fn read<E: fmt::Debug>(
        tokens_variable: &str,
        get: impl Fn(&str) -> Result<String, E>,
    ) -> Result<Settings, SettingsError> {
        let read = |name: &str| {
            get(name).map_err(|e| SettingsError::Unreadable {
                name: name.to_owned(),
                reason: format!("{e:?}"),
            })
        };
        let environment = Environment::parse(&read("environment")?)?;
        Ok(Settings {
            environment,
            tokens: read(tokens_variable)?,
            allowed_hosts: read("allowed_hosts")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Result<String, String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
                .ok_or_else(|| format!("Undefined({name})"))
        }
    }

    #[test]
    fn reads_the_documented_environments() {
        let s = Settings::read(
            "auth_tokens",
            vars(&[
                ("environment", "PRODUCTION"),
                ("auth_tokens", "x"),
                ("allowed_hosts", ""),
            ]),
        )
        .unwrap();
        assert_eq!(s.environment, Environment::Production);
        assert_eq!(s.tokens, "x");
    }

    #[test]
    fn unknown_environment_or_unreadable_variable_refuses() {
        let e = Settings::read(
            "auth_tokens",
            vars(&[("environment", "prod"), ("auth_tokens", "secret-ish")]),
        )
        .unwrap_err();
        assert_eq!(e, SettingsError::UnknownEnvironment("prod".into()));
        assert!(e.to_string().contains("`development` or `production`"));
        let e = Settings::read("auth_tokens", vars(&[("environment", "development")])).unwrap_err();
        assert!(matches!(&e, SettingsError::Unreadable { name, .. } if name == "auth_tokens"));
        assert!(!e.to_string().contains("secret"));
    }
}
