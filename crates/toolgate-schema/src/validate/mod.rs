//! Compiled validators that answer every problem at once, in words for the model.
//!
//! A schema whose root is a `oneOf` of object branches locked by one `const`
//! property (`op` in route tables) is validated branch by branch: the value
//! of that property picks the branch, so the model hears about the branch it
//! meant, never the union error "not valid under any of the schemas".

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use jsonschema::Validator as Compiled;
use serde_json::Value;
use toolgate_core::FieldError;
use toolgate_core::SCHEMA_DIALECT;
use toolgate_core::params::type_name;

use self::report::Report;
#[cfg(test)]
use self::report::{is_child, label};
use crate::describe::{closest, show};
use crate::table::OP_FIELD;
use crate::walk::escape;

mod report;

/// A schema that does not compile (bad regex, unresolvable `$ref`, not a schema).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the schema does not compile: {message}")]
#[non_exhaustive]
pub struct SchemaError {
    /// What the compiler said.
    pub message: String,
}

/// A JSON Schema 2020-12 compiled once; validating is cheap and never panics.
/// `Send + Sync`: share it in an `Arc`.
///
/// ```
/// use serde_json::json;
/// let schema = json!({"type": "object", "properties": {"days": {"type": "integer", "minimum": 1}},
///                     "required": ["days"], "additionalProperties": false});
/// let v = toolgate_schema::Validator::new(&schema).unwrap();
/// assert!(v.is_valid(&json!({"days": 3})));
/// let errors = v.validate(&json!({"days": 0, "city": "Oslo"})).unwrap_err();
/// assert_eq!(errors.len(), 2);
/// assert_eq!(errors[0].pointer, "/days");
/// ```
#[derive(Debug, Clone)]
pub struct Validator {
    schema: Value,
    compiled: Compiled,
    dispatch: Option<Dispatch>,
}

/// The branches of a root `oneOf`, keyed by the value of their `const` property.
#[derive(Debug, Clone)]
struct Dispatch {
    key: String,
    ops: Vec<String>,
    index: HashMap<String, usize>,
    branches: Vec<Branch>,
}

#[derive(Debug, Clone)]
struct Branch {
    doc: Value,
    compiled: Compiled,
}

/// The process's compiled `pattern`s: a pattern that many tools share (a
/// date, an id) is compiled once, not once per tool and per route-table
/// branch (compiling them was a quarter of a server's start, and each kept
/// its own DFA). Patterns are kept for the life of the process.
static PATTERNS: LazyLock<jsonschema::PatternCache> = LazyLock::new(jsonschema::PatternCache::new);

/// Compile `schema` the way every validator of the process is compiled.
///
/// Patterns match with regex-automata's lazy DFA, never a fully compiled
/// one: building full DFAs (which the regex engine does for small patterns
/// when a dependency turns that feature on) was most of the pattern
/// compilation at a server's start and kept each DFA in memory, for no
/// measurable gain on the short strings tools take.
pub(crate) fn compile(schema: &Value) -> Result<Compiled, SchemaError> {
    jsonschema::draft202012::options()
        .with_pattern_options(jsonschema::PatternOptions::fancy_regex().dfa_size_limit(0))
        .with_pattern_cache(PATTERNS.clone())
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| SchemaError { message: e.to_string() })
}

/// Compiled schemas by their JSON text. A typed tool's schema is compiled by
/// the tool itself and again by each registry that lists it (the gateway's, a
/// dynamic source's): the gateway's repeats of the eleven travel tools were
/// about 1 M of a server's 51 M start instructions (callgrind). A clone
/// shares the compiled tree. Bounded, so that a source whose schemas keep
/// changing cannot grow it without end: past the bound, schemas are compiled
/// each time as before.
static COMPILED: LazyLock<Mutex<HashMap<String, Compiled>>> = LazyLock::new(Mutex::default);
const COMPILED_MAX: usize = 1024;

fn compile_shared(schema: &Value) -> Result<Compiled, SchemaError> {
    let key = schema.to_string();
    if let Some(hit) = COMPILED.lock().ok().and_then(|cache| cache.get(&key).cloned()) {
        return Ok(hit);
    }
    let compiled = compile(schema)?;
    if let Ok(mut cache) = COMPILED.lock()
        && cache.len() < COMPILED_MAX
    {
        cache.insert(key, compiled.clone());
    }
    Ok(compiled)
}

