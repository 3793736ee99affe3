//! A multi-file document as one: every relative file `$ref` (`resources/x.yml`,
//! `../shared/y.yml#/Err`) is read from the referencing file's folder, stored once under
//! [`FILES_KEY`] in the root document, and the reference rewritten to a local one, so the rest
//! of the importer only ever follows `#/...` pointers. Nothing is fetched over the network (an
//! `http(s)://` reference is an error naming it); a file outside the root document's folder,
//! a missing or unreadable one, and more than [`MAX_FILES`] files or [`MAX_TOTAL_BYTES`] bytes
//! in all are errors too. Each file is read once, so references in a cycle end.

use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

use crate::{Error, Result};

/// The member of the root document the referenced files are stored under (`#/x-toolgate-files/3/...`).
pub(crate) const FILES_KEY: &str = "x-toolgate-files";

/// Most files one document may reference, itself included (DigitalOcean's source: about 2,500).
pub const MAX_FILES: usize = 10_000;

/// Most bytes of all the files together (DigitalOcean's source: about 2.7 MB).
pub const MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;

/// The document at `path` with every file it references (recursively) bundled in.
pub(crate) fn load(path: &Path) -> Result<Value> {
    let root_file = path.canonicalize().map_err(|e| io_error(path, &e))?;
    let folder = root_file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut bundle = Bundle {
        folder,
        ids: HashMap::new(),
        queue: VecDeque::new(),
        total: 0,
        display_root: path.to_path_buf(),
    };
    let mut root = bundle.read(&root_file, path)?;
    let mut files = Map::new();
    bundle.ids.insert(root_file.clone(), None);
    rewrite(&mut root, &root_file, None, &mut bundle)?;
    while let Some((file, id)) = bundle.queue.pop_front() {
        let shown = bundle.shown(&file);
        let mut value = bundle.read(&file, &shown)?;
        rewrite(&mut value, &file, Some(id), &mut bundle)?;
        files.insert(id.to_string(), value);
    }
    if let (false, Value::Object(map)) = (files.is_empty(), &mut root) {
        map.insert(FILES_KEY.to_owned(), Value::Object(files));
    }
    Ok(root)
}

fn io_error(path: &Path, error: &std::io::Error) -> Error {
    Error::Reference(format!("cannot read {}: {error}", path.display()))
}

struct Bundle {
    /// The root document's folder (canonical): no file outside it is read.
    folder: PathBuf,
    /// Canonical file → its id under [`FILES_KEY`] (`None`: the root document).
    ids: HashMap<PathBuf, Option<usize>>,
    /// Files found but not read yet.
    queue: VecDeque<(PathBuf, usize)>,
    /// Bytes read so far.
    total: usize,
    display_root: PathBuf,
}

impl Bundle {
    /// A file as the messages name it: relative to the root document's folder.
    fn shown(&self, file: &Path) -> PathBuf {
        file.strip_prefix(&self.folder).map(Path::to_path_buf).unwrap_or_else(|_| file.to_path_buf())
    }

    fn read(&mut self, file: &Path, shown: &Path) -> Result<Value> {
        let text = std::fs::read_to_string(file).map_err(|e| io_error(shown, &e))?;
        self.total += text.len();
        if self.total > MAX_TOTAL_BYTES {
            return Err(Error::Reference(format!(
                "the document and the files it references are larger than {MAX_TOTAL_BYTES} bytes together (at {})",
                shown.display()
            )));
        }
        crate::document::parse(&text).map_err(|e| match e {
            Error::Parse(message) if file != self.display_root => {
                Error::Parse(format!("{message} (in the referenced file {})", shown.display()))
            }
            other => other,
        })
    }

    /// The id of the file `reference` names from `from`, queued to be read when it is new.
    fn id(&mut self, from: &Path, file_part: &str, reference: &str) -> Result<Option<usize>> {
        let lower = reference.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") || file_part.contains("://") {
            return Err(Error::Reference(format!(
                "$ref {reference:?} in {} points to the network; only files beside the document are read (download it and make the reference relative)",
                self.shown(from).display()
            )));
        }
        let base = from.parent().unwrap_or(Path::new(""));
        let decoded = percent_decode(file_part);
        let Some(target) = normalize(&base.join(&decoded)) else {
            return Err(self.outside(from, reference));
        };
        if !target.starts_with(&self.folder) {
            return Err(self.outside(from, reference));
        }
        let canonical = target.canonicalize().map_err(|e| {
            Error::Reference(format!(
                "$ref {reference:?} in {}: cannot read {}: {e}",
                self.shown(from).display(),
                self.shown(&target).display()
            ))
        })?;
        // A link inside the folder may still point out of it.
        if !canonical.starts_with(&self.folder) {
            return Err(self.outside(from, reference));
        }
        if let Some(id) = self.ids.get(&canonical) {
            return Ok(*id);
        }
        let id = self.ids.len();
        if id >= MAX_FILES {
            return Err(Error::Reference(format!(
                "the document references more than {MAX_FILES} files (at {reference:?})"
            )));
        }
        self.ids.insert(canonical.clone(), Some(id));
        self.queue.push_back((canonical, id));
        Ok(Some(id))
    }

    fn outside(&self, from: &Path, reference: &str) -> Error {
        Error::Reference(format!(
            "$ref {reference:?} in {} names a file outside the document's folder {}; only files in it are read",
            self.shown(from).display(),
            self.folder.display()
        ))
    }
}

/// `path` with its `.` and `..` steps applied without touching the disk; `None` when a `..`
/// climbs above the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// `%20` and the like in a reference's file part, as a URI reference writes them.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|b| hex(*b)), bytes.get(i + 2).and_then(|b| hex(*b))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every `$ref` in `value` (found in `file`, stored under `id`) made local to the bundle.
/// Iterative, so a deep document costs no stack.
fn rewrite(value: &mut Value, file: &Path, id: Option<usize>, bundle: &mut Bundle) -> Result<()> {
    let prefix =
        |id: Option<usize>| id.map(|n| format!("#/{FILES_KEY}/{n}")).unwrap_or_else(|| "#".to_owned());
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get_mut("$ref") {
                    let (file_part, pointer) = reference.split_once('#').unwrap_or((reference.as_str(), ""));
                    let target = if file_part.is_empty() {
                        id
                    } else {
                        let (file_part, original) = (file_part.to_owned(), reference.clone());
                        bundle.id(file, &file_part, &original)?
                    };
                    let pointer = pointer.to_owned();
                    *reference = format!("{}{pointer}", prefix(target));
                }
                stack.extend(map.iter_mut().filter(|(k, _)| k.as_str() != "$ref").map(|(_, v)| v));
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{normalize, percent_decode};
    use std::path::{Path, PathBuf};

    #[test]
    fn dot_steps_are_applied_and_climbing_above_the_root_is_none() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d.yml")), Some(PathBuf::from("/a/c/d.yml")));
        assert_eq!(normalize(Path::new("/a/../../x")), None);
        assert_eq!(percent_decode("my%20file.yml"), "my file.yml");
    }
}
