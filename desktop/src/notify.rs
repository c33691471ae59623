//! Desktop notifications: few, and each one worth the interruption.
//!
//! Today: a review failed for good; a training job finished, failed or was interrupted (one
//! each); drafts became ready for
//! review (one notification per burst, [`ReadyDrafts`]); the engine could not start; and, when
//! the person turned it on in Settings (off by default), the managed server appeared or went
//! away. Everything else (a review queued, started, preempted, retried, a slot busy, a person's
//! own edit of a draft) is visible in the window and would only be noise here. [`note_for`],
//! [`ServerPresence::note_for`] and [`ReadyDrafts`] decide, and are pure so tests read them as
//! tables.
//!
//! Delivery: a [`Notifier`] hands each note to one sender task, which shows them in order
//! through org.freedesktop.Notifications (`notify-rust`, over D-Bus), so neither the events
//! forwarder nor the host waits on the notification server. No server on the bus is a log line.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use lull::events::EngineEvent;
use lull::jobs::records::JobStatus;
use lull::server::{ServerReading, ServerState};
use lull::Engine;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub(crate) mod drafts;

pub use drafts::ReadyDrafts;

/// A notification's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// One line.
    pub title: String,
    /// What happened and what to do next.
    pub body: String,
}

/// The notification an engine event deserves, if any.
pub fn note_for(event: &EngineEvent) -> Option<Note> {
    match event {
        EngineEvent::ReviewFailed {
            error,
            will_retry: false,
            ..
        } => Some(Note {
            title: "A review failed".into(),
            body: format!(
                "{}. Lull gave up on it; see Reviews in the Lull window.",
                as_sentence(error)
            ),
        }),
        EngineEvent::JobChanged { job_id, status } => {
            let short: String = job_id.chars().take(8).collect();
            let (title, body) = match status {
                JobStatus::Completed => (
                    "A training run finished",
                    format!("Run {short} trained a routing head. Nothing changes until you promote it in Jobs."),
                ),
                JobStatus::Failed => (
                    "A training run failed",
                    format!("Run {short} stopped with an error; see Jobs in the Lull window."),
                ),
                JobStatus::Interrupted => (
                    "A training run was interrupted",
                    format!("Run {short} stopped before its end; its rounds are kept, and Resume in Jobs continues it."),
                ),
                _ => return None,
            };
            Some(Note {
                title: title.into(),
                body,
            })
        }
        _ => None,
    }
}

/// Whether the managed server was last seen up, so that "appeared" and "went away" are
/// transitions, not every reading (a slot turning busy is a new reading too).
#[derive(Debug, Default)]
pub struct ServerPresence(Mutex<Option<bool>>);

impl ServerPresence {
    /// Records `reading` and returns the note its transition deserves, if any.
    ///
    /// Ready is up; no state file, a dead pid or an unreadable file is gone. Starting and
    /// unreachable say nothing either way (a server busy loading or a probe that timed out once),
    /// and the first reading after start is not news.
    pub fn note_for(&self, reading: &ServerReading) -> Option<Note> {
        let up = match reading.state {
            ServerState::Ready => true,
            ServerState::Absent | ServerState::Stale | ServerState::Invalid => false,
            ServerState::Starting | ServerState::Unreachable => return None,
        };
        let was_up = lock(&self.0).replace(up);
        match (was_up, up) {
            (Some(false), true) => Some(Note {
                title: "Your managed server is ready".into(),
                body: format!(
                    "Lull will learn in the lulls of {}.",
                    reading.base_url.as_deref().unwrap_or("the managed server")
                ),
            }),
            (Some(true), false) => Some(Note {
                title: "Your managed server went away".into(),
                body: format!(
                    "{}. Learning waits until it is back; nothing queued is lost.",
                    as_sentence(reading.reason.as_deref().unwrap_or(""))
                ),
            }),
            _ => None,
        }
    }
}