impl Validator {
    /// Compile `schema` (draft 2020-12, formats checked); a schema compiled
    /// before in this process is shared, not compiled again.
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        let compiled = compile_shared(schema)?;
        let dispatch = Dispatch::detect(schema);
        Ok(Self { schema: schema.clone(), compiled, dispatch })
    }

    /// The schema this validator was compiled from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The operations of a dispatching (`op`-locked `oneOf`) schema, in order; empty otherwise.
    pub fn ops(&self) -> &[String] {
        self.dispatch.as_ref().map_or(&[], |d| &d.ops)
    }

    /// Whether `instance` is valid; the fast path, no error is built.
    pub fn is_valid(&self, instance: &Value) -> bool {
        match &self.dispatch {
            Some(d) => d.branch_of(instance).is_some_and(|b| b.compiled.is_valid(instance)),
            None => self.compiled.is_valid(instance),
        }
    }

    /// `Ok` when `instance` is valid; otherwise every problem, each with the
    /// JSON pointer of the value, what was expected, what came and how to fix it.
    pub fn validate(&self, instance: &Value) -> Result<(), Vec<FieldError>> {
        let errors = match &self.dispatch {
            Some(d) => match d.errors(instance) {
                None => return Ok(()),
                Some(errors) => errors,
            },
            None => {
                if self.compiled.is_valid(instance) {
                    return Ok(());
                }
                let report = Report { doc: &self.schema, op: None };
                report.collect(self.compiled.iter_errors(instance))
            }
        };
        Err(finish(errors, instance))
    }
}

impl Dispatch {
    fn detect(schema: &Value) -> Option<Dispatch> {
        const ROOT_KEYS: [&str; 10] = [
            "$schema",
            "$id",
            "$comment",
            "title",
            "description",
            "examples",
            "type",
            "oneOf",
            "$defs",
            "definitions",
        ];
        let root = schema.as_object()?;
        if root.get("type").and_then(Value::as_str) != Some("object") {
            return None;
        }
        let closed_root = |k: &str| k == "unevaluatedProperties" && root.get(k) == Some(&Value::Bool(false));
        if !root.keys().all(|k| ROOT_KEYS.contains(&k.as_str()) || closed_root(k)) {
            return None;
        }
        let branches = root.get("oneOf")?.as_array()?;
        let first = branches.first()?;
        let mut keys: Vec<&str> = first.get("properties")?.as_object()?.keys().map(String::as_str).collect();
        keys.sort_by_key(|k| *k != OP_FIELD); // prefer `op`
        let key = keys.into_iter().find(|k| branches.iter().all(|b| const_of(b, k).is_some()))?;
        let mut ops = Vec::with_capacity(branches.len());
        let mut index = HashMap::with_capacity(branches.len());
        let mut compiled = Vec::with_capacity(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            let op = const_of(branch, key)?;
            if index.insert(op.to_string(), i).is_some() {
                return None; // two branches for one value: oneOf semantics, not a dispatch
            }
            ops.push(op.to_string());
            let mut doc = branch.as_object()?.clone();
            doc.insert("$schema".into(), SCHEMA_DIALECT.into());
            for defs in ["$defs", "definitions"] {
                if let Some(d) = root.get(defs) {
                    doc.entry(defs).or_insert_with(|| d.clone());
                }
            }
            let doc = Value::Object(doc);
            let branch = Branch { compiled: compile_shared(&doc).ok()?, doc };
            compiled.push(branch);
        }
        Some(Dispatch { key: key.to_string(), ops, index, branches: compiled })
    }

    fn branch_of(&self, instance: &Value) -> Option<&Branch> {
        let op = instance.as_object()?.get(&self.key)?.as_str()?;
        self.index.get(op).map(|&i| &self.branches[i])
    }

