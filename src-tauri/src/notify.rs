//! Desktop notifications: few, and each one worth the interruption.
//!
//! Today: a review found something to learn; a review failed for good; the engine could not
//! start. Everything else (a review queued, started, preempted, retried) is visible in the window
//! and would only be noise here. [`note_for`] decides, and is pure so tests read it as a table.

use lull::events::EngineEvent;
use tauri::AppHandle;
use tauri_plugin_notification::NotificationExt as _;

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
        EngineEvent::ReviewCompleted { candidates, .. } if *candidates > 0 => Some(Note {
            title: "Lull found something to learn".into(),
            body: format!(
                "A review proposed {}. Nothing goes live until you approve a draft.",
                plural(*candidates, "skill candidate")
            ),
        }),
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
        _ => None,
    }
}

/// Shows the notification `event` deserves, if any.
pub fn on_event(app: &AppHandle, event: &EngineEvent) {
    if let Some(note) = note_for(event) {
        show(app, note);
    }
}

/// Says the engine is not running, and why.
pub fn engine_failed(app: &AppHandle, message: &str) {
    show(
        app,
        Note {
            title: "Lull's learning engine is not running".into(),
            body: message.to_owned(),
        },
    );
}

fn show(app: &AppHandle, note: Note) {
    let shown = app
        .notification()
        .builder()
        .title(&note.title)
        .body(&note.body)
        .show();
    // No notification daemon (a bare X server, a minimal desktop) is not worth more than a line.
    if let Err(error) = shown {
        tracing::warn!(%error, title = note.title, "cannot show a notification");
    }
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

fn plural(n: usize, singular: &str) -> String {
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {singular}s")
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

    #[test]
    fn only_findings_and_final_failures_notify() {
        assert_eq!(note_for(&completed(0)), None);
        assert_eq!(note_for(&failed(true)), None);
        assert_eq!(
            note_for(&EngineEvent::ReviewStarted {
                review_id: "r1".into(),
                attempt: 1
            }),
            None
        );

        let found = note_for(&completed(2)).expect("a finding notifies");
        assert_eq!(
            found.body,
            "A review proposed 2 skill candidates. Nothing goes live until you approve a draft."
        );
        assert!(note_for(&completed(1))
            .unwrap()
            .body
            .contains("1 skill candidate."));

        let gave_up = note_for(&failed(false)).expect("a final failure notifies");
        assert_eq!(gave_up.title, "A review failed");
        assert!(gave_up
            .body
            .starts_with("The model's answer is not the expected JSON. Lull gave up"));
    }
}
