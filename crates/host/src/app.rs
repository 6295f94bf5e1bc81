//! Loading an app: compile each component once, check its imports, resolve its configuration.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};
use wasmtime_wasi_http::handler::{self, ProxyHandler};
use wasmtime_wasi_http::p2::bindings::ProxyPre;
use wasmtime_wasi_http::p3::bindings::ServicePre;

use crate::bindings::{
    postgres, spin_key_value, spin_variables, spin_variables_v3, sqlite_v2, sqlite_v3,
    wasi_atomics, wasi_batch, wasi_store,
};
use crate::component::ComponentConfig;
use crate::deadline::spawn_epoch_ticker;
use crate::emulate::{self, KvMeter, Platform};
use crate::kv::{KvCtx, KvStores, StoreConfig};
use crate::limits::Limits;
use crate::manifest::{AppManifest, FileMount};
use crate::p3::P3Component;
use crate::postgres::{PgCtx, PgPools};
use crate::routes::Router;
use crate::sqlite::{DatabaseConfig, SqliteCtx, SqliteDatabases};
use crate::staging;
use crate::state::{Services, State};
use crate::variables::{VariablesCtx, VariablesV3};

/// A loaded component: its instance template and configuration.
pub struct LoadedComponent {
    /// What serves its requests.
    pub(crate) handler: Handler,
    /// Configuration shared by its requests.
    pub config: Arc<ComponentConfig>,
}

/// How a component is called, by the `wasi:http` handler it exports.
pub(crate) enum Handler {
    /// `wasi:http/incoming-handler@0.2`: a new instance for every request.
    P2(ProxyPre<State>),
    /// `wasi:http/handler@0.3` (Spin v4.0.2's release candidate): instances reused
    /// ([`crate::limits::InstanceReuse`]).
    P3(ProxyHandler<P3Component>),
}

/// Everything a running host needs, built once.
pub struct App {
    /// The engine all components run on.
    pub engine: Engine,
    /// The HTTP routing table.
    pub router: Router,
    /// Components by id.
    pub components: HashMap<String, LoadedComponent>,
    /// Stores, databases and pools shared by every request.
    pub services: Services,
    /// Connection, request and instance limits.
    pub limits: Limits,
    /// The copies of the mounted files, removed with the app (as `spin up` removes its
    /// working folder).
    _copies: tempfile::TempDir,
}

/// Settings for loading an app.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Where the SQLite key-value file lives (Spin's `.spin/`).
    pub state_dir: PathBuf,
    /// Key-value store backends from a runtime-config file.
    pub stores: HashMap<String, StoreConfig>,
    /// SQLite databases from a runtime-config file (`default` is built in).
    pub sqlite_databases: HashMap<String, DatabaseConfig>,
    /// Variable values that take precedence over `SPIN_VARIABLE_*` and defaults.
    pub variables: HashMap<String, String>,
    /// Environment variables added to every component (`--env`), over the manifest's.
    pub env: Vec<(String, String)>,
    /// Connection, request and instance limits.
    pub limits: Limits,
    /// Mount directories in place, so edits show without a restart (`spin up
    /// --direct-mounts`: only directories, a relative source resolved against the working
    /// directory); by default every mounted file is copied at start, as `spin up` does.
    pub direct_mounts: bool,
    /// A Spin edge host whose published limits apply ([`crate::emulate`]); `limits` should
    /// already be its ([`emulate::limits`]).
    pub emulate: Option<Platform>,
}

