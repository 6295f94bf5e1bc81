//! Headless Chromium for end-to-end tests, driven through a chromedriver that this module starts
//! on a free loopback port, with [`fantoccini`].
//!
//! Chromium and chromedriver come from Debian's `chromium` and `chromium-driver` packages (or
//! the paths in `CHROME_BIN` and `CHROMEDRIVER`). When they are missing, [`Browser::start_or_skip`]
//! returns `None` with a message, unless the environment variable `CI` is set: there a missing
//! browser is an error, so a CI run cannot pass without having looked.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use dochub_tests::browser::Browser;
//! let Some(browser) = Browser::start_or_skip("demo").await? else { return Ok(()) };
//! browser.set_viewport(375, 812).await?;
//! browser.client().goto("http://127.0.0.1:3000/overview/").await?;
//! browser.full_page_screenshot(&dochub_tests::browser::screenshot_dir()?.join("landing-375.png")).await?;
//! assert_eq!(browser.console_errors().await?, Vec::<String>::new());
//! browser.stop().await;
//! # Ok(()) }
//! ```

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use serde_json::{Value as Json, json};

/// Chromium's flags: headless, and nothing that reaches the network on its own.
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1440,900",
];

/// How long chromedriver may take to answer its status endpoint.
const DRIVER_START: Duration = Duration::from_secs(30);

/// A headless Chromium session and the chromedriver behind it.
pub struct Browser {
    client: Client,
    driver: Child,
    // Holds the fresh Chromium profile until the browser is gone.
    _profile: tempfile::TempDir,
}

/// Whether the environment variable `CI` says this is a CI run.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Where tests write screenshots: `DOCHUB_SCREENSHOT_DIR`, else `dochub-screenshots` in the
/// system's temporary folder (never inside the repository). Created if needed.
pub fn screenshot_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os("DOCHUB_SCREENSHOT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("dochub-screenshots"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The first of `env`'s path, the absolute `paths` and the `names` found on `PATH` that exists.
fn find_program(env: &str, paths: &[&str], names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env).map(PathBuf::from) {
        return p.is_file().then_some(p);
    }
    let found = paths.iter().map(PathBuf::from).find(|p| p.is_file());
    found.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
            .find(|p| p.is_file())
    })
}

impl Browser {
    /// Starts chromedriver and a fresh headless Chromium. Returns `None` (after saying why on
    /// stderr) when either is not installed and `CI` is not set; an error when `CI` is set.
    pub async fn start_or_skip(test: &str) -> anyhow::Result<Option<Browser>> {
        // Debian's /usr/bin/chromium is a wrapper script; the binary itself is preferred.
        let chromium = find_program(
            "CHROME_BIN",
            &["/usr/lib/chromium/chromium"],
            &["chromium", "chromium-browser", "google-chrome"],
        );
        let driver = find_program("CHROMEDRIVER", &[], &["chromedriver"]);
        let (Some(chromium), Some(driver)) = (chromium, driver) else {
            let why = "chromium and chromedriver are needed (Debian: apt-get install chromium chromium-driver; \
                       or set CHROME_BIN and CHROMEDRIVER)";
            if in_ci() {
                bail!("{test}: {why}, and CI is set, so this test may not be skipped");
            }
            eprintln!("skipping {test}: {why}");
            return Ok(None);
        };
        Browser::start(&chromium, &driver).await.map(Some)
    }

