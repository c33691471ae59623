//! Managed llama-server awareness: where the supervisor's server is, whether it is up, which
//! models it has loaded, and whether its GPU is free right now.
//!
//! The scheduler defers learning work until the managed server is idle (DESIGN §2.1); this
//! module is how it knows. Nothing here decides anything: it reads and reports.
//!
//! - [`read_state_file`] judges the supervisor's state file ([`StateFileReading`]): absent,
//!   invalid with a reason (empty, truncated, not an object, no `base_url`, wrong types),
//!   stale (dead `pid`), or alive ([`StateFileRecord`]). A UTF-8 BOM is fine.
//! - [`HttpProbe`] asks the server `/health`, `/models` (or `/v1/models`) and `/slots` with the
//!   bearer key and short named timeouts, and returns a [`ServerReading`]: one
//!   [`ServerState`] (`absent|invalid|stale|starting|ready|unreachable`), the models with their
//!   [`ModelStatus`] and busy-slot count, the idle predicate and a reason. It never wakes a model:
//!   it asks `/props` whether the model sleeps before `/slots`, unless [`sleep_mode`] read from
//!   the server's own command line that it cannot sleep.
//! - [`ServerProbe`] is the seam the scheduler asks through; [`CachedProbe`] adds a short cache
//!   (on `tokio::time`, so it runs on a paused clock) and [`ManualProbe`] is a scripted stand-in
//!   for tests and simulations.
//! - [`ServerMonitor`] owns the folder watcher and the cached probe, probes only when someone
//!   asks ([`ServerMonitor::read`]) or holds an [`InterestGuard`], and publishes each change on
//!   a `tokio::sync::watch` channel ([`ServerMonitor::subscribe`]).
//! - [`is_managed_url`] is the exact `host:port` test deciding whether work is bound for the
//!   managed GPU; any doubt reads "not managed".
//!
//! ```no_run
//! # async fn demo() -> Result<(), lull::server::ServerError> {
//! use lull::server::{MonitorConfig, ServerMonitor};
//! let monitor = ServerMonitor::start(MonitorConfig::new("/home/me/.hermes/runtimes/llamacpp/server.json")).await?;
//! let reading = monitor.read().await;
//! println!("{} idle={} ({:?})", reading.state, reading.idle, reading.reason);
//! # Ok(()) }
//! ```

mod launch;
mod monitor;
mod probe;
mod reading;
mod state_file;
mod url_match;
mod watcher;

use std::path::PathBuf;

pub use launch::{sleep_mode, SleepMode};
pub use monitor::{InterestGuard, MonitorConfig, ServerMonitor, INTEREST_POLL_INTERVAL};
pub use probe::{
    server_origin, CachedProbe, HttpProbe, ManualProbe, ProbeConfig, ReadingFuture, ServerProbe,
    PROBE_CONNECT_TIMEOUT, PROBE_REQUEST_TIMEOUT, READING_CACHE_TTL,
};
pub use reading::{ApiKey, ModelReading, ModelStatus, ServerMode, ServerReading, ServerState};
pub use state_file::{
    parse_state_file, pid_is_alive, read_state_file, StateFileReading, StateFileRecord,
};
pub use url_match::{host_port, is_managed_url};
pub use watcher::{Watching, WATCH_DEBOUNCE};

/// What can go wrong setting up server awareness (reading and probing never fail: their
/// problems are readings).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The file-system watcher could not watch the state file's folder or any ancestor.
    #[error("cannot watch {} for the managed server's state file: {source}", path.display())]
    Watch {
        /// The folder that could not be watched.
        path: PathBuf,
        /// notify's error.
        #[source]
        source: notify::Error,
    },
    /// The HTTP client for probing could not be built (TLS setup).
    #[error("cannot build the http client that probes the managed server: {0}")]
    HttpClient(#[source] reqwest::Error),
}
