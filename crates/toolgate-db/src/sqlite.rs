//! The SQLite file is created readable by its owner only (0600): it holds
//! orders, key digests and sealed provider keys. SQLite gives its `-wal` and
//! `-shm` files the mode of the database file.

use std::path::Path;

use crate::error::{Error, Result};

/// Create `path` empty with mode 0600 when it does not exist yet; an
/// existing file is left as it is.
pub(crate) fn create_private(path: &Path) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(Error::CreateFile { path: path.display().to_string(), source }),
    }
}
