//! What the hub's tools decide before and after they reach the hub, the same over both
//! transports: the checked arguments of a read, the limit of a search, and whom a reply goes
//! to under which subject.

use std::time::Duration;

use dochub_hub::{Importance, MAX_LIMIT, Message};

use crate::tools::{
    DEFAULT_LIMIT, DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, ReadArgs, SearchMessagesArgs, WaitArgs,
};

/// A `read_inbox` or `wait_for_messages` call, its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxRead {
    /// Messages returned at most, 1 to 500.
    pub limit: u32,
    /// The least importance of a message returned; `None`: any.
    pub importance: Option<Importance>,
    /// How long an empty inbox is waited on; `None`: not at all.
    pub wait: Option<Duration>,
    /// Messages the agent says it has, to mark read before reading.
    pub ack: Vec<u64>,
}

impl InboxRead {
    /// `read_inbox`'s arguments, or why they are refused.
    pub fn of_read(args: ReadArgs) -> Result<InboxRead, String> {
        Ok(InboxRead {
            limit: read_limit(args.limit)?,
            importance: args.importance.map(Importance::from),
            wait: None,
            ack: acknowledged(args.ack)?,
        })
    }

    /// `wait_for_messages`' arguments, or why they are refused.
    pub fn of_wait(args: WaitArgs) -> Result<InboxRead, String> {
        let seconds = args.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        if !(1..=MAX_WAIT_SECONDS).contains(&seconds) {
            return Err(format!(
                "`timeout_seconds` must be from 1 to {MAX_WAIT_SECONDS}, not {seconds}"
            ));
        }
        Ok(InboxRead {
            limit: read_limit(args.limit)?,
            importance: args.importance.map(Importance::from),
            wait: Some(Duration::from_secs(seconds.into())),
            ack: acknowledged(args.ack)?,
        })
    }
}

fn read_limit(limit: Option<u32>) -> Result<u32, String> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if (1..=MAX_LIMIT as u32).contains(&limit) {
        Ok(limit)
    } else {
        Err(format!(
            "`limit` must be from 1 to {MAX_LIMIT}, not {limit}"
        ))
    }
}

fn acknowledged(ack: Option<Vec<u64>>) -> Result<Vec<u64>, String> {
    let mut ids = ack.unwrap_or_default();
    if ids.len() > MAX_LIMIT {
        return Err(format!(
            "`ack` names at most {MAX_LIMIT} messages (one read's worth), not {}",
            ids.len()
        ));
    }
    ids.sort_unstable();
    ids.dedup();
    Ok(ids)
}

/// `search_messages`' limit (1 to 200, default 20), or why it is refused.
pub fn search_limit(args: &SearchMessagesArgs) -> Result<u32, String> {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if (1..=200).contains(&limit) {
        Ok(limit)
    } else {
        Err(format!("`limit` must be from 1 to 200, not {limit}"))
    }
}

/// Whom `machine`'s reply to `original` goes to, and under which subject: the other side of
/// the message, and its subject as `Re: ...` (once), within the hub's 200 characters.
pub fn reply_to<'m>(original: &'m Message, machine: &str) -> (&'m str, Option<String>) {
    let to = if original.from == machine {
        original.to.as_str()
    } else {
        original.from.as_str()
    };
    let subject = original.subject.as_deref().map(|s| {
        if s.starts_with("Re: ") {
            s.to_owned()
        } else {
            format!("Re: {}", s.chars().take(196).collect::<String>())
        }
    });
    (to, subject)
}

/// Why a reply cannot be sent: the message is not in the machine's mailbox.
pub fn not_in_mailbox(id: u64, machine: &str) -> String {
    format!(
        "message {id} is not in the mailbox of {machine}: reply to a message it sent or received (read_inbox, read_thread and search_messages show their ids)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(from: &str, to: &str, subject: Option<&str>) -> Message {
        Message {
            id: 7,
            from: from.into(),
            to: to.into(),
            body: "b".into(),
            timestamp: String::new(),
            subject: subject.map(str::to_owned),
            importance: Importance::Normal,
            thread: 7,
            reply_to: None,
        }
    }

    #[test]
    fn a_reply_goes_to_the_other_side_under_one_re() {
        let received = message("ci", "laptop", Some("build"));
        assert_eq!(
            reply_to(&received, "laptop"),
            ("ci", Some("Re: build".into()))
        );
        let sent = message("laptop", "ci", Some("Re: build"));
        assert_eq!(reply_to(&sent, "laptop"), ("ci", Some("Re: build".into())));
        let long = message("ci", "laptop", Some(&"x".repeat(200)));
        let (_, subject) = reply_to(&long, "laptop");
        assert_eq!(subject.unwrap().chars().count(), 200);
        assert_eq!(reply_to(&message("ci", "laptop", None), "laptop").1, None);
    }

    #[test]
    fn reads_are_checked() {
        let read = |json| crate::arguments::<ReadArgs>(Some(&json)).map(InboxRead::of_read);
        let ok = read(serde_json::json!({"ack": [9, 3, 9]}))
            .unwrap()
            .unwrap();
        assert_eq!((ok.limit, ok.ack, ok.wait), (20, vec![3, 9], None));
        let e = read(serde_json::json!({"limit": 501}))
            .unwrap()
            .unwrap_err();
        assert_eq!(e, "`limit` must be from 1 to 500, not 501");
        let many: Vec<u64> = (1..=501).collect();
        let e = read(serde_json::json!({ "ack": many }))
            .unwrap()
            .unwrap_err();
        assert!(e.starts_with("`ack` names at most 500"), "{e}");
        let wait = crate::arguments::<WaitArgs>(Some(&serde_json::json!({"timeout_seconds": 26})))
            .unwrap();
        let e = InboxRead::of_wait(wait).unwrap_err();
        assert_eq!(e, "`timeout_seconds` must be from 1 to 25, not 26");
    }
}
