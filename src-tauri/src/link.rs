//! The window's one way to the engine: its local API, through `lull::client::EngineClient`.
//!
//! Invariant: this process hosts no engine and keeps no copy of its data; every command asks
//! the API and hands its JSON answer to the UI as it came. [`EngineLink`] connects once (the
//! token and `api.json` of the data folder, as the CLI does) and connects again when `api.json`
//! changed (the engine restarted on another port) or the engine stopped answering.
//!
//! Values from the UI go into a route only through [`segment`] and [`query_value`], so an id
//! names one path segment and a filter one query value, never another route.

use std::sync::{Arc, Mutex};

use lull::client::{ClientError, EngineClient};
use lull::error_code::ErrorCode;
use lull::Paths;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::Method;
use serde_json::Value;

/// Everything but RFC 3986's unreserved characters is percent-encoded.
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The most characters an id or a filter may have: far more than any Lull makes (ids are
/// UUIDs, filters one word), and far under the request line the API's HTTP server reads (a
/// longer one is cut off with the connection, which the client would take for an engine gone).
const MAX_VALUE_CHARS: usize = 1024;

/// The link to the engine of one data folder; Tauri managed state, shared with the events task.
#[derive(Clone)]
pub struct EngineLink {
    inner: Arc<Inner>,
}

struct Inner {
    paths: Paths,
    current: Mutex<Option<Connected>>,
}

/// A client and the `api.json` it was made from.
struct Connected {
    api_json: Vec<u8>,
    client: Arc<EngineClient>,
}

impl EngineLink {
    /// A link to the engine that serves `paths.data_dir`; nothing is read until it is used.
    pub fn new(paths: Paths) -> EngineLink {
        EngineLink {
            inner: Arc::new(Inner {
                paths,
                current: Mutex::new(None),
            }),
        }
    }

    /// The client of the engine that serves the data folder now.
    pub fn client(&self) -> Result<Arc<EngineClient>, ClientError> {
        let paths = &self.inner.paths;
        // A missing file reads as empty, which never matches: `connect` then says why.
        let api_json = std::fs::read(paths.api_json()).unwrap_or_default();
        let mut current = self.lock();
        if let Some(connected) = current.as_ref() {
            if !api_json.is_empty() && connected.api_json == api_json {
                return Ok(connected.client.clone());
            }
        }
        *current = None;
        let client = Arc::new(EngineClient::connect(paths)?);
        *current = Some(Connected {
            api_json,
            client: client.clone(),
        });
        Ok(client)
    }

    /// Sends one request to the API; the JSON answer (`null` for none) or its refusal.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ClientError> {
        let client = self.client()?;
        let answer = client.request(method, path, body.as_ref()).await;
        if matches!(answer, Err(ClientError::Unreachable { .. })) {
            self.forget();
        }
        answer
    }

    /// Drops the client and its open connections: the engine went away or is stopping, and the
    /// next request finds out anew whether one runs (a kept-alive connection to an engine
    /// that stops would hold its shutdown open).
    pub fn forget(&self) {
        *self.lock() = None;
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, ClientError> {
        self.request(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Result<Value, ClientError> {
        self.request(Method::POST, path, Some(body)).await
    }

    /// `GET path`, then the list under `field` of its answer (`{"reviews": […]}` → `[…]`).
    pub async fn get_list(&self, path: &str, field: &str) -> Result<Value, ClientError> {
        let mut answer = self.get(path).await?;
        match answer.get_mut(field) {
            Some(list) if list.is_array() => Ok(list.take()),
            _ => Err(ClientError::Garbled {
                url: path.to_owned(),
                detail: format!("the answer has no `{field}` list"),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Connected>> {
        // A panic while holding the lock leaves a client or nothing behind; both are usable.
        self.inner
            .current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `value` as one path segment of a route: percent-encoded, so `a/b` stays one segment. An
/// empty id, `.` and `..` would name another route (URLs resolve dot segments), so they are
/// refused as the API refuses an id it does not know.
pub fn segment(value: &str) -> Result<String, ClientError> {
    if matches!(value, "" | "." | "..") {
        return Err(ClientError::Refused {
            status: 404,
            code: ErrorCode::NotFound,
            message: format!("`{value}` names nothing: an id is never empty, `.` or `..`"),
        });
    }
    let chars = value.chars().count();
    if chars > MAX_VALUE_CHARS {
        return Err(ClientError::Refused {
            status: 404,
            code: ErrorCode::NotFound,
            message: format!(
                "an id of {chars} characters names nothing: ids have at most {MAX_VALUE_CHARS}"
            ),
        });
    }
    Ok(utf8_percent_encode(value, ENCODED).to_string())
}

/// `path`, with `?status=<value>` when a status filter is given.
pub fn with_status(path: &str, status: Option<&str>) -> Result<String, ClientError> {
    match status {
        Some(status) => Ok(format!("{path}?status={}", query_value(status)?)),
        None => Ok(path.to_owned()),
    }
}

/// `value` as one query-string value: percent-encoded, so `&` or `#` cannot add a parameter.
pub fn query_value(value: &str) -> Result<String, ClientError> {
    let chars = value.chars().count();
    if chars > MAX_VALUE_CHARS {
        return Err(ClientError::Refused {
            status: 400,
            code: ErrorCode::InvalidQuery,
            message: format!(
                "a filter of {chars} characters matches nothing: filters have at most \
                 {MAX_VALUE_CHARS}"
            ),
        });
    }
    Ok(utf8_percent_encode(value, ENCODED).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_one_path_segment_whatever_it_holds() {
        assert_eq!(segment("rev-1_a.b~").unwrap(), "rev-1_a.b~");
        assert_eq!(segment("../status").unwrap(), "..%2Fstatus");
        assert_eq!(segment("a b?c#d").unwrap(), "a%20b%3Fc%23d");
        assert_eq!(segment("é").unwrap(), "%C3%A9");
        // What the API's hostile-input matrix sends as a path parameter stays one literal
        // segment: an encoded dot is encoded again, so the API never decodes it into `..`.
        assert_eq!(segment("%2e%2e").unwrap(), "%252e%252e");
        assert_eq!(segment("/etc/passwd").unwrap(), "%2Fetc%2Fpasswd");
        assert_eq!(segment("..\\..").unwrap(), "..%5C..");
        assert_eq!(segment("tool\0").unwrap(), "tool%00");
        assert_eq!(segment("\u{202e}").unwrap(), "%E2%80%AE");
        let longest = "d".repeat(MAX_VALUE_CHARS);
        assert_eq!(segment(&longest).unwrap(), longest);
        for refused in ["", ".", "..", &format!("{longest}d")] {
            let error = segment(refused).unwrap_err();
            assert_eq!(error.code(), ErrorCode::NotFound, "{refused:?}");
        }
    }

    #[test]
    fn a_status_filter_is_one_query_value() {
        assert_eq!(with_status("/v1/reviews", None).unwrap(), "/v1/reviews");
        assert_eq!(
            with_status("/v1/reviews", Some("queued")).unwrap(),
            "/v1/reviews?status=queued"
        );
        assert_eq!(
            with_status("/v1/drafts", Some("a&status=b")).unwrap(),
            "/v1/drafts?status=a%26status%3Db"
        );
        let long = "q".repeat(MAX_VALUE_CHARS + 1);
        let error = with_status("/v1/drafts", Some(&long)).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidQuery);
    }
}
