//! Result text: a tool's minijinja template renders its result as short
//! markdown for the model. The envelope stays the structured truth.

use minijinja::Environment;
use serde_json::json;
use toolgate_core::Envelope;

use crate::Gateway;

/// The compiled result templates, one per tool that has one.
pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Default for Templates {
    fn default() -> Self {
        // `Environment::new()` has the builtin filters and tests (`length`,
        // `join`, `default`, ...); `Environment::default()` is empty.
        Self { env: Environment::new() }
    }
}

impl Templates {
    /// Compile a tool's template; a syntax error is reported at registration.
    pub(crate) fn add(&mut self, tool: &str, source: &str) -> Result<(), String> {
        self.env.add_template_owned(tool.to_owned(), source.to_owned()).map_err(|e| e.to_string())
    }

    fn render(&self, tool: &str, envelope: &Envelope) -> Option<String> {
        let template = self.env.get_template(tool).ok()?;
        let ctx = json!({
            "result": envelope.result,
            "signals": envelope.signals,
            "metadata": envelope.metadata,
        });
        match template.render(minijinja::value::Serde(&ctx)) {
            Ok(text) => Some(text.trim().to_owned()),
            Err(e) => {
                tracing::warn!(tool, error = %e, "result template failed; answering JSON");
                None
            }
        }
    }
}

impl Gateway {
    /// The text a model reads for an envelope: on success the tool's template
    /// (or pretty JSON when it has none); on failure the code, the message and
    /// what the signals ask. Signals are always spelled out.
    pub fn render_result(&self, envelope: &Envelope) -> String {
        let mut out = if envelope.success {
            self.inner
                .tools()
                .templates
                .render(&envelope.metadata.tool, envelope)
                .unwrap_or_else(|| serde_json::to_string_pretty(&envelope.result).unwrap_or_default())
        } else {
            match &envelope.error {
                Some(error) => format!("Error {}: {}", error.code, error.message),
                None => "Error".to_owned(),
            }
        };
        for signal in &envelope.signals {
            let line = serde_json::to_string(signal).unwrap_or_default();
            out.push_str(&format!("\nSignal {}: {line}", signal.kind()));
        }
        out
    }
}
