//! `dochub-host`: run a `spin.toml` locally, as `spin up` does.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use clap::builder::RangedU64ValueParser;
use dochub_host::emulate::Platform;
use dochub_host::limits::{InstanceReuse, Limits, parse_duration};

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
    /// Mount directories in place, so that edits show without a restart (as `spin up
    /// --direct-mounts`, which also resolves relative sources against the working directory:
    /// run it from the app folder); by default every mounted file is copied at start, as `spin
    /// up` does.
    #[arg(long)]
    direct_mounts: bool,
    /// Set an environment variable in every component, as `spin up --env KEY=VALUE`.
    #[arg(long = "env", short = 'e', value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Connections served at once; more wait until one closes.
    #[arg(long, default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Time a connection has to send a request head, from when it opens or finished its last
    /// response (also the idle keep-alive timeout); 0: none.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    header_read_timeout: Duration,
    /// Time a component has to set its response (then 504), and then the longest its body may
    /// send nothing, or its code run in all, before it is cut off; 0: none.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    request_timeout: Duration,
    /// Memory one instance may grow to, in bytes (as `spin up --max-instance-memory`).
    #[arg(long, default_value_t = Limits::default().max_instance_memory)]
    max_instance_memory: usize,
    /// Time making a PostgreSQL connection, or checking a pooled one, may take.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pg_connect_timeout: Duration,
    /// Requests one instance of a WASIp3 component serves before it is dropped (as `spin up`;
    /// a WASIp2 component gets a new instance for every request).
    #[arg(long, default_value_t = InstanceReuse::default().max_requests, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_instance_reuse_count: usize,
    /// Requests one instance of a WASIp3 component serves at once (as `spin up`).
    #[arg(long, default_value_t = InstanceReuse::default().max_concurrent, value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    max_instance_concurrent_reuse_count: usize,
    /// How long an idle instance of a WASIp3 component is kept for the next request (as `spin
    /// up`).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    idle_instance_timeout: Duration,
    /// Apply a Spin edge host's published limits (imports, app size, memory, duration, body
    /// sizes, key-value quotas) over the flags above: `akamai-functions`.
    #[arg(long, value_name = "PLATFORM", value_parser = Platform::from_name)]
    emulate: Option<Platform>,
}

impl Args {
    fn limits(&self) -> Limits {
        let nonzero = |d: Duration| (!d.is_zero()).then_some(d);
        Limits {
            max_connections: self.max_connections.max(1),
            header_read_timeout: nonzero(self.header_read_timeout),
            request_timeout: nonzero(self.request_timeout),
            max_instance_memory: self.max_instance_memory,
            pg_connect_timeout: self.pg_connect_timeout,
            max_body_bytes: None,
            instance_reuse: InstanceReuse {
                max_requests: self.max_instance_reuse_count,
                max_concurrent: self.max_instance_concurrent_reuse_count,
                idle_timeout: self.idle_instance_timeout,
            },
        }
    }
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
    let limits = args.limits();
    let host = dochub_host::start(dochub_host::HostOptions {
        manifest: args.manifest,
        listen: args.listen,
        state_dir: args.state_dir,
        runtime_config: args.runtime_config_file,
        variables: Default::default(),
        env: args.env,
        limits,
        direct_mounts: args.direct_mounts,
        emulate: args.emulate,
    })
    .await?;
    if let Some(platform) = args.emulate {
        println!("Emulating {}: its published limits apply", platform.title());
    }
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
    shutdown_signal().await?;
    eprintln!("Shutting down: finishing requests in flight (again to stop at once)");
    tokio::select! {
        _ = host.shutdown() => {}
        _ = shutdown_signal() => eprintln!("Stopped without waiting"),
    }
    Ok(())
}

/// Waits for SIGINT (Ctrl-C) or SIGTERM (what `kill`, systemd and container runtimes send).
async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::select! {
            interrupted = tokio::signal::ctrl_c() => interrupted?,
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await?;
    Ok(())
}
