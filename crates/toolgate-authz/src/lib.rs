//! Who may see and call which tool: an ordered role hierarchy, the role each
//! tool requires (with per-deployment overrides), named toolsets and scoped
//! domains. [`Policy::decide`] is the one place a yes or no is made; every
//! surface (catalog, discovery, schema, guide, execute) asks it.
//!
//! # Example
//!
//! A deployment with four roles raises the role `cancel_order` needs, and gives a
//! support agent a toolset that sees only the travel domain and never cancels.
//!
//! ```
//! use serde_json::json;
//! use toolgate_authz::{Denial, Policy, READ_ONLY};
//! use toolgate_core::{Caller, Effect, ToolSpec};
//!
//! let policy = Policy::from_toml(
//!     r#"
//!     roles = ["guest", "member", "manager", "admin"]   # lowest first
//!     [overrides]
//!     cancel_order = "manager"                           # the tool itself asks for `member`
//!     [toolsets.support]
//!     domains = ["travel"]
//!     exclude = ["cancel_order"]
//!     "#,
//! )?;
//!
//! let schema = json!({"type": "object", "additionalProperties": false});
//! let query = ToolSpec::new("query_order", "Read an order.", schema.clone()).with_domain("travel");
//! let cancel = ToolSpec::new("cancel_order", "Cancel an order.", schema)
//!     .with_role("member")
//!     .with_effect(Effect::Write { idempotent: true })
//!     .with_domain("travel");
//!
//! // The role hierarchy: a member reads, but cancelling now needs a manager or above.
//! let member = Caller::new("u-1", "member");
//! assert!(policy.decide(&member, &query).is_ok());
//! let denial = policy.decide(&member, &cancel).unwrap_err();
//! assert_eq!(denial.required_role(), Some("manager"));
//! assert!(denial.message("cancel_order").contains("needs role `manager` or above"));
//! assert!(policy.decide(&Caller::new("u-2", "admin"), &cancel).is_ok());
//!
//! // A toolset narrows what a caller sees, whatever its role.
//! let agent = Caller::new("bot", "admin").with_toolset("support");
//! assert!(policy.visible(&agent, &query));
//! assert_eq!(policy.decide(&agent, &cancel), Err(Denial::Toolset("support".into())));
//!
//! // `read_only` exists in every deployment: no write tool is visible through it.
//! let info_agent = Caller::new("bot", "admin").with_toolset(READ_ONLY);
//! assert!(policy.visible(&info_agent, &query) && !policy.visible(&info_agent, &cancel));
//! # Ok::<(), toolgate_authz::Error>(())
//! ```
//!
//! # Cargo features
//!
//! None.
#![deny(missing_docs)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolgate_core::{Caller, Effect, ToolSpec};

/// Errors in an authorization configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The hierarchy is empty.
    #[error("the role hierarchy is empty; list at least one role, lowest first")]
    NoRoles,
    /// A role name appears twice or is blank.
    #[error("role `{0}` is blank or listed twice in the hierarchy")]
    BadRole(String),
    /// An override or toolset names a role that is not in the hierarchy.
    #[error("`{place}` names role `{role}`, which is not in the hierarchy ({known})")]
    UnknownRole {
        /// Where the name was found.
        place: String,
        /// The unknown name.
        role: String,
        /// The roles that exist.
        known: String,
    },
    /// The TOML could not be read.
    #[error("authorization config: {0}")]
    Parse(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An ordered list of roles, lowest first. A role may do everything the roles
/// below it may. Names are any non-blank UTF-8 (`访客 < 成员 < 经理 < 总监 < 管理员`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleHierarchy {
    roles: Vec<String>,
}

impl Default for RoleHierarchy {
    /// `guest < member < manager < admin`.
    fn default() -> Self {
        Self { roles: ["guest", "member", "manager", "admin"].map(String::from).to_vec() }
    }
}

