//! Which of an upstream's tools may run as tasks: those its `tools/list` marks
//! `execution.taskSupport: "optional"` or `"required"` (2025-11-25). Such a tool
//! is tagged [`TASK_TAG`], so a client that asks for a task gets one of
//! toolgate's, wrapping the proxied call (cancelling the task drops the call,
//! and the upstream is sent `notifications/cancelled`).
//!
//! rmcp's `Tool` has no `execution` field: the listing it parses has lost it.
//! So the answers are read as they arrive, before rmcp parses them: the child's
//! output through [`Tap`] (stdio), each event of an HTTP answer stream through
//! [`tap_events`], and the plain JSON answer of an HTTP listing, which toolgate
//! sends itself for that ([`crate::listing`]). Only messages that carry a `tools`
//! list are parsed, into the few fields read here.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::stream::{BoxStream, StreamExt};
use rmcp::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::{Transport, streamable_http_client::SseError};
use serde::Deserialize;
use sse_stream::Sse;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The tag of a tool that may run as a task (`toolgate_mcp::LONG_RUNNING_TAG`).
pub(crate) const TASK_TAG: &str = "long_running";

/// The longest line of a child's output that is read for a tool list; a longer
/// one passes unread (rmcp still reads it).
const MAX_TAPPED_LINE: usize = 4 * 1024 * 1024;

/// The remote names of an upstream's tools that support tasks, as its last
/// listing said.
#[derive(Debug, Default)]
pub(crate) struct TaskTools(Mutex<HashSet<String>>);

#[derive(Deserialize)]
struct Message {
    result: Option<Listing>,
}

#[derive(Deserialize)]
struct Listing {
    tools: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    name: String,
    execution: Option<Execution>,
}

#[derive(Deserialize)]
struct Execution {
    #[serde(rename = "taskSupport")]
    task_support: Option<String>,
}

impl TaskTools {
    /// Whether the upstream's tool `remote` may run as a task.
    pub(crate) fn supports(&self, remote: &str) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).contains(remote)
    }

    /// Read one JSON-RPC message from the upstream: when it answers with a page of
    /// tools, each listed tool's task support replaces what was known of it.
    pub(crate) fn note(&self, message: &[u8]) {
        if !message.windows(7).any(|w| w == b"\"tools\"") {
            return;
        }
        let Ok(Message { result: Some(listing) }) = serde_json::from_slice::<Message>(message) else {
            return;
        };
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for tool in listing.tools {
            let support = tool.execution.and_then(|e| e.task_support);
            if matches!(support.as_deref(), Some("optional" | "required")) {
                known.insert(tool.name);
            } else {
                known.remove(&tool.name);
            }
        }
    }
}

/// A child's output as rmcp reads it, each line also shown to [`TaskTools::note`].
pub(crate) struct Tap<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line outgrew [`MAX_TAPPED_LINE`]: skipped to its end.
    skipping: bool,
    tools: Arc<TaskTools>,
}

impl<R> Tap<R> {
    pub(crate) fn new(inner: R, tools: Arc<TaskTools>) -> Self {
        Self { inner, line: Vec::new(), skipping: false, tools }
    }

    fn saw(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, end) = match bytes.iter().position(|b| *b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            if !self.skipping {
                if self.line.len() + part.len() > MAX_TAPPED_LINE {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if end {
                if !self.skipping {
                    self.tools.note(&self.line);
                }
                self.line.clear();
                self.skipping = false;
                bytes = &bytes[part.len() + 1..];
            } else {
                bytes = &[];
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if polled.is_ready() {
            let fresh = buf.filled()[before..].to_vec();
            self.saw(&fresh);
        }
        polled
    }
}

/// How long a child has to exit once its input is closed before it is killed.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// An upstream child process as an rmcp transport: newline-delimited JSON-RPC on its
/// stdin/stdout, the output tapped ([`Tap`]). Dropped, the child is killed; closed, its
/// input is closed and it has [`EXIT_GRACE`] to exit.
pub(crate) struct ChildTransport {
    child: Child,
    inner: AsyncRwTransport<RoleClient, Tap<ChildStdout>, ChildStdin>,
}

impl ChildTransport {
    /// Start `command` (its stdin and stdout piped, killed on drop).
    pub(crate) fn spawn(
        mut command: tokio::process::Command,
        tools: Arc<TaskTools>,
    ) -> std::io::Result<Self> {
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the child's stdin or stdout could not be piped"));
        };
        Ok(Self { child, inner: AsyncRwTransport::new(Tap::new(stdout, tools), stdin) })
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait()).await.is_err() {
            self.child.kill().await?;
        }
        Ok(())
    }
}

/// An HTTP answer's event stream, each event's data also shown to [`TaskTools::note`].
pub(crate) fn tap_events(
    events: BoxStream<'static, Result<Sse, SseError>>,
    tools: Arc<TaskTools>,
) -> BoxStream<'static, Result<Sse, SseError>> {
    events
        .inspect(move |event| {
            if let Ok(Sse { data: Some(data), .. }) = event {
                tools.note(data.as_bytes());
            }
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    const LISTING: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[
        {"name":"slow_report","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
        {"name":"must_task","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
        {"name":"never","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},
        {"name":"plain","inputSchema":{"type":"object"}}]}}"#;

    #[test]
    fn optional_and_required_tools_support_tasks_and_a_relisting_replaces_them() {
        let tools = TaskTools::default();
        tools.note(LISTING.replace('\n', "").as_bytes());
        assert!(tools.supports("slow_report") && tools.supports("must_task"));
        assert!(!tools.supports("never") && !tools.supports("plain") && !tools.supports("other"));
        tools.note(
            br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"slow_report","inputSchema":{}}]}}"#,
        );
        assert!(!tools.supports("slow_report"), "listed again without execution");
        assert!(tools.supports("must_task"), "a tool not on this page keeps what was known");
        // Other messages, and text that only mentions tools, change nothing.
        tools.note(br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\"tools\""}]}}"#);
        tools.note(b"not json \"tools\"");
        assert!(tools.supports("must_task"));
    }

    #[tokio::test]
    async fn the_tap_reads_lines_split_across_reads_and_passes_every_byte_on() {
        let listing = LISTING.replace('\n', "");
        let text = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n{listing}\n");
        let tools = Arc::new(TaskTools::default());
        let (mut writer, reader) = tokio::io::duplex(64);
        let mut tap = Tap::new(reader, tools.clone());
        let sent = text.clone();
        let writing = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for chunk in sent.as_bytes().chunks(37) {
                writer.write_all(chunk).await.unwrap();
            }
        });
        let mut read = String::new();
        tap.read_to_string(&mut read).await.unwrap();
        writing.await.unwrap();
        assert_eq!(read, text);
        assert!(tools.supports("slow_report") && !tools.supports("plain"));
    }
}
