//! The one place YAML is parsed.
//!
//! `serde_yaml` is archived upstream; everything else in the crate sees YAML
//! only as a [`serde_json::Value`], so a maintained fork replaces it here in one line.

use std::collections::HashMap;

use yaml_rust2::parser::Event;

use crate::limits::{MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_NODES};

/// Parses a YAML document into a JSON value; the error is a one-line message. A document over
/// one of the [`crate::limits`] is an error before it is built.
pub(crate) fn parse_yaml(text: &str) -> Result<serde_json::Value, String> {
    check_yaml_cost(text).map_err(|over| over.message)?;
    serde_yaml::from_str::<serde_json::Value>(text).map_err(|e| e.to_string())
}

/// Why a YAML document is refused before it is built, and the line where that became clear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OverLimit {
    pub(crate) message: String,
    pub(crate) line: usize,
}

/// Walks the document's events (linear in its size, stopping at the first limit passed) and
/// counts its nesting depth and its nodes with every alias expanded, as building it would.
/// A document the event parser cannot read is left to serde_yaml, which reports the error;
/// [`MAX_YAML_BYTES`] bounds what that can cost.
pub(crate) fn check_yaml_cost(text: &str) -> Result<(), OverLimit> {
    if text.len() > MAX_YAML_BYTES {
        return Err(OverLimit {
            message: format!(
                "the YAML is {} bytes, over the limit of {MAX_YAML_BYTES}",
                text.len()
            ),
            line: 1,
        });
    }
    let mut parser = yaml_rust2::parser::Parser::new_from_str(text);
    // Expanded size of each anchored node, and the open collections: (anchor, nodes before it).
    let mut anchored: HashMap<usize, usize> = HashMap::new();
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut nodes: usize = 0;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(next) => next,
            // The scanner reads ahead through a line of brackets and stops at 255 levels.
            Err(e) if e.info().contains("recursion limit") => {
                return Err(OverLimit {
                    message: format!(
                        "the YAML nests deeper than the limit of {MAX_YAML_DEPTH} levels"
                    ),
                    line: e.marker().line(),
                });
            }
            Err(_) => return Ok(()),
        };
        let over = |message: String| OverLimit {
            message,
            line: mark.line(),
        };
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Scalar(_, _, anchor, _) => {
                nodes = nodes.saturating_add(1);
                if anchor > 0 {
                    anchored.insert(anchor, 1);
                }
            }
            Event::Alias(anchor) => {
                nodes = nodes.saturating_add(anchored.get(&anchor).copied().unwrap_or(1));
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                nodes = nodes.saturating_add(1);
                open.push((anchor, nodes - 1));
                if open.len() > MAX_YAML_DEPTH {
                    return Err(over(format!(
                        "the YAML nests deeper than the limit of {MAX_YAML_DEPTH} levels"
                    )));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, before)) = open.pop()
                    && anchor > 0
                {
                    anchored.insert(anchor, nodes - before);
                }
            }
            _ => {}
        }
        if nodes > MAX_YAML_NODES {
            return Err(over(format!(
                "the YAML holds more than {MAX_YAML_NODES} values with its aliases expanded"
            )));
        }
    }
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
    if let Err(over) = check_yaml_cost(text) {
        return Some(over.line);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        format!("a: {}1{}\n", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn depth_is_bounded_before_parsing() {
        assert!(parse_yaml(&nested(MAX_YAML_DEPTH - 1)).is_ok());
        let err = parse_yaml(&nested(MAX_YAML_DEPTH)).unwrap_err();
        assert!(err.contains("deeper than the limit of 32"), "{err}");
        // The depth that took 41 s before the guard, within the byte limit's reach.
        let deep = nested(30_000);
        let started = std::time::Instant::now();
        assert!(parse_yaml(&deep).unwrap_err().contains("deeper"));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn aliases_count_as_expanded() {
        // 20 KB: serde_yaml's own guard lets this through, building 16 million values.
        let items = vec!["x"; 4000].join(", ");
        let refs = vec!["*a"; 4000].join(", ");
        let text = format!("a: &a [{items}]\nb: [{refs}]\n");
        let err = parse_yaml(&text).unwrap_err();
        assert!(err.contains("more than 10000 values"), "{err}");
        assert_eq!(yaml_error_line(&text), Some(2));
        // Aliases of a small anchor stay well inside the limit.
        assert!(parse_yaml("a: &a [1, 2]\nb: [*a, *a, *a]\n").is_ok());
        // Nested anchors multiply: nine levels of ten aliases is 10^9 values.
        let mut laughs = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..9 {
            let prev = format!("*l{}", level - 1);
            laughs.push_str(&format!(
                "l{level}: &l{level} [{}]\n",
                vec![prev; 10].join(", ")
            ));
        }
        assert!(parse_yaml(&laughs).unwrap_err().contains("values"));
    }

    #[test]
    fn size_is_bounded() {
        let big = format!("title: {}\n", "x".repeat(MAX_YAML_BYTES));
        let err = parse_yaml(&big).unwrap_err();
        assert!(err.contains("over the limit of 65536"), "{err}");
        assert!(parse_yaml("title: plain\n").is_ok());
    }

    #[test]
    fn syntax_errors_are_still_serde_yamls() {
        let err = parse_yaml("title: [unclosed\n").unwrap_err();
        assert!(!err.contains("limit"), "{err}");
    }
}
