//! The stand-in's HTTP surface: one axum router, a middleware that does what llama-server's
//! pre-routing handler does (count, fault, readiness, key), and one handler per endpoint.

// Helpers return `Result<_, Response>` so a handler can `return` the error response as is;
// boxing every error response for clippy's size lint would only add noise to a test server.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::{
    Endpoint, Fault, Inner, LoadEvent, Mode, ModelStatus, RequestRecord, Shared, StreamDrop,
};

/// How often a request waiting for a router-mode load checks whether it is done.
const LOAD_POLL: Duration = Duration::from_millis(10);
/// Longest a request waits for a model another request is loading.
const LOAD_WAIT_LIMIT: Duration = Duration::from_secs(30);

type AppState = Arc<Shared>;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/v1/health", get(health))
        .route("/models", get(models))
        .route("/v1/models", get(models))
        .route("/slots", get(slots))
        .route("/props", get(props))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/chat/completions", post(chat_completions))
        .route("/v1/embeddings", post(embeddings))
        .route("/embeddings", post(embeddings))
        .route("/models/load", post(models_load))
        .route("/models/unload", post(models_unload))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(shared.clone(), pre_routing))
        .with_state(shared)
}

/// llama.cpp's error body: `{"error":{"code","message","type"}}` with the matching status.
fn error(status: StatusCode, message: &str, kind: &str) -> Response {
    let body = json!({"error": {"code": status.as_u16(), "message": message, "type": kind}});
    (status, Json(body)).into_response()
}

fn invalid_request(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, message, "invalid_request_error")
}

fn loading_model() -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Loading model",
        "unavailable_error",
    )
}

/// Counts the request, applies an injected fault, then the readiness and key checks, in the
/// order llama-server's pre-routing handler uses (readiness before the key).
async fn pre_routing(State(shared): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let endpoint = Endpoint::of_path(&path);
    let (fault, ready, api_key) = {
        let mut inner = shared.lock();
        *inner.counts.entry(endpoint).or_insert(0) += 1;
        inner.requests.push(RequestRecord {
            method: request.method().to_string(),
            path: path.clone(),
            query: request.uri().query().map(str::to_owned),
            endpoint,
            at: Instant::now(),
        });
        (
            inner.faults.get(&endpoint).cloned(),
            inner.ready,
            inner.api_key.clone(),
        )
    };
    match fault {
        Some(Fault::Status500) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "injected failure",
                "server_error",
            )
        }
        Some(Fault::Garbage) => {
            return (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
                "<html>\u{0}this is not json{",
            )
                .into_response()
        }
        Some(Fault::Hang) => {
            let mut stopped = shared.shutdown.clone();
            let _ = stopped.wait_for(|stopped| *stopped).await;
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "stand-in stopped",
                "unavailable_error",
            );
        }
        Some(Fault::Slow(delay)) => tokio::time::sleep(delay).await,
        None => {}
    }
    if !ready {
        return loading_model();
    }
    let is_public = matches!(
        path.as_str(),
        "/health" | "/v1/health" | "/models" | "/v1/models"
    );
    if !is_public {
        if let Some(expected) = api_key {
            if !key_matches(request.headers(), &expected) {
                return error(
                    StatusCode::UNAUTHORIZED,
                    "Invalid API Key",
                    "authentication_error",
                );
            }
        }
    }
    next.run(request).await
}

/// Like llama-server: the `Authorization` header (with or without `Bearer `), else `X-Api-Key`.
fn key_matches(headers: &HeaderMap, expected: &str) -> bool {
    let header_value = |name| {
        headers
            .get(name)
            .and_then(|value: &header::HeaderValue| value.to_str().ok())
            .unwrap_or("")
    };
    let mut given = header_value(header::AUTHORIZATION);
    if given.is_empty() {
        given = header_value(header::HeaderName::from_static("x-api-key"));
    }
    let given = given.strip_prefix("Bearer ").unwrap_or(given);
    given == expected
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "File Not Found", "not_found_error")
}

