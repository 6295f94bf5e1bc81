//! The development-mode `Host` check against DNS rebinding: a page on another site that
//! resolves its own name to 127.0.0.1 reaches a developer's dochub with its own name in `Host`,
//! so in development only loopback names (and names the operator lists in `allowed_hosts`)
//! are answered.
//!
//! Which name a component sees, from Spin v4.0.2's source: the trigger sets the request URI's
//! authority from the `Host` header (`crates/trigger-http/src/server.rs`, `set_req_uri`) and
//! builds `spin-full-url` from the same header (`crates/trigger-http/src/headers.rs`); wasi-http
//! drops `Host` itself. So the component reads the authority of `spin-full-url`.

/// Whether `authority` (`name[:port]`) may be answered in development.
///
/// ```
/// use dochub_http::host_allowed;
/// assert!(host_allowed("127.0.0.1:3000", ""));
/// assert!(host_allowed("[::1]:3000", ""));
/// assert!(host_allowed("LOCALHOST", ""));
/// assert!(!host_allowed("attacker.example:3000", ""));
/// assert!(host_allowed("devbox.lan:3000", "devbox.lan, other"));
/// ```
pub fn host_allowed(authority: &str, allowed_hosts: &str) -> bool {
    let name = host_name(authority).to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    if name == "localhost" || name.ends_with(".localhost") || name == "[::1]" {
        return true;
    }
    if name
        .parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| ip.is_loopback())
    {
        return true;
    }
    allowed_hosts
        .split(',')
        .map(|entry| host_name(entry.trim()).trim_end_matches('.'))
        .any(|entry| !entry.is_empty() && entry.eq_ignore_ascii_case(name))
}

/// The authority of an absolute URL such as `spin-full-url` (`http://host:port/path`).
///
/// ```
/// assert_eq!(dochub_http::url_authority("http://127.0.0.1:3000/api/x?y"), Some("127.0.0.1:3000"));
/// assert_eq!(dochub_http::url_authority("/relative"), None);
/// ```
pub fn url_authority(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    // Userinfo never names the host.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    (!authority.is_empty()).then_some(authority)
}

/// `name` of `name[:port]`; an IPv6 literal keeps its brackets.
fn host_name(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority
        .rsplit_once(':')
        .map_or(authority, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebinding_names_are_refused() {
        for bad in [
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.evil.example:3000",
            "[::2]:3000",
            "0.0.0.0:3000",
            "",
            "10.0.0.1",
        ] {
            assert!(!host_allowed(bad, ""), "{bad}");
        }
        for good in [
            "127.0.0.1",
            "127.1.2.3:80",
            "localhost:3000",
            "app.localhost",
            "[::1]",
        ] {
            assert!(host_allowed(good, ""), "{good}");
        }
        assert!(!host_allowed("evil.example", ",,"));
    }
}
