//! Commands of the "settings" domain: each is one call of the local API; see `COMMAND_NAMES`.

use serde_json::Value;
use tauri::State;

use crate::error::CommandError;
use crate::link::EngineLink;

/// The settings in force: `GET /v1/settings`.
#[tauri::command]
pub async fn get_settings(engine: State<'_, EngineLink>) -> Result<Value, CommandError> {
    Ok(engine.get("/v1/settings").await?)
}

/// Changes some settings and returns all of them: `PATCH /v1/settings` with the UI's patch,
/// passed on as it came (the API checks it).
#[tauri::command]
pub async fn update_settings(
    engine: State<'_, EngineLink>,
    patch: Value,
) -> Result<Value, CommandError> {
    Ok(engine
        .request(reqwest::Method::PATCH, "/v1/settings", Some(patch))
        .await?)
}
