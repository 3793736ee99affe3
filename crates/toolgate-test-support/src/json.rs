//! Proptest strategies for any JSON a model may send: every "never panics,
//! always a structured answer" property draws its inputs here.

use proptest::prelude::*;
use serde_json::{Value, json};

/// What the generated values look like.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Regex for free string leaves (e.g. `\\PC{0,24}`).
    pub text: &'static str,
    /// Strings drawn as leaves as well (dates, op names: the values that reach deeper code).
    pub words: &'static [&'static str],
    /// Regex for free object keys.
    pub keys: &'static str,
    /// Keys drawn as well (the parameter names of the tools under test).
    pub key_words: &'static [&'static str],
    /// Nesting depth, desired total size, and items per array or object (below `width`).
    pub depth: u32,
    pub size: u32,
    pub width: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            text: ".{0,40}",
            words: &[],
            keys: "[a-z_]{0,12}",
            key_words: &[],
            depth: 6,
            size: 64,
            width: 8,
        }
    }
}

/// Scalars: null, booleans, signed and unsigned integers, finite floats, text and the shape's words.
pub fn scalar(shape: Shape) -> BoxedStrategy<Value> {
    let mut leaves = vec![
        Just(Value::Null).boxed(),
        any::<bool>().prop_map(Value::Bool).boxed(),
        any::<i64>().prop_map(|n| json!(n)).boxed(),
        // Above i64::MAX too: integer bounds and conversions meet them.
        any::<u64>().prop_map(|n| json!(n)).boxed(),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)).boxed(),
        shape.text.prop_map(Value::String).boxed(),
    ];
    if !shape.words.is_empty() {
        leaves.push(prop::sample::select(shape.words).prop_map(Value::from).boxed());
    }
    prop::strategy::Union::new(leaves).boxed()
}

/// Object keys: the shape's free keys or its key words.
fn key(shape: Shape) -> BoxedStrategy<String> {
    if shape.key_words.is_empty() {
        shape.keys.boxed()
    } else {
        prop_oneof![shape.keys, prop::sample::select(shape.key_words).prop_map(str::to_owned)].boxed()
    }
}

/// Any JSON value of this shape: [`scalar`]s nested in arrays and objects.
pub fn value(shape: Shape) -> BoxedStrategy<Value> {
    value_from(scalar(shape), shape)
}

/// Any JSON value with these leaves, nested in arrays and objects of `shape`.
pub fn value_from(leaf: BoxedStrategy<Value>, shape: Shape) -> BoxedStrategy<Value> {
    let width = 0..shape.width;
    leaf.prop_recursive(shape.depth, shape.size, shape.width as u32, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), width.clone()).prop_map(Value::Array),
            prop::collection::btree_map(key(shape), inner, width.clone())
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::test_runner::TestRunner;

    fn depth(value: &Value) -> u32 {
        match value {
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn values_stay_within_the_shape_and_use_its_words() {
        let shape = Shape { words: &["2026-02-30"], key_words: &["op"], depth: 3, ..Shape::default() };
        let strategy = value(shape);
        let mut runner = TestRunner::deterministic();
        let (mut word, mut key) = (false, false);
        for _ in 0..500 {
            let v = strategy.new_tree(&mut runner).unwrap().current();
            assert!(depth(&v) <= 3, "{v}");
            let text = v.to_string();
            word |= text.contains("\"2026-02-30\"");
            key |= text.contains("\"op\":");
        }
        assert!(word && key, "the shape's words and keys are drawn");
    }
}
