//! Request guards that run before any handler: `Host`, `Origin`, body length and bearer token.
//!
//! The API listens on loopback only, but a web page in the person's browser can still reach
//! loopback: the `Origin` check stops cross-site requests, the `Host` check stops DNS rebinding
//! (a hostile name that resolves to 127.0.0.1), and the token stops everything else.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::{body_too_large, ApiError};
use super::MAX_BODY_BYTES;
use crate::error_code::ErrorCode;

/// Origins of the desktop app's own webview, the only browser origins allowed.
const APP_ORIGINS: &[&str] = &[
    "tauri://localhost",
    "http://tauri.localhost",
    "https://tauri.localhost",
];

/// What the guards compare against.
#[derive(Clone)]
pub struct Guard {
    /// The bearer token.
    pub token: Arc<str>,
    /// Accepted `Host` header values, e.g. `127.0.0.1:7707` and `localhost:7707`.
    pub allowed_hosts: Arc<[String]>,
}

impl Guard {
    /// Hosts a loopback listener on `addr` can legitimately be called by.
    pub fn hosts_for(addr: std::net::SocketAddr) -> Vec<String> {
        let port = addr.port();
        let literal = match addr {
            std::net::SocketAddr::V4(v4) => v4.ip().to_string(),
            std::net::SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
        };
        vec![format!("{literal}:{port}"), format!("localhost:{port}")]
    }
}

/// Refuses requests whose `Host` or `Origin` is not ours, and bodies that announce too many bytes.
pub async fn check_host_origin_length(
    State(guard): State<Guard>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !guard
        .allowed_hosts
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(host))
    {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::HostNotAllowed,
            format!(
                "Host `{host}` is not this engine's loopback address; call it as {}",
                guard.allowed_hosts[0]
            ),
        )
        .into_response();
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !APP_ORIGINS.contains(&origin) {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::OriginNotAllowed,
                format!("requests from origin `{origin}` are refused: only local agents and the Lull app may call"),
            )
            .into_response();
        }
    }
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared_length.is_some_and(|length| length > MAX_BODY_BYTES) {
        return body_too_large().into_response();
    }
    next.run(request).await
}

/// Refuses requests without the right bearer token.
pub async fn require_token(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    match presented {
        Some(token) if constant_time_eq(token.as_bytes(), guard.token.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => unauthorized("the bearer token is wrong; read it from <data_dir>/api-token"),
        None => unauthorized(
            "send `Authorization: Bearer <token>`; the token is in <data_dir>/api-token",
        ),
    }
}

/// The token of an `Authorization: Bearer <token>` value. The scheme is matched without regard
/// to case (RFC 7235 §2.1: `bearer`, `BEARER` are the same scheme); one or more spaces follow it.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_start_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn unauthorized(message: &str) -> Response {
    let mut response =
        ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// Compares without an early exit, so timing does not reveal how much of a guess was right.
/// `subtle` keeps the compiler from turning the comparison back into one that stops at the
/// first difference (a hand-written fold has no such guarantee). Only the length may show, and
/// every token Lull makes has the same length.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    bool::from(subtle::ConstantTimeEq::ct_eq(a, b))
}

#[cfg(test)]
mod tests {
    use super::{bearer_token, constant_time_eq};

    #[test]
    fn the_token_comparison_accepts_only_the_same_bytes() {
        let token = b"5f2c0a9e";
        assert!(constant_time_eq(token, b"5f2c0a9e"));
        for guess in [&b"5f2c0a9f"[..], b"0f2c0a9e", b"5f2c0a9", b"5f2c0a9e0", b""] {
            assert!(!constant_time_eq(token, guess), "{guess:?}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_matched_without_regard_to_case() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "bEaReR   t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearert0k", "Bearer", "Bearer ", "t0k"] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }
}