async fn health() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

async fn models(State(shared): State<AppState>) -> Response {
    let inner = shared.lock();
    let created = inner.created;
    let data: Vec<Value> = match inner.mode {
        Mode::Single => inner
            .models
            .iter()
            .take(1)
            .map(|model| {
                json!({
                    "id": model.id,
                    "object": "model",
                    "created": created,
                    "owned_by": "llamacpp",
                    "meta": {"n_ctx_train": 4096, "n_embd": inner.embedding_dim, "n_vocab": 256},
                })
            })
            .collect(),
        Mode::Router => inner
            .models
            .iter()
            .map(|model| {
                json!({
                    "id": model.id,
                    "aliases": [],
                    "tags": [],
                    "object": "model",
                    "owned_by": "llamacpp",
                    "created": created,
                    "status": {"value": model.status.as_str(), "args": ["llama-server", "--ctx-size", "4096"]},
                    "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
                })
            })
            .collect(),
    };
    Json(json!({"object": "list", "data": data})).into_response()
}

fn autoload(query: &HashMap<String, String>) -> bool {
    match query.get("autoload").map(String::as_str) {
        Some(value) => value == "true" || value == "1",
        None => true,
    }
}

/// Router mode: makes sure `model` is loaded, loading it (and recording the load) when
/// `autoload` allows, like `router_validate_model` + `ensure_model_ready`.
async fn ensure_loaded(
    shared: &Shared,
    model: &str,
    autoload: bool,
    cause: Endpoint,
) -> Result<(), Response> {
    if model.is_empty() {
        return Err(invalid_request("model name is missing from the request"));
    }
    let (status, load_time) = {
        let mut inner = shared.lock();
        let load_time = inner.load_time;
        let Some(state) = inner.model_mut(model) else {
            return Err(invalid_request(&format!("model '{model}' not found")));
        };
        let status = state.status;
        let starts_load = autoload
            && matches!(
                status,
                ModelStatus::Unloaded | ModelStatus::Sleeping | ModelStatus::Downloading
            );
        if starts_load {
            state.status = ModelStatus::Loading;
            inner.loads.push(LoadEvent {
                model: model.to_owned(),
                from: status,
                cause,
                at: Instant::now(),
            });
        }
        (status, load_time)
    };
    match status {
        ModelStatus::Loaded => Ok(()),
        ModelStatus::Loading if !autoload => Err(loading_model()),
        _ if !autoload => Err(invalid_request("model is not loaded")),
        ModelStatus::Loading => wait_until_loaded(shared, model).await,
        _ => {
            tokio::time::sleep(load_time).await;
            let mut inner = shared.lock();
            if let Some(state) = inner.model_mut(model) {
                if state.status == ModelStatus::Loading {
                    state.status = ModelStatus::Loaded;
                }
            }
            Ok(())
        }
    }
}

async fn wait_until_loaded(shared: &Shared, model: &str) -> Result<(), Response> {
    let deadline = Instant::now() + LOAD_WAIT_LIMIT;
    while Instant::now() < deadline {
        let status = shared.lock().model(model).map(|state| state.status);
        match status {
            Some(ModelStatus::Loaded) => return Ok(()),
            Some(ModelStatus::Loading) => tokio::time::sleep(LOAD_POLL).await,
            _ => return Err(invalid_request("model failed to load")),
        }
    }
    Err(loading_model())
}

/// `GET /props`: server properties, including `is_sleeping`, which (unlike `/slots`) does not
/// wake a sleeping model.
async fn props(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let inner = shared.lock();
    let model = match inner.mode {
        Mode::Single => inner.models[0].id.clone(),
        Mode::Router => query.get("model").cloned().unwrap_or_default(),
    };
    let Some(state) = inner.model(&model) else {
        return invalid_request(&format!("model '{model}' not found"));
    };
    Json(json!({
        "model_path": model,
        "total_slots": state.slots.len(),
        "is_sleeping": state.status == ModelStatus::Sleeping,
        "default_generation_settings": {"n_ctx": 4096},
    }))
    .into_response()
}

