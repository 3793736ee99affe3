//! The registry of tools and skills, and how a [`Gateway`] is built.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};
#[cfg(feature = "skills")]
use std::sync::{OnceLock, Weak};

use tokio::sync::{broadcast, watch};
use toolgate_authz::Policy;
use toolgate_core::{SpecError, Tool, ToolSpec};
use toolgate_schema::Validator;
#[cfg(feature = "skills")]
use toolgate_skills::{Skill, SkillSet};

use crate::audit::AuditSink;
use crate::backend_errors::BackendErrors;
use crate::dynamic::Table;
#[cfg(feature = "skills")]
use crate::live::SKILLS_SOURCE;
use crate::live::Settings;
use crate::metrics::CallMetrics;
use crate::observe::CallObserver;
use crate::ratelimit::{Limiter, RateLimits, RateStore};
use crate::trace::TraceEvent;
use crate::{Limits, meta};

/// Why a gateway could not be built (or a tool could not be added while serving).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool's contract is broken.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// Two tools share a name.
    #[error("two tools are named `{0}`; tool names must be unique")]
    Duplicate(String),
    /// A tool's name is one of the meta-tools'.
    #[error("`{0}` is the name of a meta-tool and cannot be registered")]
    Reserved(String),
    /// A tool's schema does not compile.
    #[error("tool `{tool}`: schema does not compile: {message}")]
    Schema {
        /// The name of the tool whose `input_schema` is broken.
        tool: String,
        /// The schema compiler's explanation.
        message: String,
    },
    /// A tool's result template does not compile (only with the `templates` feature, which
    /// compiles templates).
    #[error("tool `{tool}`: result template: {message}")]
    Template {
        /// The name of the tool whose `result_template` is broken.
        tool: String,
        /// The template engine's explanation (with the line, when known).
        message: String,
    },
    /// A tool requires a role the hierarchy does not have.
    #[error("tool `{tool}` requires role `{role}`, which is not in the hierarchy ({known})")]
    UnknownRole {
        /// The name of the tool.
        tool: String,
        /// The role the tool's spec requires.
        role: String,
        /// The roles that exist, lowest first, joined by ` < `.
        known: String,
    },
}

pub(crate) struct Entry {
    pub(crate) tool: Arc<dyn Tool>,
    pub(crate) validator: Validator,
    /// The tool's slot in [`CallMetrics`] (its index in sorted order).
    pub(crate) slot: usize,
}

pub(crate) struct Inner {
    /// The registered tools with the policy, limits and skills they are served under; see
    /// [`crate::dynamic`] and [`crate::live`] for why a snapshot. Read without a lock.
    pub(crate) table: arc_swap::ArcSwap<Table>,
    /// Held by whoever builds the next snapshot, so changes are made one at a time (calls
    /// never take it).
    pub(crate) writer: Mutex<()>,
    /// Bumped whenever the table changes.
    pub(crate) changes: watch::Sender<u64>,
    /// Tool sources (namespaces) not reached since start, with the reason; see
    /// [`Gateway::set_unreachable`].
    pub(crate) unreachable: RwLock<BTreeMap<String, String>>,
    pub(crate) trace: broadcast::Sender<TraceEvent>,
    pub(crate) metrics: CallMetrics,
    pub(crate) backend_errors: BackendErrors,
    pub(crate) limiter: Option<Limiter>,
    pub(crate) audit: Option<Arc<dyn AuditSink>>,
    pub(crate) observer: Option<Arc<dyn CallObserver>>,
    /// Discovery's sentence encoder and its embeddings, when one is set.
    pub(crate) semantic: Option<Arc<crate::rank::Semantic>>,
}

/// The gateway: cheap to clone, shared by every transport.
#[derive(Clone)]
pub struct Gateway {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Gateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("Gateway");
        f.field("tools", &self.inner.tools().order);
        #[cfg(feature = "skills")]
        f.field("skills", &self.inner.settings().skills.iter().map(|s| &s.id).collect::<Vec<_>>());
        f.finish_non_exhaustive()
    }
}