fn engine(limits: &Limits) -> anyhow::Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // As Spin's engine: WASIp3 components need it, and it changes nothing for WASIp2 ones.
    config.wasm_component_model_async(true);
    // Guest code checks the epoch at loop heads and function entries: how a request deadline
    // stops a component that never calls the host.
    config.epoch_interruption(true);
    if profiling_requested() {
        // `perf report` then names the guest's functions (/tmp/perf-<pid>.map); Spin has no
        // such switch, and it changes nothing a component sees.
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // Spin v4.0.2's pool (`crates/core/src/lib.rs`), but for the memory size, which is this
    // host's per-instance limit. A component is several core instances (its module and the
    // adapter's shims): with wasmtime's default of 1,000 core instances in all, no more than
    // about 330 requests could run at once, where Spin serves 1,000.
    let instances = 1_000;
    let mut pooling = PoolingAllocationConfig::default();
    pooling
        .total_component_instances(instances)
        .total_memories(instances)
        .total_tables(2 * instances)
        .total_stacks(instances)
        .total_core_instances(4 * instances)
        .table_elements(100_000)
        .max_component_instance_size(10 << 20)
        .max_core_instance_size(10 << 20)
        .max_core_instances_per_component(200)
        .max_tables_per_component(64)
        .max_memories_per_component(32)
        .max_tables_per_module(2)
        .max_memories_per_module(2)
        .linear_memory_keep_resident(2 << 20)
        .table_keep_resident(512 << 10)
        .max_memory_size(limits.max_instance_memory);
    let mut pooled = config.clone();
    pooled.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    // The pool reserves a lot of address space; where that is refused, allocate on demand.
    let engine = match Engine::new(&pooled) {
        Ok(engine) => engine,
        Err(e) => {
            tracing::warn!("pooling allocator unavailable ({e}); allocating instances on demand");
            Engine::new(&config)?
        }
    };
    spawn_epoch_ticker(&engine)?;
    Ok(engine)
}

/// Whether `DOCHUB_HOST_PERFMAP` asks for a perf map of the compiled guest code: set and
/// neither empty nor `0`.
fn profiling_requested() -> bool {
    std::env::var_os("DOCHUB_HOST_PERFMAP").is_some_and(|v| !v.is_empty() && v != "0")
}

impl App {
    /// Loads the app described by `manifest`.
    pub async fn load(manifest: &AppManifest, options: &LoadOptions) -> anyhow::Result<App> {
        let engine = engine(&options.limits)?;
        let linker = linker(&engine)?;
        let app_variables = crate::variables::resolve_app_variables(manifest, &options.variables)?;
        let router = Router::build(
            manifest
                .http_triggers
                .iter()
                .map(|t| (t.route.as_str(), t.component.as_str())),
        )?;
        let services = services(manifest, options).await?;
        let copies = staging::create()?;
        let mut components = HashMap::new();
        // Under --emulate, every component's refusal is reported at once.
        let mut refusals = Vec::new();
        for id in manifest.components.keys() {
            match LoadedComponent::load(
                &linker,
                &services,
                manifest,
                id,
                options,
                &app_variables,
                copies.path(),
            ) {
                Ok(loaded) => {
                    components.insert(id.clone(), loaded);
                }
                Err(e) if options.emulate.is_some() => refusals.push(format!("{e:#}")),
                Err(e) => return Err(e),
            }
        }
        if !refusals.is_empty() {
            bail!("{}", refusals.join("\n"));
        }
        if let Some(platform) = options.emulate {
            let sources: Vec<PathBuf> = manifest
                .components
                .values()
                .map(|c| manifest.resolve(&c.source))
                .collect();
            let mounts: Vec<(PathBuf, String)> = components
                .values()
                .flat_map(|c| c.config.mounts.iter().cloned())
                .collect();
            let size = emulate::check_app_size(platform, &emulate::app_files(&sources, &mounts))?;
            tracing::info!(
                "emulating {}: the app is {size} bytes of at most {}",
                platform.title(),
                platform.max_app_bytes()
            );
        }
        Ok(App {
            engine,
            router,
            components,
            services,
            limits: options.limits.clone(),
            _copies: copies,
        })
    }
}

/// WASI 0.2 and 0.3, wasi:http and the Spin interfaces, as `spin up` links them.
fn linker(engine: &Engine) -> anyhow::Result<Linker<State>> {
    let mut linker: Linker<State> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    wasmtime_wasi::p3::add_to_linker(&mut linker)?;
    wasmtime_wasi_http::p3::add_to_linker(&mut linker)?;
    // One context per interface, as Spin's factors link theirs.
    spin_key_value::add_to_linker::<State, HasSelf<KvCtx>>(&mut linker, |s| &mut s.kv)?;
    wasi_store::add_to_linker::<State, HasSelf<KvCtx>>(&mut linker, |s| &mut s.kv)?;
    wasi_atomics::add_to_linker::<State, HasSelf<KvCtx>>(&mut linker, |s| &mut s.kv)?;
    wasi_batch::add_to_linker::<State, HasSelf<KvCtx>>(&mut linker, |s| &mut s.kv)?;
    sqlite_v2::add_to_linker::<State, HasSelf<SqliteCtx>>(&mut linker, |s| &mut s.sqlite)?;
    sqlite_v3::add_to_linker::<State, HasSelf<SqliteCtx>>(&mut linker, |s| &mut s.sqlite)?;
    postgres::add_to_linker::<State, HasSelf<PgCtx>>(&mut linker, |s| &mut s.pg)?;
    spin_variables::add_to_linker::<State, HasSelf<VariablesCtx>>(&mut linker, |s| {
        &mut s.variables
    })?;
    spin_variables_v3::add_to_linker::<State, VariablesV3>(&mut linker, |s| &mut s.variables)?;
    Ok(linker)
}

