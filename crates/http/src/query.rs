//! Query strings, read the way browsers write forms: pairs split on `&`, `+` a space,
//! percent-escapes decoded lossily (a bad escape never fails a request).

use percent_encoding::percent_decode_str;

/// Every `key=value` pair in order (a bare `key` has an empty value).
///
/// ```
/// let pairs = dochub_http::query_pairs("q=a+b&ack&x=%C3%BC");
/// assert_eq!(pairs, [("q".into(), "a b".into()), ("ack".into(), "".into()), ("x".into(), "ü".into())]);
/// ```
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// The first value of a query parameter.
///
/// ```
/// assert_eq!(dochub_http::query_param("x=1&q=a+b&q=2", "q").as_deref(), Some("a b"));
/// assert_eq!(dochub_http::query_param("qq=1", "q"), None);
/// ```
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query_pairs(query)
        .into_iter()
        .find_map(|(key, value)| (key == name).then_some(value))
}

fn decode(part: &str) -> String {
    percent_decode_str(&part.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}
