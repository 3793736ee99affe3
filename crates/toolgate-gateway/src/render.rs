//! Result text: a tool's minijinja template renders its result as short
//! markdown for the model. The envelope stays the structured truth.
//!
//! Without the `templates` feature there is no template engine: a tool's
//! `result_template` is neither compiled nor checked, and a successful result
//! is always rendered as pretty JSON.

use toolgate_core::Envelope;

use crate::Gateway;

/// The compiled result templates, one per tool that has one.
#[cfg(feature = "templates")]
pub(crate) struct Templates {
    env: minijinja::Environment<'static>,
}

#[cfg(feature = "templates")]
impl Default for Templates {
    fn default() -> Self {
        // `Environment::new()` has the builtin filters and tests (`length`,
        // `join`, `default`, ...); `Environment::default()` is empty.
        Self { env: minijinja::Environment::new() }
    }
}

#[cfg(feature = "templates")]
impl Templates {
    /// Compile a tool's template; a syntax error is reported at registration.
    pub(crate) fn add(&mut self, tool: &str, source: &str) -> Result<(), String> {
        self.env.add_template_owned(tool.to_owned(), source.to_owned()).map_err(|e| e.to_string())
    }

    fn render(&self, tool: &str, envelope: &Envelope) -> Option<String> {
        let template = self.env.get_template(tool).ok()?;
        let ctx = serde_json::json!({
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

/// Without the `templates` feature: no engine, so no template is compiled
/// and every result renders as JSON.
#[cfg(not(feature = "templates"))]
#[derive(Default)]
pub(crate) struct Templates {}

#[cfg(not(feature = "templates"))]
impl Templates {
    /// Templates are ignored without the engine: nothing to compile, nothing to refuse.
    pub(crate) fn add(&mut self, _tool: &str, _source: &str) -> Result<(), String> {
        Ok(())
    }

    fn render(&self, _tool: &str, _envelope: &Envelope) -> Option<String> {
        None
    }
}

impl Gateway {
    /// The text a model reads for an envelope: on success the tool's template
    /// (or pretty JSON when it has none, or when the `templates` feature is
    /// off); on failure the code, the message and
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
