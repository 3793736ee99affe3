//! Relevance ranking for discovery (`get_tool_schema` with a `query`):
//! BM25F over what describes each tool, so that "create a task on a file"
//! finds the task-creating tool although no tool carries every one of its
//! words.
//!
//! A route-table tool holds many operations (the `op` branches of its
//! `oneOf` schema, which is where a table's operations reach the registry),
//! and a request asks for one of them: each operation is a sub-document, and
//! a tool scores as its best-matching operation does. A sub-document has
//! fields, each with its own weight and length normalisation (BM25F): the
//! operation's name and summary, its parameters (names and descriptions, a
//! little), and the tool's own name (with its domain and tags) and
//! description (with its [`ToolSpec::about`] texts), which all the tool's operations share (a route table's
//! description, which lists its operations, only a little). A tool without operations is one sub-document of the
//! tool's fields alone. A term's rarity (IDF) is counted over the operations,
//! a tool's own fields counted once per tool, so that a word every operation
//! of one big table repeats in its description still counts as rare.
//!
//! Words are normalised by [`words::terms`] (identifiers split, stop words
//! out, a light stemmer), and a query term also finds its related terms
//! ([`words::related`]: general API verbs, and a few domain words) at
//! [`RELATED_WEIGHT`].
//!
//! With an [`Embedder`] (a sentence encoder such as `toolgate-embed`'s, set with
//! `GatewayBuilder::embedder`), each operation also has an embedding of its
//! tool's name, its own name and its summary, each of the tool's
//! [`ToolSpec::about`] texts one per sentence, with the tool's name, and a tool a
//! semantic score, its best text's cosine similarity with the query's embedding: what a request means finds a tool
//! that shares no word with it ("spin up a virtual server" for a Droplet). The
//! two rankings are fused by their scores ([`fuse`]): the lexical score over the best one's,
//! plus the cosine rescaled between the nearest tool's and the [`SEMANTIC_DEPTH`]th nearest's,
//! weighted [`SEMANTIC_WEIGHT`]. What is embedded was chosen on the discovery test's first set
//! and its OpenAI validation set, the about sentences on those and its first two held-out sets;
//! the fusion by scores (it replaced one by reciprocal rank) and its weight on a development
//! pool of those sets and the first three draws of paraphrases of randomly drawn operations.
//! Each draw is written blind and measured once before any choice is made on it.
//!
//! A request's opening says whether it reads or changes something ([`words::intent`]: a
//! question or `show`, against `delete` or `rename`), and a tool that does the other thing
//! ([`toolgate_core::Effect`]) counts [`OTHER_EFFECT`] of its score, by words and fused: both of a
//! resource's tables hold its words, and only this tells `query_goals` from `update_goals`
//! for "what's the target of this goal". The opening is read past framing, articles, adverbs
//! and an opening phrase up to its comma, with phrasal verbs (`get rid of`, `give me`); that
//! reading, the weight and the floor of the semantic spread ([`SEMANTIC_SPREAD_MIN`]) were
//! chosen on the development sets and the first seven draws, and measured on later ones.
//!
//! The index is built once per table snapshot (see [`index_for`]): a query
//! only walks the postings of its own terms (and, with an embedder, is
//! embedded once and compared with each operation's embedding). Embeddings are
//! kept across snapshots by their text ([`Semantic`]), so a reload or an
//! upstream's new list embeds only what is new.

mod words;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolgate_core::ToolSpec;

use crate::dynamic::Table;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;

/// The fields of a sub-document: what counts for how much, and how much a
/// long field is discounted (BM25F's per-field weight and `b`).
#[derive(Clone, Copy)]
enum Field {
    /// The operation's name (`create_task`, split) and summary.
    Operation,
    /// The operation's parameters: their names and descriptions, and those of
    /// their nested properties [`PARAMETER_DEPTH`] levels down.
    Parameters,
    /// The tool's name, domain and tags.
    Name,
    /// The tool's description.
    Description,
}

