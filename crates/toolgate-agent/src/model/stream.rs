//! Reading a Chat Completions answer: the SSE framing (`data:` lines, blank
//! line ends an event, `[DONE]` ends the stream) and the assembly of its
//! chunks into one assistant turn (content deltas, tool-call deltas by
//! `index`, `finish_reason`, the usage chunk). Servers differ in small ways
//! that are all accepted here: Ollama and llama.cpp send a call's whole
//! arguments in one delta, some omit `index`, some send arguments as an
//! object, some send the name again in every delta.

use std::collections::HashMap;

use serde_json::Value;

use super::error::{ModelError, ModelErrorKind};
use super::{AssistantTurn, ToolCall};
use crate::Usage;

/// Splits a byte stream into SSE event payloads, in time linear in the
/// bytes (each byte is looked at for a newline once), refusing a line or an
/// event longer than `max_line` bytes before buffering more of it.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no newline.
    scanned: usize,
    data: Vec<String>,
    data_bytes: usize,
    max_line: usize,
}

impl SseDecoder {
    pub(crate) fn new(max_line: usize) -> Self {
        Self { buffer: Vec::new(), scanned: 0, data: Vec::new(), data_bytes: 0, max_line }
    }

    /// Feed bytes; returns the payloads of the events they completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, ModelError> {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(at) = buffer[from..].iter().position(|&b| b == b'\n') {
            let end = from + at;
            self.line(&buffer[start..end], &mut out)?;
            start = end + 1;
            from = start;
        }
        if start > 0 {
            // What is left follows the last newline, so it came with these bytes.
            buffer.drain(..start);
        }
        if buffer.len() > self.max_line {
            return Err(self.too_long("line"));
        }
        self.scanned = buffer.len();
        self.buffer = buffer;
        Ok(out)
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<String>) -> Result<(), ModelError> {
        if line.len() > self.max_line {
            return Err(self.too_long("line"));
        }
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches(['\n', '\r']);
        let data = if line.is_empty() {
            if !self.data.is_empty() {
                out.push(self.data.join("\n"));
                self.data.clear();
                self.data_bytes = 0;
            }
            return Ok(());
        } else if let Some(rest) = line.strip_prefix("data:") {
            rest.strip_prefix(' ').unwrap_or(rest).to_owned()
        } else if let Some(rest) = line.strip_prefix("error:") {
            // llama.cpp's server reports a failure mid-stream this way.
            format!("{{\"error\": {}}}", rest.trim())
        } else {
            // `event:`, `id:`, `retry:` and `:` comments carry nothing we need.
            return Ok(());
        };
        self.data_bytes += data.len() + 1;
        if self.data_bytes > self.max_line {
            return Err(self.too_long("event"));
        }
        self.data.push(data);
        Ok(())
    }

    fn too_long(&self, what: &str) -> ModelError {
        ModelError::new(
            ModelErrorKind::TooLarge,
            format!(
                "the model's stream sent an SSE {what} longer than {} bytes ([agent] max_line_bytes); it was refused unread",
                self.max_line
            ),
        )
    }

    /// The payload left when the stream ends without a final blank line.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buffer)).trim().to_owned();
        if let Some(data) = rest.strip_prefix("data:") {
            self.data.push(data.trim().to_owned());
        }
        (!self.data.is_empty()).then(|| std::mem::take(&mut self.data).join("\n"))
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Builds one assistant turn from the stream's chunks, refusing a turn whose
/// text and tool calls pass `max_turn` bytes.
#[derive(Debug)]
pub(crate) struct Assembler {
    content: String,
    calls: Vec<PartialCall>,
    /// Slots of `calls` by the model's index and by id, so a turn of many
    /// calls is assembled in linear time.
    by_index: HashMap<u64, usize>,
    by_id: HashMap<String, usize>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    pub(crate) done: bool,
    size: usize,
    max_turn: usize,
}

impl Assembler {
    pub(crate) fn new(max_turn: usize) -> Self {
        Self {
            content: String::new(),
            calls: Vec::new(),
            by_index: HashMap::new(),
            by_id: HashMap::new(),
            finish_reason: None,
            usage: None,
            done: false,
            size: 0,
            max_turn,
        }
    }

    /// Count `bytes` more of the turn; refuse once past the limit.
    fn grow(&mut self, bytes: usize) -> Result<(), ModelError> {
        self.size += bytes;
        if self.size > self.max_turn {
            return Err(ModelError::new(
                ModelErrorKind::TooLarge,
                format!(
                    "the model's turn passed {} bytes of text and tool calls ([agent] max_turn_bytes) and was stopped there; ask for a shorter answer or fewer, smaller tool calls",
                    self.max_turn
                ),
            ));
        }
        Ok(())
    }

