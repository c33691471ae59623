//! [`SkillsIndex`]: the skills directory, kept current by a file-system watcher.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::fswatch::{EventBatch, QuietWatcher};
use notify::RecursiveMode;
use tokio::sync::watch;

use super::scan::{scan_skills_dir, SkillSet};
use super::SkillsError;

/// Quiet time after the last file-system event before rescanning: long enough to take an
/// editor's write-rename-chmod as one change, short enough that an edit reaches routing well
/// within two seconds.
pub const SKILLS_WATCH_DEBOUNCE: Duration = Duration::from_millis(200);

/// The skills directory's current [`SkillSet`], rescanned after every change on disk.
///
/// [`SkillsIndex::start`] creates the directory if it does not exist, scans it, and watches
/// it recursively on a background thread. Each debounced batch of events under the directory
/// triggers a full rescan (a few hundred small files take milliseconds); a new set is
/// published on a `watch` channel only when it differs from the last. Newly skipped folders are
/// logged at `warn` with their reason, added, changed and removed skills at `info`. If the
/// directory is deleted, the set becomes empty and its nearest existing ancestor is watched
/// until it comes back. Dropping the index stops the watcher.
pub struct SkillsIndex {
    shared: Arc<IndexShared>,
    signals: mpsc::Sender<Signal>,
    thread: Option<JoinHandle<()>>,
}

struct IndexShared {
    /// The directory as configured.
    dir: PathBuf,
    /// The directory fully resolved (what the watcher reports paths under).
    resolved: PathBuf,
    current: watch::Sender<Arc<SkillSet>>,
    /// Serialises scan-and-publish, so an older scan never overwrites a newer one.
    scan_lock: Mutex<()>,
}

enum Signal {
    /// Something changed under the directory; `rearm` when the directory itself was touched
    /// (deleted, created, renamed) or the watcher reported an error.
    Changed {
        rearm: bool,
    },
    Stop,
}