async fn slots(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mode = shared.lock().mode;
    let model = match mode {
        Mode::Single => shared.lock().models[0].id.clone(),
        Mode::Router => query.get("model").cloned().unwrap_or_default(),
    };
    let status = shared.lock().model(&model).map(|state| state.status);
    // The real server wakes a sleeping model on /slots, in both modes and whatever `autoload`
    // says; otherwise a router loads an unloaded model unless `autoload=false`.
    let wake = status == Some(ModelStatus::Sleeping);
    if wake || mode == Mode::Router {
        if let Err(response) =
            ensure_loaded(&shared, &model, wake || autoload(&query), Endpoint::Slots).await
        {
            return response;
        }
    }
    let inner = shared.lock();
    let Some(state) = inner.model(&model) else {
        return invalid_request(&format!("model '{model}' not found"));
    };
    let fail_on_no_slot = matches!(
        query.get("fail_on_no_slot").map(String::as_str),
        Some("1" | "true")
    );
    if fail_on_no_slot && state.slots.iter().all(|slot| slot.is_processing()) {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "no slot available",
            "unavailable_error",
        );
    }
    let slots: Vec<Value> = state
        .slots
        .iter()
        .enumerate()
        .map(|(id, slot)| {
            json!({
                "id": id,
                "id_task": slot.id_task,
                "n_ctx": 4096,
                "speculative": false,
                "is_processing": slot.is_processing(),
                "params": {"n_predict": -1, "temperature": 0.8, "stream": true},
                "next_token": {"has_next_token": slot.is_processing(), "has_new_line": false, "n_remain": -1, "n_decoded": 0},
            })
        })
        .collect();
    Json(Value::Array(slots)).into_response()
}

/// Holds a slot for one completion; frees it when dropped and, if the completion did not finish,
/// records a stream drop with the time it was seen.
struct SlotLease {
    shared: Arc<Shared>,
    model: String,
    slot: usize,
    tokens_sent: usize,
    finished: bool,
}

impl SlotLease {
    fn acquire(shared: &Arc<Shared>, model: &str) -> Option<SlotLease> {
        let mut inner = shared.lock();
        inner.next_task_id += 1;
        let task_id = inner.next_task_id;
        let state = inner.model_mut(model)?;
        // An idle slot if there is one, else the least loaded (the real server would queue).
        let slot = state
            .slots
            .iter()
            .position(|slot| !slot.is_processing())
            .or_else(|| (0..state.slots.len()).min_by_key(|&index| state.slots[index].in_flight))?;
        state.slots[slot].in_flight += 1;
        state.slots[slot].id_task = task_id;
        Some(SlotLease {
            shared: shared.clone(),
            model: model.to_owned(),
            slot,
            tokens_sent: 0,
            finished: false,
        })
    }
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        let mut inner = self.shared.lock();
        if let Some(state) = inner.model_mut(&self.model) {
            if let Some(slot) = state.slots.get_mut(self.slot) {
                slot.in_flight = slot.in_flight.saturating_sub(1);
            }
        }
        if !self.finished {
            inner.drops.push(StreamDrop {
                model: self.model.clone(),
                slot: self.slot,
                tokens_sent: self.tokens_sent,
                at: Instant::now(),
            });
        }
    }
}

