//! Forwards the engine's events to the window, the tray and the notifications.
//!
//! Invariant: nothing here polls. Each engine event is emitted to the window as
//! [`ENGINE_EVENT`] (the UI re-reads what it shows), wakes the tray's updater, and may become one
//! notification. A listener that falls behind gets `{"type":"lagged"}` instead of the events it
//! missed: an event is a hint to refresh, never the state itself.

use lull::events::EngineEvent;
use serde_json::json;
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Emitter as _};
use tokio::sync::broadcast::{self, error::RecvError};

use crate::{notify, tray};

/// The event the window listens to: one engine event, as JSON (`{"type":"review_queued",…}`).
pub const ENGINE_EVENT: &str = "engine-event";

/// Starts forwarding `events` until the engine stops; abort the handle to stop sooner.
pub fn forward(app: AppHandle, mut events: broadcast::Receiver<EngineEvent>) -> JoinHandle<()> {
    tauri::async_runtime::spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "the desktop fell behind the engine's events");
                    emit(&app, json!({ "type": "lagged", "missed": missed }));
                    tray::refresh(&app);
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            emit(&app, &event);
            notify::on_event(&app, &event);
            if event == EngineEvent::EngineStopping {
                return;
            }
            tray::refresh(&app);
        }
    })
}

fn emit(app: &AppHandle, payload: impl serde::Serialize + Clone) {
    if let Err(error) = app.emit(ENGINE_EVENT, payload) {
        tracing::warn!(%error, "cannot forward an engine event to the window");
    }
}
