//! [`ServerMonitor`]: the folder watcher, the cached probe and the published reading, together.
//!
//! It asks the server only when someone needs the answer:
//!
//! - [`ServerMonitor::read`] (a status request, the scheduler deciding) probes through the
//!   short cache;
//! - while at least one [`InterestGuard`] lives (work waiting for the GPU, an open window), it
//!   probes every `poll_interval` and publishes changes;
//! - when the state file changes, it re-reads the file and publishes; it probes once only if the
//!   file now names a different server (or someone is interested).
//!
//! With no guard alive and the file unchanged it makes no HTTP request at all. Its timing is
//! tokio's, so [`ServerMonitor::start_with_probe`] runs it on a paused clock in tests; the
//! folder watcher is a real OS thread, whose readiness [`ServerMonitor::watching`] reports.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;

use super::probe::{CachedProbe, HttpProbe, ProbeConfig, ReadingFuture, ServerProbe};
use super::reading::{ServerReading, ServerState};
use super::state_file::{read_state_file, StateFileReading, StateFileRecord};
use super::watcher::{FolderWatcher, Watching, WATCH_DEBOUNCE};
use super::ServerError;

/// How often the monitor probes while someone holds an [`InterestGuard`]: often enough that a
/// busy slot or a finished load shows within a second.
pub const INTEREST_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// What the monitor watches and how eagerly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorConfig {
    /// The supervisor's state file (DESIGN §5 `server.state_file`).
    pub state_file: PathBuf,
    /// HTTP timeouts and cache ttl.
    pub probe: ProbeConfig,
    /// Quiet time before reacting to file-system events.
    pub debounce: Duration,
    /// Probe cadence while someone is interested.
    pub poll_interval: Duration,
}

impl MonitorConfig {
    /// The defaults for `state_file`.
    pub fn new(state_file: impl Into<PathBuf>) -> MonitorConfig {
        MonitorConfig {
            state_file: state_file.into(),
            probe: ProbeConfig::default(),
            debounce: WATCH_DEBOUNCE,
            poll_interval: INTEREST_POLL_INTERVAL,
        }
    }
}

struct Shared {
    state_file: PathBuf,
    probe: CachedProbe<Arc<dyn ServerProbe>>,
    sender: watch::Sender<ServerReading>,
    watching: watch::Sender<Watching>,
    interest: Arc<AtomicUsize>,
    interest_changed: Arc<Notify>,
    /// The record behind the last published reading, to tell "same server" from "new server".
    last_record: Mutex<Option<StateFileRecord>>,
}

impl Shared {
    fn publish(&self, reading: &ServerReading) {
        self.sender.send_if_modified(|current| {
            if current == reading {
                false
            } else {
                *current = reading.clone();
                true
            }
        });
    }

    fn remember(&self, record: Option<StateFileRecord>) -> Option<StateFileRecord> {
        let mut last = self.last_record.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *last, record)
    }

    async fn read(&self) -> ServerReading {
        let reading = self.probe.read_cached().await;
        self.publish(&reading);
        reading
    }

    /// The state file changed: re-read it; probe only for a new server or an interested caller.
    async fn on_file_change(&self) {
        self.probe.invalidate();
        let file = read_state_file(&self.state_file);
        let StateFileReading::Alive(record) = file else {
            self.remember(None);
            let reading = self.probe.read_cached().await; // no HTTP: the file decides
            self.publish(&reading);
            return;
        };
        let previous = self.remember(Some(record.clone()));
        let interested = self.interest.load(Ordering::SeqCst) > 0;
        if interested || previous.as_ref() != Some(&record) {
            self.read().await;
        }
    }
}

/// Watches the supervisor's state file and probes the managed server on demand; publishes each
/// change of reading on a `watch` channel the engine subscribes to. Stops when dropped.
pub struct ServerMonitor {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for ServerMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerMonitor")
            .field("state_file", &self.shared.state_file)
            .finish()
    }
}

/// While alive, the monitor keeps its reading fresh (probes every `poll_interval`). Hold one
/// while work waits for the GPU or a window shows the server; drop it when done.
/// A guard holds only the counter, not the monitor, so a forgotten guard keeps nothing alive.
#[derive(Debug)]
pub struct InterestGuard {
    count: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

impl InterestGuard {
    /// A guard no monitor counts: the interest of a probe that publishes nothing.
    pub(super) fn uncounted() -> InterestGuard {
        let count = Arc::new(AtomicUsize::new(1));
        InterestGuard {
            count,
            changed: Arc::new(Notify::new()),
        }
    }
}

impl Drop for InterestGuard {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
        self.changed.notify_one();
    }
}

