//! An OpenAI-compatible chat client that streams, so learning work can be cancelled mid-decode.
//!
//! Cancelling is dropping: when the future returned by [`LlmClient::chat`] is dropped, the
//! response stream and its connection close, and llama-server frees the slot on its next write.
//! The scheduler relies on exactly that for preemption. [`LlmClient`] is a seam: production uses
//! [`HttpLlmClient`], the simulator a modelled server. A caller that must notice another client
//! on the server passes a [`StreamPace`], which the client advances with every step of the
//! stream (see [`pace`]); such work also has llama-server read its prompt in steps, because the
//! server finishes reading a prompt even after its client went (see `prefill.rs`).

pub mod pace;
mod prefill;
pub mod repetition;

use std::time::Duration;

use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use pace::{Phase, StreamPace};
pub(crate) use prefill::PromptSteps;
pub use prefill::{PREFILL_STEP_TIME, PREFILL_STEP_TOKENS};
use repetition::LoopWatch;

/// Time allowed to connect and receive response headers.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest silence between two streamed chunks before the server counts as hung.
const CHUNK_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest answer accepted, so a runaway model cannot exhaust memory.
const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// Longest line of the event stream buffered: the endpoint is the agent's choice, and a line
/// without end must not exhaust memory. A llama-server chunk line is a few hundred bytes.
pub const MAX_STREAM_LINE_BYTES: usize = 1024 * 1024;

/// Where a chat request goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatEndpoint {
    /// OpenAI-compatible base URL, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Bearer key, if the server wants one.
    pub api_key: Option<String>,
    /// Model id.
    pub model: String,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// A chat request: messages, an optional JSON schema the answer must follow, a token cap.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The conversation to send.
    pub messages: Vec<ChatMessage>,
    /// `response_format` JSON schema, named; the server constrains decoding to it.
    pub json_schema: Option<(String, Value)>,
    /// Upper bound on generated tokens.
    pub max_tokens: u32,
}

/// The assembled answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChatReply {
    /// All streamed content, concatenated.
    pub text: String,
    /// Prompt tokens, when the server reported usage.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, when the server reported usage.
    pub completion_tokens: Option<u64>,
}

/// Why a chat request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// No connection or no answer.
    #[error("cannot reach {url}: {message}")]
    Unreachable { url: String, message: String },
    /// The server answered with an error status.
    #[error("{url} answered {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    /// The stream was not what an OpenAI-compatible server sends.
    #[error("{url} sent an unreadable stream: {message}")]
    Protocol { url: String, message: String },
    /// The model was repeating itself (see [`repetition`]); the stream was dropped.
    #[error("{url}'s model was repeating itself (the answer's last {span} bytes are one {period}-byte pattern over and over); stopped it after {bytes} bytes")]
    Looping {
        url: String,
        span: usize,
        period: usize,
        bytes: usize,
    },
    /// The stream went silent.
    #[error("{url} sent nothing for {seconds} s; giving up")]
    Stalled { url: String, seconds: u64 },
}

/// Sends chat requests; implemented over HTTP here and by the simulator's modelled server.
pub trait LlmClient: Send + Sync {
    /// Streams `request` to `endpoint` and returns the whole answer. Dropping the future cancels.
    /// With a `pace` (work that yields to the person on the managed llama-server), the server
    /// first reads the prompt in steps of about [`PREFILL_STEP_TIME`], so a drop costs it one
    /// step, and every step of the prompt and the stream advances the pace.
    fn chat<'a>(
        &'a self,
        endpoint: &'a ChatEndpoint,
        request: ChatRequest,
        pace: Option<&'a StreamPace>,
    ) -> BoxFuture<'a, Result<ChatReply, LlmError>>;
}

/// The production client over `reqwest`.
#[derive(Clone)]
pub struct HttpLlmClient {
    http: reqwest::Client,
    /// Each server's prompt pace, for the first step of the next prompt read in steps.
    paces: prefill::ServerPaces,
}

impl Default for HttpLlmClient {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .expect("building the HTTP client");
        HttpLlmClient {
            http,
            paces: prefill::ServerPaces::default(),
        }
    }
}

impl LlmClient for HttpLlmClient {
    fn chat<'a>(
        &'a self,
        endpoint: &'a ChatEndpoint,
        request: ChatRequest,
        pace: Option<&'a StreamPace>,
    ) -> BoxFuture<'a, Result<ChatReply, LlmError>> {
        Box::pin(self.stream_chat(endpoint, request, pace))
    }
}