/// Splits a reply into "tokens": words with their leading whitespace.
fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut previous_was_space = true;
    for ch in text.chars() {
        let is_space = ch.is_whitespace();
        if is_space && !previous_was_space && !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
        current.push(ch);
        previous_was_space = is_space;
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn count_prompt_tokens(body: &Value) -> usize {
    body.get("messages")
        .and_then(Value::as_array)
        .map(|messages| {
            messages
                .iter()
                .filter_map(|message| message.get("content").and_then(Value::as_str))
                .map(|content| tokenize(content).len() + 4)
                .sum()
        })
        .unwrap_or(0)
}

/// Resolves the model a POST names: the served one in single mode, the body's `model` in router
/// mode (loading it if allowed).
async fn resolve_post_model(
    shared: &Arc<Shared>,
    body: &Value,
    query: &HashMap<String, String>,
    cause: Endpoint,
) -> Result<String, Response> {
    let mode = shared.lock().mode;
    match mode {
        Mode::Single => Ok(shared.lock().models[0].id.clone()),
        Mode::Router => {
            let model = body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            ensure_loaded(shared, &model, autoload(query), cause).await?;
            Ok(model)
        }
    }
}

fn parse_body(bytes: &Bytes) -> Result<Value, Response> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) if value.is_object() => Ok(value),
        Ok(_) => Err(invalid_request("the request body must be a JSON object")),
        Err(err) => Err(invalid_request(&format!(
            "the request body is not JSON: {err}"
        ))),
    }
}

async fn chat_completions(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    bytes: Bytes,
) -> Response {
    let body = match parse_body(&bytes) {
        Ok(body) => body,
        Err(response) => return response,
    };
    if !body.get("messages").is_some_and(Value::is_array) {
        return invalid_request("'messages' is required and must be an array");
    }
    shared.lock().chat_bodies.push(body.clone());
    let model = match resolve_post_model(&shared, &body, &query, Endpoint::ChatCompletions).await {
        Ok(model) => model,
        Err(response) => return response,
    };
    let Some(mut lease) = SlotLease::acquire(&shared, &model) else {
        return invalid_request(&format!("model '{model}' not found"));
    };
    let reply = {
        let mut inner = shared.lock();
        inner
            .model_mut(&model)
            .and_then(|state| state.replies.pop_front())
            .unwrap_or_else(|| crate::DEFAULT_REPLY.to_owned())
    };
    let mut tokens = tokenize(&reply);
    let max_tokens = body
        .get("max_tokens")
        .or_else(|| body.get("n_predict"))
        .and_then(Value::as_i64)
        .filter(|&n| n >= 0)
        .map(|n| n as usize);
    let finish_reason = match max_tokens {
        Some(limit) if limit < tokens.len() => {
            tokens.truncate(limit);
            "length"
        }
        _ => "stop",
    };
    let completion = Completion {
        id: format!("chatcmpl-standin{}", lease.slot),
        model: model.clone(),
        created: shared.lock().created,
        prompt_tokens: count_prompt_tokens(&body),
        tokens,
        finish_reason,
    };
    let flag = |name| body.get(name).and_then(Value::as_bool).unwrap_or(false);
    if !flag("stream") {
        // The slot stays busy for as long as generating would take.
        for _ in 0..completion.tokens.len() {
            let wait = {
                let inner = shared.lock();
                step_time(&inner, &lease, inner.token_pace)
            };
            tokio::time::sleep(wait).await;
        }
        lease.tokens_sent = completion.tokens.len();
        lease.finished = true;
        drop(lease);
        return Json(completion.full_response()).into_response();
    }
    streamed_completion(shared, lease, completion, flag("return_progress"))
}

/// How long a step of the completion holding `lease` takes if it starts now: `pace`, times the
/// contention factor while another slot of the same model is busy, because llama-server puts
/// every busy slot into one batch and another client's work slows ours.
fn step_time(inner: &Inner, lease: &SlotLease, pace: Duration) -> Duration {
    let contended = inner.model(&lease.model).is_some_and(|state| {
        state
            .slots
            .iter()
            .enumerate()
            .any(|(index, slot)| index != lease.slot && slot.is_processing())
    });
    if contended {
        pace.mul_f64(inner.contention_factor.max(1.0))
    } else {
        pace
    }
}

