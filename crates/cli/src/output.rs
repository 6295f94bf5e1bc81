//! Human text by default, the API's JSON with `--json`: one switch for every command.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

/// How a command prints its result.
pub struct Output {
    /// `--json`: print the JSON the API returned, one document on one line.
    pub json: bool,
}

impl Output {
    /// Prints `value` as JSON with `--json`, else the text `human` makes.
    pub fn json_or(
        &self,
        value: &impl Serialize,
        human: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        let text = if self.json {
            serde_json::to_string(value)? + "\n"
        } else {
            human()
        };
        // Written and flushed in full before the caller goes on (e.g. to acknowledge messages).
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        Ok(())
    }
}

/// A string field of a JSON object, or `""`.
pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}
