//! Every refusal's machine-readable code, in one list. The API answers them
//! (`{"error":{"code",…}}`, [`crate::api::ApiError`]), [`crate::client::ClientError::code`] reads
//! them back and adds its own for an engine that is not there, the desktop window passes them on
//! over IPC, and the window's TypeScript union of them is generated from this enum, so a code
//! cannot be spelled two ways.

use std::fmt;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Why a request did not get its answer, as a program reads it (`snake_case` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The body is not JSON (400).
    MalformedJson,
    /// The body is JSON but not what the route takes; the message names the field (422).
    InvalidBody,
    /// The body was sent without `Content-Type: application/json` (415).
    UnsupportedMediaType,
    /// The body is larger than the API takes (413).
    BodyTooLarge,
    /// The query string does not parse (400).
    InvalidQuery,
    /// Any other request the API cannot read (400).
    BadRequest,
    /// No such route, or the thing it names does not exist (404).
    NotFound,
    /// The route does not take that method (405).
    MethodNotAllowed,
    /// No bearer token, or the wrong one (401).
    Unauthorized,
    /// The `Host` header is not the engine's loopback address (403).
    HostNotAllowed,
    /// The `Origin` header is not a local agent's or the Lull app's (403).
    OriginNotAllowed,
    /// Well-formed, but it asks for something invalid (422).
    InvalidRequest,
    /// It conflicts with the current state (409).
    Conflict,
    /// *Approve* (or a rollback) cannot go ahead; the message says why and what to do (409).
    ApprovalRefused,
    /// Only an interrupted or budget-exhausted job, not running, can be resumed (409).
    JobNotResumable,
    /// Only a finished job with an artifact, not promoted yet, can be promoted (409).
    JobNotPromotable,
    /// A committed round of the job has no checkpoint (409).
    CheckpointMissing,
    /// A checkpoint does not match its digest or its parent link (409).
    CheckpointChainBroken,
    /// The outcomes a job trains on changed since it was admitted (409).
    DatasetChanged,
    /// Too few logged outcomes to train and measure a head on (409).
    NoData,
    /// The engine is stopping and its database is closed (503).
    ShuttingDown,
    /// The disk holding the data or skills folder is full; the message names the folder.
    /// Nothing was recorded or written (507).
    StorageFull,
    /// Lull's own failure, or an answer that is not what the API documents (500).
    Internal,
    /// No engine serves the data folder, or it went away: the client's own code.
    EngineUnavailable,
    /// The engine is still opening its database: the desktop window's own code.
    EngineStarting,
    /// The login item could not be read, written or removed: the desktop window's own code.
    AutostartFailed,
}

impl ErrorCode {
    /// Every code, in the order of the enum: the TypeScript list is rendered from it.
    pub const ALL: [ErrorCode; 26] = [
        ErrorCode::MalformedJson,
        ErrorCode::InvalidBody,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::BodyTooLarge,
        ErrorCode::InvalidQuery,
        ErrorCode::BadRequest,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Unauthorized,
        ErrorCode::HostNotAllowed,
        ErrorCode::OriginNotAllowed,
        ErrorCode::InvalidRequest,
        ErrorCode::Conflict,
        ErrorCode::ApprovalRefused,
        ErrorCode::JobNotResumable,
        ErrorCode::JobNotPromotable,
        ErrorCode::CheckpointMissing,
        ErrorCode::CheckpointChainBroken,
        ErrorCode::DatasetChanged,
        ErrorCode::NoData,
        ErrorCode::ShuttingDown,
        ErrorCode::StorageFull,
        ErrorCode::Internal,
        ErrorCode::EngineUnavailable,
        ErrorCode::EngineStarting,
        ErrorCode::AutostartFailed,
    ];

    /// The wire spelling, e.g. `"not_found"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MalformedJson => "malformed_json",
            ErrorCode::InvalidBody => "invalid_body",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::BodyTooLarge => "body_too_large",
            ErrorCode::InvalidQuery => "invalid_query",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::HostNotAllowed => "host_not_allowed",
            ErrorCode::OriginNotAllowed => "origin_not_allowed",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::Conflict => "conflict",
            ErrorCode::ApprovalRefused => "approval_refused",
            ErrorCode::JobNotResumable => "job_not_resumable",
            ErrorCode::JobNotPromotable => "job_not_promotable",
            ErrorCode::CheckpointMissing => "checkpoint_missing",
            ErrorCode::CheckpointChainBroken => "checkpoint_chain_broken",
            ErrorCode::DatasetChanged => "dataset_changed",
            ErrorCode::NoData => "no_data",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::StorageFull => "storage_full",
            ErrorCode::Internal => "internal",
            ErrorCode::EngineUnavailable => "engine_unavailable",
            ErrorCode::EngineStarting => "engine_starting",
            ErrorCode::AutostartFailed => "autostart_failed",
        }
    }

    /// The code a wire spelling names; `None` for one this version does not know.
    pub fn parse(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|known| known.as_str() == code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    #[test]
    fn every_code_is_listed_once_and_spelled_as_serde_spells_it() {
        for (index, code) in ErrorCode::ALL.into_iter().enumerate() {
            let wire = serde_json::to_value(code).unwrap();
            assert_eq!(wire, code.as_str(), "{code:?}");
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            assert_eq!(
                ErrorCode::ALL.iter().position(|other| *other == code),
                Some(index),
                "{code:?} is listed twice"
            );
        }
        assert_eq!(ErrorCode::parse("no_such_code"), None);
    }
}
