//! What the gateway serves under, changed while it serves: the policy (roles, overrides,
//! toolsets), the limits and the skills live in the same snapshot as the tool table, so a
//! call loads all of them at once without a lock and keeps them to its end. A [`Change`]
//! (a reloaded configuration) is checked whole against everything served and swapped in
//! one store, or refused with every problem and nothing changed.

#[cfg(feature = "skills")]
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
#[cfg(feature = "skills")]
use std::sync::OnceLock;

use toolgate_authz::Policy;
use toolgate_core::{Tool, ToolSpec};
use toolgate_schema::Validator;
#[cfg(feature = "skills")]
use toolgate_skills::{SkillError, SkillSet};

use crate::dynamic::Table;
use crate::registry::{BuildError, Entry};
use crate::render::Templates;
use crate::{Gateway, Limits, meta};

/// The source of the `run_<skill>` tools: rebuilt by every [`Gateway::apply`] (no tool has
/// it without the `skills` feature).
pub const SKILLS_SOURCE: &str = "gateway:skills";

/// The policy, limits and skills of one snapshot.
#[derive(Default)]
pub(crate) struct Settings {
    pub(crate) policy: Arc<Policy>,
    pub(crate) limits: Arc<Limits>,
    #[cfg(feature = "skills")]
    pub(crate) skills: Arc<SkillSet>,
    #[cfg(feature = "skills")]
    pub(crate) skill_problems: Arc<Vec<SkillError>>,
    /// The meta-tools' argument validators (their limits are these).
    pub(crate) meta_validators: Vec<(String, Validator)>,
    /// Namespaces whose tools arrive after a change (upstreams): skills may name them.
    pub(crate) later: Vec<String>,
}

impl Settings {
    /// Settings without skills (the builder adds them once checked).
    pub(crate) fn new(policy: Policy, limits: Limits, later: Vec<String>) -> Self {
        let meta_validators = meta::validators(&limits);
        Self {
            policy: Arc::new(policy),
            limits: Arc::new(limits),
            #[cfg(feature = "skills")]
            skills: Arc::default(),
            #[cfg(feature = "skills")]
            skill_problems: Arc::default(),
            meta_validators,
            later,
        }
    }
}

/// One change of what the gateway serves, taken whole or not at all ([`Gateway::apply`]).
/// A field left `None` keeps what is served now. Build one with [`Change::new`] and the
/// `with_*` methods (more fields may come).
#[derive(Default)]
#[non_exhaustive]
pub struct Change {
    /// Sources whose tools are replaced as a whole (an empty list removes them).
    pub sources: Vec<(String, Vec<Arc<dyn Tool>>)>,
    /// The next policy (roles, overrides, toolsets).
    pub policy: Option<Policy>,
    /// The next limits.
    pub limits: Option<Limits>,
    /// The next skills (a skill folder read again).
    #[cfg(feature = "skills")]
    pub skills: Option<SkillSet>,
    /// The namespaces whose tools are registered later (upstreams) that skills may name.
    pub later: Option<Vec<String>>,
}

impl Change {
    /// A change that replaces nothing: every field keeps what is served now.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the tools of these sources as a whole (an empty list removes a source's tools).
    pub fn with_sources(mut self, sources: Vec<(String, Vec<Arc<dyn Tool>>)>) -> Self {
        self.sources = sources;
        self
    }

    /// Serve this policy next.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Serve these limits next.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Serve these skills next (their `run_<skill>` tools are rebuilt).
    #[cfg(feature = "skills")]
    pub fn with_skills(mut self, skills: SkillSet) -> Self {
        self.skills = Some(skills);
        self
    }

    /// The namespaces whose tools are registered later (upstreams) that skills may name.
    pub fn with_later(mut self, namespaces: Vec<String>) -> Self {
        self.later = Some(namespaces);
        self
    }
}

impl std::fmt::Debug for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("Change");
        f.field("sources", &self.sources.iter().map(|(s, t)| (s, t.len())).collect::<Vec<_>>())
            .field("policy", &self.policy.is_some())
            .field("limits", &self.limits.is_some());
        #[cfg(feature = "skills")]
        f.field("skills", &self.skills.as_ref().map(SkillSet::len));
        f.finish_non_exhaustive()
    }
}

