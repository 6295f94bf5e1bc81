//! End-to-end test harness: the real `.wasm` components under the local host, over HTTP.
//!
//! Each test starts its own host in-process on 127.0.0.1:0 from a manifest derived from the
//! repository's `spin.toml`, with the content mount pointed at a fixture tree when asked.
//!
//! With `DOCHUB_EMULATE=akamai-functions`, every app is the edge build (`spin-edge.toml`) under
//! the host's `--emulate akamai-functions`, its hub on a fresh PostgreSQL database ([`PgDb`]);
//! tests of what the edge build leaves out skip, saying why ([`skip_on_edge`]). With both set,
//! `spin up` runs the edge build.
//!
//! With `SPIN_BIN=<path to spin>` in the environment, the same tests run under a real
//! `$SPIN_BIN up` instead ([`serve`]): one child process per app on a free loopback port, with
//! the same manifest, state folder (`--state-dir`), runtime config (`--runtime-config-file`),
//! environment (`-e KEY=VALUE`) and variables (`SPIN_VARIABLE_<NAME>`), stopped when the test
//! ends. Tests that inspect the host itself skip there, saying why ([`skip_under_spin`]).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use dochub_tests::{TestApp, fixture};
//! let app = TestApp::builder().content(fixture("basic")).start().await?;
//! let res = reqwest::get(app.url("/api/manifest")).await?;
//! assert_eq!(res.status(), 200);
//! app.stop().await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod browser;
pub mod clients;
pub mod hostile;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::Context;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A fixture content tree under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests").join("fixtures").join(name)
}

/// Copies a fixture tree into `to` (made if missing), so a test can change it freely.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
/// A copy of the `versions` fixture, with the `_overviews` folder the overview component
/// mounts: the versioned project that several suites serve.
pub fn versions_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_tree(&fixture("versions"), dir.path());
    std::fs::create_dir_all(dir.path().join("_overviews")).expect("mkdir");
    dir
}

/// Builds the components once per test process with the manifest's own build commands.
pub fn ensure_components_built() -> anyhow::Result<()> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            dochub_host::build_components(&repo_root().join(manifest_name()))
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(|e| anyhow::anyhow!(e))
}

/// The benchmarks' floor (`benches/floor`): a component that answers `200 ok` and does nothing
/// else, built and served like the app (under `spin up` when `SPIN_BIN` is set). What a route
/// costs beyond it is dochub's own work.
pub async fn serve_floor() -> anyhow::Result<Floor> {
    let manifest = repo_root().join("benches/floor/spin.toml");
    let to_build = manifest.clone();
    tokio::task::spawn_blocking(move || dochub_host::build_components(&to_build)).await??;
    let state = tempfile::tempdir()?;
    let server = serve(dochub_host::HostOptions {
        manifest,
        listen: "127.0.0.1:0".parse()?,
        state_dir: Some(state.path().to_owned()),
        ..dochub_host::HostOptions::default()
    })
    .await?;
    Ok(Floor {
        server,
        _state: state,
    })
}

/// The floor component, served; see [`serve_floor`].
pub struct Floor {
    /// The running server.
    pub server: Server,
    _state: tempfile::TempDir,
}

impl Floor {
    /// `http://<addr>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// Stops it.
    pub async fn stop(self) {
        self.server.shutdown().await;
    }
}

/// The edge host the tests emulate, from `DOCHUB_EMULATE`; `None`: the default build as `spin up`
/// runs it.
pub fn emulated() -> Option<dochub_host::emulate::Platform> {
    let name = std::env::var("DOCHUB_EMULATE")
        .ok()
        .filter(|v| !v.is_empty())?;
    Some(
        dochub_host::emulate::Platform::from_name(&name)
            .unwrap_or_else(|e| panic!("DOCHUB_EMULATE: {e}")),
    )
}

/// The manifest the tests run: `spin-edge.toml` when emulating an edge host, else `spin.toml`.
pub fn manifest_name() -> &'static str {
    if emulated().is_some() {
        "spin-edge.toml"
    } else {
        "spin.toml"
    }
}

/// True (after printing why) when the tests run the edge build ([`emulated`]), for tests of what
/// it leaves out (SQLite, key-value atomics, runtime config) or of the host's own defaults.
pub fn skip_on_edge(reason: &str) -> bool {
    if let Some(platform) = emulated() {
        eprintln!("skipping the edge build ({}): {reason}", platform.name());
        return true;
    }
    false
}

