//! A BERT encoder's forward pass (absolute positions, post-layer-norm, GELU), in f32 with
//! ndarray's matrix products, over one sequence at a time (no padding, so no attention mask).
//! MPNet (all-mpnet-base-v2) is the same pass with its own tensor names, positions counted
//! from after the padding id, no token types, and a learned bias of each head's attention
//! scores by the bucketed distance between the two tokens, shared by every layer.

use ndarray::{Array1, Array2, ArrayView2, Axis, Slice};
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::Error;

/// The fields of a BERT `config.json` the forward pass needs.
#[derive(Debug, Deserialize)]
pub(crate) struct Config {
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    #[serde(default = "eps")]
    layer_norm_eps: f32,
    #[serde(default = "gelu")]
    hidden_act: String,
    max_position_embeddings: usize,
    /// `bert` (and its kin) or `mpnet`.
    #[serde(default = "bert")]
    model_type: String,
    /// MPNet counts positions from the one after this id.
    #[serde(default)]
    pad_token_id: usize,
    /// MPNet's relative attention buckets.
    #[serde(default = "buckets")]
    relative_attention_num_buckets: usize,
}

impl Config {
    /// Whether this is an MPNet (relative attention bias, positions after the padding id).
    fn mpnet(&self) -> bool {
        self.model_type == "mpnet"
    }

    /// The first position's row of the position table: MPNet's start after its padding id.
    fn position_offset(&self) -> usize {
        if self.mpnet() { self.pad_token_id + 1 } else { 0 }
    }

    /// How many ids a sequence may have.
    pub(crate) fn max_tokens(&self) -> usize {
        self.max_position_embeddings.saturating_sub(self.position_offset())
    }
}

fn bert() -> String {
    "bert".to_owned()
}

fn buckets() -> usize {
    32
}

fn eps() -> f32 {
    1e-12
}

fn gelu() -> String {
    "gelu".to_owned()
}

/// A linear layer: `x · weightᵀ + bias`, the weight `[out, in]` as PyTorch stores it.
#[derive(Debug)]
struct Linear {
    weight: Array2<f32>,
    bias: Array1<f32>,
}

impl Linear {
    fn forward(&self, x: &ArrayView2<'_, f32>) -> Array2<f32> {
        x.dot(&self.weight.t()) + &self.bias
    }
}

#[derive(Debug)]
struct Norm {
    gain: Array1<f32>,
    bias: Array1<f32>,
}

#[derive(Debug)]
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    output: Linear,
    output_norm: Norm,
}

/// The encoder's weights.
#[derive(Debug)]
pub(crate) struct Bert {
    config: Config,
    words: Array2<f32>,
    positions: Array2<f32>,
    /// The first token type's row (BERT); MPNet has none.
    token_type: Option<Array1<f32>>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    /// MPNet's bias of each head's scores by relative-position bucket, `[buckets, heads]`.
    relative: Option<Array2<f32>>,
}

/// The tensors of a safetensors file, by name without a leading `bert.` or `mpnet.`.
struct Tensors<'a>(SafeTensors<'a>, Vec<String>);

