//! The one SQLite database, behind a single writer thread.
//!
//! [`Store`] owns a `rusqlite::Connection` on a dedicated OS thread and runs closures sent to it
//! one at a time, in order. That gives the whole engine one writer (no `SQLITE_BUSY` between our
//! own tasks), keeps blocking I/O off the async runtime, and lets shutdown wait for work already
//! sent: [`Store::close`] returns once every queued closure has run.
//!
//! The schema is a list of numbered migrations embedded in the binary ([`migrations`]). A
//! database written by a newer Lull (a higher schema version than this build knows) is refused
//! rather than guessed at.

mod migrations;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

pub use migrations::SCHEMA_VERSION;

/// What can go wrong when talking to the database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database comes from a newer Lull.
    #[error(
        "database {path} has schema version {found}, but this Lull knows versions up to {known}: \
         it was written by a newer Lull; upgrade Lull, or start with another --data-dir"
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    /// A migration failed.
    #[error("cannot migrate database {path}: {message}")]
    Migration { path: PathBuf, message: String },
    /// The disk holding the database is full; the write was rolled back.
    #[error(
        "the disk holding {} is full: free some space there, then try again (nothing was \
         recorded)",
        folder.display()
    )]
    Full { folder: PathBuf },
    /// The writer thread is gone (the store was closed).
    #[error("the database is closed (the engine is shutting down)")]
    Closed,
    /// A stored value does not decode.
    #[error("stored value for {what} is unreadable: {message}")]
    Corrupt { what: String, message: String },
    /// The database file cannot be created or made private.
    #[error(
        "cannot prepare database {}: {source} (check that the data folder is writable, or \
         start with another --data-dir)",
        path.display()
    )]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// SQLite cannot open the database (or create its `-wal` and `-shm` files).
    #[error(
        "cannot open database {}: {source} (check that the data folder is writable, or start \
         with another --data-dir)",
        path.display()
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

/// Creates the database file with mode 0600 if it is missing, and takes group and other
/// permissions away from it and from its `-wal` and `-shm` files if they have any (a database
/// from an older Lull was created with the process's umask).
#[cfg(unix)]
fn make_private(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        crate::data_dir::restrict_to_owner(Path::new(&file))?;
    }
    Ok(())
}

/// Off unix the file's ACL is left as the folder gives it.
#[cfg(not(unix))]
fn make_private(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// Writer jobs between two WAL checkpoints; a job writes a few pages, so the WAL stays at a few
/// megabytes, like SQLite's own default of 1,000 pages.
const JOBS_PER_CHECKPOINT: u32 = 256;
/// Under load with no idle moment, checkpoint anyway after this many jobs.
const JOBS_PER_FORCED_CHECKPOINT: u32 = 4 * JOBS_PER_CHECKPOINT;

/// A handle on the database; cheap to clone, all clones share one connection.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    /// The folder holding the database, which a full-disk error names.
    folder: std::sync::Arc<Path>,
}

impl StoreError {
    /// SQLite's "database or disk is full" as [`StoreError::Full`], naming `folder`: the person
    /// is told where to free space, not that the database failed.
    fn naming_full_disk(self, folder: &Path) -> StoreError {
        match &self {
            StoreError::Sqlite(err)
                if err.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) =>
            {
                StoreError::Full {
                    folder: folder.to_path_buf(),
                }
            }
            _ => self,
        }
    }
}

#[derive(Clone)]
enum Backend {
    /// Production: a writer thread owns the connection.
    Thread(mpsc::UnboundedSender<Job>),
    /// Tests and simulations: closures run on the caller, so a paused tokio clock never
    /// auto-advances while the database works.
    Inline(std::sync::Arc<std::sync::Mutex<Connection>>),
}