/// The PostgreSQL server every machine of the project has (trust auth), as its administrator.
pub const PG_ADMIN: &str = "host=127.0.0.1 port=5432 user=postgres dbname=test";

/// See [`crowded_turn`].
static CROWDED: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// A turn for a test that sends many requests at once, held from before its hosts start until
/// they stop: such tests run one at a time. A host pools up to 64 connections per database
/// address, as Spin does, and the shared PostgreSQL server allows 100 (`max_connections`'
/// default), so two crowded tests at once can exhaust it and the loser answers 503. Taken once
/// per test, never while holding another: a test that starts several hosts (or several
/// [`PgDb`]s, as every app does on the edge build) takes one turn for all of them.
pub async fn crowded_turn() -> tokio::sync::SemaphorePermit<'static> {
    CROWDED
        .acquire()
        .await
        .expect("the semaphore is never closed")
}

/// A fresh PostgreSQL database for one test, dropped (with its connections) when this is.
pub struct PgDb {
    name: String,
    /// Its URL as Spin takes it (`sslmode=disable`: the local server's certificate is
    /// self-signed, and Spin verifies certificates).
    pub url: String,
}

impl PgDb {
    /// A connection of its own to this database, as an operator's SQL shell or another
    /// instance would have.
    pub async fn connect(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
            .await
            .expect("connect to the test database");
        tokio::spawn(connection);
        client
    }

    /// `None` (the test is skipped) when no PostgreSQL answers, outside CI.
    pub async fn create() -> Option<Self> {
        if !service_available("127.0.0.1:5432", "PostgreSQL") {
            return None;
        }
        let (client, connection) = tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls)
            .await
            .expect("connect to PostgreSQL");
        tokio::spawn(connection);
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("hub_test_{}_{nanos:x}_{n}", std::process::id());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create a test database");
        let url = format!("postgres://postgres@127.0.0.1:5432/{name}?sslmode=disable");
        Some(Self { name, url })
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs inside the test's runtime: a thread of its own may block.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async {
                if let Ok((client, connection)) =
                    tokio_postgres::connect(PG_ADMIN, tokio_postgres::NoTls).await
                {
                    tokio::spawn(connection);
                    let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                    let _ = client.batch_execute(&drop).await;
                }
            });
        })
        .join();
    }
}

/// The `spin` binary to run the tests under, from `SPIN_BIN`; `None`: the in-process host.
pub fn spin_bin() -> Option<PathBuf> {
    std::env::var_os("SPIN_BIN")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// True (after printing why) when the tests run under a real `spin up`, for tests that need the
/// in-process host itself (its start-up errors, its internals).
pub fn skip_under_spin(reason: &str) -> bool {
    if spin_bin().is_some() {
        eprintln!("skipping under SPIN_BIN: {reason}");
        return true;
    }
    false
}

/// A running app: the in-process host, or a `spin up` child process.
pub enum Server {
    /// `dochub_host` in this process.
    InProcess(dochub_host::RunningHost),
    /// A real `spin up`.
    Spin(SpinUp),
}

impl Server {
    /// The address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        match self {
            Server::InProcess(host) => host.addr(),
            Server::Spin(spin) => spin.addr,
        }
    }

    /// Stops it (for `spin up`: SIGTERM to its process group, then SIGKILL after 10 s).
    pub async fn shutdown(self) {
        match self {
            Server::InProcess(host) => host.shutdown().await,
            Server::Spin(spin) => drop(spin),
        }
    }
}

/// Serves `options` in-process, or under `$SPIN_BIN up` when `SPIN_BIN` is set.
pub async fn serve(options: dochub_host::HostOptions) -> anyhow::Result<Server> {
    match spin_bin() {
        None => Ok(Server::InProcess(dochub_host::start(options).await?)),
        Some(bin) => Ok(Server::Spin(
            tokio::task::spawn_blocking(move || SpinUp::start(&bin, &options)).await??,
        )),
    }
}

/// A server in a child process, in a process group of its own: a `spin up` (Spin runs its
/// trigger as a child), or the README's `cargo run` of the host.
pub struct SpinUp {
    child: std::process::Child,
    addr: std::net::SocketAddr,
    log: PathBuf,
    /// Where Spin writes each component's stdout and stderr (`<state dir>/logs`).
    component_logs: Option<PathBuf>,
    _scratch: tempfile::TempDir,
}

/// How long a `spin up` may take to load the app and listen.
const SPIN_START_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