impl Tensors<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, Error> {
        let bare =
            |n: &str| n.strip_prefix("bert.").or_else(|| n.strip_prefix("mpnet.")).unwrap_or(n) == name;
        let full = self.1.iter().find(|n| bare(n));
        let Some(full) = full else { return Err(Error::Weights(format!("no tensor {name}"))) };
        let view = self.0.tensor(full).map_err(|e| Error::Weights(format!("{name}: {e}")))?;
        if view.dtype() != Dtype::F32 {
            return Err(Error::Weights(format!("{name} is {:?}, only F32 is read", view.dtype())));
        }
        if view.shape() != shape {
            return Err(Error::Weights(format!(
                "{name} has shape {:?}, the config says {shape:?}",
                view.shape()
            )));
        }
        Ok(view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>, Error> {
        let data = self.get(name, &[rows, cols])?;
        Array2::from_shape_vec((rows, cols), data).map_err(|e| Error::Weights(format!("{name}: {e}")))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Array1<f32>, Error> {
        Ok(Array1::from_vec(self.get(name, &[len])?))
    }

    fn linear(&self, name: &str, out: usize, input: usize) -> Result<Linear, Error> {
        Ok(Linear {
            weight: self.matrix(&format!("{name}.weight"), out, input)?,
            bias: self.vector(&format!("{name}.bias"), out)?,
        })
    }

    fn norm(&self, name: &str, len: usize) -> Result<Norm, Error> {
        Ok(Norm {
            gain: self.vector(&format!("{name}.weight"), len)?,
            bias: self.vector(&format!("{name}.bias"), len)?,
        })
    }
}

impl Bert {
    /// The encoder of `config` with the weights of a safetensors file's bytes.
    pub(crate) fn new(config: Config, weights: &[u8]) -> Result<Self, Error> {
        if !matches!(config.model_type.as_str(), "bert" | "mpnet") {
            return Err(Error::Config(format!(
                "model_type {:?}: only bert and mpnet are supported",
                config.model_type
            )));
        }
        if config.hidden_act != "gelu" {
            return Err(Error::Config(format!("hidden_act {:?}: only gelu is supported", config.hidden_act)));
        }
        if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
            return Err(Error::Config("hidden_size is not a multiple of num_attention_heads".to_owned()));
        }
        let file = SafeTensors::deserialize(weights).map_err(|e| Error::Weights(e.to_string()))?;
        let names = file.names().into_iter().map(str::to_owned).collect();
        let t = Tensors(file, names);
        let h = config.hidden_size;
        let words = t.0.tensor(
            t.1.iter()
                .find(|n| n.ends_with("embeddings.word_embeddings.weight"))
                .ok_or_else(|| Error::Weights("no tensor embeddings.word_embeddings.weight".to_owned()))?,
        );
        let vocab = words.map_err(|e| Error::Weights(e.to_string()))?.shape().first().copied().unwrap_or(0);
        // MPNet's names of the tensors BERT calls `attention.self.query` and so on.
        let (query, key, value, attention_out, attention_norm) = if config.mpnet() {
            (
                "attention.attn.q",
                "attention.attn.k",
                "attention.attn.v",
                "attention.attn.o",
                "attention.LayerNorm",
            )
        } else {
            (
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "attention.output.LayerNorm",
            )
        };
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for l in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{l}");
            layers.push(Layer {
                query: t.linear(&format!("{p}.{query}"), h, h)?,
                key: t.linear(&format!("{p}.{key}"), h, h)?,
                value: t.linear(&format!("{p}.{value}"), h, h)?,
                attention_out: t.linear(&format!("{p}.{attention_out}"), h, h)?,
                attention_norm: t.norm(&format!("{p}.{attention_norm}"), h)?,
                intermediate: t.linear(&format!("{p}.intermediate.dense"), config.intermediate_size, h)?,
                output: t.linear(&format!("{p}.output.dense"), h, config.intermediate_size)?,
                output_norm: t.norm(&format!("{p}.output.LayerNorm"), h)?,
            });
        }
        let (token_type, relative) = if config.mpnet() {
            let buckets = config.relative_attention_num_buckets;
            if buckets < 4 || !buckets.is_multiple_of(4) {
                return Err(Error::Config(
                    "relative_attention_num_buckets is not a multiple of 4".to_owned(),
                ));
            }
            let heads = config.num_attention_heads;
            (None, Some(t.matrix("encoder.relative_attention_bias.weight", buckets, heads)?))
        } else {
            let types = t.matrix("embeddings.token_type_embeddings.weight", 2, h);
            // A model with one token type has a [1, h] table.
            let token_type = match types {
                Ok(types) => types.row(0).to_owned(),
                Err(_) => t.matrix("embeddings.token_type_embeddings.weight", 1, h)?.row(0).to_owned(),
            };
            (Some(token_type), None)
        };
        Ok(Self {
            words: t.matrix("embeddings.word_embeddings.weight", vocab, h)?,
            positions: t.matrix(
                "embeddings.position_embeddings.weight",
                config.max_position_embeddings,
                h,
            )?,
            token_type,
            embedding_norm: t.norm("embeddings.LayerNorm", h)?,
            layers,
            relative,
            config,
        })
    }

    /// How many ids the vocabulary has.
    pub(crate) fn vocab_size(&self) -> usize {
        self.words.nrows()
    }

