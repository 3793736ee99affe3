//! Step 1 of every request: the Host/Origin check against DNS rebinding.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, Uri, header, uri::Authority};
use axum::response::Response;

use super::{Shared, error_response};

/// One allowed host: a name or address, and a port or any port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostRule {
    host: String,
    port: Option<u16>,
}

impl HostRule {
    pub(super) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        // A bare IPv6 address (`::1`) is written with brackets in a Host header.
        let text = if text.matches(':').count() > 1 && !text.starts_with('[') {
            format!("[{text}]")
        } else {
            text.to_owned()
        };
        let authority: Authority = text.parse().ok()?;
        Some(Self { host: authority.host().to_ascii_lowercase(), port: authority.port_u16() })
    }

    fn allows(&self, host: &str, port: Option<u16>) -> bool {
        self.host == host && self.port.is_none_or(|p| Some(p) == port)
    }
}

fn host_allowed(rules: &[HostRule], authority: &Authority) -> bool {
    let host = authority.host().to_ascii_lowercase();
    rules.iter().any(|rule| rule.allows(&host, authority.port_u16()))
}

/// `scheme://host[:port]`, lowercased, without a default port or a trailing slash.
pub(super) fn normalize_origin(text: &str) -> Option<String> {
    let uri: Uri = text.trim().trim_end_matches('/').parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    if uri.path() != "/" && !uri.path().is_empty() {
        return None;
    }
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let host = authority.host().to_ascii_lowercase();
    Some(match authority.port_u16() {
        Some(port) if port != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// Step 1: `Err` is the `400`/`403` answer.
pub(super) fn check(shared: &Shared, request: &Request) -> Result<(), Response> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let (host, second) = (hosts.next(), hosts.next());
    if second.is_some() {
        // Proxies and this check could each read a different one.
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "the request has more than one Host header",
        ));
    }
    let host = host.map(|v| v.to_str().ok().and_then(|h| h.parse::<Authority>().ok()));
    let target = request.uri().authority().cloned();
    let authority = match (host, target) {
        (Some(None), _) => None,
        (Some(Some(host)), Some(target)) => {
            // An absolute-form target (`POST http://x/mcp`) names the host too; both must agree.
            if !same_authority(&host, &target) || !host_allowed(&shared.hosts, &target) {
                tracing::warn!(host = %host, target = %target, "refused an absolute-form request for another host");
                return Err(error_response(
                    StatusCode::BAD_REQUEST,
                    "BAD_REQUEST",
                    "the request target names a host this server does not serve",
                ));
            }
            Some(host)
        }
        (Some(Some(host)), None) => Some(host),
        (None, target) => target,
    };
    let Some(authority) = authority else {
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "the request has no valid Host header",
        ));
    };
    if !host_allowed(&shared.hosts, &authority) {
        tracing::warn!(host = %authority, "refused a request for a foreign Host (possible DNS rebinding)");
        return Err(error_response(StatusCode::FORBIDDEN, "FORBIDDEN", "this Host is not served here"));
    }
    if let Some(origin) = request.headers().get(header::ORIGIN)
        && !origin_allowed(shared, origin)
    {
        tracing::warn!(origin = ?origin, "refused a request from a foreign Origin");
        return Err(error_response(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "this Origin may not call this server",
        ));
    }
    Ok(())
}

fn same_authority(a: &Authority, b: &Authority) -> bool {
    a.host().eq_ignore_ascii_case(b.host()) && a.port_u16() == b.port_u16()
}

fn origin_allowed(shared: &Shared, origin: &HeaderValue) -> bool {
    let Some(origin) = origin.to_str().ok().and_then(normalize_origin) else {
        // `null`, opaque or malformed origins are never allowed.
        return false;
    };
    if shared.origins.contains(&origin) {
        return true;
    }
    origin
        .split_once("://")
        .and_then(|(_, authority)| authority.parse::<Authority>().ok())
        .is_some_and(|authority| host_allowed(&shared.hosts, &authority))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[&str]) -> Vec<HostRule> {
        list.iter().filter_map(|h| HostRule::parse(h)).collect()
    }

    #[test]
    fn hosts_match_with_and_without_ports() {
        let rules = rules(&["localhost", "127.0.0.1", "::1", "api.example.com:8443"]);
        let ok = |h: &str| host_allowed(&rules, &h.parse::<Authority>().unwrap());
        assert!(ok("localhost"));
        assert!(ok("LOCALHOST:8080"));
        assert!(ok("127.0.0.1:1"));
        assert!(ok("[::1]:9000"));
        assert!(ok("api.example.com:8443"));
        assert!(!ok("api.example.com"));
        assert!(!ok("api.example.com:443"));
        assert!(!ok("evil.example"));
        assert!(!ok("localhost.evil.example"));
        assert!(!ok("127.0.0.2"));
    }

    #[test]
    fn origins_are_normalized() {
        assert_eq!(normalize_origin("http://LOCALHOST:80/").as_deref(), Some("http://localhost"));
        assert_eq!(normalize_origin("https://a.example:8443").as_deref(), Some("https://a.example:8443"));
        assert_eq!(normalize_origin("null"), None);
        assert_eq!(normalize_origin("file:///etc"), None);
        assert_eq!(normalize_origin("https://a.example/path"), None);
    }
}
