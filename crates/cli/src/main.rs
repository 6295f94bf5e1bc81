//! `dochub`: the command-line tool of dochub.
//!
//! - `dochub build CONTENT_DIR OUT_DIR` writes the prebuilt manifests and the search and navigation index;
//! - `dochub check CONTENT_DIR` lints a content tree and fails on errors.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod content;

#[derive(Parser)]
#[command(name = "dochub", version, about = "dochub's command-line tool")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the manifests and the search and navigation index of CONTENT_DIR into OUT_DIR.
    Build(content::BuildArgs),
    /// Lint CONTENT_DIR: broken YAML, missing titles, references to nothing. Exit 1 on errors.
    Check(content::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Build(args) => content::build(&args),
        Command::Check(args) => content::check(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
