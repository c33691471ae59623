//! Commands of the "jobs" domain. Each only delegates; see `COMMAND_NAMES`.
//!
//! The engine decides everything: whether a job can be resumed (its checkpoint chain is
//! verified: `checkpoint_chain_broken`, `checkpoint_missing`, `dataset_changed`) or promoted
//! (`job_not_promotable`).

use lull::jobs::records::Stopping;
use lull::jobs::service::JobView;
use tauri::State;

use crate::error::CommandError;
use crate::host::EngineHost;

/// Starts a training run of a routing head (`POST /v1/jobs`).
#[tauri::command]
pub async fn start_job(
    host: State<'_, EngineHost>,
    stopping: Stopping,
) -> Result<JobView, CommandError> {
    Ok(host.engine()?.start_job(stopping).await?)
}

/// Training runs, newest first (`GET /v1/jobs`).
#[tauri::command]
pub async fn list_jobs(host: State<'_, EngineHost>) -> Result<Vec<JobView>, CommandError> {
    Ok(host.engine()?.jobs().await?)
}

/// One run with its receipts and checkpoints (`GET /v1/jobs/{id}`).
#[tauri::command]
pub async fn get_job(host: State<'_, EngineHost>, id: String) -> Result<JobView, CommandError> {
    Ok(host.engine()?.job(&id).await?)
}

/// Stops a run at once, keeping its committed rounds (`POST /v1/jobs/{id}/cancel`).
#[tauri::command]
pub async fn cancel_job(host: State<'_, EngineHost>, id: String) -> Result<JobView, CommandError> {
    Ok(host.engine()?.cancel_job(&id).await?)
}

/// Continues an interrupted or budget-exhausted run (`POST /v1/jobs/{id}/resume`).
#[tauri::command]
pub async fn resume_job(host: State<'_, EngineHost>, id: String) -> Result<JobView, CommandError> {
    Ok(host.engine()?.resume_job(&id).await?)
}

/// Makes a finished run's head the live one (`POST /v1/jobs/{id}/promote`).
#[tauri::command]
pub async fn promote_job(host: State<'_, EngineHost>, id: String) -> Result<JobView, CommandError> {
    Ok(host.engine()?.promote_job(&id).await?)
}
