//! Sentence embeddings offline, for ranking tools by what a request means rather than by the
//! words it shares with them: a BERT encoder (all-MiniLM-L6-v2 and models of its shape) or an
//! MPNet (all-mpnet-base-v2) read from a sentence-transformers folder, run on the CPU,
//! mean-pooled and normalised, so that the dot product of two embeddings is their cosine
//! similarity.
//!
//! The folder is what sentence-transformers saves and model hubs serve: `config.json` (a BERT
//! or MPNet config, by its `model_type`), `tokenizer.json` (a WordPiece tokenizer with BERT's
//! normalizer; its post-processor says what stands around a text's pieces, `[CLS]` and
//! `[SEP]` or MPNet's `<s>` and `</s>`),
//! `model.safetensors` (f32 weights), and optionally `sentence_bert_config.json`
//! (`max_seq_length`) and `1_Pooling/config.json` (which must pool by the mean). Nothing is
//! downloaded: the model is wherever the operator put it.
//!
//! # Example
//!
//! ```no_run
//! let encoder = toolgate_embed::Encoder::load("models/all-MiniLM-L6-v2")?;
//! let request = encoder.embed("spin up a new virtual server");
//! let create = encoder.embed("Create a new virtual machine");
//! let delete = encoder.embed("Delete a domain record");
//! assert!(toolgate_embed::similarity(&request, &create) > toolgate_embed::similarity(&request, &delete));
//! # Ok::<(), toolgate_embed::Error>(())
//! ```
//!
//! One embedding costs about `2 × parameters × tokens` floating-point operations
//! (all-MiniLM-L6-v2: some 21 million a token; all-mpnet-base-v2: some 170 million), on the
//! calling thread.

mod bert;
mod wordpiece;

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Why a model folder could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file of the folder could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `config.json`, `sentence_bert_config.json` or the pooling config is not one this encoder runs.
    #[error("model config: {0}")]
    Config(String),
    /// `tokenizer.json` is not a WordPiece tokenizer this crate reads.
    #[error("tokenizer.json: {0}")]
    Tokenizer(String),
    /// `model.safetensors` lacks a tensor, or holds one of another shape or type.
    #[error("model.safetensors: {0}")]
    Weights(String),
}

/// How many tokens [`Encoder::embed_batch`] runs through the model at once (the
/// intermediate layer's states of a batch take `BATCH_TOKENS × intermediate_size` floats:
/// 6 MiB for all-MiniLM-L6-v2).
pub const BATCH_TOKENS: usize = 1024;

/// A sentence encoder: text in, a unit vector out.
#[derive(Debug)]
pub struct Encoder {
    tokenizer: wordpiece::WordPiece,
    bert: bert::Bert,
    max_tokens: usize,
}

#[derive(Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct Pooling {
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

fn read(path: PathBuf) -> Result<Vec<u8>, Error> {
    std::fs::read(&path).map_err(|source| Error::Io { path, source })
}

fn optional(path: PathBuf) -> Result<Option<Vec<u8>>, Error> {
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io { path, source }),
    }
}

fn parse<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::Config(format!("{name}: {e}")))
}

impl Encoder {
    /// The encoder of a sentence-transformers folder (see the crate's documentation).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = dir.as_ref();
        let config: bert::Config = parse("config.json", &read(dir.join("config.json"))?)?;
        let tokenizer_text = read(dir.join("tokenizer.json"))?;
        let tokenizer_text =
            std::str::from_utf8(&tokenizer_text).map_err(|e| Error::Tokenizer(e.to_string()))?;
        let tokenizer = wordpiece::WordPiece::from_json(tokenizer_text)?;
        if let Some(pooling) = optional(dir.join("1_Pooling").join("config.json"))? {
            let pooling: Pooling = parse("1_Pooling/config.json", &pooling)?;
            if !pooling.pooling_mode_mean_tokens {
                return Err(Error::Config(
                    "1_Pooling/config.json: only mean pooling is supported".to_owned(),
                ));
            }
        }
        let max_seq = match optional(dir.join("sentence_bert_config.json"))? {
            Some(bytes) => parse::<SentenceConfig>("sentence_bert_config.json", &bytes)?.max_seq_length,
            None => None,
        };
        let max_tokens = max_seq.unwrap_or(config.max_tokens()).min(config.max_tokens());
        let bert = bert::Bert::new(config, &read(dir.join("model.safetensors"))?)?;
        if tokenizer.max_id() as usize >= bert.vocab_size() {
            return Err(Error::Weights(
                "the tokenizer's vocabulary is larger than the embedding table".to_owned(),
            ));
        }
        Ok(Self { tokenizer, bert, max_tokens })
    }

    /// The embedding of `text`: unit length, [`Encoder::dimension`] numbers. A text longer than
    /// the model's `max_seq_length` is embedded by its first tokens.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_batch(&[text]).pop().unwrap_or_default()
    }

    /// The embeddings of `texts`, in order, as [`Encoder::embed`] makes them one by one: run
    /// as batches of up to [`BATCH_TOKENS`] tokens, which costs a third to a tenth of the time
    /// for short texts such as operation summaries.
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len());
        let mut batch: Vec<Vec<u32>> = Vec::new();
        let mut tokens = 0;
        for text in texts {
            let ids = self.tokenizer.encode(text, self.max_tokens);
            if tokens + ids.len() > BATCH_TOKENS && !batch.is_empty() {
                out.extend(self.bert.embed_batch(&batch));
                batch.clear();
                tokens = 0;
            }
            tokens += ids.len();
            batch.push(ids);
        }
        if !batch.is_empty() {
            out.extend(self.bert.embed_batch(&batch));
        }
        out
    }

    /// The ids the model reads for `text`: `[CLS]`, its WordPiece pieces, `[SEP]`, cut to the
    /// model's `max_seq_length`.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }

    /// How many numbers an embedding has.
    pub fn dimension(&self) -> usize {
        self.embed("").len()
    }
}

/// The cosine similarity of two embeddings of one encoder (their dot product: both are of
/// unit length), from -1 to 1.
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
