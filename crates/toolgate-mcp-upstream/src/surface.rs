//! One upstream's MCP surface beside its tools: what it listed (prompts, resources,
//! resource templates) and what it can do (completions, subscriptions), read by the
//! supervisor after connecting and after each `list_changed`; its names under toolgate,
//! and who may see it.

use rmcp::model::{Prompt, Resource, ResourceTemplate};
use rmcp::{Peer, RoleClient};
use toolgate_core::names::NAMESPACE_SEPARATOR;
use toolgate_core::{Caller, Effect, ToolSpec};
use toolgate_gateway::Gateway;

use crate::link::Link;

/// The most prompts, resources or templates taken from one upstream.
const MAX_ITEMS: usize = 1024;

/// What one upstream offers besides tools.
#[derive(Debug, Clone, Default)]
pub(crate) struct Surface {
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) resources_capable: bool,
    pub(crate) subscribe_capable: bool,
    pub(crate) completions_capable: bool,
}

impl Link {
    /// What the upstream offers now.
    pub(crate) fn surface(&self) -> Surface {
        self.surface.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether `caller` may see this upstream's prompts and resources: as for a tool of
    /// it that only reads (its role, its domain, the caller's toolset).
    pub(crate) fn visible_to(&self, gateway: &Gateway, caller: &Caller) -> bool {
        let spec = ToolSpec::new(
            self.name.clone(),
            "An upstream's prompts and resources.",
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .with_effect(Effect::Read)
        .with_role(self.config.required_role.clone())
        .with_domain(self.name.clone());
        gateway.policy().visible(caller, &spec)
    }

    /// Toolgate's name for the upstream's prompt `name`.
    pub(crate) fn local_prompt(&self, name: &str) -> String {
        if self.config.prefix { format!("{}{NAMESPACE_SEPARATOR}{name}", self.name) } else { name.to_owned() }
    }

    /// The upstream's name for toolgate's prompt name `local`, when it has that prompt.
    pub(crate) fn remote_prompt(&self, local: &str) -> Option<String> {
        let remote = if self.config.prefix {
            local.strip_prefix(self.name.as_str())?.strip_prefix(NAMESPACE_SEPARATOR)?
        } else {
            local
        };
        let surface = self.surface.read().unwrap_or_else(|e| e.into_inner());
        surface.prompts.iter().any(|p| p.name == remote).then(|| remote.to_owned())
    }

    /// Read the upstream's prompts, resources and templates (as its capabilities say it
    /// has them) and keep them; a list that cannot be read keeps the one before. Tells
    /// the federation what changed.
    pub(crate) async fn refresh_surface(&self, peer: &Peer<RoleClient>) {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        let timeout = self.config.connect_timeout;
        let name = self.name.as_str();
        let mut next = self.surface();
        next.resources_capable = capabilities.resources.is_some();
        next.subscribe_capable = capabilities.resources.as_ref().and_then(|r| r.subscribe).unwrap_or(false);
        next.completions_capable = capabilities.completions.is_some();
        if capabilities.prompts.is_some() {
            match tokio::time::timeout(timeout, peer.list_all_prompts()).await {
                Ok(Ok(prompts)) => next.prompts = prompts.into_iter().take(MAX_ITEMS).collect(),
                _ => tracing::warn!(
                    upstream = name,
                    "could not list the upstream's prompts; keeping the old list"
                ),
            }
        } else {
            next.prompts.clear();
        }
        if next.resources_capable {
            match tokio::time::timeout(timeout, peer.list_all_resources()).await {
                Ok(Ok(resources)) => next.resources = resources.into_iter().take(MAX_ITEMS).collect(),
                _ => tracing::warn!(
                    upstream = name,
                    "could not list the upstream's resources; keeping the old list"
                ),
            }
            match tokio::time::timeout(timeout, peer.list_all_resource_templates()).await {
                Ok(Ok(templates)) => next.templates = templates.into_iter().take(MAX_ITEMS).collect(),
                _ => tracing::warn!(
                    upstream = name,
                    "could not list the upstream's resource templates; keeping the old list"
                ),
            }
        } else {
            next.resources.clear();
            next.templates.clear();
        }
        let before = self.surface();
        let prompts_changed = before.prompts != next.prompts;
        let resources_changed = before.resources != next.resources || before.templates != next.templates;
        tracing::info!(
            upstream = name,
            prompts = next.prompts.len(),
            resources = next.resources.len(),
            templates = next.templates.len(),
            "upstream prompts and resources read"
        );
        *self.surface.write().unwrap_or_else(|e| e.into_inner()) = next;
        self.signals.lists.send_modify(|lists| {
            if prompts_changed {
                lists.prompts += 1;
            }
            if resources_changed {
                lists.resources += 1;
            }
        });
    }
}

/// Whether `uri` is one of the URIs of the RFC 6570 template `template`: its literal
/// parts in order, each `{expression}` standing for at least one character (without `/`
/// for a simple `{var}`; anything for `{+var}`, `{#var}` and the others).
pub(crate) fn matches(template: &str, uri: &str) -> bool {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else { return false };
        parts.push(Part::Literal(&rest[..open]));
        let expression = &rest[open + 1..open + close];
        parts.push(Part::Var { slash: !expression.starts_with(['+', '#', '/', '.', ';', '?', '&']) });
        rest = &rest[open + close + 1..];
    }
    parts.push(Part::Literal(rest));
    fits(&parts, uri)
}

#[derive(Debug, Clone, Copy)]
enum Part<'a> {
    Literal(&'a str),
    /// `slash`: the value may not contain `/`.
    Var {
        slash: bool,
    },
}

fn fits(parts: &[Part<'_>], text: &str) -> bool {
    match parts.split_first() {
        None => text.is_empty(),
        Some((Part::Literal(literal), rest)) => {
            text.strip_prefix(literal).is_some_and(|tail| fits(rest, tail))
        }
        Some((Part::Var { slash }, rest)) => {
            for (at, c) in text.char_indices() {
                if *slash && c == '/' {
                    break;
                }
                if fits(rest, &text[at + c.len_utf8()..]) {
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn templates_match_the_uris_they_make() {
        assert!(matches("test://template/{id}/data", "test://template/123/data"));
        assert!(!matches("test://template/{id}/data", "test://template//data"));
        assert!(!matches("test://template/{id}/data", "test://template/1/2/data"));
        assert!(matches("file:///{+path}", "file:///a/b/c.txt"));
        assert!(matches("notes://{user}/{note}", "notes://ann/7"));
        assert!(!matches("notes://{user}/{note}", "other://ann/7"));
        assert!(!matches("notes://{user", "notes://ann"));
    }
}
