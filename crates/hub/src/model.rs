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

/// The longest `subject`, in characters.
pub const MAX_SUBJECT_CHARS: usize = 200;

/// How much a message matters, from `low` to `urgent`; `normal` when the sender does not say.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Importance {
    /// Can wait.
    Low,
    /// The default.
    #[default]
    Normal,
    /// Read before the normal ones.
    High,
    /// Read now.
    Urgent,
}

impl Importance {
    /// Every level, lowest first.
    pub const ALL: [Importance; 4] = [Self::Low, Self::Normal, Self::High, Self::Urgent];

    /// Parses `low`, `normal`, `high` or `urgent` (lowercase, as written); `what` names the
    /// field or parameter in the error.
    pub fn parse(value: &str, what: &str) -> Result<Self, HubError> {
        Self::ALL
            .into_iter()
            .find(|i| i.as_str() == value)
            .ok_or_else(|| {
                HubError::Invalid(format!(
                    "`{what}` must be one of low, normal, high, urgent, not `{value}`"
                ))
            })
    }

    /// The name, as in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
            Self::Urgent => "urgent",
        }
    }

    /// The level stored in the database: 0 (low) to 3 (urgent), so `>=` compares importance.
    pub(crate) fn level(self) -> i64 {
        self as i64
    }

    /// The importance of a stored level.
    pub(crate) fn from_level(level: i64) -> Option<Self> {
        usize::try_from(level)
            .ok()
            .and_then(|l| Self::ALL.get(l).copied())
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
    /// One line saying what it is about (at most [`MAX_SUBJECT_CHARS`]), if any.
    pub subject: Option<String>,
    /// How much it matters.
    pub importance: Importance,
    /// The id of the message this one answers, which the sender sent or received.
    pub reply_to: Option<u64>,
}

impl SendRequest {
    /// Parses and validates the JSON body of a send: an object with the strings `from`, `to` and
    /// a non-empty `body` of at most [`MAX_BODY`] bytes, and optionally `subject`, `importance`
    /// and `reply_to` (each may be `null`; other fields are ignored).
    pub fn from_json(bytes: &[u8]) -> Result<Self, HubError> {
        #[derive(Deserialize)]
        struct Raw {
            from: Option<serde_json::Value>,
            to: Option<serde_json::Value>,
            body: Option<serde_json::Value>,
            subject: Option<serde_json::Value>,
            importance: Option<serde_json::Value>,
            reply_to: Option<serde_json::Value>,
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
            subject: parse_subject(raw.subject)?,
            importance: match raw.importance {
                None | Some(serde_json::Value::Null) => Importance::Normal,
                Some(serde_json::Value::String(s)) => Importance::parse(&s, "importance")?,
                Some(_) => {
                    return Err(HubError::Invalid(
                        "`importance` must be one of low, normal, high, urgent".to_owned(),
                    ));
                }
            },
            reply_to: match raw.reply_to {
                None | Some(serde_json::Value::Null) => None,
                Some(serde_json::Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {
                    n.as_u64()
                }
                Some(_) => {
                    return Err(HubError::Invalid(
                        "`reply_to` must be the id of a message (a positive integer)".to_owned(),
                    ));
                }
            },
        })
    }
}