/// The status each training job was last announced with, so that its end notifies once: the
/// engine announces a job again with the status it already had (promoting a finished run, the
/// runner's last word on a run it ended), and that is not news.
#[derive(Debug, Default)]
pub struct JobStatuses(Mutex<HashMap<String, JobStatus>>);

impl JobStatuses {
    /// Records `event` and returns it unless it repeats the job's last status (other events pass).
    pub fn changed<'e>(&self, event: &'e EngineEvent) -> Option<&'e EngineEvent> {
        let EngineEvent::JobChanged { job_id, status } = event else {
            return Some(event);
        };
        let before = lock(&self.0).insert(job_id.clone(), *status);
        (before != Some(*status)).then_some(event)
    }
}

/// The name notifications are sent under.
const APP_NAME: &str = "Lull";
/// How long *Quit* waits for notes still on their way.
const FLUSH_DEADLINE: Duration = Duration::from_secs(2);

/// Sends the desktop notifications, in order, from one task.
pub struct Notifier {
    presence: ServerPresence,
    jobs: JobStatuses,
    outbox: Mutex<Option<mpsc::UnboundedSender<Note>>>,
    sender: Mutex<Option<JoinHandle<()>>>,
}

impl Notifier {
    /// Starts the sender task. Must run on the tokio runtime.
    pub fn start() -> Notifier {
        let (outbox, notes) = mpsc::unbounded_channel();
        Notifier {
            presence: ServerPresence::default(),
            jobs: JobStatuses::default(),
            outbox: Mutex::new(Some(outbox)),
            sender: Mutex::new(Some(tokio::spawn(send_forever(notes)))),
        }
    }

    /// Shows the notification `event` of `engine` deserves, if any.
    pub fn on_event(&self, engine: &Engine, event: &EngineEvent) {
        let note = match event {
            EngineEvent::ServerChanged { server } => self
                .presence
                .note_for(server)
                .filter(|_| engine.settings().notify_server_changes),
            other => self.jobs.changed(other).and_then(note_for),
        };
        if let Some(note) = note {
            self.show(note);
        }
    }

    /// Says the engine is not running, and why.
    pub fn engine_failed(&self, message: &str) {
        self.show(Note {
            title: "Lull's learning engine is not running".into(),
            body: message.to_owned(),
        });
    }

    /// Shows `note`. For notes with no switch in Settings, such as a burst of ready drafts; a
    /// note that has one goes through [`Notifier::on_event`].
    pub fn show(&self, note: Note) {
        if let Some(outbox) = lock(&self.outbox).as_ref() {
            let _ = outbox.send(note);
        }
    }

    /// Lets the notes already asked for go out (for a while), then stops the sender.
    pub async fn flush(&self) {
        lock(&self.outbox).take();
        let Some(sender) = lock(&self.sender).take() else {
            return;
        };
        if tokio::time::timeout(FLUSH_DEADLINE, sender).await.is_err() {
            tracing::warn!("notifications still unsent after {FLUSH_DEADLINE:?} were dropped");
        }
    }
}

