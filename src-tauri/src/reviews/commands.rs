//! Commands of the "reviews" domain: each is one call of the local API; see `COMMAND_NAMES`.

use serde_json::Value;
use tauri::State;

use crate::error::CommandError;
use crate::link::{segment, with_status, EngineLink};

/// Reviews, newest first, optionally of one status: `GET /v1/reviews?status=`, its `reviews`.
#[tauri::command]
pub async fn list_reviews(
    engine: State<'_, EngineLink>,
    status: Option<String>,
) -> Result<Value, CommandError> {
    let path = with_status("/v1/reviews", status.as_deref())?;
    Ok(engine.get_list(&path, "reviews").await?)
}

/// Runs a queued review now, whatever the gate says: `POST /v1/reviews/{id}/run-now`.
#[tauri::command]
pub async fn run_review_now(
    engine: State<'_, EngineLink>,
    id: String,
) -> Result<Value, CommandError> {
    let path = format!("/v1/reviews/{}/run-now", segment(&id)?);
    Ok(engine.request(reqwest::Method::POST, &path, None).await?)
}

/// Drops a queued review: `DELETE /v1/reviews/{id}`.
#[tauri::command]
pub async fn drop_review(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    let path = format!("/v1/reviews/{}", segment(&id)?);
    Ok(engine.request(reqwest::Method::DELETE, &path, None).await?)
}
