//! Property tests of the `/api` route parser, on generated paths. Few cases by default so CI
//! stays fast; `PROPTEST_CASES=2000` runs a deeper search.

use dochub_app::api::{Route, route};
use dochub_content::{encode_segment, is_valid_id};
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

/// A valid id: what listings show and routes accept.
fn id() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9é][a-zA-Z0-9 ._%#?ü-]{0,20}".prop_filter("valid id", |s| is_valid_id(s))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn routes_round_trip_through_encoding(p in id(), s in id(), page in id()) {
        let path = format!(
            "/raw/{}/{}/{}",
            encode_segment(&p),
            encode_segment(&s),
            encode_segment(&page)
        );
        prop_assert_eq!(route(&path), Route::Raw(p.clone(), s.clone(), page));
        let path = format!("/manifest/{}/{}/", encode_segment(&p), encode_segment(&s));
        prop_assert_eq!(route(&path), Route::SubprojectManifest(p, s));
    }

    #[test]
    fn any_path_routes_without_panic(path in "(/[^/]{0,12}){0,6}") {
        let _ = route(&path);
    }
}
