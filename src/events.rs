//! Typed engine events, broadcast in-process.
//!
//! Every state change the person might want to see becomes one [`EngineEvent`]. The API streams
//! them as server-sent events (`GET /v1/events`) and the desktop shell turns some into tray
//! updates and notifications. Slow listeners lose old events rather than slow the engine down:
//! an event is a hint to refresh, and the current state is always one status request away.

use serde::Serialize;
use tokio::sync::broadcast;

use crate::settings::Settings;

/// Events kept for a listener that falls behind before it starts missing some.
const EVENT_BACKLOG: usize = 256;

/// Something that happened in the engine, serialised as `{"type":"snake_case_name",…}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    /// The engine finished starting.
    EngineStarted {
        /// Lull's version.
        version: String,
        /// This start's generation number.
        generation: i64,
    },
    /// The engine is stopping.
    EngineStopping,
    /// The person (or an agent) changed the run-time settings.
    SettingsChanged {
        /// The settings now in force.
        settings: Settings,
    },
}

/// The engine's event broadcaster; clone it freely.
#[derive(Clone)]
pub struct EventBus {
    sender: broadcast::Sender<EngineEvent>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            sender: broadcast::channel(EVENT_BACKLOG).0,
        }
    }
}

impl EventBus {
    /// Sends `event` to every current listener; with no listener it is simply dropped.
    pub fn emit(&self, event: EngineEvent) {
        tracing::debug!(?event, "engine event");
        let _ = self.sender.send(event);
    }

    /// A new listener that sees events emitted from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.sender.subscribe()
    }
}