/// What [`Gateway::apply`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// A tool cannot be served (its contract, its name, its role under the next policy).
    #[error(transparent)]
    Tool(#[from] BuildError),
    /// A skill names a tool that is not there, or runs beyond its role.
    #[cfg(feature = "skills")]
    #[error("{0}")]
    Skill(SkillError),
}

/// What [`Gateway::apply`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Applied {
    /// The policy differs from the one served before.
    pub policy_changed: bool,
    /// The limits differ.
    pub limits_changed: bool,
    /// The skills differ.
    #[cfg(feature = "skills")]
    pub skills_changed: bool,
    /// The skills' warnings (not refused).
    #[cfg(feature = "skills")]
    pub warnings: Vec<SkillError>,
}

impl Gateway {
    /// Check `change` against everything served (every tool's role under the next policy,
    /// the new tools' contracts and names, every skill's steps against the next tools) and,
    /// when nothing is wrong, swap it in as one snapshot: calls in flight finish on the one
    /// they started with, new calls see the new one, and [`Gateway::tools_changed`] ticks.
    /// Otherwise every problem comes back and nothing changed.
    pub fn apply(&self, change: Change) -> Result<Applied, Vec<Problem>> {
        let _writer = self.inner.writer.lock().unwrap_or_else(|e| e.into_inner());
        let old = self.inner.tools();
        let was = &old.settings;
        let policy = change.policy.map_or_else(|| was.policy.clone(), Arc::new);
        let limits = change.limits.map_or_else(|| was.limits.clone(), Arc::new);
        #[cfg(feature = "skills")]
        let skills = change.skills.unwrap_or_else(|| (*was.skills).clone());
        let later = change.later.unwrap_or_else(|| was.later.clone());
        let mut problems: Vec<Problem> = Vec::new();

        let mut replaced: HashSet<&str> = change.sources.iter().map(|(s, _)| s.as_str()).collect();
        replaced.insert(SKILLS_SOURCE);
        let source_of = |name: &str| old.sources.get(name).map(String::as_str);
        let mut map: HashMap<String, Arc<Entry>> = HashMap::with_capacity(old.tools.len());
        let mut sources: HashMap<String, String> = HashMap::new();
        for (name, entry) in &old.tools {
            if source_of(name).is_some_and(|s| replaced.contains(s)) {
                continue;
            }
            if let Err(error) = role_known(&policy, entry.tool.spec()) {
                problems.push(error.into());
            }
            if let Some(source) = source_of(name) {
                sources.insert(name.clone(), source.to_owned());
            }
            map.insert(name.clone(), entry.clone());
        }
        let mut added: Vec<Added> = Vec::new();
        let mut names = HashSet::new();
        for (source, tools) in change.sources {
            for tool in tools {
                let name = tool.spec().name.clone();
                match checked(&policy, &tool) {
                    Ok(validator) if map.contains_key(&name) || !names.insert(name.clone()) => {
                        drop(validator);
                        problems.push(BuildError::Duplicate(name).into());
                    }
                    Ok(validator) => added.push((source.clone(), tool, validator)),
                    Err(error) => problems.push(error.into()),
                }
            }
        }

        // The skills against the next tools, as at the build.
        #[cfg(feature = "skills")]
        let warnings = {
            let (warnings, more_problems, skill_tools) =
                next_skills(&self.inner, &skills, &map, &added, &mut names, &policy, &later);
            problems.extend(more_problems);
            added.extend(skill_tools);
            warnings
        };
        if !problems.is_empty() {
            return Err(problems);
        }

        let applied = Applied {
            policy_changed: *policy != *was.policy,
            limits_changed: *limits != *was.limits,
            #[cfg(feature = "skills")]
            skills_changed: skills != *was.skills,
            #[cfg(feature = "skills")]
            warnings: warnings.clone(),
        };
        for (source, tool, validator) in added {
            let name = tool.spec().name.clone();
            // The row of a tool served before under the same name keeps counting.
            let slot =
                old.tools.get(&name).map_or_else(|| self.inner.metrics.dynamic_slot(&name), |e| e.slot);
            sources.insert(name.clone(), source);
            map.insert(name, Arc::new(Entry { tool, validator, slot }));
        }
        let meta_validators =
            if applied.limits_changed { meta::validators(&limits) } else { was.meta_validators.clone() };
        let settings = Settings {
            policy,
            limits,
            #[cfg(feature = "skills")]
            skills: Arc::new(skills),
            #[cfg(feature = "skills")]
            skill_problems: Arc::new(warnings),
            meta_validators,
            later,
        };
        let mut next = Table::new(map, Arc::new(settings)).map_err(|e| vec![Problem::Tool(e)])?;
        next.sources = sources;
        self.inner.publish(next);
        self.inner.changes.send_modify(|version| *version += 1);
        Ok(applied)
    }
}