impl SpinUp {
    fn start(bin: &Path, options: &dochub_host::HostOptions) -> anyhow::Result<Self> {
        let addr = free_loopback_addr()?;
        let mut cmd = std::process::Command::new(bin);
        cmd.arg("up")
            .arg("--listen")
            .arg(addr.to_string())
            .arg("-f")
            .arg(&options.manifest);
        if let Some(dir) = &options.state_dir {
            cmd.arg("--state-dir").arg(dir);
        }
        if let Some(config) = &options.runtime_config {
            cmd.arg("--runtime-config-file").arg(config);
        }
        if options.direct_mounts {
            cmd.arg("--direct-mounts");
        }
        for (key, value) in &options.env {
            cmd.arg("-e").arg(format!("{key}={value}"));
        }
        let reuse = &options.limits.instance_reuse;
        if *reuse != dochub_host::limits::InstanceReuse::default() {
            // Spin v4.0.2 tries the `s` suffix before `ms`, so it refuses `1000ms` as `1000m`
            // seconds: only whole seconds reach it.
            let idle = reuse.idle_timeout;
            anyhow::ensure!(
                idle.subsec_nanos() == 0,
                "`spin up` takes --idle-instance-timeout in whole seconds only, not {idle:?}"
            );
            cmd.arg("--max-instance-reuse-count")
                .arg(reuse.max_requests.to_string())
                .arg("--max-instance-concurrent-reuse-count")
                .arg(reuse.max_concurrent.to_string())
                .arg("--idle-instance-timeout")
                .arg(idle.as_secs().to_string());
        }
        for (name, value) in &options.variables {
            cmd.env(format!("SPIN_VARIABLE_{}", name.to_uppercase()), value);
        }
        let component_logs = options.state_dir.as_ref().map(|dir| dir.join("logs"));
        Self::spawn(cmd, addr, component_logs, SPIN_START_TIMEOUT)
    }

    /// Runs `cmd` (a server told to listen on `addr`) in a process group of its own, its output
    /// kept in a log, and waits up to `timeout` until `addr` accepts connections. Dropping it
    /// stops the whole group; a failing test prints the log and the files in `component_logs`.
    pub fn spawn(
        mut cmd: std::process::Command,
        addr: std::net::SocketAddr,
        component_logs: Option<PathBuf>,
        timeout: std::time::Duration,
    ) -> anyhow::Result<Self> {
        use std::os::unix::process::CommandExt;
        let scratch = tempfile::tempdir()?;
        let log = scratch.path().join("server.log");
        let log_file = std::fs::File::create(&log)?;
        cmd.stdin(std::process::Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .process_group(0);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
        let mut server = SpinUp {
            child,
            addr,
            log,
            component_logs,
            _scratch: scratch,
        };
        let program = cmd.get_program().to_string_lossy().into_owned();
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(status) = server.child.try_wait()? {
                anyhow::bail!(
                    "`{program}` exited ({status}) before listening:\n{}",
                    server.log_text()
                );
            }
            if std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200))
                .is_ok()
            {
                return Ok(server);
            }
            if std::time::Instant::now() > deadline {
                anyhow::bail!(
                    "`{program}` did not listen on {addr} in time:\n{}",
                    server.log_text()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// What the server printed so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// What the server printed so far, then what its components wrote to their log files
    /// (Spin keeps those apart; `dochub-host` prints them with its own).
    pub fn logs(&self) -> String {
        let mut text = self.log_text();
        for (_, logged) in self.component_log_files() {
            text.push_str(&logged);
        }
        text
    }

    /// Each component log file's name and text.
    fn component_log_files(&self) -> Vec<(String, String)> {
        let files = self
            .component_logs
            .as_ref()
            .and_then(|d| std::fs::read_dir(d).ok());
        files
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                (entry.file_name().to_string_lossy().into_owned(), text)
            })
            .collect()
    }

    fn signal_group(&self, signal: &str) {
        // The group's id is the child's PID: this ends only the processes this harness started.
        let _ = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg("--")
            .arg(format!("-{}", self.child.id()))
            .status();
    }
}

impl Drop for SpinUp {
    fn drop(&mut self) {
        // A failing test's own output then says what Spin logged (its trap, its error).
        if std::thread::panicking() {
            eprintln!("--- server log ---\n{}", self.log_text());
            for (name, text) in self.component_log_files() {
                if !text.is_empty() {
                    eprintln!("--- {name} ---\n{text}");
                }
            }
        }
        self.signal_group("TERM");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        self.signal_group("KILL");
        let _ = self.child.wait();
    }
}