/// Waits out one step of a streamed completion (a prompt batch or a token), priced by
/// [`step_time`] as it starts; `None` if the stand-in stops meanwhile, which ends the stream.
async fn stream_step(
    shared: &Shared,
    lease: &SlotLease,
    pace: fn(&Inner) -> Duration,
) -> Option<()> {
    let wait = {
        let inner = shared.lock();
        step_time(&inner, lease, pace(&inner))
    };
    let mut stopped = shared.shutdown.clone();
    tokio::select! {
        _ = tokio::time::sleep(wait) => Some(()),
        _ = stopped.wait_for(|stopped| *stopped) => None,
    }
}

struct Completion {
    id: String,
    model: String,
    created: u64,
    prompt_tokens: usize,
    tokens: Vec<String>,
    finish_reason: &'static str,
}

impl Completion {
    fn usage(&self) -> Value {
        json!({
            "completion_tokens": self.tokens.len(),
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.tokens.len() + self.prompt_tokens,
        })
    }

    fn full_response(&self) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "stand-in",
            "choices": [{
                "index": 0,
                "finish_reason": self.finish_reason,
                "message": {"role": "assistant", "content": self.tokens.concat()},
            }],
            "usage": self.usage(),
        })
    }

    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "stand-in",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        })
    }
}

fn sse_event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

enum StreamStep {
    /// A prompt-progress chunk reporting `processed` prompt tokens: the first (0) goes out at
    /// once, each later one after a prompt batch; `started` is when the prompt phase began.
    Progress {
        processed: usize,
        started: tokio::time::Instant,
    },
    Role,
    Token(usize),
    Final,
    Done,
    Ended,
}

