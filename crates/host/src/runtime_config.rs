//! Spin's runtime-config file: which backend serves each key-value store label.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::kv::StoreConfig;

#[derive(Deserialize)]
struct RawRuntimeConfig {
    #[serde(default)]
    key_value_store: HashMap<String, RawStore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    #[serde(rename = "type")]
    kind: String,
    url: Option<String>,
    path: Option<std::path::PathBuf>,
}

/// Reads `[key_value_store.<label>]` tables: `type = "redis"` with `url`, or `type = "spin"`
/// (SQLite) with an optional `path` relative to the config file's folder.
pub fn load(path: &Path, state_dir: &Path) -> anyhow::Result<HashMap<String, StoreConfig>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read runtime config `{}`", path.display()))?;
    parse(&text, path.parent().unwrap_or(Path::new(".")), state_dir)
        .with_context(|| format!("invalid runtime config `{}`", path.display()))
}

fn parse(
    text: &str,
    base: &Path,
    state_dir: &Path,
) -> anyhow::Result<HashMap<String, StoreConfig>> {
    let raw: RawRuntimeConfig = toml::from_str(text)?;
    raw.key_value_store
        .into_iter()
        .map(|(label, store)| {
            let config = match store.kind.as_str() {
                "redis" => StoreConfig::Redis {
                    url: store.url.with_context(|| {
                        format!("key_value_store.{label}: type \"redis\" needs `url`")
                    })?,
                },
                "spin" => StoreConfig::Sqlite {
                    path: match store.path {
                        Some(p) if p.is_absolute() => p,
                        Some(p) => base.join(p),
                        None => state_dir.join("sqlite_key_value.db"),
                    },
                },
                other => bail!(
                    "key_value_store.{label}: type \"{other}\" is not supported here (use \"spin\" or \"redis\")"
                ),
            };
            Ok((label, config))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_redis_and_spin_stores() {
        let text = r#"
[key_value_store.default]
type = "redis"
url = "redis://127.0.0.1:6379"

[key_value_store.local]
type = "spin"
path = "data/kv.db"
"#;
        let c = parse(text, Path::new("/etc/app"), Path::new("/state")).unwrap();
        assert_eq!(
            c["default"],
            StoreConfig::Redis {
                url: "redis://127.0.0.1:6379".into()
            }
        );
        assert_eq!(
            c["local"],
            StoreConfig::Sqlite {
                path: "/etc/app/data/kv.db".into()
            }
        );
    }

    #[test]
    fn refuses_unknown_types_and_missing_url() {
        assert!(
            parse(
                "[key_value_store.x]\ntype = \"azure_cosmos\"",
                Path::new("."),
                Path::new(".")
            )
            .is_err()
        );
        assert!(
            parse(
                "[key_value_store.x]\ntype = \"redis\"",
                Path::new("."),
                Path::new(".")
            )
            .is_err()
        );
    }
}
