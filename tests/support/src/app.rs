//! The stand-in's HTTP surface: one axum router, a middleware that does what llama-server's
//! pre-routing handler does (count, fault, readiness, key), and one handler per endpoint.

// Helpers return `Result<_, Response>` so a handler can `return` the error response as is;
// boxing every error response for clippy's size lint would only add noise to a test server.
#![allow(clippy::result_large_err)]

use std::cmp::Reverse;
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::{
    Endpoint, Fault, Inner, LoadEvent, Mode, ModelStatus, PromptRead, RequestRecord, Shared,
    SlotsAnswer, StreamDrop, BOS_TOKEN,
};

/// How often a request waiting for a router-mode load checks whether it is done.
const LOAD_POLL: Duration = Duration::from_millis(10);
/// Longest a request waits for a model another request is loading.
const LOAD_WAIT_LIMIT: Duration = Duration::from_secs(30);
/// Token ids `/tokenize` hands out: [`BOS_TOKEN`], then words hashed into the rest of this range.
const VOCAB_SIZE: u32 = 32_000;
/// The first id a word can get (0 and [`BOS_TOKEN`] are special).
const FIRST_WORD_TOKEN: u32 = 2;
/// The piece `/tokenize` shows for [`BOS_TOKEN`].
const BOS_PIECE: &str = "<s>";

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
        .route("/completion", post(completion))
        .route("/completions", post(completion))
        .route("/tokenize", post(tokenize_prompt))
        .route("/apply-template", post(apply_template))
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

/// When a request arrived, before any injected slowness: what a handler logs as asked.
#[derive(Debug, Clone, Copy)]
struct Arrived(Instant);

/// Counts the request, applies an injected fault, then the readiness and key checks, in the
/// order llama-server's pre-routing handler uses (readiness before the key).
async fn pre_routing(State(shared): State<AppState>, mut request: Request, next: Next) -> Response {
    let arrived = Arrived(Instant::now());
    request.extensions_mut().insert(arrived);
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
            at: arrived.0,
        });
        if let Some(log) = &mut inner.request_log {
            let unix_ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |since| since.as_millis());
            // A line per write, so a reader never sees half of one; a failed write is lost.
            let line = format!("{unix_ms} {} {path}\n", request.method());
            let _ = log.write_all(line.as_bytes());
        }
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
        Some(Fault::Reset) => {
            // A body that fails at once: hyper then drops the connection without a whole answer.
            let cut = futures_util::stream::once(async {
                Err::<Bytes, _>(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "injected reset",
                ))
            });
            return Response::new(Body::from_stream(cut));
        }
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
                    "meta": {"n_ctx_train": 4096, "n_embd": inner.embedding_dim, "n_vocab": VOCAB_SIZE},
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
    Extension(arrived): Extension<Arrived>,
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
    let mut inner = shared.lock();
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
    let answer = SlotsAnswer {
        model,
        forced_busy: state.slots.iter().filter(|slot| slot.forced_busy).count(),
        in_flight: state.slots.iter().filter(|slot| slot.in_flight > 0).count(),
        asked: arrived.0,
        at: Instant::now(),
    };
    inner.slots_answers.push(answer);
    Json(Value::Array(slots)).into_response()
}

/// Holds a slot for one completion; frees it when dropped and, if the completion did not finish,
/// records a stream drop with the time it was seen.
struct SlotLease {
    shared: Arc<Shared>,
    endpoint: Endpoint,
    model: String,
    slot: usize,
    /// Prompt tokens found in the slot's cache, which the prompt read skips.
    cached: usize,
    tokens_sent: usize,
    finished: bool,
}