impl ServerMonitor {
    /// Starts watching (on the current tokio runtime) and publishes a first reading from the
    /// state file; probes once if the file names a live server.
    pub async fn start(config: MonitorConfig) -> Result<ServerMonitor, ServerError> {
        let probe = HttpProbe::new(config.state_file.clone(), config.probe.clone())?;
        ServerMonitor::start_with_probe(config, Arc::new(probe)).await
    }

    /// [`ServerMonitor::start`] reading the server through `probe` rather than the HTTP probe
    /// of `config.state_file` (which is still the file watched): for tests of the monitor's own
    /// timing on a paused clock, with a probe that counts its readings.
    pub async fn start_with_probe(
        config: MonitorConfig,
        probe: Arc<dyn ServerProbe>,
    ) -> Result<ServerMonitor, ServerError> {
        let (sender, _) = watch::channel(ServerReading::not_ready(
            ServerState::Absent,
            None,
            "the managed server has not been looked at yet",
        ));
        let (changes_tx, changes_rx) = mpsc::unbounded_channel();
        let watcher = FolderWatcher::start(&config.state_file, config.debounce, changes_tx)?;
        let shared = Arc::new(Shared {
            state_file: config.state_file.clone(),
            probe: CachedProbe::new(probe, config.probe.cache_ttl),
            sender,
            watching: watch::channel(watcher.watching()).0,
            interest: Arc::new(AtomicUsize::new(0)),
            interest_changed: Arc::new(Notify::new()),
            last_record: Mutex::new(None),
        });
        shared.on_file_change().await;
        let task = tokio::spawn(run(
            shared.clone(),
            watcher,
            changes_rx,
            config.poll_interval,
        ));
        Ok(ServerMonitor { shared, task })
    }

    /// The state file this monitor watches.
    pub fn state_file(&self) -> &Path {
        &self.shared.state_file
    }

    /// What the folder watcher watches now, updated after each batch of file-system events:
    /// once it is [`Watching::Folder`], every change of the state file is seen.
    pub fn watching(&self) -> watch::Receiver<Watching> {
        self.shared.watching.subscribe()
    }

    /// The current reading, probing through the short cache; publishes it if it changed.
    pub async fn read(&self) -> ServerReading {
        self.shared.read().await
    }

    /// A fresh reading, bypassing the cache.
    pub async fn refresh(&self) -> ServerReading {
        self.shared.probe.invalidate();
        self.shared.read().await
    }

    /// The last published reading, without asking anyone.
    pub fn latest(&self) -> ServerReading {
        self.shared.sender.borrow().clone()
    }

    /// A receiver that sees every published change of reading.
    pub fn subscribe(&self) -> watch::Receiver<ServerReading> {
        self.shared.sender.subscribe()
    }

    /// Keeps the reading fresh while the returned guard lives.
    pub fn interest(&self) -> InterestGuard {
        self.shared.interest.fetch_add(1, Ordering::SeqCst);
        self.shared.interest_changed.notify_one();
        InterestGuard {
            count: self.shared.interest.clone(),
            changed: self.shared.interest_changed.clone(),
        }
    }

    /// How many [`InterestGuard`]s are alive.
    pub fn n_interested(&self) -> usize {
        self.shared.interest.load(Ordering::SeqCst)
    }
}

impl ServerProbe for ServerMonitor {
    fn read(&self) -> ReadingFuture<'_> {
        Box::pin(self.shared.read())
    }

    fn read_afresh(&self) -> ReadingFuture<'_> {
        Box::pin(self.refresh())
    }

    fn interest(&self) -> InterestGuard {
        ServerMonitor::interest(self)
    }

    fn last_reading(&self) -> Option<ServerReading> {
        Some(self.latest())
    }
}

impl Drop for ServerMonitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(
    shared: Arc<Shared>,
    mut watcher: FolderWatcher,
    mut changes: mpsc::UnboundedReceiver<()>,
    poll_interval: Duration,
) {
    loop {
        let interested = shared.interest.load(Ordering::SeqCst) > 0;
        tokio::select! {
            change = changes.recv() => {
                if change.is_none() {
                    return;
                }
                while changes.try_recv().is_ok() {}
                if let Err(err) = watcher.rearm() {
                    tracing::warn!("{err}; the managed server's state file is not watched until its folder reappears");
                }
                shared.watching.send_replace(watcher.watching());
                shared.on_file_change().await;
            }
            _ = tokio::time::sleep(poll_interval), if interested => {
                shared.read().await;
            }
            _ = shared.interest_changed.notified() => {}
        }
    }
}