impl Field {
    const ALL: [Field; 4] = [Field::Operation, Field::Parameters, Field::Name, Field::Description];

    /// How many times one mention here counts against one in a description.
    fn weight(self) -> f64 {
        match self {
            Field::Operation => 3.0,
            Field::Parameters => 0.1,
            Field::Name => 2.0,
            Field::Description => 1.0,
        }
    }

    /// BM25's length normalisation for the field.
    fn b(self) -> f64 {
        match self {
            Field::Operation => 0.5,
            Field::Parameters => 0.75,
            Field::Name => 0.3,
            Field::Description => 0.75,
        }
    }
}

/// What a route-table tool's description counts for against a tool's without operations:
/// it lists the table's operations, which count already as the table's sub-documents.
const TABLE_DESCRIPTION: f64 = 0.1;

/// What a related term counts for against the query's own term.
const RELATED_WEIGHT: f64 = 0.5;

/// A route-table tool's operations: each `oneOf` branch's `op` constant, its
/// description (the route's summary) and the text of the branch's other
/// properties (see [`parameter_text`]).
fn operations(schema: &Value) -> impl Iterator<Item = (&str, &str, Vec<&str>)> {
    schema.get("oneOf").and_then(Value::as_array).into_iter().flatten().filter_map(|branch| {
        let properties = branch.get("properties")?.as_object()?;
        let op = properties.get("op")?;
        let name = op.get("const").and_then(Value::as_str)?;
        let summary = op.get("description").and_then(Value::as_str).unwrap_or_default();
        let mut params = Vec::new();
        for (key, value) in properties.iter().filter(|(k, _)| *k != "op") {
            params.push(key.as_str());
            parameter_text(value, PARAMETER_DEPTH, &mut params);
        }
        Some((name, summary, params))
    })
}

/// How deep into a parameter's nested objects its text is read.
const PARAMETER_DEPTH: usize = 2;

/// A parameter schema's description and, `depth` levels down, its nested
/// properties' names and descriptions (an array's items too).
fn parameter_text<'a>(schema: &'a Value, depth: usize, out: &mut Vec<&'a str>) {
    if let Some(text) = schema.get("description").and_then(Value::as_str) {
        out.push(text);
    }
    if depth == 0 {
        return;
    }
    if let Some(items) = schema.get("items") {
        parameter_text(items, depth, out);
    }
    for (key, value) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        out.push(key);
        parameter_text(value, depth - 1, out);
    }
}

/// Term counts of one field of one document.
type Counts = HashMap<String, u32>;

fn counts<'a>(texts: impl IntoIterator<Item = &'a str>) -> (Counts, u32) {
    let mut counts = Counts::new();
    let mut length = 0;
    for text in texts {
        for term in words::terms(text) {
            *counts.entry(term).or_default() += 1;
            length += 1;
        }
    }
    (counts, length)
}

/// A BM25F index over a list of tools and their operations; tools are
/// numbered in the list's order.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Each term's operations (sub-documents), with the term's weighted,
    /// length-normalised frequency in their own fields.
    operations: HashMap<String, Vec<(u32, f64)>>,
    /// Each term's tools, with its frequency in the tools' own fields.
    tools: HashMap<String, Vec<(u32, f64)>>,
    /// Each operation's tool.
    tool_of: Vec<u32>,
    /// Each term's IDF.
    idf: HashMap<String, f64>,
    /// How many tools.
    tool_count: usize,
    /// Each operation's embedding and each of the tools' [`ToolSpec::about`] texts', with
    /// their tool, with an embedder ([`Semantic`]); empty without.
    vectors: Vec<(u32, Arc<[f32]>)>,
    /// What embeds a query, with the embeddings.
    embedder: Option<Arc<dyn Embedder>>,
    /// Whether each tool reads ([`toolgate_core::Effect::is_read`]).
    reads: Vec<bool>,
}

