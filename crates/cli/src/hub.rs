//! `dochub hub send|inbox|watch|thread|search|machines`: the message hub from the shell.

use std::io::Read;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::Value;

use dochub_hub::{Importance, Inbox};

use crate::client::{Ack, Client, MailboxRead, Outgoing};
use crate::output::{Output, str_of};

/// `dochub hub ...`.
#[derive(Subcommand)]
pub enum HubCommand {
    /// Send a message; BODY `-` reads it from standard input.
    Send(SendArgs),
    /// Read a machine's unread messages, oldest first.
    Inbox(InboxArgs),
    /// Print a machine's messages as they arrive, acknowledging each batch once it is printed,
    /// until Ctrl-C.
    Watch(WatchArgs),
    /// Print a thread of a machine's mailbox, oldest first.
    Thread(ThreadArgs),
    /// Search a machine's mailbox (subjects and bodies, every word, any order), newest first.
    Search(SearchArgs),
    /// List the registered machines and when each was last seen.
    Machines,
}

/// Arguments of `hub send`.
#[derive(Args)]
pub struct SendArgs {
    /// The sending machine.
    #[arg(long)]
    from: String,
    /// The receiving machine, or `all` to broadcast.
    #[arg(long)]
    to: String,
    /// The message text; `-` reads it from standard input.
    body: String,
    /// What it is about: one line of at most 200 characters.
    #[arg(long)]
    subject: Option<String>,
    /// How much it matters: low, normal (the hub's default), high or urgent.
    #[arg(long, value_parser = parse_importance)]
    importance: Option<Importance>,
    /// The id of the message this one answers (one the sender sent or received): it joins that
    /// message's thread.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    reply_to: Option<u64>,
}

/// Arguments of `hub thread`.
#[derive(Args)]
pub struct ThreadArgs {
    /// The thread: the id of its first message (every message shows its `thread`).
    #[arg(value_parser = clap::value_parser!(u64).range(1..))]
    thread: u64,
    /// The machine whose mailbox holds it.
    #[arg(long, env = "DOCHUB_MACHINE")]
    machine: String,
}

/// Arguments of `hub search`.
#[derive(Args)]
pub struct SearchArgs {
    /// The words to look for.
    query: String,
    /// The machine whose mailbox to search.
    #[arg(long, env = "DOCHUB_MACHINE")]
    machine: String,
    /// At most this many messages (1 to 200).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=200))]
    limit: u32,
}

/// Arguments of `hub inbox`.
#[derive(Args)]
pub struct InboxArgs {
    /// The machine whose inbox to read.
    machine: String,
    /// At most this many messages (1 to 500).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=500))]
    limit: u32,
    /// Mark the messages read once they have been printed.
    #[arg(long)]
    ack: bool,
    /// When the inbox is empty, wait up to this many seconds for a message (the hub cuts the
    /// wait to its `hub_max_wait`, 25 s by default).
    #[arg(long, value_parser = parse_seconds)]
    wait: Option<Duration>,
    /// Only messages of this importance or above: low, normal, high or urgent.
    #[arg(long, value_parser = parse_importance)]
    importance: Option<Importance>,
}

fn parse_importance(text: &str) -> Result<Importance, String> {
    Importance::parse(text, "--importance").map_err(|e| e.to_string())
}

/// Arguments of `hub watch`.
#[derive(Args)]
pub struct WatchArgs {
    /// The machine whose inbox to follow.
    machine: String,
}

/// Seconds, as a non-negative number (`10`, `0.5`).
fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// How long one wait of `hub watch` asks for: the hub's default maximum.
const WATCH_WAIT: Duration = Duration::from_secs(25);
/// The longest pause before `hub watch` tries again after a failure.
const WATCH_BACKOFF: Duration = Duration::from_secs(30);

/// Runs a `hub` subcommand.
pub async fn run(client: &Client, command: HubCommand, out: &Output) -> anyhow::Result<()> {
    match command {
        HubCommand::Send(a) => {
            let body = if a.body == "-" {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut bytes)
                    .context("reading the message from standard input")?;
                String::from_utf8(bytes)
                    .map_err(|_| anyhow::anyhow!("the message on standard input is not UTF-8"))?
            } else {
                a.body
            };
            let key = format!("dochub-cli-{}", uuid::Uuid::new_v4());
            let outgoing = Outgoing {
                from: &a.from,
                to: &a.to,
                body: &body,
                subject: a.subject.as_deref(),
                importance: a.importance,
                reply_to: a.reply_to,
            };
            let message = client.send(&outgoing, &key).await?;
            out.json_or(&message, || {
                format!(
                    "sent message {} to {}\n",
                    message["id"],
                    str_of(&message, "to")
                )
            })
        }
        HubCommand::Inbox(a) => inbox(client, &a, out).await,
        HubCommand::Watch(a) => watch(client, &a.machine, out).await,
        HubCommand::Thread(a) => {
            let read = MailboxRead {
                limit: Some(dochub_hub::MAX_MAILBOX_LIMIT as u32),
                thread: Some(a.thread),
                ..MailboxRead::default()
            };
            let mut thread = client.mailbox(&a.machine, &read).await?;
            thread.messages.reverse();
            out.json_or(&thread, || {
                if thread.messages.is_empty() {
                    format!("no thread {} in the mailbox of {}\n", a.thread, a.machine)
                } else {
                    inbox_text(&thread)
                }
            })
        }
        HubCommand::Search(a) => {
            let read = MailboxRead {
                limit: Some(a.limit),
                search: Some(&a.query),
                ..MailboxRead::default()
            };
            let found = client.mailbox(&a.machine, &read).await?;
            out.json_or(&found, || {
                if found.messages.is_empty() {
                    format!("no message of {} matches `{}`\n", a.machine, a.query)
                } else {
                    inbox_text(&found)
                }
            })
        }
        HubCommand::Machines => {
            let machines = client.machines().await?;
            out.json_or(&machines, || machine_lines(&machines))
        }
    }
}

