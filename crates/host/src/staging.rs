//! The folder the mounted files are copied into at start, as `spin up` copies them: bounded
//! against links that lead back into the tree, and not left behind by a host that was killed.
//!
//! What Spin v4.0.2 does (`crates/loader/src/local.rs`, `copy_glob`): it copies a mounted folder
//! through the glob `<source>/**/*`, and the `glob` crate follows links to folders. A link to a
//! folder that contains it (`ln -s ../.. content/p/s/up`) is entered again at every level, each
//! level copying the whole folder once more, until the path grows past what the system takes
//! and the glob fails with an error; so `spin up` copies the tree dozens of times (all of the
//! app folder, `target/` included, for a link to it) and then refuses to start. This host refuses
//! at once, naming the link, before copying anything. A link that leaves the mount without
//! leading back (a file or folder elsewhere) is copied and served, by Spin and here alike: Spin
//! checks only the path as written against the app folder, and copies what it points to.
//!
//! A host that ends normally removes its folder. One that is killed cannot, so each folder
//! holds the host's process id (`owner.pid`), and a host starting removes the folders whose
//! owner is no longer running.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The prefix of every staging folder, in the system's temporary folder.
const PREFIX: &str = "dochub-host-";
/// The file in a staging folder that names the host's process.
const OWNER: &str = "owner.pid";

/// A fresh staging folder, after removing those left by hosts that no longer run.
pub(crate) fn create() -> anyhow::Result<tempfile::TempDir> {
    remove_abandoned(&std::env::temp_dir());
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir()
        .context("cannot create a folder for the mounted files' copies")?;
    std::fs::write(dir.path().join(OWNER), std::process::id().to_string())
        .context("cannot write the copies folder's owner")?;
    Ok(dir)
}

/// Removes the staging folders under `temp` whose owner process is gone; a folder without an
/// owner file, or whose owner runs, is left alone.
fn remove_abandoned(temp: &Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_staging = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX));
        if !is_staging {
            continue;
        }
        let owner = std::fs::read_to_string(path.join(OWNER))
            .ok()
            .and_then(|pid| pid.trim().parse::<u32>().ok());
        if let Some(pid) = owner
            && !running(pid)
        {
            match std::fs::remove_dir_all(&path) {
                Ok(()) => tracing::info!(
                    "removed {}, left by a host (process {pid}) that no longer runs",
                    path.display()
                ),
                Err(e) => tracing::warn!("cannot remove {}: {e}", path.display()),
            }
        }
    }
}

/// Whether process `pid` runs (on systems without `/proc`, always: nothing is removed).
fn running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// Refuses a folder tree in which a link leads to a folder that contains it: copying it would
/// never end (see the module docs). The walk follows links as the copy does, and enters each
/// folder once.
pub(crate) fn refuse_loops(root: &Path) -> anyhow::Result<()> {
    let Ok(root_real) = std::fs::canonicalize(root) else {
        return Ok(());
    };
    // Each entry: a folder as reached, and the real folders from the root down to it.
    let mut stack: Vec<(PathBuf, Vec<PathBuf>)> = vec![(root.to_path_buf(), vec![root_real])];
    while let Some((dir, ancestors)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if ancestors.contains(&real) {
                let target = std::fs::read_link(&path).unwrap_or_else(|_| real.clone());
                bail!(
                    "{} is a link to {}, a folder that contains it: copying the mount would \
                     follow it again at every level (`spin up` copies until the path is too long, \
                     then fails); remove the link",
                    path.display(),
                    target.display()
                );
            }
            let mut below = ancestors.clone();
            below.push(real);
            stack.push((path, below));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_to_a_folder_above_it_is_refused_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("p/s");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("page.md"), "page").unwrap();
        std::os::unix::fs::symlink("../..", deep.join("up")).unwrap();
        let err = refuse_loops(root.path()).unwrap_err().to_string();
        assert!(
            err.contains("p/s/up is a link to ../.., a folder that contains it"),
            "{err}"
        );

        // A link to a sibling folder, or to a file, is no loop.
        std::fs::remove_file(deep.join("up")).unwrap();
        std::fs::create_dir_all(root.path().join("q")).unwrap();
        std::os::unix::fs::symlink("../../q", deep.join("sideways")).unwrap();
        std::os::unix::fs::symlink("page.md", deep.join("again.md")).unwrap();
        refuse_loops(root.path()).unwrap();
    }

    #[test]
    fn folders_of_hosts_that_no_longer_run_are_removed_and_others_kept() {
        let temp = tempfile::tempdir().unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let gone_pid = gone.id();
        gone.wait().unwrap();
        let abandoned = temp.path().join(format!("{PREFIX}abandoned"));
        let ours = temp.path().join(format!("{PREFIX}ours"));
        let unowned = temp.path().join(format!("{PREFIX}unowned"));
        let other = temp.path().join("someone-else");
        for dir in [&abandoned, &ours, &unowned, &other] {
            std::fs::create_dir_all(dir.join("api/content")).unwrap();
        }
        std::fs::write(abandoned.join(OWNER), gone_pid.to_string()).unwrap();
        std::fs::write(ours.join(OWNER), std::process::id().to_string()).unwrap();
        std::fs::write(other.join(OWNER), gone_pid.to_string()).unwrap();
        remove_abandoned(temp.path());
        assert!(!abandoned.exists());
        assert!(ours.exists() && unowned.exists() && other.exists());
    }
}