/// A tool checked for the next snapshot: its source, the tool, its compiled validator.
type Added = (String, Arc<dyn Tool>, Validator);

/// The next skills against the next tools (those kept, `map`, and those `added`), as at the
/// build: their warnings, their problems (errors, and `run_<skill>` tools that cannot be
/// served), and the `run_<skill>` tools to add under [`SKILLS_SOURCE`].
#[cfg(feature = "skills")]
fn next_skills(
    inner: &Arc<crate::registry::Inner>,
    skills: &SkillSet,
    map: &HashMap<String, Arc<Entry>>,
    added: &[Added],
    names: &mut HashSet<String>,
    policy: &Policy,
    later: &[String],
) -> (Vec<SkillError>, Vec<Problem>, Vec<Added>) {
    let mut problems = Vec::new();
    let mut skill_tools = Vec::new();
    let lookup: BTreeMap<String, ToolSpec> = map
        .iter()
        .map(|(n, e)| (n.clone(), e.tool.spec().clone()))
        .chain(added.iter().map(|(_, t, _)| (t.spec().name.clone(), t.spec().clone())))
        .collect();
    let is_later = |name: &str| {
        name.split_once(toolgate_core::names::NAMESPACE_SEPARATOR)
            .is_some_and(|(namespace, _)| later.iter().any(|n| n == namespace))
    };
    let skill_report = skills.check_tools_with(&|name| lookup.get(name).cloned(), &is_later, policy);
    let (errors, warnings): (Vec<_>, Vec<_>) = skill_report.into_iter().partition(SkillError::is_error);
    problems.extend(errors.into_iter().map(Problem::Skill));
    let slot = Arc::new(OnceLock::from(Arc::downgrade(inner)));
    for skill in skills.iter() {
        if let Some(tool) = crate::skill_tool::SkillTool::new(skill, &lookup, slot.clone()) {
            let tool: Arc<dyn Tool> = Arc::new(tool);
            let name = tool.spec().name.clone();
            match checked(policy, &tool) {
                Ok(_) if map.contains_key(&name) || !names.insert(name.clone()) => {
                    problems.push(BuildError::Duplicate(name).into());
                }
                Ok(validator) => skill_tools.push((SKILLS_SOURCE.to_owned(), tool, validator)),
                Err(error) => problems.push(error.into()),
            }
        }
    }
    (warnings, problems, skill_tools)
}

/// `spec`'s role is one of `policy`'s.
pub(crate) fn role_known(policy: &Policy, spec: &ToolSpec) -> Result<(), BuildError> {
    let hierarchy = policy.hierarchy();
    if hierarchy.rank(&spec.required_role).is_none() {
        return Err(BuildError::UnknownRole {
            tool: spec.name.clone(),
            role: spec.required_role.clone(),
            known: hierarchy.roles().join(" < "),
        });
    }
    Ok(())
}

/// A tool that arrives while serving, checked like one registered at the build (contract,
/// reserved name, role, schema, result template); its compiled validator.
pub(crate) fn checked(policy: &Policy, tool: &Arc<dyn Tool>) -> Result<Validator, BuildError> {
    let spec = tool.spec();
    spec.check()?;
    if meta::META_TOOLS.contains(&spec.name.as_str()) {
        return Err(BuildError::Reserved(spec.name.clone()));
    }
    role_known(policy, spec)?;
    let validator = Validator::new(&spec.input_schema)
        .map_err(|e| BuildError::Schema { tool: spec.name.clone(), message: e.to_string() })?;
    if let Some(template) = &spec.result_template {
        Templates::default()
            .add(&spec.name, template)
            .map_err(|message| BuildError::Template { tool: spec.name.clone(), message })?;
    }
    Ok(validator)
}
