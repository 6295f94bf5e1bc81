//! What an app weighs as an edge host counts it: the components plus every file they mount,
//! each distinct file content once, as a registry push stores it.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

/// The distinct files of an app, by content.
#[derive(Debug, Default)]
pub struct AppSize {
    /// (length, hash of the bytes) → the first path met with that content.
    by_content: HashMap<(u64, u64), PathBuf>,
    total: u64,
}

impl AppSize {
    /// Adds `root`: a file, or a folder read recursively (links followed, as a copy follows
    /// them). Returns the bytes it adds: those of contents not counted before.
    pub fn add(&mut self, root: &Path) -> std::io::Result<u64> {
        let mut added = 0;
        let mut stack = vec![root.to_path_buf()];
        while let Some(path) = stack.pop() {
            let named = |e: std::io::Error| {
                std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
            };
            let meta = std::fs::metadata(&path).map_err(named)?;
            if meta.is_dir() {
                for entry in std::fs::read_dir(&path).map_err(named)? {
                    stack.push(entry.map_err(named)?.path());
                }
                continue;
            }
            let bytes = std::fs::read(&path).map_err(named)?;
            let mut hasher = DefaultHasher::new();
            hasher.write(&bytes);
            let len = bytes.len() as u64;
            if let std::collections::hash_map::Entry::Vacant(slot) =
                self.by_content.entry((len, hasher.finish()))
            {
                slot.insert(path);
                added += len;
            }
        }
        self.total += added;
        Ok(added)
    }

    /// The bytes of every distinct file added.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The `n` largest distinct files, largest first, each named by the first path met.
    pub fn largest(&self, n: usize) -> Vec<(u64, &Path)> {
        let mut files: Vec<(u64, &Path)> = self
            .by_content
            .iter()
            .map(|((len, _), path)| (*len, path.as_path()))
            .collect();
        files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        files.truncate(n);
        files
    }
}

/// `bytes` in MiB, one decimal: how limits and sizes are shown.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_content_counts_once_wherever_it_lies() {
        let dir = std::env::temp_dir().join(format!("dochub-app-size-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/one.txt"), "same").unwrap();
        std::fs::write(dir.join("a/b/copy.txt"), "same").unwrap();
        std::fs::write(dir.join("big.bin"), vec![7u8; 3000]).unwrap();
        let mut size = AppSize::default();
        assert_eq!(size.add(&dir.join("a")).unwrap(), 4);
        assert_eq!(size.add(&dir.join("big.bin")).unwrap(), 3000);
        // Counted already: adds nothing.
        assert_eq!(size.add(&dir).unwrap(), 0);
        assert_eq!(size.total(), 3004);
        let largest = size.largest(1);
        assert_eq!(largest, [(3000, dir.join("big.bin").as_path())]);
        assert!(
            size.add(&dir.join("missing"))
                .unwrap_err()
                .to_string()
                .contains("missing")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_read_in_mib() {
        assert_eq!(mib(50 << 20), "50.0 MiB");
        assert_eq!(mib(3 << 19), "1.5 MiB");
    }
}
