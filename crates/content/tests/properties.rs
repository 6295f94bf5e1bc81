//! Property tests: frontmatter splitting and manifests, on generated
//! input. Few cases by default so CI stays fast; `PROPTEST_CASES=2000` runs a deeper search.

use dochub_content::{ContentRoot, page_body, parse_page, split_frontmatter};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    // No failure files: a failing case is printed, shrunk, in the test output.
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases)
    }
}

/// A line of YAML-ish text that is not a block delimiter.
fn yaml_line() -> impl Strategy<Value = String> {
    "[a-z]{1,8}: [^\n\r]{0,20}".prop_filter("not a delimiter", |l| {
        !matches!(l.trim_end(), "---" | "...")
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_closed_block_is_split_off_exactly(
        lines in prop::collection::vec(yaml_line(), 0..5),
        body in "[^\u{feff}]{0,80}",
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let yaml: String = lines.iter().map(|l| format!("{l}{nl}")).collect();
        let text = format!("---{nl}{yaml}---{nl}{body}");
        prop_assert_eq!(split_frontmatter(&text), Some((yaml.as_str(), body.as_str())));
        prop_assert_eq!(parse_page("p", text.as_bytes()).body, body);
    }

    #[test]
    fn any_bytes_parse_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let page = parse_page("fallback", &bytes);
        prop_assert!(!page.title.is_empty());
        prop_assert_eq!(page_body(&bytes), page.body);
    }

    #[test]
    fn the_body_alone_is_the_parsed_body(
        lines in prop::collection::vec(yaml_line(), 0..5),
        body in "[^\u{feff}]{0,80}",
        crlf in any::<bool>(),
        closed in any::<bool>(),
        bom in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let yaml: String = lines.iter().map(|l| format!("{l}{nl}")).collect();
        let close = if closed { format!("---{nl}") } else { String::new() };
        let text = format!("{}---{nl}{yaml}{close}{body}", if bom { "\u{feff}" } else { "" });
        prop_assert_eq!(page_body(text.as_bytes()), parse_page("p", text.as_bytes()).body);
    }

    #[test]
    fn text_without_a_leading_delimiter_is_all_body(body in "[^-\u{feff}][^\u{feff}]{0,80}") {
        prop_assert_eq!(split_frontmatter(&body), None);
        prop_assert_eq!(parse_page("p", body.as_bytes()).body, body);
    }

    #[test]
    fn manifests_list_every_page_once_with_its_title(
        pages in prop::collection::btree_map(
            "[a-z][a-z0-9-]{0,10}",
            "[A-Za-z0-9é日][A-Za-z0-9 é日.()+=/;~$^_-]{0,30}",
            1..6,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("proj").join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        for (id, title) in &pages {
            let title = title.trim();
            let text = format!("---\ntitle: \"{title}\"\n---\nbody of {id}\n");
            std::fs::write(sub.join(format!("{id}.md")), text).unwrap();
        }
        let root = ContentRoot::open(dir.path()).unwrap();
        let manifest = root.subproject_manifest("proj", "sub").unwrap().unwrap();
        let listed: Vec<&str> = manifest.documents.iter().map(|d| d.id.as_str()).collect();
        let mut expected: Vec<&str> = pages.keys().map(String::as_str).collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        expected.sort_unstable();
        prop_assert_eq!(sorted, expected);
        for doc in &manifest.documents {
            let title = pages[&doc.id].trim();
            if !title.is_empty() {
                prop_assert_eq!(&doc.title, title);
            }
            prop_assert_eq!(&doc.raw_url, &format!("/api/raw/proj/sub/{}", doc.id));
        }
        let master = root.master_manifest("2026-01-02T03:04:05.678Z").unwrap();
        let json = serde_json::to_value(&master).unwrap();
        prop_assert_eq!(json["projects"][0]["doc_count"].as_u64(), Some(pages.len() as u64));
    }
}
