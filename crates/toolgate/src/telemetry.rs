//! Optional OpenTelemetry export: one span per tool call, sent over OTLP/HTTP
//! (protobuf) to a collector when an endpoint is configured, and nothing at
//! all when none is: no exporter, no thread, and a call pays one branch.
//!
//! A span carries the tool, the outcome code, the attempts, the duration,
//! the role and a keyed hash of the user id (HMAC-SHA256 under
//! `TOOLGATE_TELEMETRY_SALT`, so that a collector can group one user's calls
//! without learning who it is, and a dictionary of e-mail addresses does not
//! undo it). Never the raw user id, never a key or a parameter. Without the
//! salt each process draws a random one (ids then differ between instances
//! and restarts).
//!
//! The SDK exports from its own thread with the blocking HTTP client (the
//! async one needs a Tokio reactor that thread does not have), in batches
//! (`OTEL_BSP_SCHEDULE_DELAY`, default 5 s; the rest is sent at shutdown).

use serde::{Deserialize, Serialize};

/// `[telemetry]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`); spans go
    /// to `<url>/v1/traces`. Unset: the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// or `OTEL_EXPORTER_OTLP_ENDPOINT`; none of them: no export.
    pub otlp_endpoint: Option<String>,
    /// The spans' `service.name` (default `toolgate`).
    pub service_name: Option<String>,
}

/// The environment variable holding the key of the user-id hash (a secret: never in the file).
pub const ENV_USER_SALT: &str = "TOOLGATE_TELEMETRY_SALT";

/// Where spans go, if anywhere: the configured base URL (with `/v1/traces`),
/// or `Some(None)` when only the standard variables say (the exporter reads them).
pub fn endpoint(config: &TelemetryConfig, var: &dyn Fn(&str) -> Option<String>) -> Option<Option<String>> {
    let set = |v: Option<String>| v.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    if let Some(base) = set(config.otlp_endpoint.clone()) {
        return Some(Some(format!("{}/v1/traces", base.trim_end_matches('/'))));
    }
    let standard = ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"];
    standard.iter().any(|name| set(var(name)).is_some()).then_some(None)
}

/// The user-id hash: the first 16 bytes of HMAC-SHA256(salt, user id), in hex.
pub fn user_hash(salt: &[u8], user_id: &str) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(salt).expect("HMAC takes a key of any length");
    mac.update(user_id.as_bytes());
    let digest = mac.finalize().into_bytes();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(feature = "otel")]
mod export {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    use anyhow::{Context, Result};
    use opentelemetry::trace::{Span, SpanKind, Status, Tracer, TracerProvider};
    use opentelemetry::{KeyValue, Value};
    use opentelemetry_otlp::{Protocol, WithExportConfig};
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
    use toolgate_core::{Envelope, ToolContext};
    use toolgate_gateway::CallObserver;

    use super::{ENV_USER_SALT, TelemetryConfig, endpoint, user_hash};

    /// The running exporter; dropping it sends what is queued.
    #[derive(Debug)]
    pub struct Telemetry {
        provider: SdkTracerProvider,
    }

    impl Drop for Telemetry {
        fn drop(&mut self) {
            if let Err(error) = self.provider.shutdown() {
                tracing::warn!(%error, "could not send the last spans");
            }
        }
    }

    impl Telemetry {
        /// Start exporting when an endpoint is configured; `None` (and no work at all) otherwise.
        pub fn start(
            config: &TelemetryConfig,
            var: &dyn Fn(&str) -> Option<String>,
        ) -> Result<Option<(Self, Arc<dyn CallObserver>)>> {
            let Some(url) = endpoint(config, var) else { return Ok(None) };
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_timeout(Duration::from_secs(10));
            if let Some(url) = &url {
                builder = builder.with_endpoint(url.clone());
            }
            let exporter = builder.build().context("in [telemetry] (the OTLP exporter)")?;
            let service = config.service_name.clone().unwrap_or_else(|| "toolgate".into());
            let provider = SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(Resource::builder().with_service_name(service).build())
                .build();
            let salt = match var(ENV_USER_SALT).filter(|s| !s.is_empty()) {
                Some(salt) => salt.into_bytes(),
                None => {
                    tracing::info!(
                        "{ENV_USER_SALT} is not set: user ids are hashed with a random key of this process"
                    );
                    let mut salt = vec![0u8; 32];
                    rand::RngCore::fill_bytes(&mut rand::rng(), &mut salt);
                    salt
                }
            };
            tracing::info!(
                endpoint = url.as_deref().unwrap_or("(from OTEL_EXPORTER_OTLP_*)"),
                "exporting spans"
            );
            let observer = SpanObserver { tracer: provider.tracer("toolgate"), salt };
            Ok(Some((Self { provider }, Arc::new(observer))))
        }
    }