impl Store {
    /// Opens (creating if needed) the database at `path`, in WAL mode, migrated to the latest schema.
    ///
    /// The file is made readable by its owner only before SQLite opens it (it holds transcripts);
    /// SQLite gives its `-wal` and `-shm` files the database file's permissions.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        make_private(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let open = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut connection = Connection::open(path).map_err(open)?;
        // WAL mode creates the `-wal` and `-shm` files: a folder Lull cannot write fails here.
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                 PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
            )
            .map_err(open)?;
        migrations::apply(&mut connection, path)?;
        // The writer checkpoints (which fsyncs) when its queue is empty, not inside a commit
        // that a request is waiting for.
        connection.pragma_update(None, "wal_autocheckpoint", 0)?;
        let folder = path.parent().unwrap_or(Path::new("."));
        Ok(Store::spawn_writer(connection, folder))
    }

    /// An in-memory database that runs work on the calling task, for tests and simulations on
    /// a virtual clock.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let mut connection = Connection::open_in_memory()?;
        connection.execute_batch("PRAGMA foreign_keys = ON;")?;
        migrations::apply(&mut connection, Path::new(":memory:"))?;
        Ok(Store {
            backend: Backend::Inline(std::sync::Arc::new(std::sync::Mutex::new(connection))),
            folder: Path::new(":memory:").into(),
        })
    }

    fn spawn_writer(mut connection: Connection, folder: &Path) -> Store {
        let (sender, mut receiver) = mpsc::unbounded_channel::<Job>();
        std::thread::Builder::new()
            .name("lull-store".into())
            .spawn(move || {
                // Blocks without spinning while idle; ends when every sender is gone or on close.
                let mut jobs_since_checkpoint = 0;
                while let Some(job) = receiver.blocking_recv() {
                    job(&mut connection);
                    jobs_since_checkpoint += 1;
                    let idle = receiver.is_empty();
                    if (idle && jobs_since_checkpoint >= JOBS_PER_CHECKPOINT)
                        || jobs_since_checkpoint >= JOBS_PER_FORCED_CHECKPOINT
                    {
                        jobs_since_checkpoint = 0;
                        if let Err(err) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
                            tracing::warn!(error = %err, "WAL checkpoint failed; the next one will retry");
                        }
                    }
                }
            })
            .expect("spawning the database thread");
        Store {
            backend: Backend::Thread(sender),
            folder: folder.into(),
        }
    }

    /// Runs `work` on the writer thread and returns its result.
    ///
    /// Keep closures short: every other database user waits behind them.
    pub async fn call<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let sender = match &self.backend {
            Backend::Thread(sender) => sender,
            Backend::Inline(connection) => {
                let mut connection = connection.lock().map_err(|_| StoreError::Closed)?;
                return work(&mut connection).map_err(|err| err.naming_full_disk(&self.folder));
            }
        };
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |connection| {
            let _ = reply.send(work(connection));
        });
        sender.send(job).map_err(|_| StoreError::Closed)?;
        let answer = answer.await.map_err(|_| StoreError::Closed)?;
        answer.map_err(|err| err.naming_full_disk(&self.folder))
    }

    /// Waits for all work already sent to finish (the queue is first-in, first-out).
    ///
    /// Called on shutdown so in-flight writes land before the process exits.
    pub async fn flush(&self) {
        let _ = self
            .call(|connection| Ok(connection.execute_batch("PRAGMA optimize;")?))
            .await;
    }
}

/// Milliseconds since the Unix epoch, the timestamp unit of every table.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Reads a stored enum spelling (a serde-named enum); anything else is a corrupt row.
pub fn parse_enum<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).map_err(|_| {
        StoreError::Corrupt {
            what: what.into(),
            message: text.to_string(),
        }
    })
}

/// Reads a JSON column; anything unreadable is a corrupt row.
pub fn decode_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|err| StoreError::Corrupt {
        what: what.into(),
        message: err.to_string(),
    })
}

/// Writes a JSON column.
pub fn encode_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("stored values serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_names_the_folder_and_other_errors_stay_as_they_are() {
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let named = StoreError::from(full).naming_full_disk(Path::new("/data/lull"));
        assert!(matches!(&named, StoreError::Full { folder } if folder == Path::new("/data/lull")));
        assert!(
            named
                .to_string()
                .contains("/data/lull is full: free some space"),
            "{named}"
        );
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let kept = StoreError::from(busy).naming_full_disk(Path::new("/data/lull"));
        assert!(matches!(kept, StoreError::Sqlite(_)), "{kept:?}");
    }

    /// The writer turned SQLite's own checkpoints off; its own must keep the WAL from growing
    /// without bound, even under load with no idle moment.
    #[tokio::test]
    async fn the_wal_stays_bounded_without_autocheckpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lull.db");
        let store = Store::open(&path).unwrap();
        let payload = "x".repeat(400);
        // Four forced-checkpoint periods: without checkpoints the WAL holds every one of these
        // writes (~16 KiB each, ~64 MiB in all); with them, at most one period's worth, whether
        // or not the writer ever finds its queue empty.
        for i in 0..(JOBS_PER_FORCED_CHECKPOINT * 4) {
            let value = payload.clone();
            store
                .call(move |c| {
                    c.execute(
                        "INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES (?1, ?2, 0)",
                        rusqlite::params![format!("k{}", i % 64), value],
                    )?;
                    Ok(())
                })
                .await
                .unwrap();
        }
        store.flush().await;
        let wal = std::fs::metadata(dir.path().join("lull.db-wal"))
            .unwrap()
            .len();
        assert!(wal < 24 * 1024 * 1024, "WAL grew to {wal} bytes");
    }
}