/// Collects tools, skills, the policy and limits, then checks them all at once.
#[derive(Default)]
pub struct GatewayBuilder {
    tools: Vec<Arc<dyn Tool>>,
    #[cfg(feature = "skills")]
    skills: Option<SkillSet>,
    policy: Policy,
    limits: Limits,
    limiter: Option<Limiter>,
    audit: Option<Arc<dyn AuditSink>>,
    later: Vec<String>,
    observer: Option<Arc<dyn CallObserver>>,
    embedder: Option<Arc<dyn crate::Embedder>>,
    /// Tools registered at the build under a source name, so that
    /// [`Gateway::replace_source_tools`] can replace them later.
    sourced: Vec<(String, Arc<dyn Tool>)>,
}

impl fmt::Debug for GatewayBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GatewayBuilder")
            .field("tools", &self.tools.iter().map(|t| t.spec().name.clone()).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl GatewayBuilder {
    /// Use this authorization policy (default: `guest < member < manager < admin`).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Use these limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Enforce these rate limits, counted in `store` (a [`crate::MemoryRateStore`]
    /// for one instance, a shared store for a fleet). Without limits set, nothing is counted.
    pub fn rate_limits(mut self, limits: RateLimits, store: Arc<dyn RateStore>) -> Self {
        self.limiter = (!limits.is_empty()).then(|| Limiter::new(limits, store));
        self
    }

    /// Hand every write call and every denied call to this audit sink.
    pub fn audit(mut self, sink: Arc<dyn AuditSink>) -> Self {
        self.audit = Some(sink);
        self
    }

    /// Tell this observer about every finished call (an OpenTelemetry exporter).
    pub fn observer(mut self, observer: Arc<dyn CallObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Rank discovery's queries by meaning too: each operation's name and summary embedded by
    /// `embedder` (once per text, when a snapshot of the tools is first searched), a query's
    /// embedding compared with them, and that ranking fused with the lexical one (see
    /// [`Gateway::search`]).
    pub fn embedder(mut self, embedder: Arc<dyn crate::Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Register a tool.
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Register several tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Register tools as belonging to `source`: checked and served like any
    /// other from the start (skills may name them), and replaceable as a
    /// whole later with [`Gateway::replace_source_tools`] (a configuration
    /// reloaded while serving).
    pub fn source_tools(mut self, source: &str, tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        self.sourced.extend(tools.into_iter().map(|tool| (source.to_owned(), tool)));
        self
    }

    /// Namespaces whose tools are registered after the build, under
    /// `<namespace>__<tool>` (another MCP server's, listed once it is
    /// connected): skills may name those tools without being left out.
    pub fn later_namespaces(mut self, namespaces: impl IntoIterator<Item = String>) -> Self {
        self.later.extend(namespaces);
        self
    }

    /// Serve these skills; skills with an orchestration block also become `run_<skill>` tools.
    /// Skills that name a missing tool, or whose run needs a role above their own, are left out
    /// and reported by [`Gateway::skill_problems`] (feature `skills`).
    #[cfg(feature = "skills")]
    pub fn skills(mut self, skills: SkillSet) -> Self {
        self.skills = Some(skills);
        self
    }

    /// Check every contract and build the gateway.
    pub fn build(self) -> Result<Gateway, BuildError> {
        let (trace, _) = broadcast::channel(1024);
        #[cfg_attr(not(feature = "skills"), allow(unused_mut))]
        let mut tools: Vec<Arc<dyn Tool>> = self.tools;
        #[cfg_attr(not(feature = "skills"), allow(unused_mut))]
        let mut sources: HashMap<String, String> =
            self.sourced.iter().map(|(source, tool)| (tool.spec().name.clone(), source.clone())).collect();
        tools.extend(self.sourced.into_iter().map(|(_, tool)| tool));
        #[cfg_attr(not(feature = "skills"), allow(unused_mut))]
        let mut settings = Settings::new(self.policy, self.limits, self.later);
        // Skill tools run their steps through the gateway that owns them; they
        // learn where it is once it exists.
        #[cfg(feature = "skills")]
        let slot: Arc<OnceLock<Weak<Inner>>> = Arc::new(OnceLock::new());
        #[cfg(feature = "skills")]
        {
            let (skills, problems, skill_tools) =
                checked_skills(self.skills.unwrap_or_default(), &tools, &settings, &slot);
            for tool in skill_tools {
                // Under their own source, so that a change of the skills replaces them.
                sources.insert(tool.spec().name.clone(), SKILLS_SOURCE.to_owned());
                tools.push(tool);
            }
            settings.skills = Arc::new(skills);
            settings.skill_problems = Arc::new(problems);
        }
        let mut inner = assemble(tools, sources, settings, trace)?;
        inner.limiter = self.limiter;
        inner.audit = self.audit;
        inner.observer = self.observer;
        inner.semantic = self.embedder.map(|e| Arc::new(crate::rank::Semantic::new(e)));
        let inner = Arc::new(inner);
        inner.warm_index();
        #[cfg(feature = "skills")]
        let _ = slot.set(Arc::downgrade(&inner));
        Ok(Gateway { inner })
    }
}

/// The skills checked against the tools (those with errors left out), every problem found,
/// and the `run_<skill>` tools of the skills kept.
#[cfg(feature = "skills")]
fn checked_skills(
    mut skills: SkillSet,
    tools: &[Arc<dyn Tool>],
    settings: &Settings,
    slot: &Arc<OnceLock<Weak<Inner>>>,
) -> (SkillSet, Vec<toolgate_skills::SkillError>, Vec<Arc<dyn Tool>>) {
    let lookup: BTreeMap<String, ToolSpec> =
        tools.iter().map(|t| (t.spec().name.clone(), t.spec().clone())).collect();
    // A skill whose steps name missing tools (or whose run would exceed its
    // role) is left out; every problem is kept for the operator to read.
    let later = |name: &str| {
        name.split_once(toolgate_core::names::NAMESPACE_SEPARATOR)
            .is_some_and(|(namespace, _)| settings.later.iter().any(|n| n == namespace))
    };
    let problems = skills.check_tools_with(&|name: &str| lookup.get(name).cloned(), &later, &settings.policy);
    for problem in problems.iter().filter(|p| p.is_error()) {
        if let Some(id) = &problem.skill {
            skills.remove(id);
        }
    }
    let skill_tools = skills
        .iter()
        .filter_map(|skill| crate::skill_tool::SkillTool::new(skill, &lookup, slot.clone()))
        .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
        .collect();
    (skills, problems, skill_tools)
}

fn assemble(
    tools: Vec<Arc<dyn Tool>>,
    sources: HashMap<String, String>,
    settings: Settings,
    trace: broadcast::Sender<TraceEvent>,
) -> Result<Inner, BuildError> {
    let policy = &settings.policy;
    let mut map = HashMap::with_capacity(tools.len());
    for tool in tools {
        let spec = tool.spec();
        spec.check()?;
        if meta::META_TOOLS.contains(&spec.name.as_str()) {
            return Err(BuildError::Reserved(spec.name.clone()));
        }
        if policy.hierarchy().rank(&spec.required_role).is_none() {
            return Err(BuildError::UnknownRole {
                tool: spec.name.clone(),
                role: spec.required_role.clone(),
                known: policy.hierarchy().roles().join(" < "),
            });
        }
        let validator = Validator::new(&spec.input_schema)
            .map_err(|e| BuildError::Schema { tool: spec.name.clone(), message: e.to_string() })?;
        let name = spec.name.clone();
        if map.insert(name.clone(), Entry { tool, validator, slot: 0 }).is_some() {
            return Err(BuildError::Duplicate(name));
        }
    }
    let mut order: Vec<String> = map.keys().cloned().collect();
    order.sort();
    for (slot, name) in order.iter().enumerate() {
        if let Some(entry) = map.get_mut(name) {
            entry.slot = slot;
        }
    }
    let roles: Vec<String> = policy.hierarchy().roles().iter().map(|r| r.to_string()).collect();
    let metrics = CallMetrics::new(&order, &roles);
    let map: HashMap<String, Arc<Entry>> =
        map.into_iter().map(|(name, entry)| (name, Arc::new(entry))).collect();
    let mut table = Table::new(map, Arc::new(settings))?;
    table.sources = sources;
    Ok(Inner {
        table: arc_swap::ArcSwap::from_pointee(table),
        writer: Mutex::new(()),
        changes: watch::Sender::new(0),
        unreachable: RwLock::default(),
        trace,
        metrics,
        backend_errors: BackendErrors::default(),
        limiter: None,
        audit: None,
        observer: None,
        semantic: None,
    })
}

impl Inner {
    /// Serve `table` from now on (calls in flight keep the snapshot they loaded), and start
    /// building its discovery index (see [`Inner::warm_index`]).
    pub(crate) fn publish(&self, table: Table) {
        self.table.store(Arc::new(table));
        self.warm_index();
    }

    /// With an embedder, build the current snapshot's discovery index on a thread of its
    /// own, so that the first query after a start or a change does not wait seconds for a
    /// big API's operations to be embedded (a query that comes first waits for the same
    /// build, which runs once).
    pub(crate) fn warm_index(&self) {
        let Some(semantic) = self.semantic.clone() else { return };
        let table = self.table.load_full();
        let spawned = std::thread::Builder::new().name("toolgate-index".to_owned()).spawn(move || {
            crate::rank::index_for(&table, Some(&semantic));
        });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start the discovery index's thread: the first query builds it");
        }
    }

    /// The current snapshot of the tool table (no lock: an atomic load).
    pub(crate) fn tools(&self) -> Arc<Table> {
        self.table.load_full()
    }

    /// The policy, limits and skills of the current snapshot.
    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.table.load().settings.clone()
    }

    /// The policy of the current snapshot.
    pub(crate) fn policy(&self) -> Arc<Policy> {
        self.table.load().settings.policy.clone()
    }
}

impl Gateway {
    /// Start building a gateway.
    pub fn builder() -> GatewayBuilder {
        GatewayBuilder::default()
    }

    /// The spec of a registered tool, whoever asks (for wiring, not for the model).
    pub fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.inner.tools().tools.get(name).map(|e| e.tool.spec().clone())
    }

    /// Every registered tool's spec, sorted by name (for wiring and codegen, not for the model).
    pub fn all_specs(&self) -> Vec<ToolSpec> {
        let table = self.inner.tools();
        table.order.iter().filter_map(|n| table.tools.get(n)).map(|e| e.tool.spec().clone()).collect()
    }

    /// Every skill served now, for codegen.
    #[cfg(feature = "skills")]
    pub fn skill_set(&self) -> Arc<SkillSet> {
        self.inner.settings().skills.clone()
    }

    /// Problems found when checking the skills against the tools at build
    /// time (or at the last [`Gateway::apply`]). Skills with errors were left out at the
    /// build; warnings are kept here too.
    #[cfg(feature = "skills")]
    pub fn skill_problems(&self) -> Arc<Vec<toolgate_skills::SkillError>> {
        self.inner.settings().skill_problems.clone()
    }

    /// The authorization policy served now (it changes with [`Gateway::apply`]).
    pub fn policy(&self) -> Arc<Policy> {
        self.inner.policy()
    }

    /// The limits served now (they change with [`Gateway::apply`]).
    pub fn limits(&self) -> Arc<Limits> {
        self.inner.settings().limits.clone()
    }

    /// Append the call metrics (calls by tool, role and outcome; latency per
    /// tool; calls in flight; rate-limit refusals; backend failures; rate-limit
    /// checks the store did not answer) in
    /// Prometheus text format.
    pub fn render_metrics(&self, out: &mut String) {
        self.inner.metrics.render(out);
        self.inner.backend_errors.render(out);
        crate::ratelimit::render_store_errors(self.inner.limiter.as_ref(), out);
    }

    /// Each tool's calls, errors and latency since the gateway was built (the
    /// numbers `/metrics` renders), for status pages.
    pub fn tool_stats(&self) -> Vec<crate::metrics::ToolStats> {
        self.inner.metrics.stats()
    }

    /// Subscribe to trace events (one per execution).
    pub fn subscribe(&self) -> broadcast::Receiver<TraceEvent> {
        self.inner.trace.subscribe()
    }

    /// The skills this caller may read (its role satisfies the skill's `required_role`), in id order.
    #[cfg(feature = "skills")]
    pub fn visible_skills(&self, caller: &toolgate_core::Caller) -> Vec<Skill> {
        let settings = self.inner.settings();
        settings
            .skills
            .iter()
            .filter(|s| settings.policy.role_satisfies(&caller.role, &s.required_role))
            .cloned()
            .collect()
    }

    /// The id and description of each skill this caller may read; none without the `skills`
    /// feature, as for a gateway given no skills.
    pub(crate) fn visible_skill_briefs(&self, caller: &toolgate_core::Caller) -> Vec<(String, String)> {
        #[cfg(feature = "skills")]
        return self.visible_skills(caller).into_iter().map(|s| (s.id, s.description)).collect();
        #[cfg(not(feature = "skills"))]
        {
            let _ = caller;
            Vec::new()
        }
    }
}
