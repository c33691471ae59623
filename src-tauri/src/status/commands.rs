//! Commands of the "status" domain. Each only delegates; see `COMMAND_NAMES`.

use lull::Status;
use tauri::State;

use crate::error::CommandError;
use crate::host::EngineHost;

/// What the engine is doing now (`GET /v1/status`). Fails with `engine_starting` or
/// `engine_unavailable` (the message says why) while no engine runs.
#[tauri::command]
pub async fn engine_status(host: State<'_, EngineHost>) -> Result<Status, CommandError> {
    Ok(host.engine()?.status().await?)
}
