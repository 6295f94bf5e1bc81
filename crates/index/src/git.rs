//! When each page last changed, from git: what `dochub build` records for a page whose
//! frontmatter gives no `updated` date. The components cannot run git; the build can.

use std::collections::HashMap;
use std::path::Path;

/// The date (`YYYY-MM-DD`, the committer's) of the last commit that touched each file under
/// `dir`, by its path relative to `dir` with `/` separators. One `git log` over the whole
/// history, so 10,000 pages cost one process, not one each. Outside a git work tree, or
/// without git, it is empty: no dates, no error.
pub fn last_commit_dates(dir: &Path) -> HashMap<String, String> {
    #[cfg(not(target_os = "wasi"))]
    {
        let output = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "log",
                "-z",
                "--relative",
                "--name-only",
                "--format=%x01%cs",
                "--",
                ".",
            ])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        match output {
            Ok(out) if out.status.success() => parse_log(&String::from_utf8_lossy(&out.stdout)),
            _ => HashMap::new(),
        }
    }
    #[cfg(target_os = "wasi")]
    {
        let _ = dir;
        HashMap::new()
    }
}

/// Reads `git log -z --name-only --format=%x01%cs`: each commit is `\x01<date>\0`, then its
/// files, each ended by `\0` (the first after a newline). Newest first, so a file's first
/// date is its last change.
#[cfg(not(target_os = "wasi"))]
fn parse_log(log: &str) -> HashMap<String, String> {
    let mut dates = HashMap::new();
    let mut date: Option<&str> = None;
    for token in log.split('\0') {
        if let Some(d) = token.strip_prefix('\u{1}') {
            date = dochub_content::is_date(d).then_some(d);
            continue;
        }
        let name = token.trim_start_matches('\n');
        if let (Some(d), false) = (date, name.is_empty()) {
            dates.entry(name.to_owned()).or_insert_with(|| d.to_owned());
        }
    }
    dates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_date_of_each_file() {
        let log = "\u{1}2025-03-04\0\np/s/a.md\0\u{1}2024-01-02\0\np/s/a.md\0p/s/é b.md\0";
        let dates = parse_log(log);
        assert_eq!(dates.len(), 2);
        assert_eq!(dates["p/s/a.md"], "2025-03-04");
        assert_eq!(dates["p/s/é b.md"], "2024-01-02");
        assert!(parse_log("").is_empty());
    }

    #[test]
    fn no_git_work_tree_no_dates() {
        let dir = tempfile::tempdir().unwrap();
        // A temporary folder is in no work tree (unless the system's is, which it is not).
        assert!(last_commit_dates(&dir.path().join("missing")).is_empty());
    }
}