    struct SpanObserver {
        tracer: SdkTracer,
        salt: Vec<u8>,
    }

    impl std::fmt::Debug for SpanObserver {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("SpanObserver").finish_non_exhaustive()
        }
    }

    impl CallObserver for SpanObserver {
        fn finished(&self, ctx: &ToolContext, envelope: &Envelope) {
            let meta = &envelope.metadata;
            let end = SystemTime::now();
            let duration = Duration::from_secs_f64((meta.duration_ms / 1000.0).max(0.0));
            let code = envelope.code().map_or("OK", |c| c.as_str());
            let attributes = vec![
                KeyValue::new("toolgate.tool", meta.tool.clone()),
                KeyValue::new("toolgate.code", code),
                KeyValue::new("toolgate.attempts", i64::from(meta.attempts)),
                KeyValue::new("toolgate.duration_ms", Value::F64(meta.duration_ms)),
                KeyValue::new("toolgate.role", ctx.caller.role.clone()),
                KeyValue::new("toolgate.user_hash", user_hash(&self.salt, &ctx.caller.user_id)),
                KeyValue::new("toolgate.trace_id", ctx.trace_id.clone()),
            ];
            let mut span = self
                .tracer
                .span_builder(format!("tool {}", meta.tool))
                .with_kind(SpanKind::Server)
                .with_start_time(end.checked_sub(duration).unwrap_or(end))
                .with_attributes(attributes)
                .start(&self.tracer);
            if !envelope.success {
                // The code only: the message may quote what the caller sent.
                span.set_status(Status::error(code));
            }
            span.end_with_timestamp(end);
        }
    }
}

#[cfg(feature = "otel")]
pub use export::Telemetry;

/// Without the `otel` feature: a configured endpoint is an error, not a silent no-op.
#[cfg(not(feature = "otel"))]
#[derive(Debug)]
pub struct Telemetry;

#[cfg(not(feature = "otel"))]
impl Telemetry {
    /// Refuse a configured endpoint: this build cannot export.
    pub fn start(
        config: &TelemetryConfig,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<(Self, std::sync::Arc<dyn toolgate_gateway::CallObserver>)>> {
        match endpoint(config, var) {
            None => Ok(None),
            Some(_) => anyhow::bail!(
                "an OTLP endpoint is configured, but this toolgate was built without the `otel` feature"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_comes_from_the_file_then_the_standard_variables_else_none() {
        let none = |_: &str| None;
        assert_eq!(endpoint(&TelemetryConfig::default(), &none), None);
        let config = TelemetryConfig { otlp_endpoint: Some("http://c:4318/".into()), service_name: None };
        assert_eq!(endpoint(&config, &none), Some(Some("http://c:4318/v1/traces".into())));
        let env = |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://c:4318".to_owned());
        assert_eq!(endpoint(&TelemetryConfig::default(), &env), Some(None));
        let blank = |_: &str| Some("  ".to_owned());
        assert_eq!(endpoint(&TelemetryConfig::default(), &blank), None);
    }

    #[test]
    fn user_ids_are_hashed_with_the_key() {
        let a = user_hash(b"k1", "alice@example.com");
        assert_eq!(a.len(), 32);
        assert_eq!(a, user_hash(b"k1", "alice@example.com"));
        assert_ne!(a, user_hash(b"k2", "alice@example.com"));
        assert_ne!(a, user_hash(b"k1", "bob@example.com"));
        assert!(!a.contains("alice"));
    }
}