impl RoleHierarchy {
    /// A hierarchy from role names, lowest first.
    pub fn new<I, S>(roles: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let roles: Vec<String> = roles.into_iter().map(Into::into).collect();
        if roles.is_empty() {
            return Err(Error::NoRoles);
        }
        for (i, role) in roles.iter().enumerate() {
            if role.trim().is_empty() || roles[..i].contains(role) {
                return Err(Error::BadRole(role.clone()));
            }
        }
        Ok(Self { roles })
    }

    /// The roles, lowest first.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// The lowest role.
    pub fn lowest(&self) -> &str {
        &self.roles[0]
    }

    /// The highest role.
    pub fn highest(&self) -> &str {
        &self.roles[self.roles.len() - 1]
    }

    /// The position of a role, 0 for the lowest; `None` when unknown.
    pub fn rank(&self, role: &str) -> Option<usize> {
        self.roles.iter().position(|r| r == role)
    }

    /// Whether `role` is `required` or above. An unknown role satisfies nothing,
    /// and nothing satisfies an unknown requirement.
    pub fn satisfies(&self, role: &str, required: &str) -> bool {
        matches!((self.rank(role), self.rank(required)), (Some(have), Some(need)) if have >= need)
    }

    fn known(&self) -> String {
        self.roles.join(" < ")
    }
}

/// A named narrowing of what a caller may see, on top of the role: e.g. a
/// read-only agent that can neither see nor call any write tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Toolset {
    /// Only read tools.
    #[serde(default)]
    pub read_only: bool,
    /// When non-empty, only these tools.
    #[serde(default)]
    pub tools: Vec<String>,
    /// When non-empty, only tools of these domains.
    #[serde(default)]
    pub domains: Vec<String>,
    /// Never these tools.
    #[serde(default)]
    pub exclude: Vec<String>,
}

impl Toolset {
    /// A toolset of read tools only (what the built-in [`READ_ONLY`] is).
    pub fn read_only() -> Self {
        Self { read_only: true, ..Self::default() }
    }

    /// Admit only these tools.
    pub fn with_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Admit only tools of these domains.
    pub fn with_domains<I, S>(mut self, domains: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.domains = domains.into_iter().map(Into::into).collect();
        self
    }

    /// Never admit these tools.
    pub fn with_exclude<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude = tools.into_iter().map(Into::into).collect();
        self
    }

    fn admits(&self, spec: &ToolSpec) -> bool {
        (!self.read_only || spec.effect == Effect::Read)
            && (self.tools.is_empty() || self.tools.contains(&spec.name))
            && (self.domains.is_empty() || self.domains.contains(&spec.domain))
            && !self.exclude.contains(&spec.name)
    }
}

/// The authorization part of a deployment's configuration (`[authz]` in `toolgate.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AuthzConfig {
    /// Role names, lowest first; empty means the default hierarchy.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Per-tool required role, replacing the tool's own.
    #[serde(default)]
    pub overrides: BTreeMap<String, String>,
    /// Named toolsets.
    #[serde(default)]
    pub toolsets: BTreeMap<String, Toolset>,
}

/// Why a caller may not use a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Denial {
    /// The caller's role is below the role the tool needs.
    Role {
        /// The role the tool needs.
        required: String,
        /// The caller's role.
        have: String,
    },
    /// The caller's toolset leaves the tool out (or names no known toolset).
    Toolset(String),
    /// The session is scoped to other domains.
    Scope(Vec<String>),
}

impl Denial {
    /// A message for the model: what is needed, without revealing more than that.
    pub fn message(&self, tool: &str) -> String {
        match self {
            Denial::Role { required, have } => format!(
                "`{tool}` needs role `{required}` or above; this caller is `{have}`. Do not retry: ask the user to have someone with that role do it."
            ),
            Denial::Toolset(set) => {
                format!("`{tool}` is not part of toolset `{set}` used by this session. Use another tool.")
            }
            Denial::Scope(domains) => format!(
                "`{tool}` is outside this session's scope ({}). Use a tool of those domains.",
                domains.join(", ")
            ),
        }
    }