    /// For each sequence of `batch`, the mean of the last layer's states over its ids (each
    /// below [`Bert::vocab_size`], at most [`Config::max_tokens`] of them), normalised to
    /// length 1. The sequences' tokens go through each linear layer as one matrix (what makes
    /// a batch cheaper than its sequences one by one); attention stays within a sequence.
    pub(crate) fn embed_batch(&self, batch: &[Vec<u32>]) -> Vec<Vec<f32>> {
        let h = self.config.hidden_size;
        let lengths: Vec<usize> = batch.iter().map(|ids| ids.len().min(self.config.max_tokens())).collect();
        let offset = self.config.position_offset();
        let rows: usize = lengths.iter().sum();
        let mut x = Array2::<f32>::zeros((rows, h));
        let mut starts = Vec::with_capacity(batch.len());
        let mut row = 0;
        for (ids, &n) in batch.iter().zip(&lengths) {
            starts.push(row);
            for (i, &id) in ids.iter().take(n).enumerate() {
                let mut state = x.row_mut(row + i);
                state += &self.words.row(id as usize);
                state += &self.positions.row(offset + i);
                if let Some(token_type) = &self.token_type {
                    state += token_type;
                }
            }
            row += n;
        }
        let eps = self.config.layer_norm_eps;
        layer_norm(&mut x, &self.embedding_norm, eps);
        let heads = self.config.num_attention_heads;
        let d = h / heads;
        let scale = 1.0 / (d as f32).sqrt();
        // MPNet: each sequence's bias of each head's scores, the same in every layer.
        let biases: Vec<Vec<Array2<f32>>> = match &self.relative {
            Some(relative) => lengths.iter().map(|&n| position_bias(relative, n)).collect(),
            None => Vec::new(),
        };
        for layer in &self.layers {
            let q = layer.query.forward(&x.view());
            let k = layer.key.forward(&x.view());
            let v = layer.value.forward(&x.view());
            let mut context = Array2::<f32>::zeros((rows, h));
            for (s, (&start, &n)) in starts.iter().zip(&lengths).enumerate() {
                let seq = Slice::from(start..start + n);
                let (q, k, v) =
                    (q.slice_axis(Axis(0), seq), k.slice_axis(Axis(0), seq), v.slice_axis(Axis(0), seq));
                for head in 0..heads {
                    // (`s![]` expands to code that allows unsafe, which the workspace forbids.)
                    let cols = Slice::from(head * d..(head + 1) * d);
                    let mut scores =
                        q.slice_axis(Axis(1), cols).dot(&k.slice_axis(Axis(1), cols).t()) * scale;
                    if let Some(bias) = biases.get(s) {
                        scores += &bias[head];
                    }
                    for mut row in scores.rows_mut() {
                        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                        row.mapv_inplace(|v| (v - max).exp());
                        let sum = row.sum();
                        row /= sum;
                    }
                    context
                        .slice_axis_mut(Axis(0), seq)
                        .slice_axis_mut(Axis(1), cols)
                        .assign(&scores.dot(&v.slice_axis(Axis(1), cols)));
                }
            }
            let mut attended = layer.attention_out.forward(&context.view()) + &x;
            layer_norm(&mut attended, &layer.attention_norm, eps);
            let mut inner = layer.intermediate.forward(&attended.view());
            inner.mapv_inplace(gelu_erf);
            let mut out = layer.output.forward(&inner.view()) + &attended;
            layer_norm(&mut out, &layer.output_norm, eps);
            x = out;
        }
        starts
            .iter()
            .zip(&lengths)
            .map(|(&start, &n)| {
                let states = x.slice_axis(Axis(0), Slice::from(start..start + n));
                let mean = states.mean_axis(Axis(0)).unwrap_or_else(|| Array1::zeros(h));
                let length = mean.dot(&mean).sqrt().max(f32::MIN_POSITIVE);
                mean.iter().map(|v| v / length).collect()
            })
            .collect()
    }
}

/// For a sequence of `n` tokens, each head's `[n, n]` bias of the score of query `i` for key
/// `j`: the head's learned value for the bucket of `j - i` ([`bucket`]).
fn position_bias(relative: &Array2<f32>, n: usize) -> Vec<Array2<f32>> {
    let buckets = relative.nrows();
    (0..relative.ncols())
        .map(|head| {
            Array2::from_shape_fn((n, n), |(i, j)| relative[[bucket(j as i64 - i as i64, buckets), head]])
        })
        .collect()
}