/// Streams the completion (its prompt batches first when `return_progress` asks for them), then
/// token by token; the [`SlotLease`] lives inside the stream, so when hyper drops the body
/// because the client went away, the slot is freed at once, in the prompt phase as in the tokens.
fn streamed_completion(
    shared: Arc<Shared>,
    lease: SlotLease,
    completion: Completion,
    return_progress: bool,
) -> Response {
    let first = if return_progress && completion.prompt_tokens > 0 {
        StreamStep::Progress {
            processed: 0,
            started: tokio::time::Instant::now(),
        }
    } else {
        StreamStep::Role
    };
    let state = (shared, lease, completion, first);
    let stream = futures_util::stream::unfold(
        state,
        |(shared, mut lease, completion, step)| async move {
            let (bytes, next) = match step {
                StreamStep::Progress { processed, started } => {
                    if processed > 0 {
                        stream_step(&shared, &lease, |inner| inner.prompt_pace).await?;
                    }
                    let total = completion.prompt_tokens;
                    let next = if processed < total {
                        let batch = shared.lock().batch_tokens;
                        StreamStep::Progress {
                            processed: (processed + batch).min(total),
                            started,
                        }
                    } else {
                        StreamStep::Role
                    };
                    let mut chunk =
                        completion.chunk(json!({"role": "assistant", "content": null}), None);
                    chunk["prompt_progress"] = json!({
                        "total": total,
                        "cache": 0,
                        "processed": processed,
                        "time_ms": started.elapsed().as_millis() as u64,
                    });
                    (sse_event(&chunk), next)
                }
                StreamStep::Role => (
                    sse_event(
                        &completion.chunk(json!({"role": "assistant", "content": null}), None),
                    ),
                    if completion.tokens.is_empty() {
                        StreamStep::Final
                    } else {
                        StreamStep::Token(0)
                    },
                ),
                StreamStep::Token(index) => {
                    stream_step(&shared, &lease, |inner| inner.token_pace).await?;
                    lease.tokens_sent = index + 1;
                    if let Some(state) = shared.lock().model_mut(&lease.model) {
                        state.tokens_streamed += 1;
                    }
                    let next = if index + 1 < completion.tokens.len() {
                        StreamStep::Token(index + 1)
                    } else {
                        StreamStep::Final
                    };
                    let delta = json!({"content": completion.tokens[index]});
                    (sse_event(&completion.chunk(delta, None)), next)
                }
                StreamStep::Final => {
                    let mut chunk = completion.chunk(json!({}), Some(completion.finish_reason));
                    chunk["usage"] = completion.usage();
                    chunk["timings"] = json!({"predicted_n": completion.tokens.len(), "prompt_n": completion.prompt_tokens});
                    (sse_event(&chunk), StreamStep::Done)
                }
                StreamStep::Done => {
                    lease.finished = true;
                    (Bytes::from_static(b"data: [DONE]\n\n"), StreamStep::Ended)
                }
                StreamStep::Ended => return None,
            };
            Some((
                Ok::<Bytes, std::io::Error>(bytes),
                (shared, lease, completion, next),
            ))
        },
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A deterministic bag-of-words embedding: texts sharing words get similar vectors.
fn embed(text: &str, dim: usize) -> Vec<f32> {
    let mut vector = vec![0f32; dim];
    let words: Vec<String> = text
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        vector[0] = 1.0;
        return vector;
    }
    for word in &words {
        let mut seed = fnv1a(word.as_bytes());
        for value in vector.iter_mut() {
            seed = splitmix64(seed);
            *value += ((seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32;
        }
    }
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    vector.iter_mut().for_each(|v| *v /= norm);
    vector
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

async fn embeddings(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    bytes: Bytes,
) -> Response {
    let body = match parse_body(&bytes) {
        Ok(body) => body,
        Err(response) => return response,
    };
    let model = match resolve_post_model(&shared, &body, &query, Endpoint::Embeddings).await {
        Ok(model) => model,
        Err(response) => return response,
    };
    let (serves, dim) = {
        let inner = shared.lock();
        (inner.serves_embeddings, inner.embedding_dim)
    };
    if !serves {
        return error(
            StatusCode::NOT_IMPLEMENTED,
            "This server does not support embeddings. Start it with `--embeddings`",
            "not_supported_error",
        );
    }
    let inputs: Vec<String> = match body.get("input").or_else(|| body.get("content")) {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => return invalid_request("\"input\" must be a string or an array of strings"),
    };
    let n_tokens: usize = inputs.iter().map(|text| tokenize(text).len()).sum();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": embed(text, dim)}))
        .collect();
    Json(json!({
        "object": "list",
        "model": model,
        "data": data,
        "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens},
    }))
    .into_response()
}

/// The `model` a router's `/models/load` or `/models/unload` body names; a single-model server
/// has neither route (404), and a body that is not JSON is a 400.
async fn admin_model(shared: &AppState, bytes: &Bytes) -> Result<String, Response> {
    if shared.lock().mode != Mode::Router {
        return Err(not_found().await);
    }
    let body = parse_body(bytes)?;
    Ok(body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned())
}

async fn models_load(State(shared): State<AppState>, bytes: Bytes) -> Response {
    let model = match admin_model(&shared, &bytes).await {
        Ok(model) => model,
        Err(response) => return response,
    };
    match ensure_loaded(&shared, &model, true, Endpoint::ModelsAdmin).await {
        Ok(()) => Json(json!({"success": true})).into_response(),
        Err(response) => response,
    }
}

async fn models_unload(State(shared): State<AppState>, bytes: Bytes) -> Response {
    let model = match admin_model(&shared, &bytes).await {
        Ok(model) => model,
        Err(response) => return response,
    };
    let mut inner = shared.lock();
    let Some(state) = inner.model_mut(&model) else {
        return invalid_request("model is not found");
    };
    if !matches!(state.status, ModelStatus::Loaded | ModelStatus::Sleeping) {
        return invalid_request("model is not running");
    }
    state.status = ModelStatus::Unloaded;
    Json(json!({"success": true})).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenize_keeps_leading_spaces() {
        assert_eq!(tokenize("Hello big world"), vec!["Hello", " big", " world"]);
        assert_eq!(tokenize(""), Vec::<String>::new());
        assert_eq!(tokenize("{\"a\": [").concat(), "{\"a\": [");
    }

    #[test]
    fn embeddings_are_deterministic_and_normalised() {
        let a = embed("route the request", 16);
        assert_eq!(a, embed("route the request", 16));
        let norm: f32 = a.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }
}