impl Index {
    /// Index these tools; a hit names a tool by its position here.
    pub(crate) fn build<'a>(
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        semantic: Option<&Semantic>,
    ) -> Self {
        // Per tool its own fields, per operation its fields: term counts and lengths.
        let mut tool_fields: Vec<[(Counts, u32); 2]> = Vec::new();
        let mut op_fields: Vec<(u32, [(Counts, u32); 2])> = Vec::new();
        let mut has_operations: Vec<bool> = Vec::new();
        // What is embedded (each operation, and what the tool's source says about what it
        // acts on), and each text's tool.
        let mut texts: Vec<String> = Vec::new();
        let mut text_tool: Vec<u32> = Vec::new();
        let mut index_reads: Vec<bool> = Vec::new();
        for (tool, spec) in specs.into_iter().enumerate() {
            index_reads.push(spec.effect.is_read());
            let tags = spec.tags.iter().map(String::as_str);
            let name = counts([spec.name.as_str(), spec.domain.as_str()].into_iter().chain(tags));
            // What the tool's source says about what it acts on counts as its description does.
            let description =
                [spec.description.as_str()].into_iter().chain(spec.about.iter().map(String::as_str));
            tool_fields.push([name, counts(description)]);
            let before = op_fields.len();
            for (op, summary, params) in operations(&spec.input_schema) {
                op_fields.push((tool as u32, [counts([op, summary]), counts(params)]));
                texts.push(embedding_text(Some(&spec.name), op, summary));
                text_tool.push(tool as u32);
            }
            has_operations.push(op_fields.len() > before);
            if op_fields.len() == before {
                op_fields.push((tool as u32, [(Counts::new(), 0), (Counts::new(), 0)]));
                texts.push(embedding_text(None, &spec.name, &spec.description));
                text_tool.push(tool as u32);
            }
            for sentence in spec.about.iter().flat_map(|about| sentences(about)) {
                texts.push(embedding_text(None, &spec.name, sentence));
                text_tool.push(tool as u32);
            }
        }
        let mean = |lengths: &mut dyn Iterator<Item = u32>| {
            let (sum, n) = lengths.fold((0u64, 0u64), |(s, n), l| (s + u64::from(l), n + 1));
            (sum as f64 / n.max(1) as f64).max(1.0)
        };
        let norm = |field: Field, length: u32, mean: f64| {
            field.weight() / (1.0 - field.b() + field.b() * f64::from(length) / mean)
        };
        let mut index = Index { tool_count: tool_fields.len(), reads: index_reads, ..Index::default() };
        let mut df: HashMap<String, u32> = HashMap::new();
        // Operation fields: Operation, Parameters; tool fields: Name, Description.
        let (op_kinds, tool_kinds) = Field::ALL.split_at(2);
        let op_means: Vec<f64> =
            (0..2).map(|f| mean(&mut op_fields.iter().map(|(_, fields)| fields[f].1))).collect();
        let tool_means: Vec<f64> = (0..2).map(|f| mean(&mut tool_fields.iter().map(|t| t[f].1))).collect();
        for (doc, (tool, fields)) in op_fields.iter().enumerate() {
            index.tool_of.push(*tool);
            let mut tf: HashMap<&str, f64> = HashMap::new();
            for (f, (counts, length)) in fields.iter().enumerate() {
                let weight = norm(op_kinds[f], *length, op_means[f]);
                for (term, &count) in counts {
                    *tf.entry(term).or_default() += weight * f64::from(count);
                }
            }
            for (term, tf) in tf {
                *df.entry(term.to_owned()).or_default() += 1;
                index.operations.entry(term.to_owned()).or_default().push((doc as u32, tf));
            }
        }
        for (tool, fields) in tool_fields.iter().enumerate() {
            let mut tf: HashMap<&str, f64> = HashMap::new();
            for (f, (counts, length)) in fields.iter().enumerate() {
                let mut weight = norm(tool_kinds[f], *length, tool_means[f]);
                if matches!(tool_kinds[f], Field::Description) && has_operations[tool] {
                    weight *= TABLE_DESCRIPTION;
                }
                for (term, &count) in counts {
                    *tf.entry(term).or_default() += weight * f64::from(count);
                }
            }
            for (term, tf) in tf {
                *df.entry(term.to_owned()).or_default() += 1;
                index.tools.entry(term.to_owned()).or_default().push((tool as u32, tf));
            }
        }
        if let Some(semantic) = semantic {
            index.vectors = text_tool.into_iter().zip(semantic.embed_all(&texts)).collect();
            index.embedder = Some(Arc::clone(&semantic.embedder));
        }
        let n = (op_fields.len() + tool_fields.len()) as f64;
        index.idf = df
            .into_iter()
            .map(|(term, df)| {
                let df = f64::from(df);
                (term, (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
            })
            .collect();
        index
    }

    /// The tools that share at least one term with `query`, best first;
    /// equal scores keep the tools' order. `None` when the query has no
    /// word to look for (empty, or stop words only).
    pub(crate) fn search(&self, query: &str) -> Option<Vec<usize>> {
        let terms = words::terms(query);
        if terms.is_empty() {
            return None;
        }
        // Each query term at weight 1, its related terms at RELATED_WEIGHT (the larger
        // weight where a term is both).
        let mut weights: HashMap<&str, f64> = HashMap::new();
        for term in &terms {
            for other in words::related(term) {
                let w = weights.entry(other.as_str()).or_insert(0.0);
                *w = w.max(RELATED_WEIGHT);
            }
        }
        for term in &terms {
            weights.insert(term.as_str(), 1.0);
        }
        let mut weights: Vec<(&str, f64)> = weights.into_iter().collect();
        weights.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let saturate = |tf: f64| tf * (K1 + 1.0) / (tf + K1);
        // A tool's score is what its own fields give every one of its operations (`base`),
        // plus what its best operation adds with its own fields (`best`).
        let mut base = vec![0.0_f64; self.tool_count];
        let mut touched = vec![false; self.tool_count];
        // What each operation adds; the term's frequency in each tool's own fields (zero
        // again after each term).
        let mut extra = vec![0.0_f64; self.tool_of.len()];
        let mut tool_tf = vec![0.0_f64; self.tool_count];
        for (term, weight) in &weights {
            let Some(&idf) = self.idf.get(*term) else { continue };
            let tools = self.tools.get(*term).map_or(&[][..], Vec::as_slice);
            for &(tool, tf) in tools {
                tool_tf[tool as usize] = tf;
                base[tool as usize] += weight * idf * saturate(tf);
                touched[tool as usize] = true;
            }
            for &(op, tf) in self.operations.get(*term).into_iter().flatten() {
                let tool = self.tool_of[op as usize] as usize;
                let shared = tool_tf[tool];
                extra[op as usize] += weight * idf * (saturate(tf + shared) - saturate(shared));
                touched[tool] = true;
            }
            for &(tool, _) in tools {
                tool_tf[tool as usize] = 0.0;
            }
        }
        let mut best = vec![0.0_f64; self.tool_count];
        for (op, &score) in extra.iter().enumerate() {
            let tool = self.tool_of[op] as usize;
            best[tool] = best[tool].max(score);
        }
        let fits = self.fits(query);
        // Each tool's lexical score, zero for a tool sharing no term with the query (and above
        // zero for one that does: every term's IDF is).
        let lexical: Vec<f64> = (0..self.tool_count)
            .map(|t| if touched[t] { (base[t] + best[t]) * fits(t) } else { 0.0 })
            .collect();
        match &self.embedder {
            Some(embedder) if !self.vectors.is_empty() => {
                Some(fuse(&lexical, &self.cosines(embedder.as_ref(), query), fits))
            }
            _ => {
                let mut hits: Vec<usize> = (0..self.tool_count).filter(|&t| touched[t]).collect();
                hits.sort_by(|&a, &b| lexical[b].total_cmp(&lexical[a]).then(a.cmp(&b)));
                Some(hits)
            }
        }
    }

    /// What each tool's score counts for, by whether what it does (read or write) is what the
    /// request's opening asks for ([`words::intent`]): 1, or [`OTHER_EFFECT`] where it is not.
    fn fits(&self, query: &str) -> impl Fn(usize) -> f64 + '_ {
        let intent = words::intent(query);
        move |tool| match intent {
            Some(intent) if self.reads[tool] != (intent == words::Intent::Read) => OTHER_EFFECT,
            _ => 1.0,
        }
    }

    /// Each tool's best text's (an operation's, or what is said about what the tool acts on)
    /// cosine similarity with `query`'s embedding.
    fn cosines(&self, embedder: &dyn Embedder, query: &str) -> Vec<f64> {
        let query = embedder.embed(query);
        let mut best = vec![f64::NEG_INFINITY; self.tool_count];
        for (tool, vector) in &self.vectors {
            let score: f32 = vector.iter().zip(&query).map(|(a, b)| a * b).sum();
            best[*tool as usize] = best[*tool as usize].max(f64::from(score));
        }
        best
    }
}

