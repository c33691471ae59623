//! Commands of the "jobs" domain: each is one call of the local API; see `COMMAND_NAMES`.
//!
//! The engine decides everything: whether a job can be resumed (its checkpoint chain is
//! verified: `checkpoint_chain_broken`, `checkpoint_missing`, `dataset_changed`) or promoted
//! (`job_not_promotable`). Each action answers the job as the API does.

use serde_json::{json, Value};
use tauri::State;

use crate::error::CommandError;
use crate::link::{segment, EngineLink};

/// Starts a training run of a routing head with the UI's stopping policy, passed on as it came
/// (the API checks it): `POST /v1/jobs` with `{"kind": "routing-head", "stopping"}`.
#[tauri::command]
pub async fn start_job(
    engine: State<'_, EngineLink>,
    stopping: Value,
) -> Result<Value, CommandError> {
    let body = json!({ "kind": "routing-head", "stopping": stopping });
    Ok(engine.post("/v1/jobs", body).await?)
}

/// Training runs, newest first: `GET /v1/jobs`, its `jobs`.
#[tauri::command]
pub async fn list_jobs(engine: State<'_, EngineLink>) -> Result<Value, CommandError> {
    Ok(engine.get_list("/v1/jobs", "jobs").await?)
}

/// One run with its receipts and checkpoints: `GET /v1/jobs/{id}`.
#[tauri::command]
pub async fn get_job(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    Ok(engine.get(&format!("/v1/jobs/{}", segment(&id)?)).await?)
}

/// Stops a run at once, keeping its committed rounds: `POST /v1/jobs/{id}/cancel`.
#[tauri::command]
pub async fn cancel_job(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    job_action(&engine, &id, "cancel").await
}

/// Continues an interrupted or budget-exhausted run: `POST /v1/jobs/{id}/resume`.
#[tauri::command]
pub async fn resume_job(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    job_action(&engine, &id, "resume").await
}

/// Makes a finished run's head the live one: `POST /v1/jobs/{id}/promote`.
#[tauri::command]
pub async fn promote_job(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    job_action(&engine, &id, "promote").await
}

/// `POST /v1/jobs/{id}/{action}` with no body.
async fn job_action(engine: &EngineLink, id: &str, action: &str) -> Result<Value, CommandError> {
    let path = format!("/v1/jobs/{}/{action}", segment(id)?);
    Ok(engine.request(reqwest::Method::POST, &path, None).await?)
}
