//! Commands of the "settings" domain. Each only delegates; see `COMMAND_NAMES`.

use lull::settings::{Settings, SettingsPatch};
use tauri::State;

use crate::error::CommandError;
use crate::host::EngineHost;

/// The settings in force (`GET /v1/settings`).
#[tauri::command]
pub async fn get_settings(host: State<'_, EngineHost>) -> Result<Settings, CommandError> {
    Ok(host.engine()?.settings())
}

/// Changes some settings and returns all of them (`PATCH /v1/settings`).
#[tauri::command]
pub async fn update_settings(
    host: State<'_, EngineHost>,
    patch: SettingsPatch,
) -> Result<Settings, CommandError> {
    Ok(host.engine()?.update_settings(patch).await?)
}
