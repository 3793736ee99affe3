//! The Protected Resource Metadata (RFC 9728), where it lives, the
//! `WWW-Authenticate` challenge, and the configuration checks.

use std::time::Duration;

use jsonwebtoken::Algorithm;
use toolgate_core::Secret;
use toolgate_oauth::resource::{IntrospectionConfig, Rejection, ResourceConfig, Verifier};

use crate::{client, hierarchy};

fn verifier(issuer: &str, resource: &str, scopes: &[(&str, &str)]) -> Verifier {
    let mut config = ResourceConfig::new(issuer, resource);
    config.default_role = Some("member".to_owned());
    config.scopes = scopes.iter().map(|(s, t)| ((*s).to_owned(), (*t).to_owned())).collect();
    Verifier::new(config, client(), hierarchy()).unwrap()
}

#[test]
fn metadata_strings_are_as_configured() {
    let plain = verifier("https://login.example.com/realms/acme", "https://mcp.example.com/mcp", &[]);
    assert_eq!(
        serde_json::to_string(&plain.metadata()).unwrap(),
        r#"{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://login.example.com/realms/acme"],"bearer_methods_supported":["header"]}"#
    );
    // a trailing slash stays, nothing is normalised (not even the host's case or a default port)
    let slashed = verifier(
        "https://login.example.com/realms/acme/",
        "https://MCP.example.com:443/",
        &[("toolgate.read", "readonly"), ("toolgate.all", "all")],
    );
    assert_eq!(
        serde_json::to_string(&slashed.metadata()).unwrap(),
        r#"{"resource":"https://MCP.example.com:443/","authorization_servers":["https://login.example.com/realms/acme/"],"scopes_supported":["toolgate.read","toolgate.all"],"bearer_methods_supported":["header"]}"#
    );
    assert_eq!(slashed.scopes_supported(), ["toolgate.read", "toolgate.all"]);
    assert_eq!(slashed.config().issuer, "https://login.example.com/realms/acme/");
    let bare = verifier("https://login.example.com", "http://127.0.0.1:8080", &[]);
    assert_eq!(bare.metadata()["authorization_servers"][0], "https://login.example.com");
    assert_eq!(bare.metadata()["resource"], "http://127.0.0.1:8080");
}

#[test]
fn metadata_url_follows_the_resource_path() {
    for (resource, url, path) in [
        (
            "https://mcp.example.com/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource/mcp",
        ),
        (
            "https://mcp.example.com/tenants/acme/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource/tenants/acme/mcp",
            "/.well-known/oauth-protected-resource/tenants/acme/mcp",
        ),
        (
            "https://mcp.example.com",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource",
        ),
        (
            "https://mcp.example.com/",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource",
        ),
        (
            "http://127.0.0.1:8080/mcp/",
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource/mcp",
        ),
    ] {
        let verifier = verifier("https://login.example.com", resource, &[]);
        assert_eq!(verifier.metadata_url(), url, "{resource}");
        assert_eq!(verifier.metadata_path(), path, "{resource}");
    }
}

#[test]
fn challenges_point_at_the_metadata() {
    let scoped = verifier(
        "https://login.example.com",
        "https://mcp.example.com/mcp",
        &[("tools.read", "r"), ("tools.all", "a")],
    );
    let url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    assert_eq!(
        scoped.challenge(None),
        format!("Bearer resource_metadata=\"{url}\", scope=\"tools.read tools.all\"")
    );
    assert_eq!(
        scoped.challenge(Some(&Rejection::Invalid("x".into()))),
        format!("Bearer resource_metadata=\"{url}\", error=\"invalid_token\"")
    );
    assert_eq!(
        scoped.challenge(Some(&Rejection::InsufficientScope("x".into()))),
        format!(
            "Bearer resource_metadata=\"{url}\", error=\"insufficient_scope\", scope=\"tools.read tools.all\""
        )
    );
    assert_eq!(
        scoped.challenge(Some(&Rejection::NoRole("x".into()))),
        format!("Bearer resource_metadata=\"{url}\"")
    );
    let plain = verifier("https://login.example.com", "https://mcp.example.com/mcp", &[]);
    assert_eq!(plain.challenge(None), format!("Bearer resource_metadata=\"{url}\""));
}

