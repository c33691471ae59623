//! Follows the engine's event stream (`GET /v1/events`) for the window.
//!
//! Each event reaches the UI as [`ENGINE_EVENT`], its JSON as the engine sent it (the UI
//! re-reads what it shows). Whether the window reaches the engine is [`HOST_EVENT`]
//! ([`HostState`]), sent when it changes and kept in [`HostCell`] for the `host_state` command.
//! When the stream ends (the engine stopped, restarted, or is not there yet) the follower
//! tries again with a new client after [`FIRST_RETRY`], doubling to [`LONGEST_RETRY`]; after a reconnection the UI
//! gets `{"type":"lagged"}`, since events were missed meanwhile.
//!
//! Invariant: nothing polls while the stream is open; while it is not, one attempt per retry.

use std::sync::Mutex;
use std::time::Duration;

use lull::client::{ClientError, SseEvent};
use serde::Serialize;
use serde_json::{json, Value};
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Emitter as _, Manager as _};
use tokio::time::Instant;

use crate::link::EngineLink;

/// The event the window listens to: one engine event, as JSON (`{"type":"review_queued",…}`).
pub const ENGINE_EVENT: &str = "engine-event";
/// The event the window listens to for the link to the engine ([`HostState`]).
pub const HOST_EVENT: &str = "engine-host";
/// The wait before the first new attempt after the stream broke or could not open.
pub const FIRST_RETRY: Duration = Duration::from_millis(500);
/// The longest wait between attempts.
pub const LONGEST_RETRY: Duration = Duration::from_secs(5);
/// How long after the window's start an engine that is not there yet counts as starting: the
/// tray may start the window while its engine opens the database.
pub const STARTUP_GRACE: Duration = Duration::from_secs(5);

/// Whether the window reaches the engine: `{"state":"running"}`, `{"state":"failed","message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum HostState {
    /// Not connected yet, within [`STARTUP_GRACE`] of the window's start.
    Starting,
    /// The event stream is open.
    Running,
    /// No engine answers; `message` says why and what to do.
    Failed {
        /// For the person.
        message: String,
    },
}

/// The last [`HostState`] sent; Tauri managed state.
pub struct HostCell(Mutex<HostState>);

impl Default for HostCell {
    fn default() -> HostCell {
        HostCell(Mutex::new(HostState::Starting))
    }
}

impl HostCell {
    /// The state now.
    pub fn get(&self) -> HostState {
        self.lock().clone()
    }

    /// Stores `state`; whether it differs from the one before.
    fn set(&self, state: &HostState) -> bool {
        let mut current = self.lock();
        let changed = *current != *state;
        *current = state.clone();
        changed
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HostState> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Where the follower's news goes: the window in the app, a channel in tests.
pub trait Listener: Send + Sync + 'static {
    /// One engine event for the UI.
    fn engine_event(&self, event: Value);
    /// The link changed state.
    fn host_changed(&self, state: &HostState);
}

impl Listener for AppHandle {
    fn engine_event(&self, event: Value) {
        if let Err(error) = self.emit(ENGINE_EVENT, event) {
            tracing::warn!(%error, "cannot forward an engine event to the window");
        }
    }

    fn host_changed(&self, state: &HostState) {
        if !self.state::<HostCell>().set(state) {
            return;
        }
        if let Err(error) = self.emit(HOST_EVENT, state) {
            tracing::warn!(%error, "cannot tell the window about the engine");
        }
    }
}

/// Starts following the engine until the handle is aborted (the app exits).
pub fn follow(
    engine: EngineLink,
    engine_error: Option<String>,
    listener: impl Listener,
) -> JoinHandle<()> {
    tauri::async_runtime::spawn(run(engine, engine_error, listener))
}

/// The follower: open the stream, forward it, and open it again when it ends.
async fn run(engine: EngineLink, engine_error: Option<String>, listener: impl Listener) {
    let started = Instant::now();
    let mut retry = Retry::default();
    let mut connected_before = false;
    loop {
        let opened = match engine.client() {
            Ok(client) => client.events().await,
            Err(error) => Err(error),
        };
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(error) => {
                let facts = Failure {
                    since_start: started.elapsed(),
                    connected_before,
                    engine_error: engine_error.as_deref(),
                };
                listener.host_changed(&facts.state(&error));
                tokio::time::sleep(retry.next_wait()).await;
                continue;
            }
        };
        listener.host_changed(&HostState::Running);
        if connected_before {
            listener.engine_event(json!({ "type": "lagged" }));
        }
        connected_before = true;
        retry = Retry::default();
        loop {
            match stream.next().await {
                Ok(Some(event)) => {
                    let event = payload(event);
                    let stopping = event["type"] == "engine_stopping";
                    listener.engine_event(event);
                    if stopping {
                        // Hang up rather than wait for the stream's end: the engine's API
                        // waits for its open connections before it stops.
                        break;
                    }
                }
                Ok(None) => break,
                Err(error) => {
                    tracing::info!(error = %error.message(), "the engine's event stream broke");
                    break;
                }
            }
        }
        // The engine stopped or the connection broke: a new client, a moment later.
        drop(stream);
        engine.forget();
        tokio::time::sleep(FIRST_RETRY).await;
    }
}