impl HttpLlmClient {
    async fn stream_chat(
        &self,
        endpoint: &ChatEndpoint,
        request: ChatRequest,
        pace: Option<&StreamPace>,
    ) -> Result<ChatReply, LlmError> {
        if let Some(pace) = pace {
            prefill::read_prompt_in_steps(self, endpoint, &request.messages, pace).await?;
        }
        let url = format!(
            "{}/chat/completions",
            endpoint.base_url.trim_end_matches('/')
        );
        let mut body = json!({
            "model": endpoint.model,
            "messages": request.messages,
            "stream": true,
            "stream_options": { "include_usage": true },
            "max_tokens": request.max_tokens,
        });
        if pace.is_some() {
            // llama-server then streams `prompt_progress` while it reads the prompt; other
            // servers ignore the field.
            body["return_progress"] = json!(true);
        }
        if let Some((name, schema)) = &request.json_schema {
            body["response_format"] = json!({ "type": "json_schema", "json_schema": { "name": name, "schema": schema, "strict": true } });
        }
        let response = match self.send(&url, endpoint, &body).await {
            // Some servers (or models: llama.cpp cannot build a grammar for every vocabulary)
            // refuse structured output. The answer is validated anyway, so ask again without it.
            Err(LlmError::Status {
                status: 400,
                message,
                ..
            }) if request.json_schema.is_some() => {
                tracing::info!(%url, %message, "structured output refused; asking without response_format");
                body.as_object_mut()
                    .expect("body is an object")
                    .remove("response_format");
                self.send(&url, endpoint, &body).await?
            }
            other => other?,
        };
        let unreachable = |err: reqwest::Error| LlmError::Unreachable {
            url: url.clone(),
            message: err.to_string(),
        };

        let mut stream = response.bytes_stream();
        let mut decoder = SseDecoder::default();
        let mut reply = ChatReply::default();
        let mut prompt_processed = 0;
        let mut loops = LoopWatch::default();
        loop {
            let chunk = match tokio::time::timeout(CHUNK_TIMEOUT, stream.next()).await {
                Err(_) => {
                    return Err(LlmError::Stalled {
                        url,
                        seconds: CHUNK_TIMEOUT.as_secs(),
                    })
                }
                Ok(None) => break,
                Ok(Some(chunk)) => chunk.map_err(unreachable)?,
            };
            let payloads = decoder.push(&chunk).map_err(|err| LlmError::Protocol {
                url: url.clone(),
                message: err.to_string(),
            })?;
            for data in payloads {
                if data == "[DONE]" {
                    return Ok(reply);
                }
                let value: Value =
                    serde_json::from_str(&data).map_err(|err| LlmError::Protocol {
                        url: url.clone(),
                        message: format!("chunk is not JSON: {err}"),
                    })?;
                if let Some(message) = value["error"]["message"].as_str() {
                    return Err(LlmError::Status {
                        url,
                        status: 500,
                        message: message.to_string(),
                    });
                }
                if let Some(processed) = value["prompt_progress"]["processed"].as_u64() {
                    // `processed` counts the cached prefix too, which the prompt's steps (or an
                    // earlier request) already read: only what is read now is progress.
                    let cached = value["prompt_progress"]["cache"].as_u64().unwrap_or(0);
                    if let Some(pace) = pace {
                        let before = prompt_processed.max(cached);
                        pace.advance(Phase::Prompt, processed.saturating_sub(before));
                    }
                    prompt_processed = processed;
                }
                if let Some(delta) = value["choices"][0]["delta"]["content"].as_str() {
                    reply.text.push_str(delta);
                    if let Some(period) = loops.observe(&reply.text) {
                        return Err(LlmError::Looping {
                            url,
                            span: repetition::LOOP_SPAN_BYTES,
                            period,
                            bytes: reply.text.len(),
                        });
                    }
                    if let Some(pace) = pace {
                        pace.advance(Phase::Answer, 1);
                    }
                }
                if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
                    reply.prompt_tokens = usage["prompt_tokens"].as_u64();
                    reply.completion_tokens = usage["completion_tokens"].as_u64();
                }
                if reply.text.len() > MAX_REPLY_BYTES {
                    return Err(LlmError::Protocol {
                        url,
                        message: format!("answer exceeds {MAX_REPLY_BYTES} bytes"),
                    });
                }
            }
        }
        Err(LlmError::Protocol {
            url,
            message: "the stream ended without [DONE]".into(),
        })
    }
}

/// `work` within `limit`: past it the server is stalled, a transport error is unreachable.
async fn within<T>(
    url: &str,
    limit: Duration,
    work: impl std::future::Future<Output = Result<T, reqwest::Error>>,
) -> Result<T, LlmError> {
    tokio::time::timeout(limit, work)
        .await
        .map_err(|_| LlmError::Stalled {
            url: url.to_string(),
            seconds: limit.as_secs(),
        })?
        .map_err(|err| LlmError::Unreachable {
            url: url.to_string(),
            message: err.to_string(),
        })
}