    /// Apply one SSE payload; returns the text it added (for `token` events).
    pub(crate) fn apply(&mut self, payload: &str) -> Result<Option<String>, ModelError> {
        let payload = payload.trim();
        if payload == "[DONE]" {
            self.done = true;
            return Ok(None);
        }
        let chunk: Value = serde_json::from_str(payload).map_err(|e| {
            // Cut again to 500 characters once secrets are out (`ModelError::scrub`).
            let start: String = payload.chars().take(2000).collect();
            ModelError::new(ModelErrorKind::Malformed, format!("a stream chunk is not JSON ({e}): {start}"))
        })?;
        if !chunk.is_object() {
            return Err(ModelError::new(ModelErrorKind::Malformed, "a stream chunk is not a JSON object"));
        }
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message =
                error["message"].as_str().or_else(|| error.as_str()).unwrap_or("error in the stream");
            let status = error["code"].as_u64().and_then(|c| u16::try_from(c).ok());
            let mut e = ModelError::from_status(
                status.unwrap_or(500),
                &serde_json::json!({"error": {"message": message}}).to_string(),
            );
            e.status = status;
            return Err(e);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(read_usage(usage));
        }
        let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
            return Ok(None);
        };
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_owned());
        }
        // A non-streaming answer has `message` where a chunk has `delta`.
        let delta = if choice["delta"].is_object() { &choice["delta"] } else { &choice["message"] };
        if let Some(calls) = delta["tool_calls"].as_array() {
            for (position, call) in calls.iter().enumerate() {
                self.apply_call(position, call)?;
            }
        }
        match delta["content"].as_str() {
            Some(text) if !text.is_empty() => {
                self.grow(text.len())?;
                self.content.push_str(text);
                Ok(Some(text.to_owned()))
            }
            _ => Ok(None),
        }
    }

    fn apply_call(&mut self, position: usize, call: &Value) -> Result<(), ModelError> {
        let id = call["id"].as_str().unwrap_or_default();
        let index = call["index"].as_u64();
        let existing = match index {
            Some(index) => self.by_index.get(&index).copied(),
            // No index: a new call when it brings a new id (or a name), else the last one.
            None if !id.is_empty() && self.by_id.contains_key(id) => self.by_id.get(id).copied(),
            None if !id.is_empty() || call["function"]["name"].is_string() => None,
            None => self.calls.len().checked_sub(1),
        };
        let slot = match existing {
            Some(i) => i,
            None => {
                let index = index.unwrap_or((self.calls.len() + position) as u64);
                self.calls.push(PartialCall { index, ..PartialCall::default() });
                let slot = self.calls.len() - 1;
                self.by_index.entry(index).or_insert(slot);
                slot
            }
        };
        let name = call["function"]["name"].as_str().filter(|n| self.calls[slot].name != *n);
        let arguments = match &call["function"]["arguments"] {
            Value::String(piece) => Some(piece.clone()),
            Value::Null => None,
            object => Some(object.to_string()),
        };
        let new_id = !id.is_empty() && self.calls[slot].id != id;
        self.grow(
            name.map_or(0, str::len)
                + arguments.as_ref().map_or(0, String::len)
                + if new_id { id.len() } else { 0 },
        )?;
        let partial = &mut self.calls[slot];
        if new_id {
            partial.id = id.to_owned();
            self.by_id.insert(id.to_owned(), slot);
        }
        if let Some(name) = name {
            partial.name.push_str(name);
        }
        if let Some(arguments) = arguments {
            partial.arguments.push_str(&arguments);
        }
        Ok(())
    }

    /// The turn, once the stream ended; a stream cut before any end marker is malformed.
    pub(crate) fn finish(self) -> Result<AssistantTurn, ModelError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(ModelError::new(
                ModelErrorKind::Malformed,
                "the stream ended before the answer was complete (no finish_reason, no [DONE])",
            ));
        }
        let mut calls = self.calls;
        calls.sort_by_key(|c| c.index);
        let tool_calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| ToolCall {
                id: if c.id.is_empty() { format!("call_{i}") } else { c.id },
                name: c.name,
                arguments: if c.arguments.trim().is_empty() { "{}".to_owned() } else { c.arguments },
            })
            .collect();
        Ok(AssistantTurn {
            content: self.content,
            tool_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
        })
    }
}

