//! Spin's HTTP route matching: exact routes before wildcards, then the longest wildcard prefix.

use anyhow::bail;

/// A compiled routing table.
#[derive(Debug, Clone, Default)]
pub struct Router {
    routes: Vec<Route>,
}

#[derive(Debug, Clone)]
struct Route {
    /// The route as written in the manifest, e.g. `/api/...`.
    raw: String,
    /// The path without the trailing `/...`, without a trailing slash.
    prefix: String,
    wildcard: bool,
    component: String,
}

/// The result of routing one request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteMatch {
    /// The component that serves the request.
    pub component: String,
    /// The route as written in the manifest (`spin-matched-route`, `spin-raw-component-route`).
    pub raw_route: String,
    /// The route without its wildcard (`spin-component-route`).
    pub component_route: String,
    /// The part of the path after the route's prefix (`spin-path-info`).
    pub path_info: String,
}

fn normalise(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    trimmed.to_string()
}

impl Router {
    /// Builds the table, rejecting route syntax this host does not support and warning about duplicates.
    pub fn build<'a>(routes: impl IntoIterator<Item = (&'a str, &'a str)>) -> anyhow::Result<Self> {
        let mut table = Vec::new();
        for (raw, component) in routes {
            if !raw.starts_with('/') {
                bail!("route `{raw}` must start with `/`");
            }
            let (prefix, wildcard) = match raw.strip_suffix("/...") {
                Some(prefix) => (prefix, true),
                None => (raw, false),
            };
            if prefix.contains("...") || prefix.split('/').any(|s| s.starts_with(':')) {
                bail!(
                    "route `{raw}`: only exact routes and trailing `/...` wildcards are supported by this host"
                );
            }
            let prefix = normalise(prefix);
            if let Some(existing) = table
                .iter()
                .find(|r: &&Route| r.prefix == prefix && r.wildcard == wildcard)
            {
                tracing::warn!(
                    "route `{raw}` of component `{component}` duplicates the route of `{}`; the first wins",
                    existing.component
                );
                continue;
            }
            table.push(Route {
                raw: raw.to_string(),
                prefix,
                wildcard,
                component: component.to_string(),
            });
        }
        Ok(Router { routes: table })
    }

    /// Finds the component for a request path.
    pub fn route(&self, path: &str) -> Option<RouteMatch> {
        let normalised = normalise(path);
        let exact = self
            .routes
            .iter()
            .find(|r| !r.wildcard && r.prefix == normalised);
        let found = exact.or_else(|| {
            self.routes
                .iter()
                .filter(|r| {
                    r.wildcard
                        && (normalised == r.prefix
                            || path
                                .strip_prefix(r.prefix.as_str())
                                .is_some_and(|rest| rest.starts_with('/')))
                })
                .max_by_key(|r| r.prefix.len())
        })?;
        let path_info = if found.wildcard {
            path[found.prefix.len()..].to_string()
        } else {
            String::new()
        };
        Some(RouteMatch {
            component: found.component.clone(),
            raw_route: found.raw.clone(),
            component_route: if found.wildcard {
                found.prefix.clone()
            } else {
                found.raw.clone()
            },
            path_info,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> Router {
        Router::build([
            ("/api/...", "api"),
            ("/docs/...", "docs"),
            ("/", "overview"),
            ("/overview/...", "overview"),
            ("/api/send", "hub"),
            ("/api/inbox/...", "hub"),
            ("/machines", "hub"),
        ])
        .unwrap()
    }

    fn component(path: &str) -> Option<String> {
        router().route(path).map(|m| m.component)
    }

    #[test]
    fn exact_routes_win_over_wildcards() {
        assert_eq!(component("/api/send").as_deref(), Some("hub"));
        assert_eq!(component("/api/sender").as_deref(), Some("api"));
        assert_eq!(component("/machines").as_deref(), Some("hub"));
        assert_eq!(component("/machines/x"), None);
    }

    #[test]
    fn longest_wildcard_prefix_wins() {
        assert_eq!(component("/api/inbox/laptop").as_deref(), Some("hub"));
        assert_eq!(component("/api/inbox").as_deref(), Some("hub"));
        assert_eq!(component("/api/inboxes").as_deref(), Some("api"));
        assert_eq!(component("/api/manifest").as_deref(), Some("api"));
    }

    #[test]
    fn root_route_is_exact() {
        assert_eq!(component("/").as_deref(), Some("overview"));
        assert_eq!(component("/nothing"), None);
    }

    #[test]
    fn path_info_is_what_follows_the_prefix() {
        let m = router().route("/api/raw/a/b/c").unwrap();
        assert_eq!(m.path_info, "/raw/a/b/c");
        assert_eq!(m.raw_route, "/api/...");
        assert_eq!(m.component_route, "/api");
        assert_eq!(router().route("/api").unwrap().path_info, "");
        assert_eq!(router().route("/machines").unwrap().path_info, "");
    }

    #[test]
    fn catch_all_wildcard() {
        let r = Router::build([("/...", "all")]).unwrap();
        assert_eq!(r.route("/").unwrap().path_info, "/");
        assert_eq!(r.route("/x/y").unwrap().path_info, "/x/y");
    }

    #[test]
    fn unsupported_syntax_is_refused() {
        assert!(Router::build([("/users/:id", "x")]).is_err());
        assert!(Router::build([("api", "x")]).is_err());
    }
}
