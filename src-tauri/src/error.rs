//! The one error shape every command returns to the UI: `{"code": "snake_case", "message": "…"}`.
//!
//! A command that asks the engine fails with the API's own code and message, read by
//! `lull::client::ClientError::{code, message}`, the same words the CLI and an agent read: the
//! codes are mapped once, in the engine's API, for HTTP and IPC alike. An engine that is not
//! there is `engine_unavailable` (the client's code). Only the window's own work (the login
//! item) has a code of its own.

use lull::client::ClientError;
use lull::error_code::ErrorCode;
use serde::Serialize;

/// A command's failure, as the UI receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandError {
    /// Machine-readable, `snake_case` on the wire: the API's codes, `engine_unavailable`, or
    /// `autostart_failed` (the window's own).
    pub code: ErrorCode,
    /// What happened and, where it helps, what to do.
    pub message: String,
}

impl CommandError {
    /// An error with the given code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> CommandError {
        CommandError {
            code,
            message: message.into(),
        }
    }
}

impl From<ClientError> for CommandError {
    fn from(error: ClientError) -> CommandError {
        CommandError::new(error.code(), error.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_the_api_code_and_message() {
        let refused = ClientError::Refused {
            status: 409,
            code: ErrorCode::ApprovalRefused,
            message: "the skill's file changed on disk".into(),
        };
        assert_eq!(
            CommandError::from(refused),
            CommandError::new(
                ErrorCode::ApprovalRefused,
                "the skill's file changed on disk"
            )
        );
        let missing = ClientError::NotRunning("no Lull engine is running for /d".into());
        assert_eq!(
            CommandError::from(missing),
            CommandError::new(
                ErrorCode::EngineUnavailable,
                "no Lull engine is running for /d"
            )
        );
    }

    #[test]
    fn serialises_as_code_and_message() {
        let error = CommandError::new(ErrorCode::NotFound, "no draft d1");
        assert_eq!(
            serde_json::to_value(error).unwrap(),
            serde_json::json!({"code": "not_found", "message": "no draft d1"})
        );
    }
}
