//! Machine names, messages and their JSON shapes.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::HubError;

/// The `to` value that broadcasts to every registered machine; no machine may take this name.
pub const BROADCAST: &str = "all";

/// The longest machine name.
pub const MAX_NAME_LEN: usize = 64;

/// The largest message `body`: 64 KiB of UTF-8, counted after JSON decoding (a body sent with
/// `\uXXXX` escapes takes up to six times as much JSON).
pub const MAX_BODY: usize = 64 * 1024;

/// The longest `Idempotency-Key`.
pub const MAX_KEY_LEN: usize = 128;

/// A valid machine name: `[A-Za-z0-9._-]{1,64}`, never `.` or `..`, and never `all` in any case
/// (a broadcast typed as `ALL` must not land in an inbox nobody reads).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct MachineName(String);

impl MachineName {
    /// Checks `name`; `what` names the field in the error (`from`, `to`, `machine`).
    pub fn parse(name: &str, what: &str) -> Result<Self, HubError> {
        if name.eq_ignore_ascii_case(BROADCAST) {
            return Err(HubError::Invalid(format!(
                "`{what}` cannot be `{name}`: `all`, in any case, is reserved for broadcasts (send to `all` to reach every machine)"
            )));
        }
        if name == "." || name == ".." {
            return Err(HubError::Invalid(format!(
                "`{what}` cannot be `{name}`: `.` and `..` are not machine names"
            )));
        }
        let valid = !name.is_empty()
            && name.len() <= MAX_NAME_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !valid {
            return Err(HubError::Invalid(format!(
                "`{what}` must be a machine name of 1 to 64 characters from A-Z a-z 0-9 . _ -"
            )));
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MachineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a message goes: one machine, or every registered machine but the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recipient {
    /// One machine.
    Machine(MachineName),
    /// `to: "all"`.
    All,
}

impl Recipient {
    /// Parses a `to` field.
    pub fn parse(to: &str) -> Result<Self, HubError> {
        if to == BROADCAST {
            Ok(Self::All)
        } else {
            MachineName::parse(to, "to").map(Self::Machine)
        }
    }

    /// The `to` field as sent.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Machine(m) => m.as_str(),
            Self::All => BROADCAST,
        }
    }
}

/// A send request, validated: the body of `POST /api/send`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    /// The sending machine.
    pub from: MachineName,
    /// The receiving machine, or all of them.
    pub to: Recipient,
    /// The text, never empty.
    pub body: String,
}

impl SendRequest {
    /// Parses and validates the JSON body of a send: an object with the strings `from`, `to` and
    /// a non-empty `body` of at most [`MAX_BODY`] bytes (other fields are ignored).
    pub fn from_json(bytes: &[u8]) -> Result<Self, HubError> {
        #[derive(Deserialize)]
        struct Raw {
            from: Option<serde_json::Value>,
            to: Option<serde_json::Value>,
            body: Option<serde_json::Value>,
        }
        let raw: Raw = serde_json::from_slice(bytes)
            .map_err(|e| HubError::Invalid(format!("the body is not a JSON object: {e}")))?;
        let field = |v: Option<serde_json::Value>, name: &str| match v {
            Some(serde_json::Value::String(s)) if !s.is_empty() => Ok(s),
            Some(serde_json::Value::String(_)) => {
                Err(HubError::Invalid(format!("`{name}` must not be empty")))
            }
            Some(_) => Err(HubError::Invalid(format!("`{name}` must be a string"))),
            None => Err(HubError::Invalid(format!("`{name}` is required"))),
        };
        let from = field(raw.from, "from")?;
        let to = field(raw.to, "to")?;
        let body = field(raw.body, "body")?;
        if body.contains('\0') {
            // PostgreSQL's text cannot hold NUL; refusing it everywhere keeps both stores alike.
            return Err(HubError::Invalid(
                "`body` must not contain NUL (\\u0000) characters".to_owned(),
            ));
        }
        if body.len() > MAX_BODY {
            return Err(HubError::TooLarge(format!(
                "the message body is {} bytes of UTF-8; at most 64 KiB ({MAX_BODY} bytes) are accepted",
                body.len()
            )));
        }
        Ok(Self {
            from: MachineName::parse(&from, "from")?,
            to: Recipient::parse(&to)?,
            body,
        })
    }
}

/// A valid `Idempotency-Key` header value: 1 to 128 printable ASCII characters (space to `~`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Checks a header value.
    pub fn parse(value: &[u8]) -> Result<Self, HubError> {
        let valid = (1..=MAX_KEY_LEN).contains(&value.len())
            && value.iter().all(|b| (b' '..=b'~').contains(b));
        match std::str::from_utf8(value) {
            Ok(key) if valid => Ok(Self(key.to_owned())),
            _ => Err(HubError::Invalid(format!(
                "`Idempotency-Key` must be 1 to {MAX_KEY_LEN} printable ASCII characters"
            ))),
        }
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A message as `POST /api/send` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Unique across the hub and increasing in commit order (so in each inbox, in the order the
    /// messages arrived); the copies of a broadcast share it.
    pub id: u64,
    /// The sender.
    pub from: String,
    /// The recipient as sent (`all` for a broadcast).
    pub to: String,
    /// The text.
    pub body: String,
    /// When the hub accepted it, ISO 8601 UTC with milliseconds.
    pub timestamp: String,
}

/// A message as the inbox returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxMessage {
    /// The message.
    #[serde(flatten)]
    pub message: Message,
    /// Whether the message is now marked read: `true` when this very request acknowledged it.
    pub read: bool,
}

