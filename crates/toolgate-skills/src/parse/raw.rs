//! The strict shapes the front matter's YAML is read into before the field rules run.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::skill::{Mode, OnError};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping of front matter fields (name, description, ...)")]
pub(super) struct RawFront {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) title: Option<String>,
    pub(super) license: Option<String>,
    pub(super) compatibility: Option<String>,
    #[serde(default)]
    pub(super) metadata: BTreeMap<String, String>,
    #[serde(rename = "allowed-tools")]
    pub(super) allowed_tools: Option<String>,
    pub(super) required_role: Option<String>,
    #[serde(default)]
    pub(super) steps: Vec<RawStep>,
    pub(super) orchestration: Option<RawOrchestration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a step: a mapping with title, tool and optional notes")]
pub(super) struct RawStep {
    pub(super) title: String,
    pub(super) tool: String,
    pub(super) notes: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an orchestration block: a mapping with mode, input_schema, bindings, ..."
)]
pub(super) struct RawOrchestration {
    pub(super) mode: Option<Mode>,
    pub(super) input_schema: Option<Value>,
    #[serde(default)]
    pub(super) bindings: Vec<RawBinding>,
    pub(super) route_by: Option<String>,
    pub(super) on_error: Option<OnError>,
    pub(super) max_parallel: Option<usize>,
    pub(super) step_timeout_ms: Option<u64>,
    pub(super) timeout_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a binding: a mapping with tool and optional params and when")]
pub(super) struct RawBinding {
    pub(super) tool: String,
    pub(super) params: Option<Value>,
    pub(super) when: Option<Value>,
}
