//! A verified token's claims (a JWT's payload or an introspection answer)
//! turned into who the caller is: [`Verified`].

use std::collections::HashMap;
use std::time::SystemTime;

use serde_json::{Map, Value};

use super::{Rejection, ResourceConfig, Verified, shown};

/// The mapping from claims to a [`Verified`], built once from the
/// configuration and the role hierarchy.
#[derive(Debug)]
pub(crate) struct ClaimMapper {
    /// Claim value -> (role, rank in the hierarchy).
    roles: HashMap<String, (String, usize)>,
}

impl ClaimMapper {
    /// The mapper for `config`; `hierarchy` (lowest..highest) was checked
    /// against it.
    pub(crate) fn new(config: &ResourceConfig, hierarchy: &[String]) -> Self {
        let rank = |role: &str| hierarchy.iter().position(|r| r == role).unwrap_or(0);
        let roles =
            config.roles.iter().map(|(value, role)| (value.clone(), (role.clone(), rank(role)))).collect();
        Self { roles }
    }

    /// Who the caller of a token with `claims` is. `expires_at` is the
    /// token's expiry. `sub` is required when `sub_required` (JWTs, RFC 9068);
    /// without it (introspection, RFC 7662) the user id stands in.
    pub(crate) fn verified(
        &self,
        config: &ResourceConfig,
        claims: &Map<String, Value>,
        sub_required: bool,
        expires_at: SystemTime,
    ) -> Result<Verified, Rejection> {
        let subject = match claims.get("sub") {
            Some(Value::String(sub)) if !sub.is_empty() => Some(sub.clone()),
            None if !sub_required => None,
            _ => {
                return Err(Rejection::Invalid(
                    "the token has no `sub` claim (a non-empty string)".to_owned(),
                ));
            }
        };
        let user_id = match lookup(claims, &config.user_claim) {
            Some(Value::String(user)) if !user.is_empty() => user.clone(),
            _ => {
                return Err(Rejection::NoRole(format!(
                    "the token carries no `{}` claim (a non-empty string) to identify the user",
                    config.user_claim
                )));
            }
        };
        let role = self.role(config, claims)?;
        let tenant = config.tenant_claim.as_deref().and_then(|name| match lookup(claims, name) {
            Some(Value::String(tenant)) if !tenant.is_empty() => Some(tenant.clone()),
            _ => None,
        });
        let scopes = scopes(claims);
        let toolset = if config.scopes.is_empty() {
            None
        } else {
            let carried = |scope: &String| scopes.iter().any(|s| s == scope);
            let all =
                config.scopes.iter().any(|(scope, toolset)| toolset == super::ALL_TOOLS && carried(scope));
            match config.scopes.iter().find(|(scope, _)| carried(scope)) {
                // A scope that grants everything the role allows beats any narrower one.
                Some(_) if all => None,
                Some((_, toolset)) => Some(toolset.clone()),
                None => {
                    let wanted: Vec<&str> = config.scopes.iter().map(|(scope, _)| scope.as_str()).collect();
                    return Err(Rejection::InsufficientScope(format!(
                        "the token carries none of the scopes toolgate accepts ({})",
                        wanted.join(" ")
                    )));
                }
            }
        };
        Ok(Verified {
            subject: subject.unwrap_or_else(|| user_id.clone()),
            user_id,
            role,
            tenant,
            toolset,
            scopes,
            expires_at,
        })
    }

    /// The highest role any value of the role claim maps to, else the
    /// default role, else [`Rejection::NoRole`].
    fn role(&self, config: &ResourceConfig, claims: &Map<String, Value>) -> Result<String, Rejection> {
        let values: Vec<&str> = match lookup(claims, &config.role_claim) {
            Some(Value::String(value)) => vec![value.as_str()],
            Some(Value::Array(values)) => values.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let best = values.iter().filter_map(|value| self.roles.get(*value)).max_by_key(|(_, rank)| *rank);
        if let Some((role, _)) = best {
            return Ok(role.clone());
        }
        if let Some(role) = &config.default_role {
            return Ok(role.clone());
        }
        Err(Rejection::NoRole(if values.is_empty() {
            format!(
                "the token carries no `{}` value (a string or an array of strings), and no default role \
                 is configured",
                config.role_claim
            )
        } else {
            let listed: Vec<String> = values.iter().take(5).map(|v| shown(v)).collect();
            format!(
                "none of the token's `{}` values ({}{}) maps to a role, and no default role is configured",
                config.role_claim,
                listed.join(", "),
                if values.len() > 5 { ", ..." } else { "" }
            )
        }))
    }
}

/// The claim `name`: a top-level claim, or when there is none and the name
/// has dots, the path through nested objects (`realm_access.roles`).
pub(crate) fn lookup<'a>(claims: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(value) = claims.get(name) {
        return Some(value);
    }
    if !name.contains('.') {
        return None;
    }
    let mut parts = name.split('.');
    let mut value = claims.get(parts.next()?)?;
    for part in parts {
        value = value.as_object()?.get(part)?;
    }
    Some(value)
}

/// The token's scopes: `scope` (a space-separated string, RFC 8693/9068)
/// and `scp` (an array, or a space-separated string as some providers send
/// it), in order, each once.
pub(crate) fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |scope: &str| {
        if !scope.is_empty() && !out.iter().any(|s| s == scope) {
            out.push(scope.to_owned());
        }
    };
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(list)) => list.split_ascii_whitespace().for_each(&mut add),
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn dotted_claims_are_paths_unless_top_level() {
        let claims = map(json!({
            "realm_access": {"roles": ["admin"]},
            "https://example.com/roles": "top",
        }));
        assert_eq!(lookup(&claims, "realm_access.roles"), Some(&json!(["admin"])));
        assert_eq!(lookup(&claims, "https://example.com/roles"), Some(&json!("top")));
        assert_eq!(lookup(&claims, "realm_access.missing"), None);
        assert_eq!(lookup(&claims, "nothing"), None);
    }

    #[test]
    fn scopes_from_scope_and_scp() {
        assert_eq!(scopes(&map(json!({"scope": "a  b a"}))), ["a", "b"]);
        assert_eq!(scopes(&map(json!({"scp": ["a", "c", 3]}))), ["a", "c"]);
        assert_eq!(scopes(&map(json!({"scope": "a", "scp": "b a"}))), ["a", "b"]);
        assert!(scopes(&map(json!({"scope": 5}))).is_empty());
    }
}