/// Reads, prints, and only then acknowledges (`--ack`), so an interrupted run loses nothing.
/// A hub without the acknowledgement route is read with `ack=true` instead.
async fn inbox(client: &Client, a: &InboxArgs, out: &Output) -> anyhow::Result<()> {
    let two_step = a.ack && client.supports_ack(&a.machine).await?;
    let inbox = client
        .inbox_at_least(
            &a.machine,
            a.importance,
            a.limit,
            a.ack && !two_step,
            a.wait,
        )
        .await?;
    out.json_or(&inbox, || inbox_text(&inbox))?;
    let ids: Vec<u64> = inbox.messages.iter().map(|m| m.message.id).collect();
    // By id, not through the last: with `--importance` older messages were passed over.
    if two_step && !ids.is_empty() {
        match client.ack_ids(&a.machine, &ids).await? {
            Ack::Acknowledged(_) => {}
            Ack::Unsupported => bail!("the hub stopped accepting acknowledgements"),
        }
    }
    Ok(())
}

/// Waits for messages, prints them, then acknowledges through the last one printed: a run
/// stopped at any point has printed every message it acknowledged, and the next run starts
/// with the rest. A failed request (the hub restarting, a dropped connection) is retried after
/// a pause that doubles up to 30 s. Ctrl-C stops it at once: whatever was printed but not yet
/// acknowledged is printed again by the next run, never lost.
async fn watch(client: &Client, machine: &str, out: &Output) -> anyhow::Result<()> {
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    let mut pause = Duration::from_secs(1);
    loop {
        let read = tokio::select! {
            _ = &mut stop => return Ok(()),
            read = client.inbox(machine, 50, false, Some(WATCH_WAIT)) => read,
        };
        let inbox = match read {
            Ok(inbox) => inbox,
            Err(e) => {
                eprintln!("dochub: {e}; trying again in {} s", pause.as_secs());
                tokio::select! {
                    _ = &mut stop => return Ok(()),
                    _ = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(WATCH_BACKOFF);
                continue;
            }
        };
        pause = Duration::from_secs(1);
        let Some(last) = inbox.messages.iter().map(|m| m.message.id).max() else {
            continue;
        };
        for message in &inbox.messages {
            out.json_or(&message, || {
                inbox_text(&Inbox {
                    machine: inbox.machine.clone(),
                    messages: vec![message.clone()],
                })
            })?;
        }
        match client.ack(machine, last).await {
            Ok(Ack::Acknowledged(_)) => {}
            Ok(Ack::Unsupported) => {
                bail!("this hub has no acknowledgement route; `hub watch` needs it")
            }
            // At least once: the next read shows them again.
            Err(e) => eprintln!("dochub: {e}; messages through #{last} will be shown again"),
        }
    }
}

fn inbox_text(inbox: &Inbox) -> String {
    if inbox.messages.is_empty() {
        return format!("no unread messages for {}\n", inbox.machine);
    }
    let mut text = String::new();
    for m in inbox.messages.iter().map(|m| &m.message) {
        text += &format!("#{} {} {} -> {}", m.id, m.timestamp, m.from, m.to);
        if m.importance != Importance::Normal {
            text += &format!(" [{}]", m.importance.as_str());
        }
        if let Some(reply_to) = m.reply_to {
            text += &format!(" (reply to #{reply_to}, thread #{})", m.thread);
        }
        text.push('\n');
        if let Some(subject) = &m.subject {
            text += &format!("  Subject: {subject}\n");
        }
        for line in m.body.lines() {
            text += &format!("  {line}\n");
        }
    }
    text
}

fn machine_lines(machines: &Value) -> String {
    let mut text = String::new();
    for m in machines.as_array().into_iter().flatten() {
        text += &format!("{}  {}\n", str_of(m, "name"), str_of(m, "last_seen"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use dochub_hub::{InboxMessage, Message};

    #[test]
    fn messages_print_with_indented_bodies() {
        let inbox = Inbox {
            machine: "ci".into(),
            messages: vec![InboxMessage {
                message: Message {
                    id: 7,
                    from: "laptop".into(),
                    to: "ci".into(),
                    body: "one\ntwo".into(),
                    timestamp: "2026-01-01T00:00:00.000Z".into(),
                    subject: None,
                    importance: Importance::Normal,
                    thread: 7,
                    reply_to: None,
                },
                read: false,
            }],
        };
        assert_eq!(
            inbox_text(&inbox),
            "#7 2026-01-01T00:00:00.000Z laptop -> ci\n  one\n  two\n"
        );
        let mut reply = inbox.clone();
        let m = &mut reply.messages[0].message;
        (m.subject, m.importance, m.thread, m.reply_to) =
            (Some("Build".into()), Importance::Urgent, 3, Some(5));
        assert_eq!(
            inbox_text(&reply),
            "#7 2026-01-01T00:00:00.000Z laptop -> ci [urgent] (reply to #5, thread #3)\n  \
             Subject: Build\n  one\n  two\n"
        );
    }
}