/// MPNet's (and T5's) bucket of a relative position `key - query`: half the buckets for keys
/// before the query, half for those after; in each, a bucket per distance below a quarter of
/// the buckets, then buckets of logarithmically growing width up to a distance of 128, the
/// last bucket for all farther. Computed in f32, as the reference implementation does, so
/// that a distance on a bucket's edge falls where it falls there.
fn bucket(relative: i64, buckets: usize) -> usize {
    const MAX_DISTANCE: f32 = 128.0;
    let half = buckets / 2;
    let exact = half / 2;
    let n = -relative;
    let side = if n < 0 { half } else { 0 };
    let n = n.unsigned_abs() as usize;
    if n < exact {
        return side + n;
    }
    let exact_f = exact as f32;
    let log = (n as f32 / exact_f).ln() / (MAX_DISTANCE / exact_f).ln() * (half - exact) as f32;
    side + (exact + log as usize).min(half - 1)
}

fn layer_norm(x: &mut Array2<f32>, norm: &Norm, eps: f32) {
    for mut row in x.rows_mut() {
        let n = row.len() as f32;
        let mean = row.sum() / n;
        let var = row.fold(0.0, |a, &v| a + (v - mean) * (v - mean)) / n;
        let inv = 1.0 / (var + eps).sqrt();
        row.mapv_inplace(|v| (v - mean) * inv);
        row *= &norm.gain;
        row += &norm.bias;
    }
}

/// GELU as BERT defines it, `x·Φ(x)` with the error function (not the tanh approximation).
fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// The error function, Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7).
fn erf(x: f32) -> f32 {
    let sign = x.signum();
    let x = f64::from(x.abs());
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        for (x, want) in
            [(0.0, 0.0), (0.5, 0.520_499_9), (1.0, 0.842_700_8), (-2.0, -0.995_322_3), (3.5, 0.999_999_3)]
        {
            assert!((erf(x) - want).abs() < 2e-7, "erf({x}) = {} not {want}", erf(x));
        }
    }

    #[test]
    fn relative_positions_fall_in_the_reference_implementations_buckets() {
        // Computed by Hugging Face transformers' MPNetEncoder.relative_position_bucket (32
        // buckets), the edges of the logarithmic buckets among them.
        let reference = [
            (-200, 15),
            (-129, 15),
            (-128, 15),
            (-127, 15),
            (-65, 14),
            (-64, 14),
            (-63, 13),
            (-33, 12),
            (-32, 12),
            (-31, 11),
            (-17, 10),
            (-16, 10),
            (-15, 9),
            (-12, 9),
            (-11, 8),
            (-8, 8),
            (-7, 7),
            (-1, 1),
            (0, 0),
            (1, 17),
            (7, 23),
            (8, 24),
            (11, 24),
            (12, 25),
            (15, 25),
            (16, 26),
            (17, 26),
            (31, 27),
            (32, 28),
            (33, 28),
            (63, 29),
            (64, 30),
            (65, 30),
            (127, 31),
            (128, 31),
            (129, 31),
            (200, 31),
        ];
        for (relative, want) in reference {
            assert_eq!(bucket(relative, 32), want, "{relative}");
        }
    }

    #[test]
    fn a_config_the_pass_cannot_run_is_refused() {
        let config: Config = serde_json::from_str(
            r#"{"hidden_size": 8, "num_attention_heads": 3, "num_hidden_layers": 1, "intermediate_size": 16, "max_position_embeddings": 4}"#,
        )
        .unwrap();
        assert!(matches!(Bert::new(config, &[]), Err(Error::Config(_))));
        let config: Config = serde_json::from_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 16, "max_position_embeddings": 4, "hidden_act": "relu"}"#,
        )
        .unwrap();
        assert!(matches!(Bert::new(config, &[]), Err(Error::Config(_))));
        let config: Config = serde_json::from_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 16, "max_position_embeddings": 4, "model_type": "roberta"}"#,
        )
        .unwrap();
        let err = Bert::new(config, &[]).unwrap_err();
        assert!(err.to_string().contains("only bert and mpnet"), "{err}");
    }

    #[test]
    fn mpnet_positions_start_after_the_padding_id() {
        let config: Config = serde_json::from_str(
            r#"{"hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 16, "max_position_embeddings": 514, "model_type": "mpnet", "pad_token_id": 1}"#,
        )
        .unwrap();
        assert_eq!((config.position_offset(), config.max_tokens()), (2, 512));
    }
}
