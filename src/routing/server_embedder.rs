//! [`ServerEmbedder`]: the managed server's `/v1/embeddings` behind the [`Embedder`] seam.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::embedder::{EmbedError, Embedder};
use crate::server::{ApiKey, ModelStatus, ServerMode, ServerReading};

/// Longest wait for one embeddings answer. A local server embeds a batch of short texts in
/// well under a second; a busy one may queue the request behind a decoding slot.
pub const EMBED_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait to connect to the managed server (it is local).
pub const EMBED_CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// Texts per request: keeps one request (and the server's batch) small when many skills are
/// embedded at once.
pub const EMBED_BATCH_SIZE: usize = 32;
/// Largest dimension believed: anything larger is a server answering something else.
const MAX_SERVER_DIM: usize = 16_384;
/// The text embedded once to learn whether the server embeds at all, and its dimension.
const PROBE_TEXT: &str = "lull embedding probe";

/// An OpenAI-compatible `POST <base_url>/embeddings` client for one model of the managed
/// server, sending `Authorization: Bearer <api_key>`.
///
/// Build it with [`ServerEmbedder::connect`], which picks a **loaded** model from a
/// [`ServerReading`] and embeds one probe text to learn the dimension. In router mode every
/// request carries `?autoload=false`, so routing never wakes or loads a model (DESIGN §2.1): a
/// model unloaded since then makes requests fail, and the caller falls back.
#[derive(Debug, Clone)]
pub struct ServerEmbedder {
    name: String,
    model: String,
    url: String,
    api_key: Option<ApiKey>,
    dim: usize,
    client: reqwest::Client,
}

impl ServerEmbedder {
    /// Connects to the server of `reading`: fails (with a reason fit for a status view) if the
    /// server is not ready, has no loaded model, or does not answer `/v1/embeddings`.
    pub async fn connect(reading: &ServerReading) -> Result<ServerEmbedder, String> {
        if !reading.is_ready() {
            let why = reading.reason.as_deref().unwrap_or("not ready");
            return Err(format!("managed server is {}: {why}", reading.state));
        }
        let base_url = reading
            .base_url
            .as_deref()
            .ok_or("the managed server's state file has no base_url")?;
        let model = reading
            .models
            .iter()
            .find(|model| model.status == ModelStatus::Loaded)
            .ok_or("the managed server has no loaded model to embed with")?;
        let mut url = format!("{}/embeddings", base_url.trim_end_matches('/'));
        if reading.mode == Some(ServerMode::Router) {
            url.push_str("?autoload=false");
        }
        let client = reqwest::Client::builder()
            .connect_timeout(EMBED_CONNECT_TIMEOUT)
            .timeout(EMBED_REQUEST_TIMEOUT)
            // The managed server is local; a desktop proxy setting must not reroute it.
            .no_proxy()
            .build()
            .map_err(|err| format!("cannot build an HTTP client: {err}"))?;
        let mut embedder = ServerEmbedder {
            name: format!("server:{}", model.id),
            model: model.id.clone(),
            url,
            api_key: reading.api_key.clone(),
            dim: 0,
            client,
        };
        let probe = embedder
            .request(&[PROBE_TEXT.to_owned()])
            .await
            .map_err(|err| err.to_string())?;
        let dim = probe.first().map_or(0, Vec::len);
        if dim == 0 || dim > MAX_SERVER_DIM {
            return Err(format!(
                "the managed server's /v1/embeddings answered {dim}-dimensional vectors; \
                 expected 1 to {MAX_SERVER_DIM}"
            ));
        }
        embedder.dim = dim;
        Ok(embedder)
    }

    /// The model embedding the texts.
    pub fn model(&self) -> &str {
        &self.model
    }

    async fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let failed = |message: String| EmbedError::Backend {
            embedder: self.name.clone(),
            message,
        };
        let mut request = self.client.post(&self.url).json(&json!({
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        }));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key.expose());
        }
        let response = request
            .send()
            .await
            .map_err(|err| failed(format!("request failed: {err}")))?;
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .map_err(|err| failed(format!("answer {status} is not JSON: {err}")))?;
        if !status.is_success() {
            let message = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no error message");
            return Err(failed(format!("answered {status}: {message}")));
        }
        let data = body
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| failed("answer has no `data` array".into()))?;
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in data.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .map_or(position, |index| index as usize);
            let vector = item
                .get("embedding")
                .and_then(Value::as_array)
                .and_then(|numbers| {
                    numbers
                        .iter()
                        .map(|number| number.as_f64().map(|x| x as f32))
                        .collect::<Option<Vec<f32>>>()
                })
                .ok_or_else(|| {
                    failed(format!(
                        "data[{position}].embedding is not a list of numbers"
                    ))
                })?;
            let slot = vectors
                .get_mut(index)
                .ok_or_else(|| failed(format!("data[{position}].index {index} is out of range")))?;
            *slot = Some(vector);
        }
        vectors
            .into_iter()
            .enumerate()
            .map(|(index, vector)| {
                vector.ok_or_else(|| failed(format!("no embedding for input {index}")))
            })
            .collect()
    }
}

impl Embedder for ServerEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(EMBED_BATCH_SIZE) {
                for vector in self.request(batch).await? {
                    if vector.len() != self.dim {
                        return Err(EmbedError::WrongDimension {
                            embedder: self.name.clone(),
                            expected: self.dim,
                            actual: vector.len(),
                        });
                    }
                    if vector.iter().any(|x| !x.is_finite()) {
                        return Err(EmbedError::Backend {
                            embedder: self.name.clone(),
                            message: "answered a vector with a non-finite number".into(),
                        });
                    }
                    vectors.push(vector);
                }
            }
            Ok(vectors)
        })
    }
}
