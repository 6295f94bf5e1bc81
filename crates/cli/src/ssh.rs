//! `--ssh HOST`: one connection through the system `ssh` client, kept open and reused for every
//! request, and opened again when it drops.
//!
//! The connection is a local port forward, `ssh -N -L 127.0.0.1:<free port>:<hub host:port> HOST`:
//! requests go to the local end as plain HTTP and leave the far side against the hub's local
//! address. No remote command runs, so no shell ever sees a message's text.
//!
//! The `ssh` child dies with the server however the server ends: on Linux it gets SIGKILL
//! when the server exits or is killed (the parent-death signal, set before `ssh` starts), and
//! everywhere it is killed when its connection is dropped.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};
use tokio::sync::Mutex;

/// Why the tunnel could not be opened: its own error, so that the client depends on the tunnel
/// and not the other way round.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SshError(String);

/// How long `ssh` may take to log in and open the forward.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Options every connection uses: never prompt (there is no terminal: stdio is the MCP channel),
/// fail when the forward cannot be set up, and notice a dead link within about 30 s.
const SSH_OPTIONS: &[&str] = &[
    "BatchMode=yes",
    "ExitOnForwardFailure=yes",
    "ServerAliveInterval=10",
    "ServerAliveCountMax=3",
    "LogLevel=ERROR",
];

/// An SSH port forward to the hub's address on the far side.
pub struct SshTunnel {
    /// The `ssh` destination, e.g. `user@gateway`.
    host: String,
    /// Extra `-o` options, e.g. `Port=2222`, `IdentityFile=~/.ssh/id_hub`.
    options: Vec<String>,
    /// `host:port` of the hub as seen from the far side.
    remote: String,
    /// The hub URL's path prefix (usually empty).
    prefix: String,
    /// The program to run, `ssh` unless `DOCHUB_SSH` names another.
    program: PathBuf,
    state: Mutex<Option<Connection>>,
}

struct Connection {
    child: Child,
    port: u16,
    log: tempfile::NamedTempFile,
}

impl SshTunnel {
    /// A tunnel through `host` to `hub_url` (its host and port as the far side reaches them).
    /// Nothing is started until the first request.
    pub fn new(host: &str, options: Vec<String>, hub_url: &str) -> Result<SshTunnel, SshError> {
        if host.is_empty() || host.starts_with('-') {
            return Err(SshError(format!("`{host}` is not an SSH destination")));
        }
        let url = reqwest::Url::parse(hub_url)
            .map_err(|e| SshError(format!("invalid hub URL `{hub_url}`: {e}")))?;
        if url.scheme() != "http" {
            return Err(SshError(format!(
                "the hub URL behind --ssh must be http:// (the tunnel carries plain HTTP to the hub's local address), not `{hub_url}`"
            )));
        }
        let remote_host = url
            .host_str()
            .ok_or_else(|| SshError(format!("the hub URL `{hub_url}` has no host")))?;
        let port = url.port_or_known_default().unwrap_or(80);
        Ok(SshTunnel {
            host: host.to_owned(),
            options,
            remote: format!("{remote_host}:{port}"),
            prefix: url.path().trim_end_matches('/').to_owned(),
            program: std::env::var_os("DOCHUB_SSH")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("ssh")),
            state: Mutex::new(None),
        })
    }

    /// The base URL of the local end, connecting first if there is no live connection.
    pub async fn base_url(&self) -> Result<String, SshError> {
        let mut state = self.state.lock().await;
        if let Some(c) = state.as_mut()
            && matches!(c.child.try_wait(), Ok(None))
        {
            return Ok(self.url(c.port));
        }
        let c = self.connect().await?;
        let url = self.url(c.port);
        *state = Some(c);
        Ok(url)
    }

    /// Drops the current connection (a request through it just failed: `why`) and opens a new one.
    pub async fn reconnect(&self, why: &str) -> Result<String, SshError> {
        let mut state = self.state.lock().await;
        if let Some(mut old) = state.take() {
            let _ = old.child.kill().await;
        }
        let c = self
            .connect()
            .await
            .map_err(|e| SshError(format!("{e} (reconnecting after: {why})")))?;
        let url = self.url(c.port);
        *state = Some(c);
        Ok(url)
    }

    fn url(&self, port: u16) -> String {
        format!("http://127.0.0.1:{port}{}", self.prefix)
    }

    /// Starts `ssh` on a free local port and waits until the forward accepts connections. A port
    /// taken between choosing and binding it makes `ssh` exit: then another is tried.
    async fn connect(&self) -> Result<Connection, SshError> {
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port()?;
            let log = tempfile::NamedTempFile::new()
                .map_err(|e| SshError(format!("cannot create a log file: {e}")))?;
            let stderr = log
                .reopen()
                .map_err(|e| SshError(format!("cannot open the log file: {e}")))?;
            let mut command = Command::new(&self.program);
            command.args(["-N", "-T"]);
            for o in SSH_OPTIONS
                .iter()
                .map(|s| s.to_string())
                .chain(self.options.clone())
            {
                command.arg("-o").arg(o);
            }
            command
                .arg("-L")
                .arg(format!("127.0.0.1:{port}:{}", self.remote))
                .arg("--")
                .arg(&self.host)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(stderr))
                .kill_on_drop(true);
            die_with_parent(&mut command);
            let child = command
                .spawn()
                .map_err(|e| SshError(format!("cannot run `{}`: {e}", self.program.display())))?;
            let mut c = Connection { child, port, log };
            match wait_ready(&mut c).await {
                Ok(()) => return Ok(c),
                Err(e) => last = e,
            }
        }
        Err(SshError(format!(
            "cannot open a port forward through `{}` to {}: {last}",
            self.host, self.remote
        )))
    }
}

/// Waits until the forward's local end accepts a connection, or `ssh` exits.
async fn wait_ready(c: &mut Connection) -> Result<(), String> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, c.port));
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = c.child.try_wait() {
            let log = std::fs::read_to_string(c.log.path()).unwrap_or_default();
            let log = log.split_whitespace().collect::<Vec<_>>().join(" ");
            return Err(format!("ssh exited ({status}): {log}"));
        }
        let probe = tokio::task::spawn_blocking(move || {
            TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
        });
        if probe.await.unwrap_or(false) {
            return Ok(());
        }
        if start.elapsed() > CONNECT_TIMEOUT {
            let _ = c.child.kill().await;
            return Err(format!("no forward after {}s", CONNECT_TIMEOUT.as_secs()));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Makes the child get SIGKILL when this process ends, even by SIGKILL: nothing else could end
/// an `ssh -N` that a killed server leaves behind. The signal follows the thread that spawned
/// the child; that is a worker of the server's runtime, which lives as long as the process.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = std::process::id();
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (prctl, getppid), allocating nothing.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl: then no signal will come.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

fn free_port() -> Result<u16, SshError> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| SshError(format!("no free local port: {e}")))
}