impl SlotLease {
    /// Takes a slot of `model` for a request at `endpoint` reading `prompt`: the idle slot whose
    /// prompt cache shares the longest prefix with it (as llama-server picks), else the first idle
    /// one, else the least loaded (the real server would queue). With `reuse_cache` the shared
    /// prefix counts as cached, all but the last token: one is always read, to sample from.
    fn acquire(
        shared: &Arc<Shared>,
        model: &str,
        endpoint: Endpoint,
        prompt: &[u32],
        reuse_cache: bool,
    ) -> Option<SlotLease> {
        let mut inner = shared.lock();
        inner.next_task_id += 1;
        let task_id = inner.next_task_id;
        let state = inner.model_mut(model)?;
        let shared_prefix = |index: usize| common_prefix(&state.slots[index].cache, prompt);
        let slot = (0..state.slots.len())
            .filter(|&index| !state.slots[index].is_processing())
            .max_by_key(|&index| (shared_prefix(index), Reverse(index)))
            .or_else(|| (0..state.slots.len()).min_by_key(|&index| state.slots[index].in_flight))?;
        let cached = if reuse_cache {
            shared_prefix(slot).min(prompt.len().saturating_sub(1))
        } else {
            0
        };
        state.slots[slot].in_flight += 1;
        state.slots[slot].id_task = task_id;
        Some(SlotLease {
            shared: shared.clone(),
            endpoint,
            model: model.to_owned(),
            slot,
            cached,
            tokens_sent: 0,
            finished: false,
        })
    }

    /// Changes the prompt cache of the slot held.
    fn edit_cache(&self, edit: impl FnOnce(&mut Vec<u32>)) {
        let mut inner = self.shared.lock();
        if let Some(slot) = inner
            .model_mut(&self.model)
            .and_then(|state| state.slots.get_mut(self.slot))
        {
            edit(&mut slot.cache);
        }
    }