/// A subject: absent, `null` or empty for none; else one line of at most
/// [`MAX_SUBJECT_CHARS`] characters.
fn parse_subject(value: Option<serde_json::Value>) -> Result<Option<String>, HubError> {
    let subject = match value {
        None | Some(serde_json::Value::Null) => return Ok(None),
        Some(serde_json::Value::String(s)) => s,
        Some(_) => return Err(HubError::Invalid("`subject` must be a string".to_owned())),
    };
    let chars = subject.chars().count();
    if chars > MAX_SUBJECT_CHARS {
        return Err(HubError::Invalid(format!(
            "`subject` is {chars} characters long; at most {MAX_SUBJECT_CHARS} are accepted"
        )));
    }
    if subject.chars().any(char::is_control) {
        return Err(HubError::Invalid(
            "`subject` must be one line, without control characters (put details in `body`)"
                .to_owned(),
        ));
    }
    Ok(Some(subject).filter(|s| !s.is_empty()))
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

/// A message to send, as `POST /api/send` takes it; the optional fields are left out when unset.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Outgoing<'a> {
    /// The sending machine.
    pub from: &'a str,
    /// The receiving machine, or `all`.
    pub to: &'a str,
    /// The text.
    pub body: &'a str,
    /// What it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<&'a str>,
    /// How much it matters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importance: Option<Importance>,
    /// The id of the message it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<u64>,
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
    /// What it is about, or `null`.
    #[serde(default)]
    pub subject: Option<String>,
    /// How much it matters.
    #[serde(default)]
    pub importance: Importance,
    /// Its thread: the id of the thread's first message (its own id when it answers none).
    #[serde(default)]
    pub thread: u64,
    /// The id of the message it answers, or `null`.
    #[serde(default)]
    pub reply_to: Option<u64>,
}

/// A message as the inbox returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxMessage {
    /// The message.
    #[serde(flatten)]
    pub message: Message,
    /// Whether the message is marked read: in an inbox, `true` when this very request
    /// acknowledged it; in a mailbox, whether this machine acknowledged it (a message it sent
    /// is read).
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
    fn subject_importance_and_reply_to_are_optional_and_checked() {
        let plain = SendRequest::from_json(br#"{"from":"a","to":"b","body":"hi"}"#).unwrap();
        assert_eq!(
            (plain.subject, plain.importance, plain.reply_to),
            (None, Importance::Normal, None)
        );
        let full = SendRequest::from_json(
            br#"{"from":"a","to":"b","body":"hi","subject":"Build","importance":"urgent","reply_to":9}"#,
        )
        .unwrap();
        assert_eq!(full.subject.as_deref(), Some("Build"));
        assert_eq!(
            (full.importance, full.reply_to),
            (Importance::Urgent, Some(9))
        );
        let nulls = SendRequest::from_json(
            br#"{"from":"a","to":"b","body":"hi","subject":null,"importance":null,"reply_to":null}"#,
        )
        .unwrap();
        assert_eq!((nulls.subject, nulls.reply_to), (None, None));
        let err = |extra: &str| {
            let json = format!(r#"{{"from":"a","to":"b","body":"x",{extra}}}"#);
            SendRequest::from_json(json.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#""importance":"HIGH""#).contains("one of low, normal, high, urgent"));
        assert!(err(r#""importance":2"#).contains("one of low"));
        for bad in [
            "0",
            "-1",
            "1.5",
            r#""7""#,
            "true",
            "[1]",
            "18446744073709551616",
        ] {
            assert!(
                err(&format!(r#""reply_to":{bad}"#)).contains("positive integer"),
                "{bad}"
            );
        }
        let long = "é".repeat(MAX_SUBJECT_CHARS + 1);
        assert!(err(&format!(r#""subject":"{long}""#)).contains("at most 200"));
        let fits = "é".repeat(MAX_SUBJECT_CHARS);
        let json = format!(r#"{{"from":"a","to":"b","body":"x","subject":"{fits}"}}"#);
        assert!(SendRequest::from_json(json.as_bytes()).is_ok());
        assert!(err(r#""subject":"a\nb""#).contains("one line"));
        assert!(err(r#""subject":5"#).contains("must be a string"));
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
                subject: Some("s".into()),
                importance: Importance::High,
                thread: 5,
                reply_to: Some(5),
            },
            read: true,
        };
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            serde_json::json!({"id": 7, "from": "a", "to": "b", "body": "hi",
                "timestamp": "1970-01-01T00:00:00.000Z", "subject": "s", "importance": "high",
                "thread": 5, "reply_to": 5, "read": true})
        );
    }
}
