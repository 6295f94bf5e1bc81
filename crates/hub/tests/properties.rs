//! Property tests of the hub's JSON: what a client sends is what is stored, however it is
//! escaped, and no input makes the parser panic. Few cases by default (`PROPTEST_CASES` for more).

use dochub_hub::{MAX_BODY, SendRequest};
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

/// Every character as `\uXXXX` (surrogate pairs beyond the BMP), as `jq -a` writes JSON.
fn ascii_escaped(s: &str) -> String {
    let mut out = String::from("\"");
    for unit in s.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_send_round_trips(
        from in "[A-Za-z0-9._-]{1,64}",
        to in "[A-Za-z0-9._-]{1,64}",
        body in "[^\u{0}]{1,200}",
        escaped in any::<bool>(),
    ) {
        // `all` (any case) is reserved for broadcasts; `.` and `..` are no machine's names.
        prop_assume!(!from.eq_ignore_ascii_case("all"));
        prop_assume!(to == "all" || !to.eq_ignore_ascii_case("all"));
        prop_assume!(![".", ".."].contains(&from.as_str()) && ![".", ".."].contains(&to.as_str()));
        let body_json = if escaped { ascii_escaped(&body) } else { serde_json::to_string(&body).unwrap() };
        let json = format!(r#"{{"from":{},"to":{},"body":{body_json}}}"#,
            serde_json::to_string(&from).unwrap(), serde_json::to_string(&to).unwrap());
        let send = SendRequest::from_json(json.as_bytes()).unwrap();
        prop_assert_eq!(send.from.as_str(), from.as_str());
        prop_assert_eq!(send.to.as_str(), to.as_str());
        prop_assert_eq!(send.body, body);
    }

    #[test]
    fn any_bytes_are_answered_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = SendRequest::from_json(&bytes);
    }

    #[test]
    fn the_limit_is_on_the_decoded_body(extra in 1usize..64, fill in "[a-zé]") {
        let at_limit = fill.repeat(MAX_BODY / fill.len());
        let json = |body: &str| format!(r#"{{"from":"a","to":"b","body":{}}}"#, ascii_escaped(body));
        prop_assert!(SendRequest::from_json(json(&at_limit).as_bytes()).is_ok());
        let over = format!("{at_limit}{}", "x".repeat(extra));
        prop_assert!(SendRequest::from_json(json(&over).as_bytes()).is_err());
    }
}
