//! Forwards the engine's events to the tray and the notifications. (The window is a process of
//! its own and reads the events from the local API's stream.)
//!
//! Invariant: nothing here polls. Each engine event wakes the tray's updater and may become one
//! notification. Drafts that become ready for review are gathered into bursts
//! ([`notify::ReadyDrafts`]): the forwarder sleeps until a burst is due, never on a timer of its
//! own. A forwarder that falls behind re-reads the tray and the drafts that wait: an event is a
//! hint to refresh, never the state itself.
//!
//! The engine is asked for the drafts that wait for a person twice only: when the forwarder
//! starts and after it missed events, so that a person's change to a draft that already waited
//! is not announced as news.

use std::sync::Arc;

use lull::drafts::records::DraftStatus;
use lull::events::EngineEvent;
use lull::Engine;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::app::Desktop;
use crate::notify::{Note, ReadyDrafts};

/// Starts forwarding `events` until the engine stops; abort the handle to stop sooner.
pub fn forward(
    desktop: Arc<Desktop>,
    engine: Engine,
    mut events: broadcast::Receiver<EngineEvent>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ready = ReadyDrafts::new(waiting_drafts(&engine).await);
        loop {
            match next(&mut events, &mut ready).await {
                Next::Event(event) => {
                    desktop.notes.on_event(&engine, &event);
                    if event == EngineEvent::EngineStopping {
                        return;
                    }
                    desktop.tray.refresh();
                }
                Next::Lagged(missed) => {
                    tracing::debug!(missed, "the desktop fell behind the engine's events");
                    desktop.tray.refresh();
                    ready.reseed(waiting_drafts(&engine).await);
                }
                Next::DraftsReady(note) => desktop.notes.show(note),
                Next::Closed => return,
            }
        }
    })
}

/// What the forwarder does next.
#[derive(Debug)]
enum Next {
    /// Forward this event (it is already recorded in the drafts' burst).
    Event(EngineEvent),
    /// This many events were missed.
    Lagged(u64),
    /// A burst of drafts became ready: one notification.
    DraftsReady(Note),
    /// The engine is gone.
    Closed,
}

/// Waits for the next event or for the open burst of ready drafts to be due, whichever comes
/// first.
async fn next(events: &mut broadcast::Receiver<EngineEvent>, ready: &mut ReadyDrafts) -> Next {
    loop {
        let deadline = ready.deadline();
        tokio::select! {
            received = events.recv() => {
                return match received {
                    Ok(event) => {
                        ready.record(&event, Instant::now());
                        Next::Event(event)
                    }
                    Err(RecvError::Lagged(missed)) => Next::Lagged(missed),
                    Err(RecvError::Closed) => Next::Closed,
                };
            }
            () = sleep_until(deadline) => {
                if let Some(note) = ready.take_due(Instant::now()) {
                    return Next::DraftsReady(note);
                }
            }
        }
    }
}

/// Sleeps until `deadline`; forever when there is none.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The ids of the drafts that wait for a person now. A failure to read them is logged and
/// reads as none: the worst it causes is one notification too many.
async fn waiting_drafts(engine: &Engine) -> Vec<String> {
    let mut ids = Vec::new();
    for status in [DraftStatus::ReviewPending, DraftStatus::Blocked] {
        match engine.drafts(Some(status)).await {
            Ok(drafts) => ids.extend(drafts.into_iter().map(|draft| draft.id)),
            Err(error) => tracing::warn!(%error, "cannot read the drafts waiting for review"),
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::notify::drafts::BURST_QUIET;

    fn ready_draft(id: &str) -> EngineEvent {
        EngineEvent::DraftChanged {
            draft_id: id.into(),
            skill: format!("skill-{id}"),
            status: DraftStatus::ReviewPending,
        }
    }

    async fn expect_event(events: &mut broadcast::Receiver<EngineEvent>, ready: &mut ReadyDrafts) {
        let next = next(events, ready).await;
        assert!(matches!(next, Next::Event(_)), "{next:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_ready_drafts_is_one_note_once_the_events_pause() {
        let (sender, mut events) = broadcast::channel(16);
        let mut ready = ReadyDrafts::default();
        let start = Instant::now();
        sender.send(ready_draft("d1")).unwrap();
        sender.send(EngineEvent::EngineStopping).unwrap();
        let late = sender.clone();
        let sending = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            late.send(ready_draft("d2")).unwrap();
            late.send(ready_draft("d3")).unwrap();
        });

        for _ in 0..4 {
            expect_event(&mut events, &mut ready).await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(1),
            "d2 and d3 came at 1 s"
        );
        match next(&mut events, &mut ready).await {
            Next::DraftsReady(note) => assert_eq!(note.title, "3 drafts are ready for review"),
            other => panic!("expected one note for the burst, got {other:?}"),
        }
        assert_eq!(start.elapsed(), Duration::from_secs(1) + BURST_QUIET);
        sending.await.unwrap();

        // Nothing more is due: the forwarder waits for events, then sees the engine go.
        drop(sender);
        assert!(matches!(next(&mut events, &mut ready).await, Next::Closed));
    }

    #[tokio::test]
    async fn a_listener_that_fell_behind_is_told_so() {
        let (sender, mut events) = broadcast::channel(1);
        sender.send(ready_draft("d1")).unwrap();
        sender.send(ready_draft("d2")).unwrap();
        let mut ready = ReadyDrafts::default();
        assert!(matches!(
            next(&mut events, &mut ready).await,
            Next::Lagged(1)
        ));
        expect_event(&mut events, &mut ready).await;
    }
}
