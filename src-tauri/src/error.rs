//! The one error shape every command returns to the UI: `{"code": "snake_case", "message": "…"}`.
//!
//! The codes mirror the local API's (`src/api/error.rs`), so the UI and an agent read the same
//! words for the same failure, plus two of the desktop's own for an engine that is not running.

use lull::store::StoreError;
use lull::EngineError;
use serde::Serialize;

/// A command's failure, as the UI receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandError {
    /// Machine-readable, `snake_case`; see the constants below and the API's codes.
    pub code: &'static str,
    /// What happened and, where it helps, what to do.
    pub message: String,
}

impl CommandError {
    /// The engine is still opening its database (the app just started).
    pub const ENGINE_STARTING: &'static str = "engine_starting";
    /// The engine failed to start or stopped; the message says why.
    pub const ENGINE_UNAVAILABLE: &'static str = "engine_unavailable";

    /// An error with the given code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> CommandError {
        CommandError {
            code,
            message: message.into(),
        }
    }
}

impl From<EngineError> for CommandError {
    /// The same codes as the API's `From<EngineError> for ApiError`.
    fn from(error: EngineError) -> CommandError {
        let message = error.to_string();
        let code = match error {
            EngineError::Invalid(_) => "invalid_request",
            EngineError::NotFound(_) => "not_found",
            EngineError::Conflict(_) => "conflict",
            EngineError::ApprovalRefused(_) => "approval_refused",
            EngineError::Refused { code, .. } => code,
            EngineError::Store(StoreError::Closed) => "shutting_down",
            EngineError::Store(_) | EngineError::Startup(_) => "internal",
        };
        CommandError::new(code, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_the_api_codes_and_messages() {
        let check = |error: EngineError, code: &'static str| {
            let message = error.to_string();
            assert_eq!(CommandError::from(error), CommandError { code, message });
        };
        check(EngineError::Invalid("bad".into()), "invalid_request");
        check(EngineError::NotFound("no review".into()), "not_found");
        check(EngineError::Conflict("running".into()), "conflict");
        check(EngineError::Store(StoreError::Closed), "shutting_down");
        check(EngineError::Startup("disk".into()), "internal");
    }

    #[test]
    fn serialises_as_code_and_message() {
        let error = CommandError::new(CommandError::ENGINE_STARTING, "starting");
        assert_eq!(
            serde_json::to_value(error).unwrap(),
            serde_json::json!({"code": "engine_starting", "message": "starting"})
        );
    }
}
