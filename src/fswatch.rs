//! File-system watching with coalesced events and no timer while nothing happens.
//!
//! The server's state-file watcher and the skills index both want "tell me once things have been
//! quiet for a moment". Off-the-shelf debouncers tick on a timer forever (tens of wake-ups a
//! second), which breaks Lull's idle budget; [`QuietWatcher`] blocks on the event channel and only
//! starts its quiet-period clock when an event arrives. Access events (a file opened, read or
//! closed unchanged) are not changes and never reach it.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// One batch of events, delivered after `quiet` without a further event. An error (for example a
/// watch that died with its folder) is delivered like an event, so callers can re-arm.
pub type EventBatch = Vec<notify::Result<Event>>;

/// A `notify` watcher whose events arrive in batches, on a thread of its own.
pub struct QuietWatcher {
    watcher: RecommendedWatcher,
}

impl QuietWatcher {
    /// Starts a watcher (watching nothing yet) whose batches go to `on_batch`, called on a thread
    /// named `thread_name`. The thread ends when the watcher is dropped.
    pub fn new(
        quiet: Duration,
        thread_name: &str,
        mut on_batch: impl FnMut(EventBatch) + Send + 'static,
    ) -> notify::Result<QuietWatcher> {
        let (sender, receiver) = mpsc::channel::<notify::Result<Event>>();
        let watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            // Opening, reading and closing a file unchanged change nothing, and Lull reads the
            // files it watches: reacting to its own reads would loop forever. A close after a
            // write is kept: it marks a write finished.
            let unchanged = matches!(&event, Ok(event) if event.kind.is_access()
                && event.kind != EventKind::Access(AccessKind::Close(AccessMode::Write)));
            if !unchanged {
                let _ = sender.send(event);
            }
        })?;
        std::thread::Builder::new()
            .name(thread_name.to_string())
            .spawn(move || {
                // Blocks without waking until the first event of a batch.
                while let Ok(first) = receiver.recv() {
                    let mut batch = vec![first];
                    loop {
                        match receiver.recv_timeout(quiet) {
                            Ok(event) => batch.push(event),
                            Err(mpsc::RecvTimeoutError::Timeout) => break,
                            Err(mpsc::RecvTimeoutError::Disconnected) => {
                                on_batch(batch);
                                return;
                            }
                        }
                    }
                    on_batch(batch);
                }
            })
            .map_err(notify::Error::io)?;
        Ok(QuietWatcher { watcher })
    }

    /// Watches `path`.
    pub fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
        self.watcher.watch(path, mode)
    }

    /// Stops watching `path`.
    pub fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        self.watcher.unwatch(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_changes_arrives_as_one_batch() {
        let dir = tempfile::tempdir().unwrap();
        let (batches, received) = mpsc::channel();
        let mut watcher =
            QuietWatcher::new(Duration::from_millis(100), "test-watch", move |batch| {
                let _ = batches.send(batch.len());
            })
            .unwrap();
        watcher
            .watch(dir.path(), RecursiveMode::NonRecursive)
            .unwrap();
        for i in 0..5 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").unwrap();
        }
        let first = received.recv_timeout(Duration::from_secs(2)).unwrap();
        assert!(first >= 5, "one batch holds the burst: {first}");
        assert!(
            received.recv_timeout(Duration::from_millis(300)).is_err(),
            "and nothing after it"
        );
    }

    #[test]
    fn reading_a_file_in_the_folder_is_not_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("server.json");
        std::fs::write(&file, "{}").unwrap();
        let (batches, received) = mpsc::channel();
        let mut watcher =
            QuietWatcher::new(Duration::from_millis(50), "test-watch", move |batch| {
                let _ = batches.send(batch.len());
            })
            .unwrap();
        watcher
            .watch(dir.path(), RecursiveMode::NonRecursive)
            .unwrap();
        // Lull reads the state file on every probe; if reading were an event, each read would
        // signal a change, which triggers another read, forever.
        for _ in 0..5 {
            std::fs::read_to_string(&file).unwrap();
        }
        assert!(
            received.recv_timeout(Duration::from_millis(400)).is_err(),
            "a read woke the watcher"
        );
    }
}
