//! `[agent]`: the model the agent runtime talks to, and where its key comes from.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// `[agent]`: the OpenAI-compatible model the agent runtime talks to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSection {
    /// Base URL up to `/v1` (OpenAI, vLLM, Ollama `http://127.0.0.1:11434/v1`, llama.cpp); unset: no agent.
    pub base_url: Option<String>,
    /// The model name.
    pub model: Option<String>,
    /// Where the API key comes from: `{ env = "OPENAI_API_KEY" }`. Never the key itself.
    pub api_key: Option<EnvRef>,
    /// Most model turns per message.
    pub max_steps: u32,
    /// Sampling temperature; unset: the server's default.
    pub temperature: Option<f32>,
    /// `meta` (the three meta-tools) or `direct` (every permitted tool).
    pub exposure: toolgate_agent::Exposure,
    /// `native` (the `tools` field) or `text` (`<tool_call>` blocks, for servers without tool support).
    pub tool_calling: toolgate_agent::ToolCalling,
    /// The whole run's time limit, in seconds.
    pub deadline_secs: u64,
    /// Longest wait for the model's next byte, in seconds.
    pub idle_timeout_secs: u64,
    /// Extra attempts after a transient model error.
    pub retries: u32,
    /// Most bytes of text and tool-call arguments in one model turn.
    pub max_turn_bytes: usize,
    /// Longest line (and SSE event) of the model's stream, in bytes.
    pub max_line_bytes: usize,
    /// Most tool calls run from one model turn (the rest are answered with an error).
    pub max_tool_calls: usize,
    /// Text put before the generated system prompt.
    pub instructions: Option<String>,
}

impl Default for AgentSection {
    fn default() -> Self {
        Self {
            base_url: None,
            model: None,
            api_key: None,
            max_steps: 12,
            temperature: None,
            exposure: toolgate_agent::Exposure::Meta,
            tool_calling: toolgate_agent::ToolCalling::Native,
            deadline_secs: 300,
            idle_timeout_secs: 60,
            retries: 2,
            max_turn_bytes: toolgate_agent::DEFAULT_MAX_TURN_BYTES,
            max_line_bytes: toolgate_agent::DEFAULT_MAX_LINE_BYTES,
            max_tool_calls: toolgate_agent::DEFAULT_MAX_TOOL_CALLS,
            instructions: None,
        }
    }
}

/// A value read from an environment variable, so secrets stay out of files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvRef {
    /// The variable's name.
    pub env: String,
}

impl AgentSection {
    /// The agent's typed configuration; `var` reads the environment (a
    /// function, so tests need not touch the process's).
    pub fn to_config(&self, var: impl Fn(&str) -> Option<String>) -> Result<toolgate_agent::AgentConfig> {
        let Some(base_url) = self.base_url.clone().filter(|u| !u.trim().is_empty()) else {
            bail!(
                "no model configured: set [agent] base_url and model in toolgate.toml (or TOOLGATE_AGENT_BASE_URL and TOOLGATE_AGENT_MODEL)"
            );
        };
        let Some(model) = self.model.clone().filter(|m| !m.trim().is_empty()) else {
            bail!("[agent] model is not set (or TOOLGATE_AGENT_MODEL)");
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            bail!("[agent] base_url must start with http:// or https://, got {base_url:?}");
        }
        if self.max_steps == 0 || self.deadline_secs == 0 || self.idle_timeout_secs == 0 {
            bail!("[agent] max_steps, deadline_secs and idle_timeout_secs must be at least 1");
        }
        if self.max_turn_bytes == 0 || self.max_line_bytes == 0 || self.max_tool_calls == 0 {
            bail!("[agent] max_turn_bytes, max_line_bytes and max_tool_calls must be at least 1");
        }
        let mut config = toolgate_agent::AgentConfig::new(base_url, model);
        if let Some(key) = &self.api_key {
            match var(&key.env).filter(|v| !v.trim().is_empty()) {
                Some(value) => config.api_key = Some(toolgate_core::Secret::new(value.trim())),
                None => bail!("[agent] api_key names the environment variable {}, which is not set", key.env),
            }
        }
        config.max_steps = self.max_steps;
        config.temperature = self.temperature;
        config.exposure = self.exposure;
        config.tool_calling = self.tool_calling;
        config.deadline = std::time::Duration::from_secs(self.deadline_secs);
        config.idle_timeout = std::time::Duration::from_secs(self.idle_timeout_secs);
        config.model_retries = self.retries;
        config.max_turn_bytes = self.max_turn_bytes;
        config.max_line_bytes = self.max_line_bytes;
        config.max_tool_calls = self.max_tool_calls;
        config.instructions = self.instructions.clone();
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Config;

    #[test]
    fn the_agent_section_reads_its_key_from_the_environment_only() {
        let config = Config::from_toml(
            "[agent]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"qwen\"\napi_key = { env = \"MY_KEY\" }\nexposure = \"direct\"",
        )
        .unwrap();
        let agent = config.agent.to_config(|n| (n == "MY_KEY").then(|| "sk-1234".to_owned())).unwrap();
        assert_eq!(agent.api_key.as_ref().map(|k| k.expose()), Some("sk-1234"));
        assert_eq!(agent.exposure, toolgate_agent::Exposure::Direct);
        assert!(!format!("{agent:?}").contains("sk-1234"));
        let err = config.agent.to_config(|_| None).unwrap_err().to_string();
        assert!(err.contains("MY_KEY") && err.contains("not set"), "{err}");
        let err = Config::from_toml("[agent]\napi_key = \"sk-literal\"").unwrap_err().to_string();
        assert!(err.contains("api_key"), "a literal key is refused: {err}");
        let err = Config::default().agent.to_config(|_| None).unwrap_err().to_string();
        assert!(err.contains("base_url"), "{err}");
    }

    #[test]
    fn the_stream_and_tool_call_limits_are_read_and_default_to_the_agents() {
        let base = "[agent]\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"m\"\n";
        let agent = Config::from_toml(base).unwrap().agent.to_config(|_| None).unwrap();
        let defaults = toolgate_agent::AgentConfig::new("http://x", "m");
        assert_eq!(
            (agent.max_turn_bytes, agent.max_line_bytes, agent.max_tool_calls),
            (defaults.max_turn_bytes, defaults.max_line_bytes, defaults.max_tool_calls)
        );
        let text = format!("{base}max_turn_bytes = 1000\nmax_line_bytes = 500\nmax_tool_calls = 3\n");
        let agent = Config::from_toml(&text).unwrap().agent.to_config(|_| None).unwrap();
        assert_eq!((agent.max_turn_bytes, agent.max_line_bytes, agent.max_tool_calls), (1000, 500, 3));
        let zero = Config::from_toml(&format!("{base}max_tool_calls = 0\n")).unwrap();
        let err = zero.agent.to_config(|_| None).unwrap_err().to_string();
        assert!(err.contains("max_tool_calls"), "{err}");
        // The example file names every key with the default value.
        let example = Config::from_toml(include_str!("../../../../toolgate.example.toml")).unwrap();
        assert_eq!(example.agent, super::AgentSection::default());
    }
}
