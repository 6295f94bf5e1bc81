//! `dochub hub send|inbox|machines`: the message hub from the shell.

use std::io::Read;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::Value;

use dochub_hub::Inbox;

use crate::client::{Ack, Client};
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
            let message = client.send(&a.from, &a.to, &body, &key).await?;
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
        .inbox(&a.machine, a.limit, a.ack && !two_step, a.wait)
        .await?;
    out.json_or(&inbox, || inbox_text(&inbox))?;
    if two_step && let Some(last) = inbox.messages.iter().map(|m| m.message.id).max() {
        match client.ack(&a.machine, last).await? {
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
        text += &format!("#{} {} {} -> {}\n", m.id, m.timestamp, m.from, m.to);
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
                },
                read: false,
            }],
        };
        assert_eq!(
            inbox_text(&inbox),
            "#7 2026-01-01T00:00:00.000Z laptop -> ci\n  one\n  two\n"
        );
    }
}
