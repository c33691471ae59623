//! Commands of the "status" domain; see `COMMAND_NAMES`.

use serde_json::Value;
use tauri::State;

use crate::error::CommandError;
use crate::events::{HostCell, HostState};
use crate::link::EngineLink;

/// What the engine is doing now: `GET /v1/status`. Fails with `engine_unavailable` (the
/// message says why) while no engine runs.
#[tauri::command]
pub async fn engine_status(engine: State<'_, EngineLink>) -> Result<Value, CommandError> {
    Ok(engine.get("/v1/status").await?)
}

/// Whether the window reaches the engine now, as the last `engine-host` event said: the UI
/// asks once it listens, so it knows the state even when it missed that event.
#[tauri::command]
pub fn host_state(host: State<'_, HostCell>) -> HostState {
    host.get()
}