    /// `None` when valid, else the errors of the branch `instance` chose.
    fn errors(&self, instance: &Value) -> Option<Vec<FieldError>> {
        let key = &self.key;
        let Some(obj) = instance.as_object() else {
            let valid = format!("one of {}", self.ops.join(", "));
            return Some(vec![FieldError::new(
                "",
                "a JSON object",
                instance,
                format!(
                    "the parameters must be a JSON object with `{key}` ({valid}) and that operation's fields, got {}",
                    type_name(instance)
                ),
            )]);
        };
        let pointer = format!("/{}", escape(key));
        let chosen = obj.get(key.as_str()).and_then(Value::as_str).and_then(|op| self.index.get(op));
        let Some(&i) = chosen else {
            let valid = format!("one of {}", self.ops.join(", "));
            let actual = obj.get(key.as_str()).unwrap_or(&Value::Null);
            let message = match actual {
                Value::Null => format!(
                    "`{key}` is missing; it selects the operation. Valid values: {}",
                    self.ops.join(", ")
                ),
                Value::String(s) => {
                    let hint = closest(s, self.ops.iter().map(String::as_str))
                        .map(|c| format!(" Did you mean `{c}`?"))
                        .unwrap_or_default();
                    format!(
                        "`{key}` {} is not an operation of this tool; valid values: {}.{hint}",
                        show(actual),
                        self.ops.join(", ")
                    )
                }
                other => format!(
                    "`{key}` must be a string naming the operation, got {}; valid values: {}",
                    type_name(other),
                    self.ops.join(", ")
                ),
            };
            return Some(vec![FieldError::new(pointer, valid, actual, message)]);
        };
        let branch = &self.branches[i];
        if branch.compiled.is_valid(instance) {
            return None;
        }
        let op = self.ops[i].as_str();
        let report = Report { doc: &branch.doc, op: Some((key.as_str(), op)) };
        Some(report.collect(branch.compiled.iter_errors(instance)))
    }
}

/// The string a branch locks `key` to (`const`, or a one-value `enum`),
/// when `key` is also required by the branch.
fn const_of<'a>(branch: &'a Value, key: &str) -> Option<&'a str> {
    let required = branch.get("required")?.as_array()?.iter().any(|r| r == key);
    let prop = branch.get("properties")?.get(key)?;
    let value = match (prop.get("const"), prop.get("enum").and_then(Value::as_array)) {
        (Some(c), _) => c,
        (None, Some(values)) if values.len() == 1 => &values[0],
        _ => return None,
    };
    value.as_str().filter(|_| required)
}

/// Errors keep the schema's order; exact duplicates (a date failing both
/// its pattern and its format) are merged.
fn finish(mut errors: Vec<FieldError>, instance: &Value) -> Vec<FieldError> {
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| seen.insert((e.pointer.clone(), e.message.clone())));
    if errors.is_empty() {
        // jsonschema said "invalid" but gave no error: never answer Ok for that
        errors.push(FieldError::new(
            "",
            "parameters matching the tool's schema",
            instance,
            "the parameters do not match the tool's schema; read the schema with get_tool_schema and call again",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_schema_compiled_twice_is_compiled_once_and_a_failure_is_not_kept() {
        let schema =
            json!({"type": "object", "properties": {"shared_once": {"type": "string", "pattern": "^a+$"}}});
        let first = Validator::new(&schema).unwrap();
        assert!(COMPILED.lock().unwrap().contains_key(&schema.to_string()));
        let second = Validator::new(&schema).unwrap();
        for v in [&first, &second] {
            assert!(v.is_valid(&json!({"shared_once": "aaa"})));
            assert_eq!(v.validate(&json!({"shared_once": "b"})).unwrap_err()[0].pointer, "/shared_once");
        }
        let broken = json!({"type": "string", "pattern": "(unclosed"});
        assert!(Validator::new(&broken).is_err());
        assert!(!COMPILED.lock().unwrap().contains_key(&broken.to_string()));
        assert!(Validator::new(&broken).is_err(), "a schema that failed fails again");
    }

    #[test]
    fn validator_is_send_and_sync() {
        fn is<T: Send + Sync + Clone>() {}
        is::<Validator>();
    }

    #[test]
    fn labels() {
        assert_eq!(label(""), "the parameters");
        assert_eq!(label("/date"), "`date`");
        assert_eq!(label("/items/2/qty"), "`items[2].qty`");
        assert_eq!(label("/a~1b"), "`a/b`");
    }

    #[test]
    fn children() {
        assert!(is_child("/k/kind", "/k"));
        assert!(is_child("/op", ""));
        assert!(!is_child("/k/a/b", "/k"));
        assert!(!is_child("/k", "/k"));
    }
}