async fn send_forever(mut notes: mpsc::UnboundedReceiver<Note>) {
    while let Some(note) = notes.recv().await {
        let shown = notify_rust::Notification::new()
            .appname(APP_NAME)
            .summary(&note.title)
            .body(&note.body)
            .show_async()
            .await;
        // No notification server (a bare X server, a minimal desktop) is not worth more than a
        // line.
        if let Err(error) = shown {
            tracing::warn!(%error, title = note.title, "cannot show a notification");
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep going with it.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `"the model failed."` → `"The model failed"` (the caller adds its own full stop).
fn as_sentence(text: &str) -> String {
    let text = text.trim().trim_end_matches('.');
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "It stopped with no error message".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(will_retry: bool) -> EngineEvent {
        EngineEvent::ReviewFailed {
            review_id: "r1".into(),
            error: "the model's answer is not the expected JSON".into(),
            will_retry,
        }
    }

    fn completed(candidates: usize) -> EngineEvent {
        EngineEvent::ReviewCompleted {
            review_id: "r1".into(),
            candidates,
        }
    }

    fn server(state: ServerState, reason: Option<&str>) -> ServerReading {
        ServerReading {
            state,
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            models: Vec::new(),
            idle: state == ServerState::Ready,
            reason: reason.map(str::to_owned),
            mode: None,
            api_key: None,
        }
    }

    #[test]
    fn the_server_notifies_when_it_comes_and_goes_not_on_every_reading() {
        let presence = ServerPresence::default();
        let ready = server(ServerState::Ready, None);
        let gone = server(
            ServerState::Absent,
            Some("no managed server: server.json does not exist"),
        );
        assert_eq!(
            presence.note_for(&ready),
            None,
            "the first reading is not news"
        );
        assert_eq!(presence.note_for(&ready), None, "still up");
        assert_eq!(
            presence.note_for(&server(ServerState::Unreachable, Some("hung"))),
            None
        );

        let went = presence.note_for(&gone).expect("up to gone notifies");
        assert_eq!(went.title, "Your managed server went away");
        assert!(went
            .body
            .starts_with("No managed server: server.json does not exist. Learning waits"));
        assert_eq!(
            presence.note_for(&server(ServerState::Stale, Some("dead pid"))),
            None
        );
        assert_eq!(
            presence.note_for(&server(ServerState::Starting, None)),
            None
        );

        let back = presence.note_for(&ready).expect("gone to up notifies");
        assert_eq!(
            back.body,
            "Lull will learn in the lulls of http://127.0.0.1:8080/v1."
        );
    }

    #[test]
    fn a_job_that_finished_failed_or_was_interrupted_notifies_once_and_nothing_else_does() {
        let job = |status| EngineEvent::JobChanged {
            job_id: "0123456789".into(),
            status,
        };
        assert_eq!(
            note_for(&job(JobStatus::Completed)).unwrap().title,
            "A training run finished"
        );
        assert_eq!(
            note_for(&job(JobStatus::Failed)).unwrap().title,
            "A training run failed"
        );
        assert!(note_for(&job(JobStatus::Interrupted))
            .unwrap()
            .body
            .contains("Resume"));
        for quiet in [
            JobStatus::Queued,
            JobStatus::Running,
            JobStatus::Cancelled,
            JobStatus::BudgetExhausted,
        ] {
            assert_eq!(note_for(&job(quiet)), None, "{quiet:?}");
        }
    }

    #[test]
    fn a_job_announced_again_with_the_status_it_had_is_not_news() {
        let statuses = JobStatuses::default();
        let job = |id: &str, status| EngineEvent::JobChanged {
            job_id: id.into(),
            status,
        };
        let finished = job("a", JobStatus::Completed);
        assert!(statuses.changed(&job("a", JobStatus::Running)).is_some());
        assert!(statuses.changed(&finished).is_some(), "running → completed");
        assert!(
            statuses.changed(&finished).is_none(),
            "promoted: completed again"
        );
        assert!(
            statuses
                .changed(&job("b", JobStatus::Interrupted))
                .is_some(),
            "a job first seen (adopted after a restart) is news"
        );
        assert!(statuses.changed(&completed(1)).is_some(), "not a job's");
    }

    #[test]
    fn only_final_failures_of_reviews_notify() {
        // What a review found notifies once it is a draft (`ReadyDrafts`), not before.
        assert_eq!(note_for(&completed(2)), None);
        assert_eq!(note_for(&failed(true)), None);
        assert_eq!(
            note_for(&EngineEvent::ReviewStarted {
                review_id: "r1".into(),
                attempt: 1
            }),
            None
        );

        let gave_up = note_for(&failed(false)).expect("a final failure notifies");
        assert_eq!(gave_up.title, "A review failed");
        assert!(gave_up
            .body
            .starts_with("The model's answer is not the expected JSON. Lull gave up"));
    }
}