/// A running app for one test.
pub struct TestApp {
    base: String,
    host: Server,
    dir: tempfile::TempDir,
    /// The hub's database in the edge build, dropped after the host stops.
    _hub_db: Option<PgDb>,
}

/// Configures a [`TestApp`].
#[derive(Default)]
pub struct AppBuilder {
    content: Option<PathBuf>,
    env: Vec<(String, String)>,
    mounts: Vec<(PathBuf, String)>,
    variables: HashMap<String, String>,
    state_dir: Option<PathBuf>,
    runtime_config: Option<PathBuf>,
    undeclared: Vec<String>,
    direct_mounts: bool,
    request_timeout: Option<std::time::Duration>,
}

impl AppBuilder {
    /// The in-process host's request deadline (`--request-timeout`); Spin has none.
    pub fn request_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Serves this content tree instead of the bundled `content/` (every component's mount of
    /// `content`, or of a folder inside it, is redirected into this tree).
    pub fn content(mut self, dir: impl Into<PathBuf>) -> Self {
        self.content = Some(dir.into());
        self
    }

    /// Adds an environment variable to every component.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Mounts a host directory read-only at `guest` in every component.
    pub fn mount(mut self, host: impl Into<PathBuf>, guest: &str) -> Self {
        self.mounts.push((host.into(), guest.into()));
        self
    }

    /// Sets an application variable (as `SPIN_VARIABLE_<NAME>` would).
    pub fn variable(mut self, name: &str, value: &str) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }

    /// Removes `name` from every component's `[component.*.variables]`, so that reading it
    /// fails in the component (Spin answers `Undefined` for a variable a component does not
    /// declare).
    pub fn undeclare_variable(mut self, name: &str) -> Self {
        self.undeclared.push(name.into());
        self
    }

    /// Keeps the key-value store in this folder (default: a fresh temporary folder).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Mounts folders in place (`--direct-mounts`, under `spin up` too), so that content edited
    /// after the start is seen; by default each start copies them, as `spin up` does.
    pub fn direct_mounts(mut self) -> Self {
        self.direct_mounts = true;
        self
    }

    /// Uses this Spin runtime-config file.
    pub fn runtime_config(mut self, path: impl Into<PathBuf>) -> Self {
        self.runtime_config = Some(path.into());
        self
    }

    /// Builds the components if needed, writes the derived manifest and starts the host.
    pub async fn start(mut self) -> anyhow::Result<TestApp> {
        ensure_components_built()?;
        // The edge build keeps the hub in PostgreSQL: each app gets a database of its own.
        let mut hub_db = None;
        if emulated().is_some() && !self.variables.contains_key("hub_database_url") {
            let db = PgDb::create()
                .await
                .context("the edge build's hub needs PostgreSQL on 127.0.0.1:5432")?;
            self.variables
                .insert("hub_database_url".into(), db.url.clone());
            hub_db = Some(db);
        }
        let dir = tempfile::tempdir()?;
        let manifest = self.derive_manifest(dir.path())?;
        let manifest_path = dir.path().join("spin.toml");
        std::fs::write(&manifest_path, manifest)?;
        let state_dir = self
            .state_dir
            .clone()
            .unwrap_or_else(|| dir.path().join(".spin"));
        let host = serve(dochub_host::HostOptions {
            manifest: manifest_path,
            listen: "127.0.0.1:0".parse()?,
            state_dir: Some(state_dir),
            runtime_config: self.runtime_config.clone(),
            variables: self.variables.clone(),
            env: Vec::new(),
            limits: dochub_host::Limits {
                request_timeout: self
                    .request_timeout
                    .or(dochub_host::Limits::default().request_timeout),
                ..dochub_host::Limits::default()
            },
            direct_mounts: self.direct_mounts,
            emulate: emulated(),
        })
        .await?;
        Ok(TestApp {
            base: format!("http://{}", host.addr()),
            host,
            dir,
            _hub_db: hub_db,
        })
    }

    /// How the derived manifest names `source`, a path in the app folder `scratch`: relative,
    /// or absolute for `--direct-mounts`, where `spin up` resolves a relative source against
    /// its working directory instead of the app folder.
    fn mount_source(&self, scratch: &Path, source: String) -> String {
        if self.direct_mounts {
            scratch.join(source).to_string_lossy().into_owned()
        } else {
            source
        }
    }