/// The key-value stores and SQLite databases the components name, and the PostgreSQL pools.
async fn services(manifest: &AppManifest, options: &LoadOptions) -> anyhow::Result<Services> {
    let mut labels: Vec<String> = manifest
        .components
        .values()
        .flat_map(|c| c.key_value_stores.iter().cloned())
        .collect();
    labels.sort();
    labels.dedup();
    let mut kv = KvStores::open(&labels, &options.stores, &options.state_dir).await?;
    if let Some(platform) = options.emulate {
        kv = kv.metered(KvMeter::new(platform));
    }
    let sqlite_used = manifest
        .components
        .iter()
        .map(|(id, c)| (id.clone(), c.sqlite_databases.clone()))
        .collect();
    let sqlite = SqliteDatabases::new(&sqlite_used, &options.sqlite_databases, &options.state_dir)?;
    for problem in sqlite.problems(&sqlite_used) {
        tracing::warn!("{problem}");
    }
    Ok(Services {
        kv,
        sqlite,
        pg: PgPools::new(options.limits.pg_connect_timeout),
    })
}

impl LoadedComponent {
    /// Compiles component `id`, checks what it imports and exports, and stages its files
    /// under `copies`.
    fn load(
        linker: &Linker<State>,
        services: &Services,
        manifest: &AppManifest,
        id: &str,
        options: &LoadOptions,
        app_variables: &HashMap<String, String>,
        copies: &Path,
    ) -> anyhow::Result<LoadedComponent> {
        let engine = linker.engine();
        let component = &manifest.components[id];
        let source = manifest.resolve(&component.source);
        let wasm = Component::from_file(engine, &source)
            .map_err(anyhow::Error::from)
            .with_context(|| {
                format!(
                    "cannot load component `{id}` from {} (build it first: `spin build`, or run with --build)",
                    source.display()
                )
            })?;
        if let Some(platform) = options.emulate {
            emulate::check_component(
                platform,
                id,
                &component.sqlite_databases,
                &component.key_value_stores,
            )?;
            let imports = emulate::import_names(engine, &wasm);
            let refused = platform.refused_imports(imports.iter().map(String::as_str));
            if !refused.is_empty() {
                bail!(
                    "component `{id}` imports what {} does not offer (--emulate {}): {}",
                    platform.title(),
                    platform.name(),
                    refused.join(", ")
                );
            }
        }
        let instance_pre = linker
            .instantiate_pre(&wasm)
            .map_err(anyhow::Error::from)
            .with_context(|| {
                format!("component `{id}` imports an interface this host does not provide")
            })?;
        let mounts = mounts(
            manifest,
            id,
            &component.files,
            &copies.join(id),
            options.direct_mounts,
        )?;
        let config = ComponentConfig {
            id: id.to_owned(),
            key_value_stores: component.key_value_stores.clone(),
            sqlite_databases: component.sqlite_databases.clone(),
            allowed_outbound_hosts: component.allowed_outbound_hosts.clone(),
            variables: crate::variables::render_component_variables(
                id,
                &component.variables,
                app_variables,
            )?,
            environment: component
                .environment
                .iter()
                .filter(|(k, _)| !options.env.iter().any(|(key, _)| key == *k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .chain(options.env.iter().cloned())
                .collect(),
            mounts,
        };
        let config = Arc::new(config);
        // Spin v4.0.2 asks for the WASIp3 export first (`HandlerType::from_instance_pre`).
        let handler = match ServicePre::new(instance_pre.clone()) {
            Ok(pre) => Handler::P3(ProxyHandler::new(
                P3Component {
                    engine: engine.clone(),
                    config: config.clone(),
                    services: services.clone(),
                    max_memory: options.limits.max_instance_memory,
                    request_timeout: options.limits.request_timeout,
                    reuse: options.limits.instance_reuse,
                },
                handler::ProxyPre::P3(pre),
            )),
            Err(_) => Handler::P2(
                ProxyPre::new(instance_pre)
                    .map_err(anyhow::Error::from)
                    .with_context(|| {
                        format!(
                            "component `{id}` exports neither wasi:http/incoming-handler@0.2.x nor wasi:http/handler@0.3.0-rc-2026-03-15"
                        )
                    })?,
            ),
        };
        Ok(LoadedComponent { handler, config })
    }
}

/// What a component sees of its `files`: every file copied into `staging` ([`stage_files`]),
/// mounted at `/`, as `spin up` does; with `direct`, each source is a directory mounted in place
/// ([`direct_mount`]).
fn mounts(
    manifest: &AppManifest,
    component_id: &str,
    files: &[FileMount],
    staging: &Path,
    direct: bool,
) -> anyhow::Result<Vec<(PathBuf, String)>> {
    if direct {
        return files
            .iter()
            .map(|mount| direct_mount(manifest, component_id, mount))
            .collect();
    }
    let staged = stage_files(manifest, files, staging)
        .with_context(|| format!("component `{component_id}`: cannot copy its files"))?;
    Ok(if staged {
        vec![(staging.to_path_buf(), "/".to_string())]
    } else {
        Vec::new()
    })
}

/// Copies the files a component mounts into `staging`, as Spin v4.0.2's loader does
/// (`copy_file_mounts` in `crates/loader/src/local.rs`); true when anything was copied.
///
/// - `{ source, destination }`: a directory is copied file by file through the glob
///   `<source>/**/*`, so its empty folders are not; a file is copied to `destination`.
/// - A pattern naming a directory is copied through `<dir>/**/*` to `<dir>/<path from the app
///   folder>`, so `"static"` lands at `/static/static/...`: that is what Spin does.
/// - Any other pattern is a glob in the app folder, each match kept at its path from there.
///
/// Every file must lie inside the app folder (Spin: "cannot be mapped because it is outside the
/// application directory"), checked on the path as written, as Spin checks it. A path that
/// cannot be mapped into the copy is an error naming it, never a silent fallback. Where Spin
/// globs, it reads the app folder and the source as part of the pattern, so a folder name with
/// `*`, `?` or `[` would mount other files or none there: it is refused here, naming the path
/// (a single file is copied without a glob, by Spin and here alike).
fn stage_files(
    manifest: &AppManifest,
    files: &[FileMount],
    staging: &Path,
) -> anyhow::Result<bool> {
    let mut staged = false;
    for mount in files {
        match mount {
            FileMount::Placement {
                source,
                destination,
            } => {
                let source = manifest.resolve(source);
                if !source.starts_with(&manifest.base_dir) {
                    bail!(
                        "files source {} cannot be mapped because it is outside the application directory {} (as under `spin up`); link it into the app folder",
                        source.display(),
                        manifest.base_dir.display()
                    );
                }
                let meta = std::fs::metadata(&source)
                    .with_context(|| format!("files source {} is missing", source.display()))?;
                let target = staging.join(destination.trim_start_matches('/'));
                if meta.is_dir() {
                    meant_literally(&source)?;
                    staging::refuse_loops(&source)?;
                    staged |= copy_glob(manifest, &source.join("**/*"), &source, &target)?;
                } else {
                    copy_file(&source, &target)?;
                    staged = true;
                }
            }
            FileMount::Pattern(pattern) => {
                if Path::new(pattern).is_absolute() || pattern.split('/').any(|s| s == "..") {
                    bail!("files pattern `{pattern}` must stay inside the app folder");
                }
                let path = manifest.base_dir.join(pattern);
                if path.is_dir() {
                    meant_literally(&path)?;
                    staging::refuse_loops(&path)?;
                    let target = staging.join(pattern);
                    staged |= copy_glob(manifest, &path.join("**/*"), &manifest.base_dir, &target)?;
                } else if path.is_file() {
                    copy_file(&path, &staging.join(pattern))?;
                    staged = true;
                } else if glob::Pattern::escape(pattern) != *pattern {
                    meant_literally(&manifest.base_dir)?;
                    if pattern.contains("**") {
                        // `**` descends from the pattern's literal folder.
                        let literal = pattern
                            .split('/')
                            .take_while(|s| glob::Pattern::escape(s) == *s)
                            .collect::<Vec<_>>()
                            .join("/");
                        staging::refuse_loops(&manifest.base_dir.join(literal))?;
                    }
                    staged |= copy_glob(manifest, &path, &manifest.base_dir, staging)?;
                } else {
                    bail!("files pattern `{pattern}` does not exist and is not a glob pattern");
                }
            }
        }
    }
    Ok(staged)
}

/// Refuses a path that Spin puts into a glob pattern but means literally (the app folder, a
/// source) when its name holds glob characters: `spin up` would match other files, or none.
fn meant_literally(path: &Path) -> anyhow::Result<()> {
    let text = path.to_string_lossy();
    if glob::Pattern::escape(&text) != text {
        bail!(
            "{} holds `*`, `?` or `[` in its path; `spin up` reads the path as a glob pattern and would mount other files or none: rename it",
            path.display()
        );
    }
    Ok(())
}

/// Copies every file that `pattern` matches to its path from `prefix`, under `target`; true
/// when it copied any.
fn copy_glob(
    manifest: &AppManifest,
    pattern: &Path,
    prefix: &Path,
    target: &Path,
) -> anyhow::Result<bool> {
    let pattern = pattern
        .to_str()
        .with_context(|| format!("files pattern {} is not UTF-8", pattern.display()))?;
    std::fs::create_dir_all(target)
        .with_context(|| format!("cannot create {}", target.display()))?;
    let mut copied = false;
    for entry in glob::glob(pattern).with_context(|| format!("bad files pattern `{pattern}`"))? {
        let path = entry?;
        if !path.is_file() {
            continue;
        }
        if !path.starts_with(&manifest.base_dir) {
            bail!(
                "{} cannot be mapped because it is outside the application directory {}",
                path.display(),
                manifest.base_dir.display()
            );
        }
        let relative = path.strip_prefix(prefix).with_context(|| {
            format!(
                "{} cannot be mapped: it does not lie under {}",
                path.display(),
                prefix.display()
            )
        })?;
        copy_file(&path, &target.join(relative))?;
        copied = true;
    }
    Ok(copied)
}

/// A mount under `spin up --direct-mounts`, as Spin v4.0.2 makes it (`resolve_direct_mount` in
/// `crates/loader/src/local.rs`, `SpinFilesMounter` in `crates/factor-wasi/src/spin.rs`): only
/// a directory may be mounted, and that is checked against the app folder, but the folder
/// mounted is the source resolved against the working directory of `spin up`, and it need not
/// be inside the app folder. Where the two differ, Spin fails every request to the component
/// ("SpinFilesMounter only supports directory mounts"); this host refuses to start instead.
fn direct_mount(
    manifest: &AppManifest,
    component_id: &str,
    mount: &FileMount,
) -> anyhow::Result<(PathBuf, String)> {
    let (source, destination) = match mount {
        FileMount::Placement {
            source,
            destination,
        } => (source.as_path(), destination),
        FileMount::Pattern(pattern) => (Path::new(pattern), pattern),
    };
    let shown = source.display();
    if !manifest.resolve(source).is_dir() {
        bail!(
            "component `{component_id}`: only directory mounts are supported with --direct-mounts (as under `spin up`); `{shown}` is not a directory"
        );
    }
    let mounted = std::path::absolute(source)
        .with_context(|| format!("component `{component_id}`: cannot resolve `{shown}`"))?;
    if !mounted.is_dir() {
        bail!(
            "component `{component_id}`: with --direct-mounts, `spin up` mounts files source `{shown}` from its working directory, where {} is not a directory, and fails every request; run it from the app folder or give an absolute source",
            mounted.display()
        );
    }
    Ok((mounted, destination.clone()))
}

fn copy_file(from: &Path, to: &Path) -> anyhow::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(from, to)
        .with_context(|| format!("cannot stage {} for mounting", from.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A manifest of one component, `web`, that mounts `files` (the inside of `files = [...]`).
    fn web_manifest(files: &str) -> String {
        format!(
            r#"
spin_manifest_version = 2
[application]
name = "demo"
[[trigger.http]]
route = "/..."
component = "web"
[component.web]
source = "web.wasm"
files = [{files}]
"#
        )
    }

    fn manifest_with_source(base: &Path, source: &Path) -> AppManifest {
        let files = format!(
            r#"{{ source = "{}", destination = "/content" }}"#,
            source.display()
        );
        AppManifest::from_toml(&web_manifest(&files), base).unwrap()
    }

    #[test]
    fn a_mount_from_outside_the_app_folder_is_refused_as_spin_refuses_it() {
        let app = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("page.md"), "page").unwrap();
        let staging = app.path().join(".copies");
        let manifest = manifest_with_source(app.path(), elsewhere.path());
        let files = &manifest.components["web"].files;
        let err = mounts(&manifest, "web", files, &staging, false).unwrap_err();
        assert!(
            format!("{err:#}").contains("outside the application directory"),
            "{err:#}"
        );

        // The same folder through a link inside the app folder is copied.
        std::os::unix::fs::symlink(elsewhere.path(), app.path().join("content")).unwrap();
        let manifest = manifest_with_source(app.path(), Path::new("content"));
        let files = &manifest.components["web"].files;
        mounts(&manifest, "web", files, &staging, false).unwrap();
        assert_eq!(
            std::fs::read(staging.join("content/page.md")).unwrap(),
            b"page"
        );
    }

    #[test]
    fn a_direct_mount_is_a_folder_resolved_as_spin_resolves_it() {
        let app = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let staging = app.path().join(".copies");
        // An absolute folder outside the app folder is mounted in place: Spin checks only that
        // it is a directory.
        let manifest = manifest_with_source(app.path(), elsewhere.path());
        let files = &manifest.components["web"].files;
        assert_eq!(
            mounts(&manifest, "web", files, &staging, true).unwrap(),
            vec![(elsewhere.path().to_path_buf(), "/content".to_owned())]
        );

        // A relative folder that is in the app folder but not in the working directory: Spin
        // would mount the latter and fail every request.
        let name = app.path().file_name().unwrap().to_owned();
        std::fs::create_dir(app.path().join(&name)).unwrap();
        let manifest = manifest_with_source(app.path(), Path::new(&name));
        let files = &manifest.components["web"].files;
        let err = mounts(&manifest, "web", files, &staging, true).unwrap_err();
        assert!(err.to_string().contains("working directory"), "{err}");

        // A single file is not mounted directly.
        std::fs::write(app.path().join("one.md"), "one").unwrap();
        let manifest = manifest_with_source(app.path(), Path::new("one.md"));
        let files = &manifest.components["web"].files;
        let err = mounts(&manifest, "web", files, &staging, true).unwrap_err();
        assert!(err.to_string().contains("only directory mounts"), "{err}");
    }

    #[test]
    fn a_mounted_folder_is_copied_file_by_file_unless_mounted_directly() {
        let app = tempfile::tempdir().unwrap();
        let content = app.path().join("content");
        std::fs::create_dir_all(content.join("a/empty")).unwrap();
        std::fs::write(content.join("a/page.md"), "page").unwrap();
        std::fs::write(content.join(".hidden"), "hidden").unwrap();
        let manifest = manifest_with_source(app.path(), Path::new("content"));
        let files = &manifest.components["web"].files;
        let staging = app.path().join(".copies/web");
        let mounted = mounts(&manifest, "web", files, &staging, false).unwrap();
        assert_eq!(mounted, vec![(staging.clone(), "/".to_owned())]);
        let copy = staging.join("content");
        assert_eq!(std::fs::read(copy.join("a/page.md")).unwrap(), b"page");
        assert_eq!(std::fs::read(copy.join(".hidden")).unwrap(), b"hidden");
        // Spin copies files, not folders: an empty folder is not in the copy.
        assert!(!copy.join("a/empty").exists());
        // The copy is the app's: a later edit of the source does not reach it.
        std::fs::write(content.join("a/page.md"), "edited").unwrap();
        assert_eq!(std::fs::read(copy.join("a/page.md")).unwrap(), b"page");
    }

    /// The files `stage_files` copies for the manifest `name`, read from the working directory
    /// `cwd`, by path inside the copy.
    fn staged_tree(cwd: &Path, name: &str) -> anyhow::Result<BTreeMap<String, String>> {
        let manifest = AppManifest::from_file_in(Path::new(name), cwd)?;
        let staging = tempfile::tempdir()?;
        stage_files(&manifest, &manifest.components["web"].files, staging.path())?;
        let mut tree = BTreeMap::new();
        let pattern = format!("{}/**/*", staging.path().display());
        for path in glob::glob(&pattern)? {
            let path = path?;
            if path.is_file() {
                let inside = path.strip_prefix(staging.path())?;
                tree.insert(
                    inside.to_string_lossy().into_owned(),
                    std::fs::read_to_string(&path)?,
                );
            }
        }
        Ok(tree)
    }

    /// An app folder `name` under `root` with a manifest that mounts `content/` and a pattern.
    fn app_folder(root: &Path, name: &str) -> PathBuf {
        let app = root.join(name);
        std::fs::create_dir_all(app.join("content/sub")).unwrap();
        std::fs::create_dir_all(app.join("static")).unwrap();
        std::fs::write(app.join("content/a.md"), "a").unwrap();
        std::fs::write(app.join("content/sub/b.md"), "b").unwrap();
        std::fs::write(app.join("static/site.css"), "css").unwrap();
        std::fs::write(app.join("static/notes.txt"), "notes").unwrap();
        std::fs::write(
            app.join("spin.toml"),
            web_manifest(r#"{ source = "content", destination = "/content" }, "static/*.css""#),
        )
        .unwrap();
        app
    }

    #[test]
    fn every_way_of_naming_the_manifest_stages_the_same_tree() {
        let root = tempfile::tempdir().unwrap();
        let app = app_folder(root.path(), "my docs app");
        let other = root.path().join("other");
        std::fs::create_dir(&other).unwrap();
        let expected: BTreeMap<String, String> = [
            ("content/a.md", "a"),
            ("content/sub/b.md", "b"),
            ("static/site.css", "css"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let absolute = app.join("spin.toml");
        let ways = [
            (app.as_path(), "spin.toml"),
            (app.as_path(), "./spin.toml"),
            (root.path(), "my docs app/spin.toml"),
            (root.path(), "./my docs app/../my docs app/spin.toml"),
            (other.as_path(), "../my docs app/spin.toml"),
            (other.as_path(), absolute.to_str().unwrap()),
        ];
        for (cwd, name) in ways {
            let tree = staged_tree(cwd, name)
                .unwrap_or_else(|e| panic!("`{name}` from {}: {e:#}", cwd.display()));
            assert_eq!(tree, expected, "`{name}` from {}", cwd.display());
        }
    }

    #[test]
    fn a_pattern_naming_a_folder_is_copied_where_spin_copies_it() {
        let root = tempfile::tempdir().unwrap();
        let app = app_folder(root.path(), "app");
        let text = std::fs::read_to_string(app.join("spin.toml")).unwrap();
        std::fs::write(
            app.join("spin.toml"),
            text.replace("\"static/*.css\"", "\"static\""),
        )
        .unwrap();
        let tree = staged_tree(&app, "spin.toml").unwrap();
        // Spin v4.0.2 joins the folder's path from the app folder to the pattern's own.
        assert_eq!(tree["static/static/site.css"], "css");
        assert_eq!(tree["static/static/notes.txt"], "notes");
    }

    #[test]
    fn a_missing_source_or_a_glob_character_in_a_path_is_an_error_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let app = app_folder(root.path(), "docs [draft]");
        let err = staged_tree(&app, "spin.toml").unwrap_err();
        assert!(
            format!("{err:#}").contains("docs [draft]") && format!("{err:#}").contains("rename"),
            "{err:#}"
        );

        // A single file is copied without a glob, so its folder's name does not matter.
        std::fs::write(
            app.join("spin.toml"),
            web_manifest(r#"{ source = "content/a.md", destination = "/a.md" }"#),
        )
        .unwrap();
        assert_eq!(staged_tree(&app, "spin.toml").unwrap()["a.md"], "a");

        let app = app_folder(root.path(), "app");
        std::fs::remove_dir_all(app.join("content")).unwrap();
        let err = staged_tree(&app, "spin.toml").unwrap_err();
        assert!(
            format!("{err:#}").contains(&format!("{} is missing", app.join("content").display())),
            "{err:#}"
        );
    }
}
