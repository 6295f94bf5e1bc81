//! `dochub hub send|inbox|machines`: the message hub from the shell.

use std::io::Read;

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
}

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
        .inbox(&a.machine, a.limit, a.ack && !two_step)
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
