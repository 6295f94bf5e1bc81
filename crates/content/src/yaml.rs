//! The one place YAML is parsed.
//!
//! `serde_yaml` is archived upstream; everything else in the crate sees YAML
//! only as a [`serde_json::Value`], so a maintained fork replaces it here in one line.

/// Parses a YAML document into a JSON value; the error is a one-line message.
pub(crate) fn parse_yaml(text: &str) -> Result<serde_json::Value, String> {
    serde_yaml::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())
}

/// A string field of a mapping: strings as they are, numbers and booleans
/// written out; `None` when missing, null, blank or of another type.
pub(crate) fn str_field(map: &serde_json::Value, key: &str) -> Option<String> {
    let s = match map.get(key)? {
        serde_json::Value::String(s) => s.trim().to_owned(),
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!s.is_empty()).then_some(s)
}

/// The 1-based line of the first YAML syntax error in `text`, if there is one and the
/// parser can tell where (for `dochub check`'s `file:line` output).
pub(crate) fn yaml_error_line(text: &str) -> Option<usize> {
    serde_yaml::from_str::<serde_json::Value>(text)
        .err()?
        .location()
        .map(|l| l.line())
}

/// The key that places a page, subproject or project in reading order.
pub(crate) const ORDER_KEY: &str = "order";

/// `order` of a mapping: `Ok(None)` when missing or null, an error naming what was found when
/// it is not an integer (then it is ignored for sorting).
pub(crate) fn order_field(map: &serde_json::Value) -> Result<Option<i64>, String> {
    match map.get(ORDER_KEY) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(other) => {
            let mut shown = other.to_string();
            if shown.len() > 40 {
                let cut = shown.floor_char_boundary(40);
                shown.truncate(cut);
                shown.push('…');
            }
            Err(format!(
                "`order` is {shown}, not a whole number from {} to {}; ignored for sorting",
                i64::MIN,
                i64::MAX
            ))
        }
    }
}
