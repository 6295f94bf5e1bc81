//! `spin build`: runs each component's `[component.<id>.build] command`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use crate::manifest::AppManifest;

/// Runs the build command of every component that has one, in manifest order, in the
/// manifest's folder (or the component's `workdir`).
pub fn build_components(manifest_path: &Path) -> anyhow::Result<()> {
    let manifest = AppManifest::from_file(manifest_path)?;
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