impl HttpLlmClient {
    /// Posts `body` and returns the whole JSON answer (a short, unstreamed request).
    async fn post_json(
        &self,
        url: &str,
        endpoint: &ChatEndpoint,
        body: &Value,
    ) -> Result<Value, LlmError> {
        let response = self.send(url, endpoint, body).await?;
        let bytes = within(url, CHUNK_TIMEOUT, response.bytes()).await?;
        serde_json::from_slice(&bytes).map_err(|err| LlmError::Protocol {
            url: url.to_string(),
            message: format!("the answer is not JSON: {err}"),
        })
    }

    /// Posts `body` and returns the response once its headers arrived with a success status.
    async fn send(
        &self,
        url: &str,
        endpoint: &ChatEndpoint,
        body: &Value,
    ) -> Result<reqwest::Response, LlmError> {
        let mut builder = self.http.post(url).json(body);
        if let Some(key) = &endpoint.api_key {
            builder = builder.bearer_auth(key);
        }
        let response = within(url, CONNECT_TIMEOUT, builder.send()).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let text = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| text.chars().take(200).collect());
        Err(LlmError::Status {
            url: url.to_string(),
            status: status.as_u16(),
            message: without_key(message, endpoint.api_key.as_deref()),
        })
    }
}

/// An endpoint's error message with the key it was sent replaced: some servers quote the key
/// they refused, and the message goes into a review's `last_error` and the logs.
fn without_key(message: String, key: Option<&str>) -> String {
    match key {
        Some(key) if !key.is_empty() => message.replace(key, "<api key>"),
        _ => message,
    }
}

/// Splits a byte stream into SSE `data:` payloads, across chunk boundaries, buffering at most
/// [`MAX_STREAM_LINE_BYTES`] of an unfinished line.
#[derive(Default)]
struct SseDecoder {
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no newline.
    scanned: usize,
}

/// A line of the stream grew past [`MAX_STREAM_LINE_BYTES`] without ending.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a line of the event stream exceeds {} MiB without a line break; this is not an \
     OpenAI-compatible chat stream (check the runtime's base_url)",
    MAX_STREAM_LINE_BYTES / (1024 * 1024)
)]
struct LineTooLong;

impl SseDecoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, LineTooLong> {
        self.pending.extend_from_slice(bytes);
        let mut payloads = Vec::new();
        while let Some(offset) = self.pending[self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let end = self.scanned + offset;
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.scanned = 0;
            let line = String::from_utf8_lossy(&line);
            if let Some(data) = line.trim_end().strip_prefix("data:") {
                payloads.push(data.trim_start().to_string());
            }
        }
        self.scanned = self.pending.len();
        if self.pending.len() > MAX_STREAM_LINE_BYTES {
            return Err(LineTooLong);
        }
        Ok(payloads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_key_quoted_by_the_server_is_not_repeated() {
        let quoted = "Incorrect API key provided: sk-live-1234. Find your key at …".to_owned();
        assert_eq!(
            without_key(quoted.clone(), Some("sk-live-1234")),
            "Incorrect API key provided: <api key>. Find your key at …"
        );
        assert_eq!(without_key(quoted.clone(), None), quoted);
        assert_eq!(without_key(quoted.clone(), Some("")), quoted);
    }

    #[test]
    fn sse_payloads_survive_chunk_boundaries() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.push(b"data: {\"a\"").unwrap().is_empty());
        assert_eq!(
            decoder.push(b":1}\n\ndata: [DONE]\n").unwrap(),
            vec!["{\"a\":1}".to_string(), "[DONE]".to_string()]
        );
        assert!(decoder.push(b": keep-alive comment\n").unwrap().is_empty());
    }

    #[test]
    fn a_line_is_buffered_up_to_the_limit_and_no_further() {
        let mut decoder = SseDecoder::default();
        let chunk = vec![b'x'; 64 * 1024];
        let mut buffered = 0;
        while buffered + chunk.len() <= MAX_STREAM_LINE_BYTES {
            assert!(decoder.push(&chunk).unwrap().is_empty());
            buffered += chunk.len();
        }
        assert_eq!(decoder.push(b"y"), Err(LineTooLong));
        assert!(LineTooLong.to_string().contains("exceeds 1 MiB"));

        // A long line that ends in time is fine, and the next one starts afresh.
        let mut decoder = SseDecoder::default();
        let mut line = b"data: ".to_vec();
        line.extend(vec![b'z'; MAX_STREAM_LINE_BYTES - 16]);
        assert!(decoder.push(&line).unwrap().is_empty());
        let payloads = decoder.push(b"\ndata: [DONE]\n").unwrap();
        assert_eq!(payloads.len(), 2);
        assert_eq!(payloads[1], "[DONE]");
    }
}