/// What the UI receives for one server-sent event: the engine's JSON, or `lagged` (with how
/// many events were missed) for the stream's own note that it fell behind.
fn payload(event: SseEvent) -> Value {
    if event.name.as_deref() == Some("lagged") {
        return json!({ "type": "lagged", "missed": event.data.parse::<u64>().ok() });
    }
    serde_json::from_str(&event.data).unwrap_or_else(|error| {
        tracing::warn!(%error, "an engine event is not JSON; the window re-reads instead");
        json!({ "type": "lagged" })
    })
}

/// What decides the state shown while no stream is open.
struct Failure<'a> {
    since_start: Duration,
    connected_before: bool,
    /// The tray's reason its engine did not start (`--engine-error`).
    engine_error: Option<&'a str>,
}

impl Failure<'_> {
    /// Before the first connection, the tray's reason if it gave one, else `starting` for a
    /// while; after, or once the grace is over, the client's reason.
    fn state(&self, error: &ClientError) -> HostState {
        if !self.connected_before {
            if let Some(message) = self.engine_error {
                return HostState::Failed {
                    message: message.to_owned(),
                };
            }
            if self.since_start < STARTUP_GRACE {
                return HostState::Starting;
            }
        }
        HostState::Failed {
            message: error.message(),
        }
    }
}

/// The waits between attempts: [`FIRST_RETRY`], doubling, at most [`LONGEST_RETRY`].
#[derive(Debug)]
struct Retry {
    next: Duration,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry { next: FIRST_RETRY }
    }
}

impl Retry {
    fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST_RETRY);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_half_a_second_to_five() {
        let mut retry = Retry::default();
        let waits: Vec<u64> = (0..6)
            .map(|_| retry.next_wait().as_millis() as u64)
            .collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 5000, 5000]);
    }

    #[test]
    fn the_state_without_an_engine_says_the_most_useful_thing() {
        let error = ClientError::NotRunning("no Lull engine is running for /d".into());
        let failed = |message: &str| HostState::Failed {
            message: message.into(),
        };
        let check = |facts: Failure, expected: HostState| assert_eq!(facts.state(&error), expected);
        check(
            Failure {
                since_start: Duration::from_secs(1),
                connected_before: false,
                engine_error: None,
            },
            HostState::Starting,
        );
        check(
            Failure {
                since_start: STARTUP_GRACE,
                connected_before: false,
                engine_error: None,
            },
            failed("no Lull engine is running for /d"),
        );
        check(
            Failure {
                since_start: Duration::ZERO,
                connected_before: false,
                engine_error: Some("the port is taken"),
            },
            failed("the port is taken"),
        );
        // Once the window reached an engine, the tray's old reason no longer holds.
        check(
            Failure {
                since_start: Duration::ZERO,
                connected_before: true,
                engine_error: Some("the port is taken"),
            },
            failed("no Lull engine is running for /d"),
        );
    }

    #[test]
    fn the_stream_note_of_missed_events_becomes_lagged() {
        let event = |name: Option<&str>, data: &str| SseEvent {
            name: name.map(str::to_owned),
            data: data.into(),
        };
        assert_eq!(
            payload(event(None, r#"{"type":"review_queued","review_id":"r1"}"#)),
            json!({"type": "review_queued", "review_id": "r1"})
        );
        assert_eq!(
            payload(event(Some("lagged"), "3")),
            json!({"type": "lagged", "missed": 3})
        );
        assert_eq!(payload(event(None, "not json")), json!({"type": "lagged"}));
    }

    #[test]
    fn host_state_serialises_with_a_state_tag() {
        let failed = HostState::Failed {
            message: "port taken".into(),
        };
        assert_eq!(
            serde_json::to_value(failed).unwrap(),
            json!({"state": "failed", "message": "port taken"})
        );
        assert_eq!(
            serde_json::to_value(HostState::Running).unwrap(),
            json!({"state": "running"})
        );
    }

    #[test]
    fn the_cell_reports_only_changes() {
        let cell = HostCell::default();
        assert_eq!(cell.get(), HostState::Starting);
        assert!(cell.set(&HostState::Running));
        assert!(!cell.set(&HostState::Running));
        assert_eq!(cell.get(), HostState::Running);
    }
}
