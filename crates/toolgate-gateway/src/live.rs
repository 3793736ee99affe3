//! What the gateway serves under, changed while it serves: the policy (roles, overrides,
//! toolsets), the limits and the skills live in the same snapshot as the tool table, so a
//! call loads all of them at once without a lock and keeps them to its end. A [`Change`]
//! (a reloaded configuration) is checked whole against everything served and swapped in
//! one store, or refused with every problem and nothing changed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use toolgate_authz::Policy;
use toolgate_core::{Tool, ToolSpec};
use toolgate_schema::Validator;
use toolgate_skills::{SkillError, SkillSet};

use crate::dynamic::Table;
use crate::registry::{BuildError, Entry};
use crate::render::Templates;
use crate::{Gateway, Limits, meta};

/// The source of the `run_<skill>` tools: rebuilt by every [`Gateway::apply`].
pub const SKILLS_SOURCE: &str = "gateway:skills";

/// The policy, limits and skills of one snapshot.
#[derive(Default)]
pub(crate) struct Settings {
    pub(crate) policy: Arc<Policy>,
    pub(crate) limits: Arc<Limits>,
    pub(crate) skills: Arc<SkillSet>,
    pub(crate) skill_problems: Arc<Vec<SkillError>>,
    /// The meta-tools' argument validators (their limits are these).
    pub(crate) meta_validators: Vec<(String, Validator)>,
    /// Namespaces whose tools arrive after a change (upstreams): skills may name them.
    pub(crate) later: Vec<String>,
}

impl Settings {
    pub(crate) fn new(
        policy: Policy,
        limits: Limits,
        skills: SkillSet,
        skill_problems: Vec<SkillError>,
        later: Vec<String>,
    ) -> Self {
        let meta_validators = meta::validators(&limits);
        Self {
            policy: Arc::new(policy),
            limits: Arc::new(limits),
            skills: Arc::new(skills),
            skill_problems: Arc::new(skill_problems),
            meta_validators,
            later,
        }
    }
}

/// One change of what the gateway serves, taken whole or not at all ([`Gateway::apply`]).
/// A field left `None` keeps what is served now.
#[derive(Default)]
pub struct Change {
    /// Sources whose tools are replaced as a whole (an empty list removes them).
    pub sources: Vec<(String, Vec<Arc<dyn Tool>>)>,
    /// The next policy (roles, overrides, toolsets).
    pub policy: Option<Policy>,
    /// The next limits.
    pub limits: Option<Limits>,
    /// The next skills (a skill folder read again).
    pub skills: Option<SkillSet>,
    /// The namespaces whose tools are registered later (upstreams) that skills may name.
    pub later: Option<Vec<String>>,
}

impl std::fmt::Debug for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Change")
            .field("sources", &self.sources.iter().map(|(s, t)| (s, t.len())).collect::<Vec<_>>())
            .field("policy", &self.policy.is_some())
            .field("limits", &self.limits.is_some())
            .field("skills", &self.skills.as_ref().map(SkillSet::len))
            .finish_non_exhaustive()
    }
}

/// What [`Gateway::apply`] refused.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// A tool cannot be served (its contract, its name, its role under the next policy).
    #[error(transparent)]
    Tool(#[from] BuildError),
    /// A skill names a tool that is not there, or runs beyond its role.
    #[error("{0}")]
    Skill(SkillError),
}

/// What [`Gateway::apply`] did.
#[derive(Debug, Default)]
pub struct Applied {
    /// The policy differs from the one served before.
    pub policy_changed: bool,
    /// The limits differ.
    pub limits_changed: bool,
    /// The skills differ.
    pub skills_changed: bool,
    /// The skills' warnings (not refused).
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
        let mut added: Vec<(String, Arc<dyn Tool>, Validator)> = Vec::new();
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
        let lookup: BTreeMap<String, ToolSpec> = map
            .iter()
            .map(|(n, e)| (n.clone(), e.tool.spec().clone()))
            .chain(added.iter().map(|(_, t, _)| (t.spec().name.clone(), t.spec().clone())))
            .collect();
        let is_later = |name: &str| {
            name.split_once(toolgate_core::names::NAMESPACE_SEPARATOR)
                .is_some_and(|(namespace, _)| later.iter().any(|n| n == namespace))
        };
        let skill_report = skills.check_tools_with(&|name| lookup.get(name).cloned(), &is_later, &policy);
        let (errors, warnings): (Vec<_>, Vec<_>) = skill_report.into_iter().partition(SkillError::is_error);
        problems.extend(errors.into_iter().map(Problem::Skill));
        let slot = Arc::new(OnceLock::from(Arc::downgrade(&self.inner)));
        for skill in skills.iter() {
            if let Some(tool) = crate::skill_tool::SkillTool::new(skill, &lookup, slot.clone()) {
                let tool: Arc<dyn Tool> = Arc::new(tool);
                let name = tool.spec().name.clone();
                match checked(&policy, &tool) {
                    Ok(_) if map.contains_key(&name) || !names.insert(name.clone()) => {
                        problems.push(BuildError::Duplicate(name).into());
                    }
                    Ok(validator) => added.push((SKILLS_SOURCE.to_owned(), tool, validator)),
                    Err(error) => problems.push(error.into()),
                }
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }

        let applied = Applied {
            policy_changed: *policy != *was.policy,
            limits_changed: *limits != *was.limits,
            skills_changed: skills != *was.skills,
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
            skills: Arc::new(skills),
            skill_problems: Arc::new(warnings),
            meta_validators,
            later,
        };
        let mut next = Table::new(map, Arc::new(settings)).map_err(|e| vec![Problem::Tool(e)])?;
        next.sources = sources;
        self.inner.table.store(Arc::new(next));
        self.inner.changes.send_modify(|version| *version += 1);
        Ok(applied)
    }
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
