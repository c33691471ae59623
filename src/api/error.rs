//! The one error shape of the API: `{"error":{"code":"snake_case","message":"…"}}`.

use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::unique_keys::UniqueKeys;
use crate::engine::EngineError;
use crate::error_code::ErrorCode;

/// An error on its way to the client.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Machine-readable code.
    pub code: ErrorCode,
    /// What happened and, where it helps, what to do.
    pub message: String,
}

/// The body of every error answer: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// An error's code and message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ErrorDetail {
    /// What a program acts on.
    pub code: ErrorCode,
    /// What happened and, where it helps, what to do, for the person.
    pub message: String,
}

impl ApiError {
    /// An error with the given status, code and message.
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

/// An engine error answers with its [`EngineError::code`], and the HTTP status of that code's
/// kind: an invalid request, a missing thing, a closed engine, Lull's own failure, or else a
/// conflict with the state.
impl From<EngineError> for ApiError {
    fn from(err: EngineError) -> ApiError {
        let code = err.code();
        let status = match code {
            ErrorCode::InvalidRequest => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::CONFLICT,
        };
        ApiError::new(status, code, err.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> ApiError {
        let message = rejection.body_text();
        match rejection {
            // The body is read as a JSON value first ([`ApiJson`]), which takes any shape: the
            // only "data" error of that read is the document's own, a key given twice.
            JsonRejection::JsonSyntaxError(_) | JsonRejection::JsonDataError(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::MalformedJson, message)
            }
            JsonRejection::MissingJsonContentType(_) => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType,
                "send the body as JSON with `Content-Type: application/json`",
            ),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => body_too_large(),
            other => ApiError::new(other.status(), ErrorCode::BadRequest, message),
        }
    }
}

/// The 413 answer, shared by the up-front length check and the extractor.
pub fn body_too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::BodyTooLarge,
        format!(
            "request body is larger than {} bytes",
            super::MAX_BODY_BYTES
        ),
    )
}

/// A JSON body extractor whose failures use the API's error shape.
///
/// The body is first read as any JSON value whose objects hold each key once (failure: 400
/// `malformed_json`), then shaped into `T`, from an object only (failure: 422 `invalid_body`,
/// naming the offending field). Doing it in two steps keeps the split exact: serde_json
/// reports some type mismatches, such as a number where an enum's name belongs, as syntax
/// errors.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(UniqueKeys(value)) =
            <axum::Json<UniqueKeys> as FromRequest<S>>::from_request(request, state).await?;
        // Every body of the API is an object. serde would also read a struct from an array of
        // its fields in order (`["chat-42"]`, or `[]` for an action that takes no options), a
        // shape no client sends and nobody means: refused rather than guessed at.
        if !value.is_object() {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                ErrorCode::InvalidBody,
                format!(
                    "the body: expected a JSON object, got {}",
                    json_kind(&value)
                ),
            ));
        }
        serde_path_to_error::deserialize(value)
            .map(ApiJson)
            .map_err(|err| {
                // serde_path_to_error names the body itself `.` (a missing field, a wrong type).
                let path = err.path().to_string();
                let place = if path == "." {
                    "the body".to_string()
                } else {
                    format!("field `{path}`")
                };
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ErrorCode::InvalidBody,
                    format!("{place}: {}", err.into_inner()),
                )
            })
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// `Option<ApiJson<T>>`, for a route whose body may be left out (*Approve*'s `{}`): an empty
/// body is `None`, whatever its `Content-Type` says (`curl -X POST` with the README's headers
/// sends one), and any other body is read exactly as [`ApiJson`] reads it.
impl<S, T> OptionalFromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let (parts, body) = request.into_parts();
        // The parts go along, so the body limit in their extensions holds for this read too.
        let bytes = Bytes::from_request(Request::from_parts(parts.clone(), body), state).await?;
        if bytes.is_empty() {
            return Ok(None);
        }
        let request = Request::from_parts(parts, Body::from(bytes));
        <ApiJson<T> as FromRequest<S>>::from_request(request, state)
            .await
            .map(Some)
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> ApiError {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return body_too_large();
        }
        ApiError::new(
            rejection.status(),
            ErrorCode::BadRequest,
            rejection.body_text(),
        )
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::InvalidQuery,
            rejection.body_text(),
        )
    }
}

/// A query-string extractor whose failures use the API's error shape.
#[derive(axum::extract::FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);

/// A path parameter that does not parse (an index that is not a number, an id that is not
/// UTF-8) names nothing: 404, in the one error shape. A route that does not match its
/// extractor is Lull's bug, and says so.
impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        if rejection.status().is_server_error() {
            return ApiError::new(
                rejection.status(),
                ErrorCode::Internal,
                rejection.body_text(),
            );
        }
        ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            format!(
                "{}: the path names nothing; see the API table in the README",
                rejection.body_text()
            ),
        )
    }
}

/// A path-parameter extractor whose failures use the API's error shape.
#[derive(axum::extract::FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);