    /// The role the tool needs, when the role is why.
    pub fn required_role(&self) -> Option<&str> {
        match self {
            Denial::Role { required, .. } => Some(required),
            _ => None,
        }
    }
}

/// The toolset every deployment has: read tools only (an "info agent").
pub const READ_ONLY: &str = "read_only";

/// The role hierarchy, overrides and toolsets of one deployment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    hierarchy: RoleHierarchy,
    overrides: BTreeMap<String, String>,
    toolsets: BTreeMap<String, Toolset>,
}

impl Policy {
    /// A policy from a hierarchy alone.
    pub fn new(hierarchy: RoleHierarchy) -> Self {
        Self { hierarchy, overrides: BTreeMap::new(), toolsets: BTreeMap::new() }
    }

    /// A policy from configuration; every role it names must exist.
    pub fn from_config(config: AuthzConfig) -> Result<Self> {
        let hierarchy = if config.roles.is_empty() {
            RoleHierarchy::default()
        } else {
            RoleHierarchy::new(config.roles)?
        };
        for (tool, role) in &config.overrides {
            if hierarchy.rank(role).is_none() {
                return Err(Error::UnknownRole {
                    place: format!("overrides.{tool}"),
                    role: role.clone(),
                    known: hierarchy.known(),
                });
            }
        }
        Ok(Self { hierarchy, overrides: config.overrides, toolsets: config.toolsets })
    }

    /// A policy from TOML text (the `[authz]` table's contents).
    pub fn from_toml(text: &str) -> Result<Self> {
        let config: AuthzConfig = toml::from_str(text).map_err(|e| Error::Parse(e.to_string()))?;
        Self::from_config(config)
    }

    /// Set a per-tool role override.
    pub fn with_override(mut self, tool: impl Into<String>, role: impl Into<String>) -> Result<Self> {
        let (tool, role) = (tool.into(), role.into());
        if self.hierarchy.rank(&role).is_none() {
            return Err(Error::UnknownRole {
                place: format!("overrides.{tool}"),
                role,
                known: self.hierarchy.known(),
            });
        }
        self.overrides.insert(tool, role);
        Ok(self)
    }

    /// Add a named toolset.
    pub fn with_toolset(mut self, name: impl Into<String>, toolset: Toolset) -> Self {
        self.toolsets.insert(name.into(), toolset);
        self
    }

    /// The hierarchy.
    pub fn hierarchy(&self) -> &RoleHierarchy {
        &self.hierarchy
    }

    /// The role a tool requires in this deployment (the override, else the tool's own).
    pub fn required_role<'a>(&'a self, spec: &'a ToolSpec) -> &'a str {
        self.overrides.get(&spec.name).map_or(spec.required_role.as_str(), String::as_str)
    }

    /// The one allow/deny decision.
    pub fn decide(&self, caller: &Caller, spec: &ToolSpec) -> Result<(), Denial> {
        if let Some(domains) = &caller.domains
            && !domains.contains(&spec.domain)
        {
            return Err(Denial::Scope(domains.clone()));
        }
        if let Some(name) = &caller.toolset {
            match self.toolset(name) {
                Some(set) if set.admits(spec) => {}
                _ => return Err(Denial::Toolset(name.clone())),
            }
        }
        let required = self.required_role(spec);
        if self.hierarchy.satisfies(&caller.role, required) {
            Ok(())
        } else {
            Err(Denial::Role { required: required.to_string(), have: caller.role.clone() })
        }
    }

    /// A toolset by name. [`READ_ONLY`] always exists (every read tool, no
    /// write tool) unless the deployment defines its own under that name.
    pub fn toolset(&self, name: &str) -> Option<&Toolset> {
        static BUILT_IN: Toolset =
            Toolset { read_only: true, tools: Vec::new(), domains: Vec::new(), exclude: Vec::new() };
        self.toolsets.get(name).or((name == READ_ONLY).then_some(&BUILT_IN))
    }

