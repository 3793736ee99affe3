//! [`SkillSet`]: the skills of a folder, loaded file by file (a bad file does
//! not stop the others) and checked against the registered tools.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolgate_authz::{Policy, RoleHierarchy};
use toolgate_core::ToolSpec;

use crate::error::{ErrorKind, SkillError};
use crate::skill::Skill;

/// The file name of a skill inside its folder.
pub const SKILL_FILE: &str = "SKILL.md";

/// Skills by id, iterated in id order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSet {
    skills: BTreeMap<String, Skill>,
}

impl SkillSet {
    /// Load `dir/<id>/SKILL.md` for every folder in `dir`, with the default
    /// role hierarchy's lowest role (`guest`) for skills that set no
    /// `required_role`. Bad files are reported and left out; the others load.
    pub fn load_dir(dir: &Path) -> (SkillSet, Vec<SkillError>) {
        Self::load_dir_with(dir, &RoleHierarchy::default())
    }

    /// [`SkillSet::load_dir`] where a skill without `required_role` gets the
    /// lowest role of `hierarchy`.
    pub fn load_dir_with(dir: &Path, hierarchy: &RoleHierarchy) -> (SkillSet, Vec<SkillError>) {
        let mut set = SkillSet::default();
        let mut errors = Vec::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(SkillError::new(
                    dir,
                    ErrorKind::Io,
                    format!("cannot read the skills folder: {e}; check the path"),
                ));
                return (set, errors);
            }
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            let file = folder.join(SKILL_FILE);
            if !file.is_file() {
                errors.push(
                    SkillError::new(
                        &folder,
                        ErrorKind::Io,
                        format!(
                            "no {SKILL_FILE} in this folder; add one, or move the folder out of {}",
                            dir.display()
                        ),
                    )
                    .warning(),
                );
                continue;
            }
            match Skill::load_with(&file, hierarchy) {
                Ok(skill) => {
                    set.skills.insert(skill.id.clone(), skill);
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        (set, errors)
    }

    /// A set from skills built elsewhere; a later skill replaces an earlier one with the same id.
    pub fn from_skills(skills: Vec<Skill>) -> SkillSet {
        SkillSet { skills: skills.into_iter().map(|s| (s.id.clone(), s)).collect() }
    }

    /// The skill with this id.
    pub fn get(&self, id: &str) -> Option<&Skill> {
        self.skills.get(id)
    }

    /// Every skill, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// How many skills.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Add a skill, replacing one with the same id (returned).
    pub fn insert(&mut self, skill: Skill) -> Option<Skill> {
        self.skills.insert(skill.id.clone(), skill)
    }

    /// Take a skill out (e.g. one that [`SkillSet::check_tools`] found errors in).
    pub fn remove(&mut self, id: &str) -> Option<Skill> {
        self.skills.remove(id)
    }

    /// Check the skills against the registered tools (`tools` answers a
    /// tool's spec, `None` when there is no such tool) and the deployment's policy:
    ///
    /// - a step or binding naming a tool that does not exist: error;
    /// - a `required_role` that is not in the hierarchy: error;
    /// - a binding whose tool needs a role above the skill's: error, because
    ///   `run_<skill>` would be offered to callers whose run must fail;
    /// - a step whose tool needs a role above the skill's: warning, because
    ///   the guide still helps those callers and marks that step as not
    ///   available to them.
    pub fn check_tools(&self, tools: &dyn Fn(&str) -> Option<ToolSpec>, policy: &Policy) -> Vec<SkillError> {
        self.check_tools_with(tools, &|_| false, policy)
    }

    /// [`SkillSet::check_tools`] for a deployment some of whose tools arrive
    /// after the check: another MCP server's tools (`<upstream>__<tool>`) are
    /// listed only once it is connected, which is after the skills load. A
    /// missing tool for which `later` holds is not a problem; its role cannot
    /// be compared yet, and the gateway checks it on every call anyway.
    pub fn check_tools_with(
        &self,
        tools: &dyn Fn(&str) -> Option<ToolSpec>,
        later: &dyn Fn(&str) -> bool,
        policy: &Policy,
    ) -> Vec<SkillError> {
        let mut out = Vec::new();
        for skill in self.iter() {
            let at = |field: &str, kind: ErrorKind, message: String| {
                SkillError::new(&skill.source, kind, message)
                    .at(Some(skill.lines.get(field).unwrap_or(1)))
                    .field(field)
                    .skill(Some(&skill.id))
            };
            let role = skill.required_role.as_str();
            let role_known = policy.hierarchy().rank(role).is_some();
            if !role_known {
                let roles = policy.hierarchy().roles().join(" < ");
                let message = if skill.lines.get("required_role").is_some() {
                    format!(
                        "required_role `{role}` is not a role of this deployment ({roles}); use one of them"
                    )
                } else {
                    format!(
                        "the skill sets no required_role and the default `{role}` is not a role of this deployment ({roles}); set required_role, or load the skills with the deployment's role hierarchy"
                    )
                };
                out.push(at("required_role", ErrorKind::Role, message));
            }
            for (i, step) in skill.steps.iter().enumerate() {
                let field = format!("steps[{i}].tool");
                match tools(&step.tool) {
                    None if later(&step.tool) => {}
                    None => out.push(at(
                        &field,
                        ErrorKind::UnknownTool,
                        format!(
                            "{field} names `{}`, which is not a registered tool; fix the name or register the tool",
                            step.tool
                        ),
                    )),
                    Some(spec) => {
                        let need = policy.required_role(&spec);
                        if role_known && !policy.role_satisfies(role, need) {
                            out.push(
                                at(
                                    &field,
                                    ErrorKind::Role,
                                    format!(
                                        "{field} `{}` needs role `{need}`, above the skill's `{role}`; callers below `{need}` see this step marked as not available. Raise required_role to `{need}` if the skill cannot work without this step",
                                        step.tool
                                    ),
                                )
                                .warning(),
                            );
                        }
                    }
                }
            }
            let Some(orch) = &skill.orchestration else { continue };
            for (i, binding) in orch.bindings.iter().enumerate() {
                let field = format!("orchestration.bindings[{i}].tool");
                match tools(&binding.tool) {
                    None if later(&binding.tool) => {}
                    None => out.push(at(
                        &field,
                        ErrorKind::UnknownTool,
                        format!(
                            "{field} names `{}`, which is not a registered tool; fix the name or register the tool",
                            binding.tool
                        ),
                    )),
                    Some(spec) => {
                        let need = policy.required_role(&spec);
                        if role_known && !policy.role_satisfies(role, need) {
                            out.push(at(
                                &field,
                                ErrorKind::Role,
                                format!(
                                    "{field} `{}` needs role `{need}`, above the skill's `{role}`; `{}` would fail for callers below `{need}`. Raise required_role to `{need}` or bind another tool",
                                    binding.tool,
                                    skill.tool_name()
                                ),
                            ));
                        }
                    }
                }
            }
        }
        out
    }
}

impl FromIterator<Skill> for SkillSet {
    fn from_iter<I: IntoIterator<Item = Skill>>(iter: I) -> Self {
        SkillSet::from_skills(iter.into_iter().collect())
    }
}