    fn derive_manifest(&self, scratch: &Path) -> anyhow::Result<String> {
        let root = repo_root();
        let text = std::fs::read_to_string(root.join(manifest_name()))?;
        let mut doc: toml::Table = toml::from_str(&text)?;
        let components = doc
            .get_mut("component")
            .and_then(|c| c.as_table_mut())
            .context("spin.toml has no components")?;
        for (_, component) in components.iter_mut() {
            let component = component.as_table_mut().context("component is a table")?;
            let source = component
                .get("source")
                .and_then(|s| s.as_str())
                .context("component source")?;
            let source = absolute(&root, source);
            component.insert("source".into(), source.into());
            component.remove("build");
            let mut files = Vec::new();
            if let Some(existing) = component.get("files").and_then(|f| f.as_array()) {
                for entry in existing {
                    let Some(table) = entry.as_table() else {
                        files.push(entry.clone());
                        continue;
                    };
                    let mut table = table.clone();
                    let source = table.get("source").and_then(|s| s.as_str()).unwrap_or("");
                    let source = match (&self.content, source.strip_prefix("content")) {
                        (Some(content), Some(rest)) if rest.is_empty() || rest.starts_with('/') => {
                            let redirected = content.join(rest.trim_start_matches('/'));
                            // A fixture need not carry every folder spin.toml mounts (e.g.
                            // `_overviews`): an empty one stands in, as an empty folder would.
                            if redirected.exists() {
                                link_into(scratch, &redirected)?
                            } else {
                                let empty = format!("empty/{}", files.len());
                                std::fs::create_dir_all(scratch.join(&empty))?;
                                empty
                            }
                        }
                        _ => link_into(scratch, Path::new(&absolute(&root, source)))?,
                    };
                    table.insert("source".into(), self.mount_source(scratch, source).into());
                    files.push(table.into());
                }
            }
            for (host, guest) in &self.mounts {
                let mut table = toml::Table::new();
                let source = link_into(scratch, host)?;
                table.insert("source".into(), self.mount_source(scratch, source).into());
                table.insert("destination".into(), guest.clone().into());
                files.push(table.into());
            }
            component.insert("files".into(), files.into());
            if let Some(variables) = component
                .get_mut("variables")
                .and_then(|v| v.as_table_mut())
            {
                for name in &self.undeclared {
                    variables.remove(name);
                }
            }
            let env = component
                .entry("environment")
                .or_insert_with(|| toml::Table::new().into())
                .as_table_mut()
                .context("environment is a table")?;
            for (key, value) in &self.env {
                env.insert(key.clone(), value.clone().into());
            }
        }
        Ok(toml::to_string(&doc)?)
    }
}

/// A path inside the app folder `scratch` that leads to `target`: `spin up` refuses to mount
/// files from outside the app folder, so each mount source is a symbolic link beside the derived
/// manifest.
fn link_into(scratch: &Path, target: &Path) -> anyhow::Result<String> {
    let links = scratch.join("mounts");
    std::fs::create_dir_all(&links)?;
    let name = std::fs::read_dir(&links)?.count().to_string();
    std::os::unix::fs::symlink(target, links.join(&name))
        .with_context(|| format!("cannot link {} into the test app", target.display()))?;
    Ok(format!("mounts/{name}"))
}

fn absolute(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        path.to_string()
    } else {
        path_string(&root.join(p))
    }
}

fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

impl TestApp {
    /// Starts configuring an app.
    pub fn builder() -> AppBuilder {
        AppBuilder::default()
    }

    /// The app's base URL, `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The full URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The address the host listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.host.addr()
    }

    /// The temporary folder holding the derived manifest (and, by default, the state).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The running server (in-process host or `spin up`).
    pub fn server(&self) -> &Server {
        &self.host
    }

    /// Stops the host (then drops the hub's database, if it has one of its own).
    pub async fn stop(self) {
        self.host.shutdown().await;
    }
}

/// A loopback address with a port that was free a moment ago, for a server in a child process.
pub fn free_loopback_addr() -> anyhow::Result<std::net::SocketAddr> {
    let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(probe.local_addr()?)
}

/// Whether a local service (PostgreSQL, Redis) answers on `addr`. Without it, a test that needs
/// it is skipped with a message on a developer's machine, and fails under CI (`CI` set), where
/// the services are part of the environment.
pub fn service_available(addr: &str, name: &str) -> bool {
    let reachable = addr
        .parse::<std::net::SocketAddr>()
        .ok()
        .and_then(|a| {
            std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).ok()
        })
        .is_some();
    if !reachable {
        assert!(
            std::env::var_os("CI").is_none(),
            "{name} is required under CI but nothing answers on {addr}"
        );
        eprintln!("skipping: {name} is not running on {addr}");
    }
    reachable
}
