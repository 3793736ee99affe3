//! A hook that sees every finished call, for exporters that live outside
//! the gateway (OpenTelemetry spans in the binary). Without one, a call pays
//! a single branch; with one, the observer gets the caller and the envelope
//! and must not block (an exporter queues and sends on its own thread).

use toolgate_core::{Envelope, ToolContext};

/// Told about every call once it has its envelope (refused calls included).
pub trait CallObserver: Send + Sync + std::fmt::Debug + 'static {
    /// The call of `ctx` answered `envelope` (its metadata holds the tool,
    /// the duration and the attempts). Runs on the caller's task: queue, never wait.
    fn finished(&self, ctx: &ToolContext, envelope: &Envelope);
}
