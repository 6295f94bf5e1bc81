//! Spin's runtime-config file: which backend serves each key-value store and SQLite database label.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::kv::StoreConfig;
use crate::sqlite::DatabaseConfig;

/// The parts of a runtime-config file this host understands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// `[key_value_store.<label>]` tables.
    pub key_value: HashMap<String, StoreConfig>,
    /// `[sqlite_database.<label>]` tables.
    pub sqlite: HashMap<String, DatabaseConfig>,
}

#[derive(Deserialize)]
struct RawRuntimeConfig {
    #[serde(default)]
    key_value_store: HashMap<String, RawStore>,
    #[serde(default)]
    sqlite_database: HashMap<String, RawStore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    #[serde(rename = "type")]
    kind: String,
    url: Option<String>,
    path: Option<PathBuf>,
}

/// Reads a runtime-config file.
///
/// - `[key_value_store.<label>]`: `type = "redis"` with `url`, or `type = "spin"` (SQLite) with an
///   optional `path`, relative to the config file's folder; without `path` the store is in memory.
/// - `[sqlite_database.<label>]`: `type = "spin"` with an optional `path`, relative to the current
///   working directory; without `path` the database is in memory.
///
/// Both as Spin v4.0.2 resolves them (`crates/runtime-config/src/lib.rs`,
/// `crates/key-value-spin/src/lib.rs`, `crates/sqlite/src/lib.rs`).
pub fn load(path: &Path) -> anyhow::Result<RuntimeConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read runtime config `{}`", path.display()))?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config_dir = path
        .parent()
        .with_context(|| format!("runtime config `{}` has no folder", path.display()))?;
    parse(&text, config_dir, &cwd)
        .with_context(|| format!("invalid runtime config `{}`", path.display()))
}

fn resolve(path: Option<PathBuf>, base: &Path) -> Option<PathBuf> {
    path.map(|p| if p.is_absolute() { p } else { base.join(p) })
}

fn parse(text: &str, config_dir: &Path, cwd: &Path) -> anyhow::Result<RuntimeConfig> {
    let raw: RawRuntimeConfig = toml::from_str(text)?;
    let key_value = raw
        .key_value_store
        .into_iter()
        .map(|(label, store)| {
            let config = match store.kind.as_str() {
                "redis" => StoreConfig::Redis {
                    url: store.url.with_context(|| {
                        format!("key_value_store.{label}: type \"redis\" needs `url`")
                    })?,
                },
                "spin" => StoreConfig::Sqlite {
                    path: resolve(store.path, config_dir),
                },
                other => bail!(
                    "key_value_store.{label}: type \"{other}\" is not supported here (use \"spin\" or \"redis\")"
                ),
            };
            Ok((label, config))
        })
        .collect::<anyhow::Result<_>>()?;
    let sqlite = raw
        .sqlite_database
        .into_iter()
        .map(|(label, db)| {
            let config = match db.kind.as_str() {
                "spin" => match resolve(db.path, cwd) {
                    Some(path) => DatabaseConfig::File(path),
                    None => DatabaseConfig::InMemory,
                },
                other => bail!(
                    "sqlite_database.{label}: type \"{other}\" is not supported here (use \"spin\"; \
                     Spin's \"libsql\" needs a libSQL server and runs only under `spin up`)"
                ),
            };
            Ok((label, config))
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(RuntimeConfig { key_value, sqlite })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_here(text: &str) -> anyhow::Result<RuntimeConfig> {
        parse(text, Path::new("/etc/app"), Path::new("/work"))
    }

    #[test]
    fn reads_redis_and_spin_stores() {
        let text = r#"
[key_value_store.default]
type = "redis"
url = "redis://127.0.0.1:6379"

[key_value_store.local]
type = "spin"
path = "data/kv.db"

[key_value_store.scratch]
type = "spin"
"#;
        let c = parse_here(text).unwrap();
        assert_eq!(
            c.key_value["default"],
            StoreConfig::Redis {
                url: "redis://127.0.0.1:6379".into()
            }
        );
        assert_eq!(
            c.key_value["local"],
            StoreConfig::Sqlite {
                path: Some("/etc/app/data/kv.db".into())
            }
        );
        assert_eq!(c.key_value["scratch"], StoreConfig::Sqlite { path: None });
    }

    #[test]
    fn reads_sqlite_databases_relative_to_the_working_directory() {
        let text = r#"
[sqlite_database.default]
type = "spin"
path = "data/hub.db"

[sqlite_database.abs]
type = "spin"
path = "/var/db/x.db"

[sqlite_database.scratch]
type = "spin"
"#;
        let c = parse_here(text).unwrap();
        assert_eq!(
            c.sqlite["default"],
            DatabaseConfig::File("/work/data/hub.db".into())
        );
        assert_eq!(c.sqlite["abs"], DatabaseConfig::File("/var/db/x.db".into()));
        assert_eq!(c.sqlite["scratch"], DatabaseConfig::InMemory);
    }

    #[test]
    fn refuses_unknown_types_and_missing_url() {
        for text in [
            "[key_value_store.x]\ntype = \"azure_cosmos\"",
            "[key_value_store.x]\ntype = \"redis\"",
            "[sqlite_database.x]\ntype = \"libsql\"\nurl = \"https://db\"",
        ] {
            assert!(parse_here(text).is_err(), "{text}");
        }
        let err = parse_here("[sqlite_database.x]\ntype = \"libsql\"").unwrap_err();
        assert!(err.to_string().contains("libsql"), "{err}");
    }
}
