//! Commands of the "reviews" domain. Each only delegates; see `COMMAND_NAMES`.

use lull::reviews::{Review, ReviewStatus};
use tauri::State;

use crate::error::CommandError;
use crate::host::EngineHost;

/// Reviews, newest first, optionally of one status (`GET /v1/reviews?status=`).
#[tauri::command]
pub async fn list_reviews(
    host: State<'_, EngineHost>,
    status: Option<ReviewStatus>,
) -> Result<Vec<Review>, CommandError> {
    Ok(host.engine()?.reviews(status).await?)
}

/// Runs a queued review now, whatever the gate says (`POST /v1/reviews/{id}/run-now`).
#[tauri::command]
pub async fn run_review_now(host: State<'_, EngineHost>, id: String) -> Result<(), CommandError> {
    Ok(host.engine()?.run_review_now(&id).await?)
}

/// Drops a queued review (`DELETE /v1/reviews/{id}`).
#[tauri::command]
pub async fn drop_review(host: State<'_, EngineHost>, id: String) -> Result<(), CommandError> {
    Ok(host.engine()?.drop_review(&id).await?)
}
