//! Commands of the "drafts" domain. Each only delegates; see `COMMAND_NAMES`.
//!
//! The engine decides everything: what is approvable, what an edit's check finds, why an
//! *Approve* is refused (`approval_refused`, with a message for the person).

use lull::drafts::records::DraftStatus;
use lull::drafts::service::DraftView;
use tauri::State;

use crate::error::CommandError;
use crate::host::EngineHost;

/// Drafts, waiting ones first, optionally of one status (`GET /v1/drafts?status=`).
#[tauri::command]
pub async fn list_drafts(
    host: State<'_, EngineHost>,
    status: Option<DraftStatus>,
) -> Result<Vec<DraftView>, CommandError> {
    Ok(host.engine()?.drafts(status).await?)
}

/// One draft with its diff, findings and evaluation (`GET /v1/drafts/{id}`).
#[tauri::command]
pub async fn get_draft(host: State<'_, EngineHost>, id: String) -> Result<DraftView, CommandError> {
    Ok(host.engine()?.draft(&id).await?)
}

/// Writes the draft's skill into the skills directory: the person clicked *Approve*
/// (`POST /v1/drafts/{id}/approve`). Refused with `approval_refused` and the reason.
#[tauri::command]
pub async fn approve_draft(
    host: State<'_, EngineHost>,
    id: String,
) -> Result<DraftView, CommandError> {
    Ok(host.engine()?.approve_draft(&id).await?)
}

/// Rejects the draft with the person's reason (`POST /v1/drafts/{id}/reject`).
#[tauri::command]
pub async fn reject_draft(
    host: State<'_, EngineHost>,
    id: String,
    reason: String,
) -> Result<DraftView, CommandError> {
    Ok(host.engine()?.reject_draft(&id, &reason).await?)
}

/// Replaces the draft's SKILL.md with the person's edit, which the engine checks again
/// (`POST /v1/drafts/{id}/edit`). The UI sends `skillMd`; Tauri maps it to `skill_md`.
#[tauri::command]
pub async fn edit_draft(
    host: State<'_, EngineHost>,
    id: String,
    skill_md: String,
) -> Result<DraftView, CommandError> {
    Ok(host.engine()?.edit_draft(&id, &skill_md).await?)
}

/// Dismisses the draft's safety finding number `index` with the person's reason
/// (`POST /v1/drafts/{id}/findings/{n}/dismiss`).
#[tauri::command]
pub async fn dismiss_finding(
    host: State<'_, EngineHost>,
    id: String,
    index: usize,
    reason: String,
) -> Result<DraftView, CommandError> {
    Ok(host.engine()?.dismiss_finding(&id, index, &reason).await?)
}
