//! `dochub-host`: run a `spin.toml` locally, as `spin up` does.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Runs the HTTP components of a Spin app under wasmtime.
#[derive(Parser)]
#[command(name = "dochub-host", version)]
struct Args {
    /// The application manifest.
    #[arg(long, short = 'f', default_value = "spin.toml")]
    manifest: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// Run each component's build command first (like `spin build`).
    #[arg(long)]
    build: bool,
    /// Spin runtime-config file (e.g. a Redis key-value store).
    #[arg(long)]
    runtime_config_file: Option<PathBuf>,
    /// Folder for the SQLite key-value store; default `.spin` beside the manifest.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Set an environment variable in every component, as `spin up --env KEY=VALUE`.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
}

fn parse_env(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("`{arg}` is not KEY=VALUE")),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "dochub_host=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    // An expected failure (a build error, a bad manifest, a port in use) is one line, not the
    // backtrace `anyhow` prints from `main` when RUST_BACKTRACE is set.
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    if args.build {
        dochub_host::build_components(&args.manifest)?;
    }
    let manifest = dochub_host::manifest::AppManifest::from_file(&args.manifest)?;
    let host = dochub_host::start(dochub_host::HostOptions {
        manifest: args.manifest,
        listen: args.listen,
        state_dir: args.state_dir,
        runtime_config: args.runtime_config_file,
        variables: Default::default(),
        env: args.env,
    })
    .await?;
    println!("Serving http://{}", host.addr());
    println!("Available Routes:");
    for trigger in &manifest.http_triggers {
        println!(
            "  {}: http://{}{}",
            trigger.component,
            host.addr(),
            trigger.route
        );
    }
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!("Shutting down");
    host.shutdown().await;
    Ok(())
}
