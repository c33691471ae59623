//! The data folder: created private to the person, and served by one engine at a time.
//!
//! Two engines on one database would each requeue the other's running work and run a second
//! dispatcher beside the first. [`DataDirLock`] is an OS file lock on `<data_dir>/lull.lock`,
//! taken before the database is opened and held for the engine's life, so `lull serve` and the
//! desktop app refuse a folder another live engine serves. The OS releases it when the process
//! dies, so a crash (or a stale `api.json`) never blocks the next start.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside the data folder.
const LOCK_FILE: &str = "lull.lock";

/// Why the data folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    /// Another live engine holds the lock.
    #[error(
        "another Lull engine{} already serves {}: stop it (the headless `lull serve`, or quit the \
         tray app), or start this one with another --data-dir",
        holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
        dir.display()
    )]
    Busy {
        /// The folder.
        dir: PathBuf,
        /// The pid the holder wrote into the lock file, when readable.
        holder: Option<u32>,
    },
    /// The folder or its lock file cannot be created or locked.
    #[error(
        "cannot use data directory {}: {source} (make it writable by you, free some space, or \
         start with another --data-dir)",
        dir.display()
    )]
    Io {
        /// The folder.
        dir: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// Held while an engine serves a data folder; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Takes the folder's lock without waiting, and writes this process's pid into it so a
    /// refused start can name the holder.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirError> {
        let io = |source| DataDirError::Io {
            dir: dir.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let holder = file
                    .read_to_string(&mut text)
                    .ok()
                    .and_then(|_| text.trim().parse().ok());
                return Err(DataDirError::Busy {
                    dir: dir.to_path_buf(),
                    holder,
                });
            }
            Err(TryLockError::Error(err)) => return Err(io(err)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(DataDirLock { _file: file })
    }
}

/// Creates `dir` (and parents) readable only by the person, since it holds the API token and
/// transcripts; an existing folder others can read is tightened to 0700.
pub fn create_private_dir(dir: &Path) -> Result<(), DataDirError> {
    let io = |source| DataDirError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(dir).map_err(io)?;
        let mode = std::fs::metadata(dir).map_err(io)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            tracing::warn!(dir = %dir.display(), mode = format!("{mode:o}"), "the data directory was open to others; setting mode 0700");
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
    }
    #[cfg(not(unix))]
    builder.create(dir).map_err(io)?;
    Ok(())
}

/// Takes group and other permissions away from the file at `path` if it has any; a missing
/// file is left missing. For what Lull keeps private but another component creates with the
/// process's umask (SQLite's `-wal` and `-shm`, the log appender's files).
#[cfg(unix)]
pub fn restrict_to_owner(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match std::fs::metadata(path) {
        Ok(metadata) => metadata.permissions().mode(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

/// Off unix the file's ACL is left as its folder gives it.
#[cfg(not(unix))]
pub fn restrict_to_owner(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        match DataDirLock::acquire(dir.path()) {
            Err(DataDirError::Busy { holder, .. }) => {
                assert_eq!(holder, Some(std::process::id()))
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(first);
        DataDirLock::acquire(dir.path()).expect("free again once the holder is gone");
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_folder_open_to_others_is_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&data).unwrap();
        let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
