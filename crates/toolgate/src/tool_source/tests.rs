//! A kind of source the binary does not ship, registered beside the shipped ones: its tools
//! are built into the gateway under its name, replaced by a reload's change, and it is
//! started and stopped with the others.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolgate_core::{FnTool, Tool, ToolOutput, ToolSpec};
use toolgate_gateway::{Change, Gateway};

use super::*;

fn tool(name: &str) -> Arc<dyn Tool> {
    let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
    Arc::new(FnTool::new(ToolSpec::new(name, "Answers its name.", schema), |_ctx, _params| {
        Box::pin(async { Ok(ToolOutput::json(json!("echo"))) })
    }))
}

#[derive(Debug, Default)]
struct Echoes {
    started: AtomicUsize,
    reloaded: AtomicUsize,
    stopped: AtomicUsize,
}

#[toolgate_core::async_trait]
impl ToolSource for Echoes {
    fn name(&self) -> &str {
        "test:echoes"
    }

    fn prepare(&self, _config: &Config, _plan: &Plan, phase: Phase) -> Result<Prepared, Vec<String>> {
        let tools = match phase {
            Phase::Start => vec![tool("query_echo")],
            Phase::Reload => vec![tool("query_echo"), tool("query_echo_twice")],
        };
        Ok(Prepared { tools: Some(tools), later: vec!["later".into()] })
    }

    async fn start(&self, _gateway: &Gateway, _config: &Config, _plan: &Plan) {
        self.started.fetch_add(1, Ordering::SeqCst);
    }

    async fn reload(&self, _gateway: &Gateway, _config: &Config, _plan: &Plan, report: &mut Reloaded) {
        self.reloaded.fetch_add(1, Ordering::SeqCst);
        report.warnings.push("echoes reloaded".into());
    }

    async fn stop(&self, _gateway: &Gateway) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

/// A source that cannot prepare: its problems join the others', and nothing is built.
#[derive(Debug)]
struct Broken;

impl ToolSource for Broken {
    fn name(&self) -> &str {
        "test:broken"
    }

    fn prepare(&self, _config: &Config, _plan: &Plan, _phase: Phase) -> Result<Prepared, Vec<String>> {
        Err(vec!["one".into(), "two".into()])
    }
}

#[tokio::test]
async fn a_new_kind_of_source_is_one_impl_and_one_registration() {
    let config = Config::default();
    let plan = Plan::build(&config, &|_| None).unwrap();
    let echoes = Arc::new(Echoes::default());
    let sources = Sources::new().register(Arc::new(Domains)).register(echoes.clone());
    let prepared = sources.prepare(&config, &plan, Phase::Start).unwrap();
    assert_eq!(prepared.tools_of("test:echoes"), ["query_echo"]);
    let gateway = prepared.build_into(Gateway::builder()).build().unwrap();
    assert_eq!(gateway.source_of("query_echo").as_deref(), Some("test:echoes"));
    sources.start(&gateway, &config, &plan).await;
    assert_eq!(echoes.started.load(Ordering::SeqCst), 1);

    let (replaced, later) = sources.prepare(&config, &plan, Phase::Reload).unwrap().into_change();
    assert_eq!(later, ["later"]);
    gateway.apply(Change::new().with_sources(replaced).with_later(later)).unwrap();
    assert!(gateway.spec("query_echo_twice").is_some() && gateway.spec("query_echo").is_some());
    let mut report = Reloaded::default();
    sources.reload(&gateway, &config, &plan, &mut report).await;
    assert_eq!(report.warnings, ["echoes reloaded"]);

    sources.stop(&gateway).await;
    assert_eq!(echoes.stopped.load(Ordering::SeqCst), 1);

    let refused = Sources::new().register(Arc::new(Broken)).register(Arc::new(Broken));
    assert_eq!(refused.prepare(&config, &plan, Phase::Start).unwrap_err(), ["one", "two", "one", "two"]);
}