/// What a tool's score counts for where it writes and the request asks to read, or the other
/// way round ([`words::intent`]): "what's the target of this goal" is `query_goals`, not
/// `update_goals`, although both tables hold the goal's words.
const OTHER_EFFECT: f64 = 0.5;

/// How many of the tools nearest the query by meaning count by meaning: the cosine of the
/// [`SEMANTIC_DEPTH`]th nearest is the zero of the semantic score.
const SEMANTIC_DEPTH: usize = 30;

/// What the semantic score counts for against the lexical one (both from 0 to 1).
const SEMANTIC_WEIGHT: f64 = 1.0;

/// The least cosine spread [`fuse`] rescales by: where the nearest tool by meaning is less than
/// this much nearer than the [`SEMANTIC_DEPTH`]th, none of them stands out, and the semantic
/// scores count for their spread over this, below 1.
const SEMANTIC_SPREAD_MIN: f64 = 0.3;

/// The two rankings fused by their scores, best first: a tool's `lexical` score over the best
/// one's, plus [`SEMANTIC_WEIGHT`] × its cosine rescaled so that the nearest tool's is 1 and the
/// [`SEMANTIC_DEPTH`]th nearest's 0 (never below; the nearest's under 1 where the two are less
/// than [`SEMANTIC_SPREAD_MIN`] apart), this one counting what `fits` says of the
/// tool (the lexical scores count it already). The tools are those that share a term with the
/// query (a lexical score above zero) and the [`SEMANTIC_DEPTH`] nearest; equal scores keep the
/// tools' order.
///
/// How far apart the scores are counts, where fusing by rank would not: a tool far nearer by
/// meaning than the next, or matching many more words, keeps its lead.
fn fuse(lexical: &[f64], cosines: &[f64], fits: impl Fn(usize) -> f64) -> Vec<usize> {
    let mut sorted = cosines.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let nearest = sorted.first().copied().unwrap_or_default();
    let zero = sorted.get(SEMANTIC_DEPTH - 1).or(sorted.last()).copied().unwrap_or_default();
    let spread = (nearest - zero).max(SEMANTIC_SPREAD_MIN);
    let top = lexical.iter().copied().fold(0.0, f64::max).max(f64::EPSILON);
    let mut fused: Vec<(usize, f64)> = (0..lexical.len())
        .filter(|&t| lexical[t] > 0.0 || cosines[t] >= zero)
        .map(|t| {
            let meaning = ((cosines[t] - zero) / spread).max(0.0);
            (t, lexical[t] / top + SEMANTIC_WEIGHT * meaning * fits(t))
        })
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.into_iter().map(|(tool, _)| tool).collect()
}