    fn log_read(&self, total: usize, started: Instant, client_gone: bool) {
        self.shared.lock().prompt_reads.push(PromptRead {
            endpoint: self.endpoint,
            model: self.model.clone(),
            slot: self.slot,
            total,
            cached: self.cached,
            started,
            ended: Instant::now(),
            client_gone,
        });
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
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
                endpoint: self.endpoint,
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

/// Renders chat messages with the stand-in's fixed ChatML template, as `/apply-template` answers
/// and a chat completion reads them; a message without a text `role` or `content` counts as a
/// user message or as empty.
fn render_chat(messages: &[Value]) -> String {
    let mut prompt = String::new();
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let content = message.get("content").and_then(Value::as_str).unwrap_or("");
        prompt.push_str(&format!("<|im_start|>{role}\n{content}<|im_end|>\n"));
    }
    prompt.push_str("<|im_start|>assistant\n");
    prompt
}

/// The tokens of a prompt text with their pieces: [`BOS_TOKEN`] first with `add_special`, then one
/// per word (with its leading whitespace), whose id is a hash of the word.
fn prompt_pieces(text: &str, add_special: bool) -> Vec<(u32, String)> {
    let bos = add_special.then(|| (BOS_TOKEN, BOS_PIECE.to_owned()));
    let words = tokenize(text).into_iter().map(|word| {
        let id = FIRST_WORD_TOKEN
            + (fnv1a(word.as_bytes()) % u64::from(VOCAB_SIZE - FIRST_WORD_TOKEN)) as u32;
        (id, word)
    });
    bos.into_iter().chain(words).collect()
}

fn prompt_tokens(text: &str, add_special: bool) -> Vec<u32> {
    prompt_pieces(text, add_special)
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// A request's `messages`, which must be an array.
fn messages_of(body: &Value) -> Result<&[Value], Response> {
    body.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| invalid_request("'messages' is required and must be an array"))
}

fn flag(body: &Value, name: &str, default: bool) -> bool {
    body.get(name).and_then(Value::as_bool).unwrap_or(default)
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
) -> Result<Response, Response> {
    let body = parse_body(&bytes)?;
    let messages = messages_of(&body)?;
    let prompt = prompt_tokens(&render_chat(messages), true);
    shared.lock().chat_bodies.push(body.clone());
    let model = resolve_post_model(&shared, &body, &query, Endpoint::ChatCompletions).await?;
    let reuse_cache = flag(&body, "cache_prompt", true);
    let Some(mut lease) = SlotLease::acquire(
        &shared,
        &model,
        Endpoint::ChatCompletions,
        &prompt,
        reuse_cache,
    ) else {
        return Err(invalid_request(&format!("model '{model}' not found")));
    };
    let max_tokens = body
        .get("max_tokens")
        .or_else(|| body.get("n_predict"))
        .and_then(Value::as_i64)
        .filter(|&n| n >= 0)
        .map(|n| n as usize);
    let (tokens, finish_reason) = answer_tokens(&shared, &model, &body, max_tokens);
    let completion = Completion {
        id: format!("chatcmpl-standin{}", lease.slot),
        model: model.clone(),
        created: shared.lock().created,
        prompt_tokens: prompt.len(),
        cached: lease.cached,
        tokens,
        finish_reason,
    };
    if !flag(&body, "stream", false) {
        read_prompt_at_once(&lease, &prompt);
        decode_unstreamed(&shared, &lease, completion.tokens.len()).await;
        lease.tokens_sent = completion.tokens.len();
        lease.finished = true;
        drop(lease);
        return Ok(Json(completion.full_response()).into_response());
    }
    if flag(&body, "return_progress", false) {
        let events = spawn_prompt_read(&shared, lease, prompt);
        return Ok(streamed_completion(
            shared,
            None,
            completion,
            StreamStep::Reading(events),
        ));
    }
    read_prompt_at_once(&lease, &prompt);
    Ok(streamed_completion(
        shared,
        Some(lease),
        completion,
        StreamStep::Role,
    ))
}

/// The answer's tokens (the next scripted reply of `model`, else the responder's answer to
/// `body`, else [`crate::DEFAULT_REPLY`]), cut at `max_tokens`, and the finish reason that goes
/// with them.
fn answer_tokens(
    shared: &Shared,
    model: &str,
    body: &Value,
    max_tokens: Option<usize>,
) -> (Vec<String>, &'static str) {
    let (scripted, responder) = {
        let mut inner = shared.lock();
        let scripted = inner
            .model_mut(model)
            .and_then(|state| state.replies.pop_front());
        (scripted, inner.responder.clone())
    };
    // The responder runs outside the lock: it is the test's code.
    let reply = scripted
        .or_else(|| responder.and_then(|respond| respond(body)))
        .unwrap_or_else(|| crate::DEFAULT_REPLY.to_owned());
    let mut tokens = tokenize(&reply);
    match max_tokens {
        Some(limit) if limit < tokens.len() => {
            tokens.truncate(limit);
            (tokens, "length")
        }
        _ => (tokens, "stop"),
    }
}

/// Holds the slot for as long as generating `n_tokens` would take, for an answer sent whole.
async fn decode_unstreamed(shared: &Shared, lease: &SlotLease, n_tokens: usize) {
    for _ in 0..n_tokens {
        let wait = {
            let inner = shared.lock();
            step_time(&inner, lease, inner.token_pace)
        };
        tokio::time::sleep(wait).await;
    }
}

/// Reads `prompt` into the leased slot in no time (a request that does not ask for its prompt's
/// progress), leaving the slot's cache holding it.
fn read_prompt_at_once(lease: &SlotLease, prompt: &[u32]) {
    let started = Instant::now();
    lease.edit_cache(|cache| *cache = prompt.to_vec());
    lease.log_read(prompt.len(), started, false);
}

/// What a prompt read tells its request.
enum PromptEvent {
    /// `processed` tokens of the prompt are in the slot (the cached prefix included), `time_ms`
    /// after the read started.
    Progress { processed: usize, time_ms: u64 },
    /// The prompt is read; the slot comes back to the request for its answer.
    Read(SlotLease),
}

/// Has the leased slot read `prompt` batch by batch, apart from the request, because llama-server
/// reads a prompt to its end whether or not its client is still there. The request follows the
/// read on the returned channel; when it has gone, the slot comes back to no one at the end and
/// is freed then, recording the drop.
fn spawn_prompt_read(
    shared: &Arc<Shared>,
    lease: SlotLease,
    prompt: Vec<u32>,
) -> mpsc::UnboundedReceiver<PromptEvent> {
    let (events, receiver) = mpsc::unbounded_channel();
    let reader = tokio::spawn(read_prompt(shared.clone(), lease, prompt, events));
    let mut inner = shared.lock();
    inner.readers.retain(|reader| !reader.is_finished());
    inner.readers.push(reader);
    receiver
}

async fn read_prompt(
    shared: Arc<Shared>,
    lease: SlotLease,
    prompt: Vec<u32>,
    events: mpsc::UnboundedSender<PromptEvent>,
) {
    let started = Instant::now();
    let clock = tokio::time::Instant::now();
    let total = prompt.len();
    let mut processed = lease.cached;
    lease.edit_cache(|cache| cache.truncate(processed));
    loop {
        // A client that went is no reason to stop: the sends fail and the read goes on.
        let time_ms = clock.elapsed().as_millis() as u64;
        let _ = events.send(PromptEvent::Progress { processed, time_ms });
        if processed >= total {
            break;
        }
        if stream_step(&shared, &lease, |inner| inner.prompt_pace)
            .await
            .is_none()
        {
            return;
        }
        let batch_end = (processed + shared.lock().batch_tokens).min(total);
        lease.edit_cache(|cache| cache.extend_from_slice(&prompt[processed..batch_end]));
        processed = batch_end;
    }
    lease.log_read(total, started, events.is_closed());
    // The first write after the prompt: a client that went is seen gone now, and the lease,
    // handed to no one, frees the slot and records the drop.
    let _ = events.send(PromptEvent::Read(lease));
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
    /// Prompt tokens found in the slot's cache.
    cached: usize,
    tokens: Vec<String>,
    finish_reason: &'static str,
}

impl Completion {
    fn usage(&self) -> Value {
        json!({
            "completion_tokens": self.tokens.len(),
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.tokens.len() + self.prompt_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached},
        })
    }

