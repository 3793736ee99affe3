//! [`SkillError`]: a problem in a SKILL.md file, with the file, line, field and fix.

use std::fmt;
use std::path::PathBuf;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The skill cannot be used as written: it is not loaded (when found by
    /// the loader), or the gateway should refuse or drop it (when found by
    /// [`SkillSet::check_tools`](crate::SkillSet::check_tools)).
    Error,
    /// The skill works, but not as its author probably meant.
    Warning,
}

/// What kind of problem it is, for code that reacts to some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file or folder could not be read.
    Io,
    /// No front matter between `---` lines, or YAML that does not parse,
    /// has an unknown field or a value of the wrong type.
    Syntax,
    /// A field breaks a rule (name format, lengths, orchestration consistency).
    Field,
    /// A step or binding names a tool that is not registered.
    UnknownTool,
    /// A role problem: an unknown role, or a tool that needs a role above the skill's.
    Role,
}

/// A problem in a SKILL.md file. Its `Display` is one line in the compiler
/// style, `file:line: message` (with `warning: ` before warnings), and the
/// message says what is wrong and how to fix it:
///
/// ```text
/// skills/Bad/SKILL.md:2: name `Bad-Skill` has capitals; use lowercase letters, digits and hyphens
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillError {
    /// The file (or folder) the problem is in, as the loader was given it.
    pub file: PathBuf,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// The skill's id (its folder name), when known.
    pub skill: Option<String>,
    /// The field, as a path into the front matter (`steps[1].tool`,
    /// `orchestration.route_by`), when the problem is in one field.
    pub field: Option<String>,
    /// What kind of problem.
    pub kind: ErrorKind,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl SkillError {
    /// Whether this is an error (as opposed to a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub(crate) fn new(file: impl Into<PathBuf>, kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            skill: None,
            field: None,
            kind,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub(crate) fn at(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }

    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub(crate) fn skill(mut self, skill: Option<&str>) -> Self {
        self.skill = skill.map(str::to_string);
        self
    }

    pub(crate) fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SkillError {}
