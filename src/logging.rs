//! Logs: `tracing` to stderr and to a daily-rolling file in the data directory, in a folder
//! (`<data_dir>/logs`, mode 0700) that only the person can open, each file mode 0600.
//!
//! Filtering follows `RUST_LOG` (for example `RUST_LOG=lull=debug`), defaulting to `info`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

/// Log files kept before the oldest is deleted.
const LOG_FILES_KEPT: usize = 7;

/// Installs the global subscriber. Keep the returned guard alive: dropping it flushes the file.
///
/// With `logs_dir = None` (short CLI commands) only warnings go to stderr.
pub fn init(logs_dir: Option<&Path>) -> anyhow::Result<Option<WorkerGuard>> {
    let default_level = if logs_dir.is_some() { "info" } else { "warn" };
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let stderr = fmt::layer().with_writer(std::io::stderr).with_target(false);
    let Some(logs_dir) = logs_dir else {
        tracing_subscriber::registry()
            .with(filter)
            .with(stderr)
            .try_init()?;
        return Ok(None);
    };
    // Private like the data folder it is in (logs name sessions and paths), and created so
    // before the engine creates that folder: `create_dir_all` would leave both open to others.
    crate::data_dir::create_private_dir(logs_dir)?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("lull")
        .filename_suffix("log")
        .max_log_files(LOG_FILES_KEPT)
        .build(logs_dir)
        .with_context(|| {
            format!(
                "cannot open a log file in {} (make it writable by you, free some space, or \
                 start with another --data-dir)",
                logs_dir.display()
            )
        })?;
    let (file_writer, guard) = tracing_appender::non_blocking(PrivateLogFiles {
        appender,
        folder: logs_dir.to_path_buf(),
        day: None,
    });
    let file = fmt::layer().with_writer(file_writer).with_ansi(false);
    tracing_subscriber::registry()
        .with(filter)
        .with(stderr)
        .with(file)
        .try_init()?;
    Ok(Some(guard))
}

/// The rolling appender, making each file it starts private: it creates them with the process's
/// umask (0644, usually), and a log names sessions and paths. A day's file is made 0600 by the
/// first write of that day, which is the write that creates it.
struct PrivateLogFiles {
    appender: tracing_appender::rolling::RollingFileAppender,
    folder: PathBuf,
    /// The UTC day of the last write (the appender rolls over at UTC midnight).
    day: Option<u64>,
}

impl PrivateLogFiles {
    fn make_files_private(&self) {
        let Ok(entries) = std::fs::read_dir(&self.folder) else {
            return;
        };
        for entry in entries.flatten() {
            let _ = crate::data_dir::restrict_to_owner(&entry.path());
        }
    }
}

impl Write for PrivateLogFiles {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.appender.write(buf)?;
        let day = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs() / 86_400);
        if self.day != Some(day) {
            self.day = Some(day);
            self.make_files_private();
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.appender.flush()
    }
}