/// What an operation's embedding is of: its tool's name, its own name (both in words) and its
/// summary (`update tasks: create task: Create a task`); a tool without operations, its name
/// and description.
fn embedding_text(tool: Option<&str>, name: &str, summary: &str) -> String {
    let mut text = String::new();
    for part in tool.into_iter().chain([name]) {
        text.push_str(&part.replace('_', " "));
        text.push_str(": ");
    }
    text.push_str(summary);
    text.trim_end_matches([':', ' ']).to_owned()
}

/// The sentences of an `about` text, each embedded on its own: a sentence that says what a
/// thing is ("A Droplet is a DigitalOcean virtual machine.") is nearer a request's meaning
/// alone than diluted by the next one's endpoints. Fragments of under [`SENTENCE_MIN`]
/// characters are not sentences; a text with none is one.
fn sentences(about: &str) -> Vec<&str> {
    let found: Vec<&str> =
        about.split(". ").map(str::trim).filter(|s| s.chars().count() >= SENTENCE_MIN).collect();
    if found.is_empty() { vec![about.trim()] } else { found }
}

/// The shortest text [`sentences`] takes for a sentence.
const SENTENCE_MIN: usize = 10;

/// A sentence encoder for discovery's semantic ranking: text in, a vector of
/// unit length out (so that a dot product is a cosine similarity), the same
/// length for every text. `toolgate-embed`'s `Encoder` is one.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// The embedding of `text`.
    fn embed(&self, text: &str) -> Vec<f32>;

    /// The embeddings of `texts`, in order (an index's operations: an encoder may run them
    /// faster together). By default, one by one.
    fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts.iter().map(|text| self.embed(text)).collect()
    }
}

