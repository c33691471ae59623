//! The HTTP client of a running engine, found through `api.json` and the token file: JSON
//! requests, and the engine's event stream (`GET /v1/events`, server-sent events) for those that
//! watch something happen. The `lull` CLI and the desktop window are both its users, so an
//! engine's refusal reaches each as the same [`ClientError`]: the API's `{code, message}`.

use std::time::Duration;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::ApiDiscovery;
use crate::error_code::ErrorCode;
use crate::Paths;

/// How long a CLI command waits for the engine before giving up.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the event stream may stay silent before the engine counts as gone: it sends a
/// keep-alive comment every 15 s, so this is a few of those missed.
const EVENT_SILENCE_LIMIT: Duration = Duration::from_secs(60);

/// Why a request to the engine did not get its answer. [`ClientError::code`] is the API's code
/// for a refusal, or one of the client's own for an engine that is not there.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No engine serves this data directory (no `api.json`, its process gone, no token).
    #[error("{0}")]
    NotRunning(String),
    /// The engine did not answer: it stopped, or the connection broke.
    #[error("cannot reach the engine at {url}: {source}")]
    Unreachable {
        /// What was asked.
        url: String,
        /// Why it failed.
        #[source]
        source: reqwest::Error,
    },
    /// The engine answered with an error (`{"error": {"code", "message"}}`).
    #[error("the engine refused ({status}): {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// The API's error code (`not_found`, `approval_refused`, …); `internal` for one this
        /// version does not know.
        code: ErrorCode,
        /// The API's message, for the person.
        message: String,
    },
    /// The engine answered something that is not the JSON it documents.
    #[error("the engine's answer to {url} is not what the API documents: {detail}")]
    Garbled {
        /// What was asked.
        url: String,
        /// What was wrong with it.
        detail: String,
    },
}

impl ClientError {
    /// The machine-readable code: the API's for a refusal, else `engine_unavailable` (the
    /// engine is not there or went away) or `internal` (it answered garbage).
    pub fn code(&self) -> ErrorCode {
        match self {
            ClientError::Refused { code, .. } => *code,
            ClientError::NotRunning(_) | ClientError::Unreachable { .. } => {
                ErrorCode::EngineUnavailable
            }
            ClientError::Garbled { .. } => ErrorCode::Internal,
        }
    }

    /// The message for the person: the API's own for a refusal.
    pub fn message(&self) -> String {
        match self {
            ClientError::Refused { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

/// A connection to the engine of one data directory.
pub struct EngineClient {
    http: reqwest::Client,
    base_url: String,
    token: String,
}

impl EngineClient {
    /// Finds the engine that serves `paths.data_dir`.
    pub fn connect(paths: &Paths) -> Result<EngineClient, ClientError> {
        let not_running = || {
            format!(
                "no Lull engine is running for {}: start one with `lull serve` (or the desktop app)",
                paths.data_dir.display()
            )
        };
        let discovery = ApiDiscovery::read(&paths.api_json())
            .map_err(|error| {
                ClientError::NotRunning(format!(
                    "{} is unreadable: {error}",
                    paths.api_json().display()
                ))
            })?
            .ok_or_else(|| ClientError::NotRunning(not_running()))?;
        if !process_alive(discovery.pid) {
            return Err(ClientError::NotRunning(format!(
                "{} (api.json names pid {}, which is gone)",
                not_running(),
                discovery.pid
            )));
        }
        let token = std::fs::read_to_string(paths.api_token()).map_err(|error| {
            ClientError::NotRunning(format!(
                "cannot read the API token {}: {error}",
                paths.api_token().display()
            ))
        })?;
        // No total timeout on the client: the event stream lasts as long as a job trains.
        // Requests carry their own, and a stream that goes silent fails on the read timeout.
        let http = reqwest::Client::builder()
            .connect_timeout(REQUEST_TIMEOUT)
            .read_timeout(EVENT_SILENCE_LIMIT)
            .build()
            .map_err(|error| ClientError::NotRunning(format!("no HTTP client: {error}")))?;
        Ok(EngineClient {
            http,
            base_url: discovery.base_url,
            token: token.trim().to_string(),
        })
    }

    /// Sends a request and returns the JSON answer (`null` for an empty one), or the API's error.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let url = format!("{}{path}", self.base_url);
        let mut request = self
            .http
            .request(method, &url)
            .bearer_auth(&self.token)
            .timeout(REQUEST_TIMEOUT);
        if let Some(body) = body {
            request = request.json(body);
        }
        let unreachable = |source| ClientError::Unreachable {
            url: url.clone(),
            source,
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let text = response.text().await.map_err(unreachable)?;
        let parsed = if text.is_empty() {
            Ok(Value::Null)
        } else {
            serde_json::from_str::<Value>(&text)
        };
        if !status.is_success() {
            return Err(refusal(status.as_u16(), parsed.ok().as_ref(), text));
        }
        parsed.map_err(|error| ClientError::Garbled {
            url,
            detail: error.to_string(),
        })
    }

    /// `GET path`, its answer read as `T`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let answer = self.request(Method::GET, path, None).await?;
        self.typed(path, answer)
    }

    /// An answer of `path` read as the type the API documents for it; a mismatch is
    /// [`ClientError::Garbled`], naming the field.
    pub fn typed<T: DeserializeOwned>(&self, path: &str, answer: Value) -> Result<T, ClientError> {
        serde_path_to_error::deserialize(answer).map_err(|error| ClientError::Garbled {
            url: format!("{}{path}", self.base_url),
            detail: error.to_string(),
        })
    }

    /// Subscribes to the engine's events. Once this answers, every later event reaches the
    /// stream, so a command subscribes first and then acts, and misses nothing it caused.
    pub async fn events(&self) -> Result<EventStream, ClientError> {
        let url = format!("{}/v1/events", self.base_url);
        let response = self
            .http
            .get(&url)
            .bearer_auth(&self.token)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: url.clone(),
                source,
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(ClientError::Refused {
                status: status.as_u16(),
                code: ErrorCode::Internal,
                message: format!("the engine refused its event stream ({status})"),
            });
        }
        Ok(EventStream {
            response,
            decoder: SseDecoder::default(),
        })
    }
}

/// An error answer as a [`ClientError::Refused`]: the API's code and message, `internal` for a
/// code this version does not know, and the answer's text when it is not the API's error shape.
fn refusal(status: u16, answer: Option<&Value>, text: String) -> ClientError {
    let field = |name: &str| answer.and_then(|answer| answer["error"][name].as_str());
    ClientError::Refused {
        status,
        code: field("code")
            .and_then(ErrorCode::parse)
            .unwrap_or(ErrorCode::Internal),
        message: field("message").map_or(text, str::to_owned),
    }
}

/// The engine's events as they happen (`GET /v1/events`).
pub struct EventStream {
    response: reqwest::Response,
    decoder: SseDecoder,
}

impl EventStream {
    /// The next event; `None` once the engine closed the stream (it stopped).
    pub async fn next(&mut self) -> Result<Option<SseEvent>, ClientError> {
        loop {
            if let Some(event) = self.decoder.next_event() {
                return Ok(Some(event));
            }
            let chunk = self
                .response
                .chunk()
                .await
                .map_err(|source| ClientError::Unreachable {
                    url: "the engine's event stream".to_owned(),
                    source,
                })?;
            match chunk {
                Some(bytes) => self.decoder.push(&bytes),
                None => return Ok(None),
            }
        }
    }
}

/// One server-sent event: the engine's are JSON `data` with no name; a listener that fell
/// behind gets one named `lagged`.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub name: Option<String>,
    /// The `data:` lines, joined by newlines.
    pub data: String,
}

/// Cuts a byte stream into server-sent events (the WHATWG rules the engine's stream needs:
/// `\n` or `\r\n` line ends, `event` and `data` fields, `:` comments as keep-alives, a blank
/// line ending an event), whatever the chunks' boundaries.
#[derive(Debug, Default)]
struct SseDecoder {
    buffer: Vec<u8>,
    name: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    /// Takes the next bytes off the wire.
    fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event in what was pushed so far.
    fn next_event(&mut self) -> Option<SseEvent> {
        while let Some(end) = self.buffer.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                let name = self.name.take();
                if let Some(data) = self.data.take() {
                    return Some(SseEvent { name, data });
                }
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.name = Some(value.to_string()),
                "data" => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                },
                // A comment (the empty field) or a field the engine does not send (`id`, `retry`).
                _ => {}
            }
        }
        None
    }
}

