//! `spin build`: runs each component's `[component.<id>.build] command`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::manifest::AppManifest;

/// Runs the build command of every component that has one, in manifest order, in the
/// manifest's folder (or the component's `workdir`).
pub fn build_components(manifest_path: &Path) -> anyhow::Result<()> {
    let manifest = AppManifest::from_file(manifest_path)?;
    let commands = manifest
        .components
        .values()
        .filter_map(|c| c.build.as_ref().map(|b| b.command.as_str()));
    ensure_targets_installed(commands)?;
    for (id, component) in &manifest.components {
        let Some(build) = &component.build else {
            continue;
        };
        let workdir = match &build.workdir {
            Some(dir) => manifest.resolve(dir),
            None => manifest.base_dir.clone(),
        };
        eprintln!("Building component {id} with `{}`", build.command);
        let status = shell(&build.command)
            .current_dir(&workdir)
            .status()
            .with_context(|| format!("cannot run the build command of component `{id}`"))?;
        if !status.success() {
            bail!(
                "build command of component `{id}` failed ({status}): {}",
                build.command
            );
        }
    }
    Ok(())
}

/// Installs, through rustup, the compilation targets the build commands name with `--target`.
///
/// rustup installs a toolchain file's `targets` only when it auto-installs, which can be off
/// (`RUSTUP_AUTO_INSTALL=0`); cargo then fails deep in the build with "can't find crate for
/// `core`". Without rustup nothing is checked: cargo's own error stands.
fn ensure_targets_installed<'a>(commands: impl Iterator<Item = &'a str>) -> anyhow::Result<()> {
    let mut wanted: Vec<&str> = commands.flat_map(named_targets).collect();
    wanted.sort_unstable();
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(());
    }
    let Ok(listed) = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
    else {
        return Ok(());
    };
    let installed = String::from_utf8_lossy(&listed.stdout);
    for target in wanted {
        if installed.lines().any(|line| line.trim() == target) {
            continue;
        }
        eprintln!("Installing the Rust target {target} (rustup target add {target})");
        let added = Command::new("rustup")
            .args(["target", "add", target])
            .status()
            .is_ok_and(|status| status.success());
        if !added {
            bail!(
                "the Rust target `{target}` is not installed and rustup could not add it; \
                 run `rustup target add {target}` and try again"
            );
        }
    }
    Ok(())
}

/// The values of `--target X` and `--target=X` in a shell command.
fn named_targets(command: &str) -> Vec<&str> {
    let mut words = command.split_whitespace();
    let mut targets = Vec::new();
    while let Some(word) = words.next() {
        if word == "--target" {
            targets.extend(words.next());
        } else if let Some(target) = word.strip_prefix("--target=") {
            targets.push(target);
        }
    }
    targets
}

fn shell(command: &str) -> Command {
    if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(command);
        c
    } else {
        let mut c = Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::named_targets;

    #[test]
    fn build_commands_name_their_targets() {
        assert_eq!(
            named_targets("cargo build --target wasm32-wasip2 --profile wasm -p api && cargo run"),
            ["wasm32-wasip2"]
        );
        assert_eq!(
            named_targets("cargo build --target=wasm32-wasip1 && x --target"),
            ["wasm32-wasip1"]
        );
        assert!(named_targets("cargo build --release").is_empty());
    }
}
