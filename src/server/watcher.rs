//! Watching the state file's folder (never the file: it comes and goes, and may be replaced by
//! rename), including a folder that does not exist yet or is deleted and recreated.
//!
//! The watcher watches the folder when it exists (its deletion or renaming is an event on the
//! folder itself), and otherwise the nearest existing ancestor, to see the folder created. After every batch of
//! events it re-arms (the watched set follows what exists now) and signals a change; the
//! receiver re-reads the file, which is cheap, so unrelated events in the ancestor are harmless.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::RecursiveMode;
use tokio::sync::mpsc::UnboundedSender;

use crate::fswatch::QuietWatcher;

use super::ServerError;

/// Quiet time after the last file-system event before reacting: long enough to coalesce a
/// write-then-rename, short enough to react well within a second.
pub const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);

/// What the state file's watcher watches now: a readiness signal for whoever must know that a
/// change will be seen (tests, the Overview).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watching {
    /// The state file's folder itself: every change of the file is seen.
    Folder(PathBuf),
    /// The folder does not exist (yet): its nearest existing ancestor, to see it appear.
    Ancestor(PathBuf),
    /// Nothing could be watched (the error was logged); changes are seen only when asked.
    Nothing,
}

pub(crate) struct FolderWatcher {
    debouncer: QuietWatcher,
    folder: PathBuf,
    watched: Vec<PathBuf>,
}

impl FolderWatcher {
    /// Starts watching for `state_file`; each debounced batch of events sends one `()`.
    pub(crate) fn start(
        state_file: &Path,
        debounce: Duration,
        changes: UnboundedSender<()>,
    ) -> Result<FolderWatcher, ServerError> {
        let folder = absolute_folder(state_file);
        let debouncer = QuietWatcher::new(debounce, "lull-server-watch", move |_batch| {
            // Errors too: a dropped watch (folder deleted) is a reason to re-arm.
            let _ = changes.send(());
        })
        .map_err(|source| ServerError::Watch {
            path: folder.clone(),
            source,
        })?;
        let mut watcher = FolderWatcher {
            debouncer,
            folder,
            watched: Vec::new(),
        };
        watcher.rearm()?;
        Ok(watcher)
    }

    /// Makes the watched set match what exists now. Fails only if nothing at all can be watched.
    pub(crate) fn rearm(&mut self) -> Result<(), ServerError> {
        // The folder alone when it exists (its own deletion is an event on it), so a busy parent
        // such as the home directory costs no wake-ups; else the nearest existing ancestor, to
        // see the folder appear.
        let wanted: Vec<PathBuf> = if self.folder.is_dir() {
            vec![self.folder.clone()]
        } else {
            nearest_existing_ancestor(&self.folder)
                .into_iter()
                .collect()
        };
        for path in std::mem::take(&mut self.watched) {
            // Always drop and re-add: a folder deleted and recreated between two batches has
            // the same path but a new inode, and the old watch is dead.
            let _ = self.debouncer.unwatch(&path);
        }
        let mut last_error = None;
        for path in wanted {
            match self.debouncer.watch(&path, RecursiveMode::NonRecursive) {
                Ok(()) => self.watched.push(path),
                Err(source) => last_error = Some(ServerError::Watch { path, source }),
            }
        }
        match (self.watched.is_empty(), last_error) {
            (true, Some(err)) => Err(err),
            _ => Ok(()),
        }
    }

    /// What is watched since the last [`FolderWatcher::rearm`].
    pub(crate) fn watching(&self) -> Watching {
        match self.watched.first() {
            None => Watching::Nothing,
            Some(path) if *path == self.folder => Watching::Folder(path.clone()),
            Some(path) => Watching::Ancestor(path.clone()),
        }
    }
}

fn absolute_folder(state_file: &Path) -> PathBuf {
    let folder = state_file
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if folder.is_absolute() {
        folder.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(folder))
            .unwrap_or_else(|_| folder.to_path_buf())
    }
}

fn nearest_existing_ancestor(folder: &Path) -> Option<PathBuf> {
    folder
        .ancestors()
        .skip(1)
        .find(|ancestor| ancestor.is_dir())
        .map(Path::to_path_buf)
}