pub(crate) fn read_usage(usage: &Value) -> Usage {
    let n = |k: &str| usage[k].as_u64().unwrap_or(0);
    let (prompt, completion) = (n("prompt_tokens"), n("completion_tokens"));
    let total = usage["total_tokens"].as_u64().unwrap_or(prompt + completion);
    Usage { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(stream: &str) -> Result<(AssistantTurn, String), ModelError> {
        let mut decoder = SseDecoder::new(1 << 20);
        let mut asm = Assembler::new(1 << 20);
        let mut tokens = String::new();
        // Feed in small pieces: chunk borders fall anywhere.
        for piece in stream.as_bytes().chunks(7) {
            for payload in decoder.push(piece)? {
                if let Some(t) = asm.apply(&payload)? {
                    tokens.push_str(&t);
                }
            }
        }
        if let Some(payload) = decoder.finish() {
            asm.apply(&payload)?;
        }
        Ok((asm.finish()?, tokens))
    }

    #[test]
    fn openai_tool_call_deltas_are_assembled() {
        let stream = concat!(
            ": keep-alive\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me \"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"check.\"}}]}\r\n\r\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"query_weather\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"function\":{\"name\":\"query_travel_policy\",\"arguments\":\"{\\\"city\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"Oslo\\\"}\"}},{\"index\":1,\"function\":{\"arguments\":\"\\\": \\\"Rome\\\"}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}\n\n",
            "data: [DONE]\n\n",
        );
        let (turn, tokens) = assemble(stream).unwrap();
        assert_eq!(tokens, "Let me check.");
        assert_eq!(turn.content, "Let me check.");
        let calls: Vec<_> =
            turn.tool_calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(
            calls,
            [
                ("call_a", "query_weather", "{\"city\":\"Oslo\"}"),
                ("call_b", "query_travel_policy", "{\"city\": \"Rome\"}")
            ]
        );
        assert_eq!(turn.usage.unwrap().total_tokens, 15);
        assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn ollama_and_llama_cpp_shapes() {
        // Whole calls in one delta, no index, arguments as an object, no [DONE].
        let stream = concat!(
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"a_b\",\"arguments\":{\"x\":1}}},{\"id\":\"c2\",\"function\":{\"name\":\"c_d\",\"arguments\":\"{}\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}",
        );
        let (turn, _) = assemble(stream).unwrap();
        let calls: Vec<_> = turn.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(calls, [("a_b", "{\"x\":1}"), ("c_d", "{}")]);
        // A non-streaming answer read the same way.
        let (turn, _) = assemble(
            "data: {\"choices\":[{\"message\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\n",
        )
        .unwrap();
        assert_eq!(turn.content, "hi");
    }

    #[test]
    fn broken_streams_are_malformed_or_provider_errors() {
        let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";
        assert_eq!(assemble(cut).unwrap_err().kind, ModelErrorKind::Malformed);
        assert_eq!(assemble("data: {not json\n\n").unwrap_err().kind, ModelErrorKind::Malformed);
        let err = assemble("error: {\"code\": 500, \"message\": \"slot unavailable\"}\n\n").unwrap_err();
        assert_eq!((err.kind, err.message.as_str()), (ModelErrorKind::Server, "slot unavailable"));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_give_a_turn_or_an_error_never_a_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let mut decoder = SseDecoder::new(64);
            let mut asm = Assembler::new(64);
            let Ok(payloads) = decoder.push(&bytes) else { return Ok(()) };
            for payload in payloads.into_iter().chain(decoder.finish()) {
                if asm.apply(&payload).is_err() {
                    return Ok(());
                }
            }
            let _ = asm.finish();
        }

        #[test]
        fn any_json_chunk_is_accepted_or_refused(value in arb_json()) {
            let mut asm = Assembler::new(1 << 20);
            let _ = asm.apply(&value.to_string());
            let _ = asm.apply(&serde_json::json!({"choices": [{"delta": value.clone(), "message": value}]}).to_string());
            let _ = asm.finish();
        }
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            "[a-z_ {}\\[\\]\"]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("tool_calls".to_owned()),
                        Just("content".to_owned()),
                        Just("index".to_owned()),
                        Just("function".to_owned()),
                        Just("arguments".to_owned()),
                        Just("name".to_owned()),
                        Just("id".to_owned()),
                        Just("choices".to_owned()),
                        Just("error".to_owned())
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