/// The body of `GET /api/inbox/<machine>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inbox {
    /// The machine whose inbox this is.
    pub machine: String,
    /// The unread messages returned, oldest first.
    pub messages: Vec<InboxMessage>,
}

/// One entry of `GET /machines`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineEntry {
    /// The machine name.
    pub name: String,
    /// When it last sent or read its inbox, ISO 8601 UTC with milliseconds.
    pub last_seen: String,
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds (`2026-01-02T03:04:05.678Z`),
/// the format every dochub body uses.
pub use dochub_http::iso8601_millis as iso_millis;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_names_follow_the_pattern() {
        for ok in [
            "a",
            "ci-runner",
            "laptop.home",
            "A_1",
            &"x".repeat(64),
            "...",
            ".a",
            "allx",
        ] {
            assert!(MachineName::parse(ok, "from").is_ok(), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a/b",
            "é",
            "all",
            "ALL",
            "All",
            ".",
            "..",
            &"x".repeat(65),
            "a\n",
        ] {
            assert!(MachineName::parse(bad, "from").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn all_is_reserved_in_every_case_and_said_so() {
        for name in ["all", "ALL", "aLl"] {
            let err = MachineName::parse(name, "from").unwrap_err();
            assert!(err.to_string().contains("reserved"), "{err}");
        }
        assert_eq!(Recipient::parse("all").unwrap(), Recipient::All);
        let err = Recipient::parse("ALL").unwrap_err().to_string();
        assert!(err.contains("`to` cannot be `ALL`"), "{err}");
        let err = Recipient::parse("..").unwrap_err().to_string();
        assert!(err.contains("not machine names"), "{err}");
    }

    #[test]
    fn send_requests_are_validated_field_by_field() {
        let ok = SendRequest::from_json(br#"{"from":"a","to":"b","body":"hi","x":1}"#).unwrap();
        assert_eq!(ok.from.as_str(), "a");
        assert_eq!(ok.to.as_str(), "b");
        assert_eq!(ok.body, "hi");
        let err = |json: &str| {
            SendRequest::from_json(json.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert!(err("{").contains("not a JSON object"));
        assert!(err("[1]").contains("not a JSON object"));
        assert!(err(r#"{"to":"b","body":"x"}"#).contains("`from` is required"));
        assert!(err(r#"{"from":"a","body":"x"}"#).contains("`to` is required"));
        assert!(err(r#"{"from":"a","to":"b"}"#).contains("`body` is required"));
        assert!(err(r#"{"from":"a","to":"b","body":""}"#).contains("`body` must not be empty"));
        assert!(err(r#"{"from":"a","to":"b","body":"x\u0000y"}"#).contains("NUL"));
        assert!(err(r#"{"from":"","to":"b","body":"x"}"#).contains("`from` must not be empty"));
        assert!(err(r#"{"from":1,"to":"b","body":"x"}"#).contains("`from` must be a string"));
        assert!(err(r#"{"from":"all","to":"b","body":"x"}"#).contains("reserved"));
        assert!(err(r#"{"from":"a b","to":"b","body":"x"}"#).contains("`from` must be"));
        assert!(err(r#"{"from":"a","to":"b/c","body":"x"}"#).contains("`to` must be"));
    }

    #[test]
    fn the_body_limit_counts_decoded_bytes_not_json() {
        // 64 KiB of `é` sent as `\u00e9` escapes: 6 bytes of JSON per 2 bytes of body.
        let escaped = "\\u00e9".repeat(MAX_BODY / 2);
        let json = format!(r#"{{"from":"a","to":"b","body":"{escaped}"}}"#);
        assert!(json.len() > 3 * MAX_BODY);
        let ok = SendRequest::from_json(json.as_bytes()).unwrap();
        assert_eq!(ok.body.len(), MAX_BODY);
        let over = format!(r#"{{"from":"a","to":"b","body":"{escaped}x"}}"#);
        let err = SendRequest::from_json(over.as_bytes()).unwrap_err();
        assert!(matches!(err, HubError::TooLarge(_)), "{err}");
    }

    #[test]
    fn idempotency_keys_are_printable_ascii_up_to_128_bytes() {
        for ok in ["a", "retry-1 of 2", &"k".repeat(128), "~!\"#"] {
            assert_eq!(IdempotencyKey::parse(ok.as_bytes()).unwrap().as_str(), ok);
        }
        for bad in [&b""[..], &[b'k'; 129], b"tab\t", b"\xc3\xa9", b"nl\n"] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn timestamps_are_iso_utc_with_milliseconds() {
        assert_eq!(iso_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_millis(1_767_323_045_678), "2026-01-02T03:04:05.678Z");
    }

    #[test]
    fn inbox_messages_serialize_flat() {
        let m = InboxMessage {
            message: Message {
                id: 7,
                from: "a".into(),
                to: "b".into(),
                body: "hi".into(),
                timestamp: iso_millis(0),
            },
            read: true,
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::json!({"id": 7, "from": "a", "to": "b", "body": "hi",
                "timestamp": "1970-01-01T00:00:00.000Z", "read": true})
        );
    }
}
