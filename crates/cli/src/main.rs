//! `dochub`: the command-line tool of dochub.
//!
//! - `dochub docs ls|cat|search`, `dochub report`: the documentation, found through the manifests;
//! - `dochub hub send|inbox|machines`: the message hub;
//! - `dochub mcp --machine NAME [--ssh HOST]`: an MCP server on stdio for agents;
//! - `dochub build CONTENT_DIR OUT_DIR` writes the prebuilt manifests and the search and navigation index;
//! - `dochub check CONTENT_DIR` lints a content tree and fails on errors.
//!
//! The server is `--url` or `DOCHUB_URL` (default `http://127.0.0.1:3000`); `DOCHUB_TOKEN` is sent
//! as `Authorization: Bearer`. An error is one line on stderr and exit status 2.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod check;
mod client;
mod content;
mod docs;
mod edge;
mod hub;
mod mcp;
mod output;
mod ssh;

use client::Client;
use output::Output;

/// Where the app listens when nothing says otherwise (`dochub-host` and `spin up` defaults).
const DEFAULT_URL: &str = "http://127.0.0.1:3000";

#[derive(Parser)]
#[command(name = "dochub", version, about = "dochub's command-line tool")]
struct Cli {
    /// Base URL of the dochub app.
    #[arg(long, global = true, env = "DOCHUB_URL", default_value = DEFAULT_URL)]
    url: String,
    /// Print the API's JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Browse, read and search the documentation.
    #[command(subcommand)]
    Docs(docs::DocsCommand),
    /// Print the latest agent report.
    Report,
    /// Send and read hub messages.
    #[command(subcommand)]
    Hub(hub::HubCommand),
    /// Serve the hub and docs tools to an MCP client over stdio.
    Mcp(McpArgs),
    /// Write the manifests and the search and navigation index of CONTENT_DIR into OUT_DIR.
    Build(content::BuildArgs),
    /// Lint CONTENT_DIR: frontmatter, _subproject.yaml, references, overviews, unreachable pages.
    /// Exit 1 on errors.
    Check(check::CheckArgs),
}

/// Arguments of `dochub mcp`.
#[derive(Args)]
struct McpArgs {
    /// This machine's hub name: messages are sent as it and its inbox is read.
    #[arg(long)]
    machine: String,
    /// The app's URL (default: --url). With --ssh: its address as seen from the SSH host.
    #[arg(long)]
    hub: Option<String>,
    /// Reach the hub through one SSH connection to this host (`user@gateway`), using the system
    /// `ssh` and its configuration.
    #[arg(long)]
    ssh: Option<String>,
    /// An extra `ssh -o` option, e.g. `Port=2222` or `IdentityFile=~/.ssh/hub` (repeatable).
    #[arg(long = "ssh-option", requires = "ssh")]
    ssh_options: Vec<String>,
}

fn main() -> ExitCode {
    // The one-line error promise holds even for a bug: no backtrace, whatever RUST_BACKTRACE says.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("error: internal error: {info}");
    }));
    let cli = Cli::parse();
    let out = Output { json: cli.json };
    let result = match cli.command {
        Command::Build(args) => content::build(&args),
        Command::Check(args) => check::check(&args),
        command => online(command, &cli.url, &out).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The commands that talk to the app.
fn online(command: Command, url: &str, out: &Output) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let token = std::env::var("DOCHUB_TOKEN")
            .ok()
            .filter(|t| !t.trim().is_empty());
        match command {
            Command::Docs(c) => docs::run(&Client::direct(url, token)?, c, out).await,
            Command::Report => docs::report(&Client::direct(url, token)?, out).await,
            Command::Hub(c) => hub::run(&Client::direct(url, token)?, c, out).await,
            Command::Mcp(a) => {
                dochub_hub::MachineName::parse(&a.machine, "--machine")?;
                let hub = a.hub.as_deref().unwrap_or(url);
                let client = match &a.ssh {
                    Some(host) => Client::through_ssh(
                        ssh::SshTunnel::new(host, a.ssh_options.clone(), hub)?,
                        token,
                    )?,
                    None => Client::direct(hub, token)?,
                };
                mcp::serve(client, a.machine).await
            }
            Command::Build(_) | Command::Check(_) => unreachable!("handled offline"),
        }
    })
}