impl SkillsIndex {
    /// [`SkillsIndex::start`] off the async runtime (the first scan reads the whole folder).
    pub async fn open(dir: &Path) -> Result<Arc<SkillsIndex>, SkillsError> {
        let dir = dir.to_path_buf();
        tokio::task::spawn_blocking(move || SkillsIndex::start(&dir).map(Arc::new))
            .await
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic.into_panic()))
    }

    /// Creates `dir` if needed, scans it, and starts watching it.
    pub fn start(dir: &Path) -> Result<SkillsIndex, SkillsError> {
        std::fs::create_dir_all(dir).map_err(|source| SkillsError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let resolved = dir.canonicalize().map_err(|source| SkillsError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let first = scan_skills_dir(dir)?;
        log_changes(&SkillSet::default(), &first);
        let shared = Arc::new(IndexShared {
            dir: dir.to_path_buf(),
            resolved: resolved.clone(),
            current: watch::channel(Arc::new(first)).0,
            scan_lock: Mutex::new(()),
        });

        let (signals, received) = mpsc::channel();
        let callback_signals = signals.clone();
        let watched_root = resolved.clone();
        let debouncer = QuietWatcher::new(
            SKILLS_WATCH_DEBOUNCE,
            "lull-skills-watch",
            move |batch: EventBatch| {
                let signal = if batch.iter().any(Result::is_err) {
                    Signal::Changed { rearm: true }
                } else {
                    let paths = || batch.iter().flatten().flat_map(|event| event.paths.iter());
                    if !paths().any(|path| path.starts_with(&watched_root)) {
                        return;
                    }
                    Signal::Changed {
                        rearm: paths().any(|path| path == &watched_root),
                    }
                };
                let _ = callback_signals.send(signal);
            },
        )
        .map_err(|source| SkillsError::Watch {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut watcher = Watcher {
            debouncer,
            root: resolved,
            watched: None,
        };
        watcher.rearm().map_err(|source| SkillsError::Watch {
            path: dir.to_path_buf(),
            source,
        })?;

        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("lull-skills".into())
            .spawn(move || watch_loop(watcher, thread_shared, received))
            .map_err(|source| SkillsError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(SkillsIndex {
            shared,
            signals,
            thread: Some(thread),
        })
    }

    /// The directory as configured.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The set as last scanned.
    pub fn current(&self) -> Arc<SkillSet> {
        self.shared.current.borrow().clone()
    }

    /// A receiver that sees every new set (it starts marked as seen).
    pub fn subscribe(&self) -> watch::Receiver<Arc<SkillSet>> {
        self.shared.current.subscribe()
    }

    /// Rescans now, without waiting for the watcher (for example right after writing a skill),
    /// and returns the set. Blocks on the file system: call it from blocking code.
    pub fn rescan(&self) -> Arc<SkillSet> {
        self.shared.rescan();
        self.current()
    }
}

impl Drop for SkillsIndex {
    fn drop(&mut self) {
        let _ = self.signals.send(Signal::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for SkillsIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillsIndex")
            .field("dir", &self.shared.dir)
            .field("skills", &self.current().skills.len())
            .finish()
    }
}

impl IndexShared {
    fn rescan(&self) {
        let _guard = self
            .scan_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let next = match scan_skills_dir(&self.dir) {
            Ok(set) => set,
            Err(err) => {
                tracing::warn!("{err}; routing sees no skills until it is back");
                SkillSet {
                    dir: self.dir.clone(),
                    ..SkillSet::default()
                }
            }
        };
        self.current.send_if_modified(|current| {
            if **current == next {
                return false;
            }
            log_changes(current, &next);
            *current = Arc::new(next);
            true
        });
    }
}

/// The debouncer and what it watches now: the directory (recursively) when it exists, else its
/// nearest existing ancestor, to see it come back.
struct Watcher {
    debouncer: QuietWatcher,
    root: PathBuf,
    watched: Option<PathBuf>,
}

impl Watcher {
    fn rearm(&mut self) -> Result<(), notify::Error> {
        if let Some(path) = self.watched.take() {
            // Always drop and re-add: a directory deleted and recreated keeps its path but
            // not its inode, and the old watch is dead.
            let _ = self.debouncer.unwatch(&path);
        }
        let (path, mode) = if self.root.is_dir() {
            (self.root.clone(), RecursiveMode::Recursive)
        } else {
            let Some(ancestor) = self.root.ancestors().skip(1).find(|a| a.is_dir()) else {
                return Ok(());
            };
            (ancestor.to_path_buf(), RecursiveMode::NonRecursive)
        };
        self.debouncer.watch(&path, mode)?;
        self.watched = Some(path);
        Ok(())
    }
}

fn watch_loop(mut watcher: Watcher, shared: Arc<IndexShared>, signals: mpsc::Receiver<Signal>) {
    while let Ok(signal) = signals.recv() {
        let mut rearm = false;
        for signal in std::iter::once(signal).chain(signals.try_iter()) {
            match signal {
                Signal::Stop => return,
                Signal::Changed { rearm: wanted } => rearm |= wanted,
            }
        }
        let watching_root = watcher.watched.as_deref() == Some(shared.resolved.as_path());
        if rearm || watching_root != shared.resolved.is_dir() {
            if let Err(err) = watcher.rearm() {
                tracing::warn!(
                    "cannot watch skills directory {}: {err}; changes show up at the next rescan",
                    shared.dir.display()
                );
            }
        }
        // Rescan after re-arming, so nothing that happened in between is missed.
        shared.rescan();
    }
}

fn log_changes(before: &SkillSet, after: &SkillSet) {
    for (name, skill) in &after.skills {
        match before.skills.get(name) {
            None => tracing::info!(skill = %name, "skill added: {}", skill.path.display()),
            Some(old) if old != skill => tracing::info!(skill = %name, "skill changed"),
            Some(_) => {}
        }
    }
    for name in before.skills.keys() {
        if !after.skills.contains_key(name) {
            tracing::info!(skill = %name, "skill removed");
        }
    }
    for skipped in &after.skipped {
        if !before.skipped.contains(skipped) {
            tracing::warn!(
                folder = %skipped.folder,
                "skipping skill folder {:?} in {}: {}",
                skipped.folder,
                after.dir.display(),
                skipped.reason
            );
        }
    }
}