#[cfg(feature = "embed")]
impl Embedder for toolgate_embed::Encoder {
    fn embed(&self, text: &str) -> Vec<f32> {
        toolgate_embed::Encoder::embed(self, text)
    }

    fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        toolgate_embed::Encoder::embed_batch(self, texts)
    }
}

/// An embedder with the embeddings of the texts the last index held, so that
/// the next snapshot's index embeds only its new texts.
#[derive(Debug)]
pub(crate) struct Semantic {
    embedder: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Arc<[f32]>>>,
}

impl Semantic {
    pub(crate) fn new(embedder: Arc<dyn Embedder>) -> Self {
        Self { embedder, cache: Mutex::default() }
    }

    /// The embeddings of `texts`, in order; the cache then holds these texts only.
    fn embed_all(&self, texts: &[String]) -> Vec<Arc<[f32]>> {
        let old = std::mem::take(&mut *self.cache.lock().unwrap_or_else(|e| e.into_inner()));
        let mut new: HashMap<String, Arc<[f32]>> = HashMap::with_capacity(texts.len());
        let mut missing: Vec<&str> = Vec::new();
        for text in texts {
            match old.get(text) {
                Some(vector) => {
                    new.insert(text.clone(), Arc::clone(vector));
                }
                None if !new.contains_key(text) => {
                    new.insert(text.clone(), Arc::from(Vec::new()));
                    missing.push(text);
                }
                None => {}
            }
        }
        for (text, vector) in missing.iter().zip(self.embedder.embed_batch(&missing)) {
            new.insert((*text).to_owned(), Arc::from(vector));
        }
        let vectors = texts.iter().map(|text| Arc::clone(&new[text])).collect();
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = new;
        vectors
    }
}

/// The index of this table snapshot, built on its first query and kept with
/// it: a table is immutable and replaced whole when a source changes, so its
/// index stays right for as long as the snapshot lives.
pub(crate) fn index_for<'a>(table: &'a Table, semantic: Option<&Semantic>) -> &'a Index {
    table.index.get_or_init(|| {
        Index::build(
            table.order.iter().filter_map(|name| table.tools.get(name)).map(|entry| entry.tool.spec()),
            semantic,
        )
    })
}

#[cfg(test)]
mod tests;