    /// Starts `driver` on a free loopback port and opens a session of `chromium` through it.
    pub async fn start(chromium: &Path, driver: &Path) -> anyhow::Result<Browser> {
        let profile = tempfile::tempdir()?;
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut driver = Command::new(driver)
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                profile.path().join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own process group, so that dropping a Browser can end the driver and the
            // Chromium processes it started, and nothing else.
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", driver.display()))?;
        let base = format!("http://127.0.0.1:{port}/");
        if let Err(e) = wait_ready(&base, &mut driver).await {
            kill_group(&mut driver);
            return Err(e);
        }

        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!(
            "--user-data-dir={}",
            profile.path().join("profile").display()
        ));
        let mut caps = Capabilities::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": chromium, "args": args }),
        );
        // Keeps console messages, uncaught errors, CSP violations and failed loads for se/log.
        caps.insert("goog:loggingPrefs".into(), json!({ "browser": "ALL" }));
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&base)
            .await;
        match client {
            Ok(client) => Ok(Browser {
                client,
                driver,
                _profile: profile,
            }),
            Err(e) => {
                kill_group(&mut driver);
                Err(anyhow::anyhow!("opening a Chromium session: {e}"))
            }
        }
    }

    /// The WebDriver client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Runs a Chrome DevTools Protocol command through chromedriver.
    pub async fn cdp(&self, cmd: &str, params: Json) -> anyhow::Result<Json> {
        let body = json!({ "cmd": cmd, "params": params });
        self.session_post("goog/cdp/execute", body)
            .await
            .with_context(|| format!("CDP {cmd}"))
    }

    /// Makes the viewport exactly `width` x `height` CSS pixels (a phone's when narrower than
    /// 600 px, so the page's `<meta name=viewport>` applies as on a phone).
    pub async fn set_viewport(&self, width: u32, height: u32) -> anyhow::Result<()> {
        self.cdp(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600 }),
        )
        .await?;
        Ok(())
    }

    /// Emulates `prefers-color-scheme: dark` (or light).
    pub async fn set_dark(&self, dark: bool) -> anyhow::Result<()> {
        let value = if dark { "dark" } else { "light" };
        self.cdp(
            "Emulation.setEmulatedMedia",
            json!({ "features": [{ "name": "prefers-color-scheme", "value": value }] }),
        )
        .await?;
        Ok(())
    }

    /// Waits until the page at `url` is open: a click or a submitted form may not have begun
    /// its navigation when WebDriver answers, so reading the address at once can find the
    /// page before it.
    pub async fn wait_for_url(&self, url: &str) -> anyhow::Result<()> {
        let url = url::Url::parse(url)?;
        self.client
            .wait()
            .for_url(&url)
            .await
            .with_context(|| format!("waiting for {url}"))
    }

    /// Evaluates `script` (a function body; `return` gives the result) in the page.
    pub async fn eval(&self, script: &str) -> anyhow::Result<Json> {
        Ok(self.client.execute(script, Vec::new()).await?)
    }

    /// Saves a PNG of the whole page, not only the viewport, at the current viewport width; the
    /// viewport's height is restored afterwards.
    pub async fn full_page_screenshot(&self, path: &Path) -> anyhow::Result<Vec<u8>> {
        let size = self
            .eval("return [window.innerWidth, window.innerHeight, document.documentElement.scrollHeight];")
            .await?;
        let dim = |i: usize| size[i].as_u64().context("viewport size is a number");
        let (width, height, full) = (dim(0)?, dim(1)?, dim(2)?);
        let width = u32::try_from(width)?;
        self.set_viewport(width, u32::try_from(full.max(height))?)
            .await?;
        let png = self.client.screenshot().await;
        self.set_viewport(width, u32::try_from(height)?).await?;
        let png = png?;
        std::fs::write(path, &png).with_context(|| format!("writing {}", path.display()))?;
        Ok(png)
    }

    /// Every browser log entry since the last call, as `LEVEL message`.
    pub async fn log(&self) -> anyhow::Result<Vec<String>> {
        let entries = self
            .session_post("se/log", json!({ "type": "browser" }))
            .await
            .context("reading the browser log")?;
        let entries = entries.as_array().context("the browser log is a list")?;
        Ok(entries
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["level"].as_str().unwrap_or("?"),
                    e["message"].as_str().unwrap_or("")
                )
            })
            .collect())
    }

    /// The errors in the browser log since the last call: `console.error`, uncaught exceptions,
    /// failed loads and content-security-policy violations all log at level `SEVERE`.
    pub async fn console_errors(&self) -> anyhow::Result<Vec<String>> {
        Ok(self
            .log()
            .await?
            .into_iter()
            .filter(|e| e.starts_with("SEVERE "))
            .collect())
    }

    /// Closes the session and ends chromedriver.
    pub async fn stop(mut self) {
        let client = self.client.clone();
        let _ = client.close().await;
        kill_group(&mut self.driver);
    }

    async fn session_post(&self, path: &'static str, body: Json) -> anyhow::Result<Json> {
        Ok(self.client.issue_cmd(SessionPost { path, body }).await?)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        kill_group(&mut self.driver);
    }
}

/// Ends the driver's process group (the driver and the Chromium it started) and reaps it.
fn kill_group(driver: &mut Child) {
    if let Ok(Some(_)) = driver.try_wait() {
        return;
    }
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", driver.id())])
        .stderr(Stdio::null())
        .status();
    let _ = driver.kill();
    let _ = driver.wait();
}

/// Polls chromedriver's `/status` until it reports ready.
async fn wait_ready(base: &str, driver: &mut Child) -> anyhow::Result<()> {
    let deadline = Instant::now() + DRIVER_START;
    let http = reqwest::Client::new();
    loop {
        if let Some(status) = driver.try_wait()? {
            bail!("chromedriver exited at start: {status}");
        }
        if let Ok(res) = http.get(format!("{base}status")).send().await
            && let Ok(body) = res.json::<Json>().await
            && body["value"]["ready"] == json!(true)
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("chromedriver did not become ready within {DRIVER_START:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A POST to a session endpoint that fantoccini has no method for (`se/log`, `goog/cdp/execute`).
#[derive(Debug)]
struct SessionPost {
    path: &'static str,
    body: Json,
}

impl WebDriverCompatibleCommand for SessionPost {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}
