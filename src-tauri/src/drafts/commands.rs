//! Commands of the "drafts" domain: each is one call of the local API; see `COMMAND_NAMES`.
//!
//! The engine decides everything: what is approvable, what an edit's check finds, why an
//! *Approve* is refused (`approval_refused`, with a message for the person). Each action
//! answers the draft as the API does.

use serde_json::{json, Value};
use tauri::State;

use crate::error::CommandError;
use crate::link::{segment, with_status, EngineLink};

/// Drafts, waiting ones first, optionally of one status: `GET /v1/drafts?status=`, its `drafts`.
#[tauri::command]
pub async fn list_drafts(
    engine: State<'_, EngineLink>,
    status: Option<String>,
) -> Result<Value, CommandError> {
    let path = with_status("/v1/drafts", status.as_deref())?;
    Ok(engine.get_list(&path, "drafts").await?)
}

/// One draft with its diff, findings and evaluation: `GET /v1/drafts/{id}`.
#[tauri::command]
pub async fn get_draft(engine: State<'_, EngineLink>, id: String) -> Result<Value, CommandError> {
    Ok(engine.get(&format!("/v1/drafts/{}", segment(&id)?)).await?)
}

/// Writes the draft's skill into the skills directory, the person having clicked *Approve*:
/// `POST /v1/drafts/{id}/approve` with `{}`.
#[tauri::command]
pub async fn approve_draft(
    engine: State<'_, EngineLink>,
    id: String,
) -> Result<Value, CommandError> {
    let path = format!("/v1/drafts/{}/approve", segment(&id)?);
    Ok(engine.post(&path, json!({})).await?)
}

/// Rejects the draft with the person's reason: `POST /v1/drafts/{id}/reject`.
#[tauri::command]
pub async fn reject_draft(
    engine: State<'_, EngineLink>,
    id: String,
    reason: String,
) -> Result<Value, CommandError> {
    let path = format!("/v1/drafts/{}/reject", segment(&id)?);
    Ok(engine.post(&path, json!({ "reason": reason })).await?)
}

/// Replaces the draft's SKILL.md with the person's edit, which the engine checks again:
/// `POST /v1/drafts/{id}/edit`. The UI sends `skillMd`; Tauri maps it to `skill_md`.
#[tauri::command]
pub async fn edit_draft(
    engine: State<'_, EngineLink>,
    id: String,
    skill_md: String,
) -> Result<Value, CommandError> {
    let path = format!("/v1/drafts/{}/edit", segment(&id)?);
    Ok(engine.post(&path, json!({ "skill_md": skill_md })).await?)
}

/// Dismisses the draft's safety finding number `index` with the person's reason:
/// `POST /v1/drafts/{id}/findings/{index}/dismiss`.
#[tauri::command]
pub async fn dismiss_finding(
    engine: State<'_, EngineLink>,
    id: String,
    index: u32,
    reason: String,
) -> Result<Value, CommandError> {
    let path = format!("/v1/drafts/{}/findings/{index}/dismiss", segment(&id)?);
    Ok(engine.post(&path, json!({ "reason": reason })).await?)
}
