//! The one rule for tests that need something from outside (a database, a
//! Python SDK, a browser): without it a test says why it skipped and passes,
//! unless its `TOOLGATE_REQUIRE_*` flag is `1`, under which that is a failure
//! (CI sets the flags, so a missing tool can never pass silently there).

/// A variable's value, `None` when unset or blank.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether `flag` (e.g. `TOOLGATE_REQUIRE_PG`) is `1`.
pub fn required(flag: &str) -> bool {
    var(flag).as_deref() == Some("1")
}

/// Skip for `why`: a failure under `flag=1`, else a note on stderr.
pub fn skip(flag: &str, why: &str) {
    assert!(!required(flag), "{flag}=1 but {why}");
    eprintln!("skipped: {why}");
}

/// The URL in `var`, or `None` after [`skip`]ping under `flag`.
pub fn url(var_name: &str, flag: &str) -> Option<String> {
    let url = var(var_name);
    if url.is_none() {
        skip(flag, &format!("{var_name} is not set"));
    }
    url
}

/// A path from `var` (or `default`); relative ones are relative to the workspace root.
pub fn path(var_name: &str, default: &str) -> std::path::PathBuf {
    let path = std::path::PathBuf::from(var(var_name).unwrap_or_else(|| default.to_owned()));
    if path.is_absolute() { path } else { crate::workspace().join(path) }
}

/// `program` on `PATH`, if there.
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(program)).find(|p| p.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unset_variable_skips_when_not_required() {
        assert_eq!(url("TOOLGATE_TEST_NOTHING_URL", "TOOLGATE_REQUIRE_NOTHING"), None);
        assert!(!required("TOOLGATE_REQUIRE_NOTHING"));
        assert!(which("sh").is_some() && which("no-such-program-here").is_none());
    }
}