    /// Whether the caller may see (and so call) the tool.
    pub fn visible(&self, caller: &Caller, spec: &ToolSpec) -> bool {
        self.decide(caller, spec).is_ok()
    }

    /// Whether a role reaches a required role (for skills, which carry a role of their own).
    pub fn role_satisfies(&self, role: &str, required: &str) -> bool {
        self.hierarchy.satisfies(role, required)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_core::Effect;

    use super::*;

    fn tool(name: &str, role: &str, effect: Effect, domain: &str) -> ToolSpec {
        ToolSpec::new(name, "d", json!({"type": "object", "additionalProperties": false}))
            .with_role(role)
            .with_effect(effect)
            .with_domain(domain)
    }

    #[test]
    fn default_hierarchy_orders_roles() {
        let h = RoleHierarchy::default();
        assert!(h.satisfies("admin", "guest"));
        assert!(h.satisfies("member", "member"));
        assert!(!h.satisfies("member", "manager"));
        assert!(!h.satisfies("intruder", "guest"));
        assert!(!h.satisfies("admin", "superuser"));
    }

    #[test]
    fn five_level_hierarchy_in_chinese() {
        let policy = Policy::from_toml(
            r#"
            roles = ["访客", "成员", "经理", "总监", "管理员"]
            [overrides]
            query_report = "总监"
            "#,
        )
        .unwrap();
        let spec = tool("query_report", "成员", Effect::Read, "hr");
        assert_eq!(policy.required_role(&spec), "总监");
        let manager = Caller::new("u", "经理");
        let denial = policy.decide(&manager, &spec).unwrap_err();
        assert_eq!(denial.required_role(), Some("总监"));
        assert!(denial.message("query_report").contains("总监"));
        assert!(policy.decide(&Caller::new("u", "管理员"), &spec).is_ok());
    }

    #[test]
    fn bad_configs_are_refused_with_the_reason() {
        assert_eq!(RoleHierarchy::new(Vec::<String>::new()), Err(Error::NoRoles));
        assert_eq!(RoleHierarchy::new(["a", "b", "a"]), Err(Error::BadRole("a".into())));
        let err = Policy::from_toml("roles = [\"a\"]\n[overrides]\nx_y = \"b\"").unwrap_err();
        assert!(matches!(err, Error::UnknownRole { ref role, .. } if role == "b"), "{err}");
        assert!(matches!(Policy::from_toml("rolez = []"), Err(Error::Parse(_))));
    }

    #[test]
    fn read_only_toolset_hides_every_write_tool() {
        let policy =
            Policy::default().with_toolset("read_only", Toolset { read_only: true, ..Toolset::default() });
        let agent = Caller::new("bot", "admin").with_toolset("read_only");
        assert!(policy.visible(&agent, &tool("query_order", "guest", Effect::Read, "travel")));
        let write = tool("cancel_order", "guest", Effect::Write { idempotent: true }, "travel");
        assert_eq!(policy.decide(&agent, &write), Err(Denial::Toolset("read_only".into())));
        let built_in = Policy::default();
        let info_agent = Caller::new("bot", "admin").with_toolset(READ_ONLY);
        assert!(built_in.toolset(READ_ONLY).is_some(), "read_only exists without configuration");
        assert!(!built_in.visible(
            &info_agent,
            &ToolSpec::new("cancel_x", "d", json!({})).with_effect(Effect::Write { idempotent: true })
        ));
        let unknown = Caller::new("bot", "admin").with_toolset("nope");
        assert!(!policy.visible(&unknown, &tool("query_order", "guest", Effect::Read, "travel")));
    }

    #[test]
    fn scoped_domains_hide_other_domains() {
        let policy = Policy::default();
        let caller = Caller::new("u", "admin").with_domains(["nutrition"]);
        assert!(policy.visible(&caller, &tool("query_nutrition", "guest", Effect::Read, "nutrition")));
        assert!(matches!(
            policy.decide(&caller, &tool("query_training", "guest", Effect::Read, "training")),
            Err(Denial::Scope(_))
        ));
    }
}
