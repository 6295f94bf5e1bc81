//! What the client tests need besides the app: the built `dochub` binary, a Python with the
//! official MCP SDK, and a throwaway `sshd` on a loopback port.
//!
//! Python's `mcp` package comes from a virtual environment that `.ci/run` creates
//! (`$DOCHUB_CI_CACHE/mcp-venv`, or the path in `DOCHUB_MCP_PYTHON`); `sshd` from Debian's
//! `openssh-server`. When one is missing the test is skipped with a message, except under CI
//! (`CI` set), where that is an error.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::browser::in_ci;
use crate::repo_root;

/// Builds the `dochub` binary once per test process and returns its path.
pub fn dochub_bin() -> anyhow::Result<PathBuf> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| build_dochub().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

fn build_dochub() -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "dochub-cli",
            "--bin",
            "dochub",
            "--message-format=json",
        ])
        .current_dir(repo_root())
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo build -p dochub-cli")?;
    if !out.status.success() {
        bail!("cargo build -p dochub-cli failed ({})", out.status);
    }
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["target"]["name"] == "dochub"
            && let Some(exe) = msg["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    bail!("cargo build did not name the dochub executable")
}

/// Skips (returns `None` with a message) outside CI; fails under CI.
fn skip<T>(what: &str) -> Option<T> {
    assert!(!in_ci(), "{what} is required under CI");
    eprintln!("skipping: {what}");
    None
}

/// A Python interpreter that can `import mcp`, or `None` (test skipped) outside CI.
pub fn mcp_python() -> Option<PathBuf> {
    python_with(&["mcp"])
}

/// The tests' Python (`.ci/run`'s virtual environment, or `DOCHUB_MCP_PYTHON`) when it can
/// import every one of `modules`, or `None` (test skipped) outside CI.
pub fn python_with(modules: &[&str]) -> Option<PathBuf> {
    let python = std::env::var_os("DOCHUB_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_cache().join("mcp-venv").join("bin").join("python3"));
    let ok = Command::new(&python)
        .args(["-c", &format!("import {}", modules.join(", "))])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Some(python)
    } else {
        skip(&format!(
            "no Python with {} at {} (run .ci/run, or set DOCHUB_MCP_PYTHON)",
            modules.join(", "),
            python.display()
        ))
    }
}

/// `.ci/run`'s cache folder: `DOCHUB_CI_CACHE`, else `$XDG_CACHE_HOME/dochub-ci`, else
/// `~/.cache/dochub-ci`.
fn ci_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("DOCHUB_CI_CACHE") {
        return dir.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("dochub-ci")
}

/// Runs `tests/mcp/client.py` with `script` (see that file) and returns its JSON report.
pub fn run_mcp_client(python: &Path, script: &Value) -> anyhow::Result<Value> {
    let out = Command::new(python)
        .arg(repo_root().join("tests/mcp/client.py"))
        .arg(script.to_string())
        .stdin(Stdio::null())
        .output()
        .context("running the Python MCP client")?;
    if !out.status.success() {
        bail!(
            "the Python MCP client failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "the Python MCP client printed no JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A throwaway OpenSSH server on 127.0.0.1 that lets this user in with a throwaway key and
/// allows port forwarding. Stopped on drop.
pub struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Sshd {
    /// Starts `sshd`, or returns `None` (test skipped) outside CI when it is not installed.
    pub fn start_or_skip() -> anyhow::Result<Option<Sshd>> {
        let sshd = Path::new("/usr/sbin/sshd");
        if !sshd.is_file() || which("ssh").is_none() || which("ssh-keygen").is_none() {
            return Ok(skip(
                "sshd, ssh and ssh-keygen (Debian's openssh-server) are not installed",
            ));
        }
        let dir = tempfile::tempdir()?;
        for key in ["host_key", "client_key"] {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.path().join(key))
                .stdout(Stdio::null())
                .status()?;
            if !status.success() {
                bail!("ssh-keygen failed ({status})");
            }
        }
        std::fs::copy(
            dir.path().join("client_key.pub"),
            dir.path().join("authorized_keys"),
        )?;
        // sshd insists on its privilege-separation folder.
        std::fs::create_dir_all("/run/sshd").ok();
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let config = dir.path().join("sshd_config");
        let d = dir.path().display();
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
                 PidFile {d}/sshd.pid\nStrictModes no\nPubkeyAuthentication yes\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n\
                 AllowTcpForwarding yes\nLogLevel ERROR\n"
            ),
        )?;
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .args(["-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting sshd")?;
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if start.elapsed() > Duration::from_secs(10) {
                bail!("sshd did not listen on port {port}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Some(Sshd { child, port, dir }))
    }

    /// The `--ssh-option` values `dochub mcp --ssh 127.0.0.1` needs to log in.
    pub fn client_options(&self) -> Vec<String> {
        vec![
            format!("Port={}", self.port),
            format!(
                "IdentityFile={}",
                self.dir.path().join("client_key").display()
            ),
            "IdentitiesOnly=yes".into(),
            "StrictHostKeyChecking=no".into(),
            "UserKnownHostsFile=/dev/null".into(),
        ]
    }

    /// The command that drops every open connection (kills sshd's per-connection processes).
    pub fn drop_connections_argv(&self) -> Vec<String> {
        vec!["pkill".into(), "-P".into(), self.child.id().to_string()]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = Command::new("pkill")
            .args(["-P", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