#[test]
fn configurations_that_cannot_work_are_refused() {
    let good = || {
        let mut config =
            ResourceConfig::new("https://login.example.com/realms/acme", "https://mcp.example.com/mcp");
        config.default_role = Some("member".to_owned());
        config
    };
    assert_eq!(good().check(), Ok(()));
    let defaults = ResourceConfig::new("https://i.example", "https://r.example");
    assert_eq!(defaults.role_claim, "groups");
    assert_eq!(defaults.user_claim, "sub");
    assert_eq!(defaults.leeway, Duration::from_secs(2));
    assert_eq!(defaults.jwks_refresh_floor, Duration::from_secs(30));
    assert!(
        defaults.algorithms.contains(&Algorithm::ES256) && defaults.algorithms.contains(&Algorithm::RS256)
    );
    assert!(defaults.algorithms.iter().all(|alg| !format!("{alg:?}").starts_with("HS")));

    type Change = fn(&mut ResourceConfig);
    let cases: Vec<(Change, &str)> = vec![
        (|c| c.resource = "mcp.example.com/mcp".into(), "absolute URL"),
        (|c| c.resource = "http://mcp.example.com/mcp".into(), "https"),
        (|c| c.resource = "https://mcp.example.com/mcp#top".into(), "fragment"),
        (|c| c.resource = "https://mcp.example.com/mcp?x=1".into(), "query"),
        (|c| c.issuer = "http://login.example.com".into(), "https"),
        (|c| c.issuer = "https://login.example.com/realms/acme?x".into(), "query"),
        (|c| c.issuer = String::new(), "issuer is empty"),
        (|c| c.roles.push(("staff".into(), String::new())), "may be empty"),
        (|c| c.roles = vec![("a".into(), "member".into()), ("a".into(), "admin".into())], "twice"),
        (|c| c.default_role = Some(String::new()), "default_role"),
        (|c| c.scopes.push(("two words".into(), "t".into())), "scope name"),
        (|c| c.scopes.push(("s".into(), String::new())), "empty toolset"),
        (|c| c.role_claim = String::new(), "role_claim"),
        (|c| c.user_claim = String::new(), "user_claim"),
        (|c| c.tenant_claim = Some(String::new()), "tenant_claim"),
        (|c| c.leeway = Duration::from_secs(3600), "leeway"),
        (|c| c.algorithms = vec![Algorithm::HS512], "symmetric"),
        (|c| c.algorithms = Vec::new(), "at least one"),
        (
            |c| {
                c.introspection = Some(IntrospectionConfig {
                    url: "http://login.example.com/introspect".into(),
                    client_id: "gw".into(),
                    client_secret: Secret::new("s"),
                })
            },
            "introspection.url",
        ),
        (
            |c| {
                c.introspection = Some(IntrospectionConfig {
                    url: "https://login.example.com/introspect".into(),
                    client_id: "gw".into(),
                    client_secret: Secret::new(""),
                })
            },
            "client_secret",
        ),
    ];
    for (change, needle) in cases {
        let mut config = good();
        change(&mut config);
        let error = config.check().unwrap_err();
        assert!(error.contains(needle), "{error:?} does not say {needle:?}");
        let error = Verifier::new(config, client(), hierarchy()).unwrap_err();
        assert!(error.contains(needle), "{error:?}");
    }
    // loopback hosts may use plain http
    let mut local = good();
    local.issuer = "http://127.0.0.1:8080/realms/acme".into();
    local.resource = "http://localhost:3000/mcp".into();
    assert_eq!(local.check(), Ok(()));
}