    /// llama-server's `timings`, as far as the stand-in models them.
    fn timings(&self) -> Value {
        json!({
            "cache_n": self.cached,
            "prompt_n": self.prompt_tokens - self.cached,
            "predicted_n": self.tokens.len(),
        })
    }

    /// What comes after the role chunk: the first token, or the final chunk of an empty answer.
    fn after_role(&self) -> StreamStep {
        if self.tokens.is_empty() {
            StreamStep::Final
        } else {
            StreamStep::Token(0)
        }
    }

    fn role_chunk(&self) -> Value {
        self.chunk(json!({"role": "assistant", "content": null}), None)
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
    /// Prompt-progress chunks from the prompt read, until it hands the slot back.
    Reading(mpsc::UnboundedReceiver<PromptEvent>),
    Role,
    Token(usize),
    Final,
    Done,
    Ended,
}

/// Streams the completion: from `first`, which is [`StreamStep::Reading`] (a chunk per prompt
/// batch as the read reports it, `lease` being `None` until the read hands the slot back) or
/// [`StreamStep::Role`]; then token by token. The [`SlotLease`] lives inside the stream once the
/// prompt is read, so when hyper drops the body because the client went away, the answer stops
/// and the slot is freed at once; a prompt being read is read to its end first.
fn streamed_completion(
    shared: Arc<Shared>,
    lease: Option<SlotLease>,
    completion: Completion,
    first: StreamStep,
) -> Response {
    let state = (shared, lease, completion, first);
    let stream =
        futures_util::stream::unfold(state, |(shared, mut lease, completion, step)| async move {
            let (bytes, next) = match step {
                StreamStep::Reading(mut events) => match events.recv().await? {
                    PromptEvent::Progress { processed, time_ms } => {
                        let mut chunk = completion.role_chunk();
                        chunk["prompt_progress"] = json!({
                            "total": completion.prompt_tokens,
                            "cache": completion.cached,
                            "processed": processed,
                            "time_ms": time_ms,
                        });
                        (sse_event(&chunk), StreamStep::Reading(events))
                    }
                    PromptEvent::Read(read) => {
                        lease = Some(read);
                        (sse_event(&completion.role_chunk()), completion.after_role())
                    }
                },
                StreamStep::Role => (sse_event(&completion.role_chunk()), completion.after_role()),
                StreamStep::Token(index) => {
                    let answering = lease
                        .as_mut()
                        .expect("the answer starts once the prompt read handed the slot back");
                    stream_step(&shared, answering, |inner| inner.token_pace).await?;
                    answering.tokens_sent = index + 1;
                    if let Some(state) = shared.lock().model_mut(&answering.model) {
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
                    chunk["timings"] = completion.timings();
                    (sse_event(&chunk), StreamStep::Done)
                }
                StreamStep::Done => {
                    if let Some(finished) = lease.as_mut() {
                        finished.finished = true;
                    }
                    (Bytes::from_static(b"data: [DONE]\n\n"), StreamStep::Ended)
                }
                StreamStep::Ended => return None,
            };
            Some((
                Ok::<Bytes, std::io::Error>(bytes),
                (shared, lease, completion, next),
            ))
        });
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

/// `POST /apply-template`: the prompt text a chat request's messages make, `{"prompt"}`.
async fn apply_template(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    bytes: Bytes,
) -> Result<Response, Response> {
    let body = parse_body(&bytes)?;
    let messages = messages_of(&body)?;
    let prompt = render_chat(messages);
    resolve_post_model(&shared, &body, &query, Endpoint::ApplyTemplate).await?;
    Ok(Json(json!({"prompt": prompt})).into_response())
}

/// `POST /tokenize`: `{"tokens": [ids]}`, or `[{"id","piece"}]` with `with_pieces`; no `content`
/// tokenizes nothing, as on llama-server.
async fn tokenize_prompt(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    bytes: Bytes,
) -> Result<Response, Response> {
    let body = parse_body(&bytes)?;
    let text = match body.get("content") {
        None => "",
        Some(Value::String(text)) => text.as_str(),
        Some(_) => return Err(invalid_request("\"content\" must be a string")),
    };
    resolve_post_model(&shared, &body, &query, Endpoint::Tokenize).await?;
    let pieces = prompt_pieces(text, flag(&body, "add_special", false));
    let tokens: Vec<Value> = if flag(&body, "with_pieces", false) {
        pieces
            .into_iter()
            .map(|(id, piece)| json!({"id": id, "piece": piece}))
            .collect()
    } else {
        pieces.into_iter().map(|(id, _)| json!(id)).collect()
    };
    Ok(Json(json!({"tokens": tokens})).into_response())
}

/// The `prompt` of a `/completion` body: text (tokenized with BOS, as llama-server does) or
/// token ids.
fn completion_prompt(body: &Value) -> Result<Vec<u32>, Response> {
    let prompt = match body.get("prompt") {
        None => return Err(invalid_request("\"prompt\" must be provided")),
        Some(Value::String(text)) => prompt_tokens(text, true),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_u64().and_then(|id| u32::try_from(id).ok()))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| {
                invalid_request("\"prompt\" must be a string or an array of token ids")
            })?,
        Some(_) => {
            return Err(invalid_request(
                "\"prompt\" must be a string or an array of token ids",
            ))
        }
    };
    if prompt.is_empty() {
        return Err(invalid_request("the prompt is empty"));
    }
    Ok(prompt)
}

/// `POST /completion`: reads `prompt` into a slot's cache at the prompt pace, to its end even if
/// the client goes, then answers `n_predict` tokens (none for 0; all of the reply for -1, the
/// default), sent whole: the stand-in streams only chat completions.
async fn completion(
    State(shared): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    bytes: Bytes,
) -> Result<Response, Response> {
    let body = parse_body(&bytes)?;
    let prompt = completion_prompt(&body)?;
    let model = resolve_post_model(&shared, &body, &query, Endpoint::Completion).await?;
    if flag(&body, "stream", false) {
        return Err(error(
            StatusCode::NOT_IMPLEMENTED,
            "the stand-in streams /v1/chat/completions only); ask /completion without stream",
            "not_supported_error",
        ));
    }
    let n_predict = body.get("n_predict").and_then(Value::as_i64).unwrap_or(-1);
    let reuse_cache = flag(&body, "cache_prompt", true);
    let Some(lease) =
        SlotLease::acquire(&shared, &model, Endpoint::Completion, &prompt, reuse_cache)
    else {
        return Err(invalid_request(&format!("model '{model}' not found")));
    };
    let cached = lease.cached;
    let total = prompt.len();
    let mut events = spawn_prompt_read(&shared, lease, prompt);
    // If the client goes meanwhile, this future is dropped and the read goes on without it.
    let mut lease = loop {
        match events.recv().await {
            Some(PromptEvent::Progress { .. }) => continue,
            Some(PromptEvent::Read(lease)) => break lease,
            None => {
                return Err(error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "stand-in stopped",
                    "unavailable_error",
                ));
            }
        }
    };
    let (tokens, stop_type) = if n_predict == 0 {
        (Vec::new(), "limit")
    } else {
        let limit = usize::try_from(n_predict).ok();
        match answer_tokens(&shared, &model, &body, limit) {
            (tokens, "length") => (tokens, "limit"),
            (tokens, _) => (tokens, "eos"),
        }
    };
    decode_unstreamed(&shared, &lease, tokens.len()).await;
    lease.tokens_sent = tokens.len();
    lease.finished = true;
    let slot = lease.slot;
    drop(lease);
    Ok(Json(json!({
        "index": 0,
        "content": tokens.concat(),
        "tokens": [],
        "id_slot": slot,
        "stop": true,
        "model": model,
        "tokens_predicted": tokens.len(),
        "tokens_evaluated": total,
        "tokens_cached": total + tokens.len(),
        "truncated": false,
        "stop_type": stop_type,
        "stopping_word": "",
        "timings": {"cache_n": cached, "prompt_n": total - cached, "predicted_n": tokens.len()},
    }))
    .into_response())
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
) -> Result<Response, Response> {
    let body = parse_body(&bytes)?;
    let model = resolve_post_model(&shared, &body, &query, Endpoint::Embeddings).await?;
    let (serves, dim) = {
        let inner = shared.lock();
        (inner.serves_embeddings, inner.embedding_dim)
    };
    if !serves {
        return Err(error(
            StatusCode::NOT_IMPLEMENTED,
            "This server does not support embeddings. Start it with `--embeddings`",
            "not_supported_error",
        ));
    }
    let inputs: Vec<String> = match body.get("input").or_else(|| body.get("content")) {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => {
            return Err(invalid_request(
                "\"input\" must be a string or an array of strings",
            ))
        }
    };
    let n_tokens: usize = inputs.iter().map(|text| tokenize(text).len()).sum();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": embed(text, dim)}))
        .collect();
    Ok(Json(json!({
        "object": "list",
        "model": model,
        "data": data,
        "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens},
    }))
    .into_response())
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

async fn models_load(State(shared): State<AppState>, bytes: Bytes) -> Result<Response, Response> {
    let model = admin_model(&shared, &bytes).await?;
    ensure_loaded(&shared, &model, true, Endpoint::ModelsAdmin).await?;
    Ok(Json(json!({"success": true})).into_response())
}

async fn models_unload(State(shared): State<AppState>, bytes: Bytes) -> Result<Response, Response> {
    let model = admin_model(&shared, &bytes).await?;
    let mut inner = shared.lock();
    let Some(state) = inner.model_mut(&model) else {
        return Err(invalid_request("model is not found"));
    };
    if !matches!(state.status, ModelStatus::Loaded | ModelStatus::Sleeping) {
        return Err(invalid_request("model is not running"));
    }
    state.status = ModelStatus::Unloaded;
    Ok(Json(json!({"success": true})).into_response())
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