/// `kill(pid, 0)`: does the process exist? (EPERM means it exists but is not ours.)
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 performs only the existence and permission check.
        let result = unsafe { libc::kill(pid, 0) };
        result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{refusal, ClientError, ErrorCode, SseDecoder, SseEvent};

    #[test]
    fn a_refusal_carries_the_apis_code_and_message_or_says_internal() {
        let answer =
            json!({"error": {"code": "job_not_promotable", "message": "promoted already"}});
        let refused = refusal(409, Some(&answer), answer.to_string());
        assert_eq!(refused.code(), ErrorCode::JobNotPromotable);
        assert_eq!(refused.message(), "promoted already");

        let newer = json!({"error": {"code": "a_code_from_later", "message": "said"}});
        let refused = refusal(409, Some(&newer), newer.to_string());
        assert_eq!(
            (refused.code(), refused.message()),
            (ErrorCode::Internal, "said".into())
        );

        let proxy = refusal(502, None, "Bad Gateway".into());
        assert!(matches!(proxy, ClientError::Refused { status: 502, .. }));
        assert_eq!(
            (proxy.code(), proxy.message()),
            (ErrorCode::Internal, "Bad Gateway".into())
        );
    }

    #[test]
    fn events_are_cut_whole_from_any_chunking_and_keep_alives_are_skipped() {
        let stream = ": keep-alive\n\ndata: {\"type\":\"engine_started\"}\n\nevent: lagged\r\ndata: 3\r\n\r\ndata: a\ndata: b\n\n";
        let expected = vec![
            SseEvent {
                name: None,
                data: r#"{"type":"engine_started"}"#.into(),
            },
            SseEvent {
                name: Some("lagged".into()),
                data: "3".into(),
            },
            SseEvent {
                name: None,
                data: "a\nb".into(),
            },
        ];
        for chunk_size in [1, 2, 7, stream.len()] {
            let mut decoder = SseDecoder::default();
            let mut events = Vec::new();
            for chunk in stream.as_bytes().chunks(chunk_size) {
                decoder.push(chunk);
                while let Some(event) = decoder.next_event() {
                    events.push(event);
                }
            }
            assert_eq!(events, expected, "in chunks of {chunk_size}");
        }
        let mut unfinished = SseDecoder::default();
        unfinished.push(b"data: half");
        assert_eq!(
            unfinished.next_event(),
            None,
            "an event ends with a blank line"
        );
    }
}
