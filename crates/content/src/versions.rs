//! `versions:` in `_project.yaml`: subprojects that are versions of one another, newest first
//! (`versions: [v4, v3, v2, v1]`; the first is the latest). The docs site shows them as one
//! entry with a version switcher, search can keep to one version ([`version_scope`]), and
//! `/llms.txt` lists older versions under `## Optional`.
//!
//! What is not a list of this project's subprojects is left out, each problem a warning for
//! `dochub check`: the rest of the list still counts, and serving never fails over it.

use std::collections::BTreeSet;

use dochub_search::Within;

use crate::model::ProjectOutline;

/// The key of `_project.yaml` that lists a project's versions.
pub(crate) const VERSIONS_KEY: &str = "versions";

/// A value as a warning shows it: at most 40 bytes, `…` where cut.
fn shown(value: &serde_json::Value) -> String {
    let mut shown = match value {
        serde_json::Value::String(s) => format!("`{s}`"),
        other => other.to_string(),
    };
    if shown.len() > 40 {
        let cut = shown.floor_char_boundary(40);
        shown.truncate(cut);
        shown.push('…');
    }
    shown
}

/// `versions` of a project's meta, against the ids of its `subprojects`: the listed ids that
/// are subprojects, in the order given, each once; and a warning for each entry left out.
pub(crate) fn versions_field(
    meta: &serde_json::Value,
    subprojects: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut warnings = Vec::new();
    let entries = match meta.get(VERSIONS_KEY) {
        None | Some(serde_json::Value::Null) => return (Vec::new(), warnings),
        Some(serde_json::Value::Array(entries)) => entries,
        Some(other) => {
            warnings.push(format!(
                "`versions` is {}, not a list of subproject ids (`versions: [v2, v1]`); ignored",
                shown(other)
            ));
            return (Vec::new(), warnings);
        }
    };
    let mut versions: Vec<String> = Vec::new();
    for entry in entries {
        let id = match entry {
            serde_json::Value::String(s) => s.trim().to_owned(),
            serde_json::Value::Number(n) => n.to_string(),
            other => {
                warnings.push(format!(
                    "`versions` lists {}, not a subproject id; left out",
                    shown(other)
                ));
                continue;
            }
        };
        if !subprojects.contains(&id) {
            warnings.push(format!(
                "`versions` names {}, which is not a subproject of this project; left out",
                shown(&serde_json::Value::String(id))
            ));
        } else if versions.contains(&id) {
            warnings.push(format!(
                "`versions` lists `{id}` more than once; its first place counts"
            ));
        } else {
            versions.push(id);
        }
    }
    (versions, warnings)
}

/// Every version any project lists, sorted, each once: what a `version=` may name.
pub fn known_versions(outline: &[ProjectOutline]) -> Vec<String> {
    let known: BTreeSet<&String> = outline.iter().flat_map(|p| &p.versions).collect();
    known.into_iter().cloned().collect()
}

/// What a search keeps to for `version`: in each project that lists it, that version's pages
/// and those of the project's other subprojects, not its other versions; a project that does
/// not list it is searched whole. `None` when no project lists `version`.
///
/// ```
/// use dochub_content::{ProjectOutline, version_scope};
/// let spin = ProjectOutline {
///     id: "spin".into(),
///     name: "Spin".into(),
///     subprojects: vec![("v2".into(), "v2".into()), ("v1".into(), "v1".into()),
///                       ("faq".into(), "FAQ".into())],
///     versions: vec!["v2".into(), "v1".into()],
/// };
/// let within = version_scope(&[spin.clone()], "v1").unwrap();
/// assert!(within.admits("spin", "v1") && within.admits("spin", "faq"));
/// assert!(!within.admits("spin", "v2"));
/// assert!(version_scope(&[spin], "v9").is_none());
/// ```
pub fn version_scope(outline: &[ProjectOutline], version: &str) -> Option<Within> {
    let listing: Vec<&ProjectOutline> = outline
        .iter()
        .filter(|p| p.versions.iter().any(|v| v == version))
        .collect();
    if listing.is_empty() {
        return None;
    }
    Some(Within::leaving_out(listing.into_iter().flat_map(|p| {
        p.versions
            .iter()
            .filter(|v| *v != version)
            .map(|v| (p.id.clone(), v.clone()))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> (Vec<String>, Vec<String>) {
        let meta: serde_json::Value = serde_yaml::from_str(yaml).unwrap();
        let subs = ["v1", "v2", "v3", "2.0", "faq"].map(String::from);
        versions_field(&meta, &subs)
    }

    #[test]
    fn listed_subprojects_in_order() {
        assert_eq!(parse("versions: [v3, v1, v2]\n").0, ["v3", "v1", "v2"]);
        assert_eq!(parse("versions: [\"2.0\", v1]\n").0, ["2.0", "v1"]);
        assert_eq!(parse("name: x\n"), (vec![], vec![]));
        assert_eq!(parse("versions:\n"), (vec![], vec![]));
    }

    #[test]
    fn what_is_not_a_subproject_is_left_out_with_a_warning() {
        let (versions, warnings) = parse("versions: [v2, v9, v2, {a: 1}, v1]\n");
        assert_eq!(versions, ["v2", "v1"]);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("names `v9`, which is not a subproject"));
        assert!(warnings[1].contains("lists `v2` more than once"));
        assert!(warnings[2].contains("lists {\"a\":1}, not a subproject id"));
        let (versions, warnings) = parse("versions: v2\n");
        assert!(versions.is_empty());
        assert!(
            warnings[0].contains("not a list of subproject ids"),
            "{warnings:?}"
        );
    }

    #[test]
    fn check_reports_each_entry_left_out_as_an_error_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for s in ["v2", "v1"] {
            std::fs::create_dir_all(root.join("spin").join(s)).unwrap();
            std::fs::write(root.join("spin").join(s).join("a.md"), "# A\n").unwrap();
        }
        std::fs::write(
            root.join("spin/_project.yaml"),
            "name: Spin\nversions: [v2, ghost, v1]\n",
        )
        .unwrap();
        let root = crate::ContentRoot::open(root).unwrap();
        let found: Vec<String> = root
            .check()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .filter(|d| d.contains("versions"))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("spin/_project.yaml:2: error:"),
            "{found:?}"
        );
        assert!(
            found[0].contains("`ghost`, which is not a subproject"),
            "{found:?}"
        );
        let project = root.project("spin").unwrap().unwrap();
        assert_eq!(project.versions, ["v2", "v1"]);
        let outline = crate::Catalog::outline(&root).unwrap();
        assert_eq!(outline[0].versions, ["v2", "v1"]);
    }
}
