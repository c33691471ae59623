//! A faithful stand-in for llama.cpp's `llama-server`, for Lull's tests, demos and benchmarks.
//!
//! Lull's engine decides when the GPU is free by watching a managed `llama-server`. Testing that
//! against the real binary is slow and needs a model, so this crate serves the same HTTP surface
//! from an in-process axum server whose every state a test can set and observe:
//!
//! - [`StandIn`] is the running server: start it with [`StandIn::start`], read its
//!   [`StandIn::base_url`] (ending in `/v1`, as the supervisor's state file has it), drive it with
//!   the setters ([`StandIn::set_ready`], [`StandIn::set_busy`], [`StandIn::set_model_status`],
//!   [`StandIn::push_reply`], [`StandIn::inject_fault`], …) and read its counters
//!   ([`StandIn::requests`], [`StandIn::loads`], [`StandIn::stream_drops`],
//!   [`StandIn::tokens_streamed`], [`StandIn::prompt_reads`], …). It stops when dropped.
//! - [`StandInConfig`] says what to serve: [`Mode::Single`] (one model, `GET /v1/models`) or
//!   [`Mode::Router`] (many models with a [`ModelStatus`] each, `GET /models`), the API key, the
//!   token pace, the prompt pace and batch size, the contention factor, the slot count, the
//!   embedding size.
//! - [`Endpoint`] and [`Fault`] name the endpoints and the faults a test can inject on them;
//!   [`wait_until`] waits for one of its counters.
//!
//! What it mirrors from the real server (llama.cpp `tools/server`):
//!
//! - While not ready every endpoint answers 503 `{"error":{"code":503,"message":"Loading model",
//!   "type":"unavailable_error"}}`; once ready `GET /health` answers `{"status":"ok"}`.
//! - `/health`, `/v1/health`, `/models` and `/v1/models` are public; every other endpoint needs
//!   `Authorization: Bearer <key>` (or `X-Api-Key`) when a key is set, else 401 with
//!   `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`.
//! - In router mode `/models` and `/v1/models` list every model with `status.value`; a request
//!   naming a model that is not loaded loads it (recorded in [`StandIn::loads`]) unless the query
//!   says `autoload=false`, which answers 400 `model is not loaded` instead. `GET /slots` needs
//!   `?model=`. Like the real server, `/slots` **wakes a sleeping model** (in both modes, even
//!   with `autoload=false`); `GET /props` reports `is_sleeping` without waking it.
//! - `GET /slots` reports `is_processing` per slot: true while a test forces it
//!   ([`StandIn::set_busy`]) or while a completion holds the slot. A streamed completion's answer
//!   stops, and its slot is freed, the moment the client's connection is seen gone, and the
//!   stand-in records when ([`StandIn::stream_drops`]).
//! - A prompt is text the server renders and tokenizes itself: `POST /apply-template`
//!   (`{messages}` → `{"prompt"}`) renders messages with a fixed ChatML template
//!   (`<|im_start|>{role}\n{content}<|im_end|>\n` each, then `<|im_start|>assistant\n`), and
//!   `POST /tokenize` (`{content, add_special, with_pieces}` → `{"tokens"}`) splits text into
//!   words with their leading whitespace, one token id each (a hash of the word), after a BOS id
//!   ([`BOS_TOKEN`]) when `add_special`. A chat request's prompt is its messages rendered and
//!   tokenized that way, BOS included; its `usage.prompt_tokens` counts them.
//! - Each slot keeps a prompt cache: the tokens it read last. A request takes the idle slot whose
//!   cache shares the longest prefix with its prompt and reads only the tokens after that prefix
//!   (at least one, as llama-server must evaluate one to sample); `"cache_prompt": false`
//!   reuses nothing. `POST /completion` with `"n_predict": 0` and a `prompt` (text, or token ids
//!   as `/tokenize` gave them) only reads the prompt into the slot's cache and answers
//!   `{"content":"","tokens_cached","tokens_evaluated","timings":{"cache_n","prompt_n"},…}`
//!   (another `n_predict` answers that many tokens after it, sent whole; `"stream": true` there
//!   answers 501). The three routes take the key and, in router mode, the body's `model`, like
//!   the chat route.
//! - A prompt is read in batches of [`StandInConfig::batch_tokens`] (llama-server's `n_batch`),
//!   one [`StandInConfig::prompt_pace`] each, holding the slot: always for `/completion`, and for
//!   a streamed chat completion asking `"return_progress": true`, which sends a chunk with
//!   `"delta":{"role":"assistant","content":null}` and
//!   `"prompt_progress":{"total","cache","processed","time_ms"}` at once (`processed` is the
//!   cached prefix, 0 without one; it counts the cache, as llama-server's does), then one per
//!   batch until `processed` reaches `total`, then the tokens. A chat completion without it reads
//!   its prompt in no time and sends no such chunk.
//! - **A prompt being read is read to its end even when the client has gone**, as on the real
//!   server (measured: a review prompt dropped 0.5 s in kept llama-server reading for 63 s): the
//!   slot stays busy until the last batch, and only then is the drop seen and the slot freed.
//!   Every read is logged ([`StandIn::prompt_reads`]: total, cached, when, whether the client was
//!   gone by its end).
//! - Slots of one model share the compute, as llama-server batches every busy slot together:
//!   while another slot of the model is busy (forced or by another request), each token step
//!   (streamed or not) and each prompt batch of a completion takes
//!   [`StandInConfig::contention_factor`] times its pace (measured on llama.cpp: token gaps went
//!   from ~8 ms to 1.3–3 s while another client's prompt was processed). Each step is priced as
//!   it starts, so a slot that turns busy or free mid-step changes the next step.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use lull_stand_in::{StandIn, StandInConfig};
//! let server = StandIn::start(StandInConfig::single("tiny")).await?;
//! server.set_busy("tiny", 0, true);
//! println!("probe me at {}", server.base_url());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod app;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Default pause between two streamed tokens: slow enough for a test to see a busy slot,
/// fast enough that a whole reply takes well under a second.
pub const DEFAULT_TOKEN_PACE: Duration = Duration::from_millis(20);
/// Default time a router-mode model takes to load when a request wakes it.
pub const DEFAULT_LOAD_TIME: Duration = Duration::from_millis(200);
/// Default embedding dimension, small so tests stay fast.
pub const DEFAULT_EMBEDDING_DIM: usize = 64;
/// Default time one prompt batch takes: small, so a completion asking for its prompt progress
/// still starts answering at once in tests.
pub const DEFAULT_PROMPT_PACE: Duration = Duration::from_millis(20);
/// Default prompt tokens per batch: llama-server's default `n_batch`.
pub const DEFAULT_BATCH_TOKENS: usize = 2048;
/// Default slowdown of a step while another slot of the model is busy: in the range measured
/// on llama.cpp (~8 ms token gaps became 1.3–3 s while another client's prompt was processed).
pub const DEFAULT_CONTENTION_FACTOR: f64 = 25.0;
/// The id `/tokenize` puts first when asked `add_special` (a chat prompt always starts with it).
pub const BOS_TOKEN: u32 = 1;
/// Default number of slots per model (llama-server's `--parallel`).
pub const DEFAULT_SLOTS: usize = 2;
/// The reply a completion gets when no scripted reply is queued for its model.
pub const DEFAULT_REPLY: &str = "This is the stand-in llama-server speaking.";
/// How long [`StandIn::stop`] waits for open connections to finish before giving up on them.
const STOP_DEADLINE: Duration = Duration::from_secs(2);

/// Which of llama-server's two shapes to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `llama-server -m model.gguf`: one model, listed by `GET /v1/models`, slots at `GET /slots`.
    Single,
    /// `llama-server --models-dir …`: many models with a status each, listed by `GET /models`,
    /// slots at `GET /slots?model=<id>`.
    Router,
}

/// A router-mode model's status, as `data[].status.value` of `GET /models` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelStatus {
    /// In memory and serving.
    Loaded,
    /// Being loaded; requests wait for it.
    Loading,
    /// On disk only; a request naming it loads it (possibly evicting another).
    Unloaded,
    /// Unloaded after `--sleep-idle-seconds` of idleness; a task wakes it, `/health`, `/models`
    /// and `/slots` do not.
    Sleeping,
    /// Being downloaded.
    Downloading,
}

impl ModelStatus {
    /// The wire spelling, e.g. `"loaded"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelStatus::Loaded => "loaded",
            ModelStatus::Loading => "loading",
            ModelStatus::Unloaded => "unloaded",
            ModelStatus::Sleeping => "sleeping",
            ModelStatus::Downloading => "downloading",
        }
    }

    /// Parses the wire spelling; `None` for anything else.
    pub fn parse(text: &str) -> Option<ModelStatus> {
        Some(match text {
            "loaded" => ModelStatus::Loaded,
            "loading" => ModelStatus::Loading,
            "unloaded" => ModelStatus::Unloaded,
            "sleeping" => ModelStatus::Sleeping,
            "downloading" => ModelStatus::Downloading,
            _ => return None,
        })
    }
}

impl fmt::Display for ModelStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One model the stand-in serves.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    /// The model id clients name (`model` in request bodies, `data[].id` in listings).
    pub id: String,
    /// Its status at start (router mode; a single-mode model is loaded once the server is ready).
    pub status: ModelStatus,
    /// Its number of slots (`--parallel`).
    pub n_slots: usize,
}

impl ModelSpec {
    /// A model with [`DEFAULT_SLOTS`] slots.
    pub fn new(id: impl Into<String>, status: ModelStatus) -> ModelSpec {
        ModelSpec {
            id: id.into(),
            status,
            n_slots: DEFAULT_SLOTS,
        }
    }
}

/// What to serve; build it with [`StandInConfig::single`] or [`StandInConfig::router`] and the
/// `with_*` methods.
#[derive(Debug, Clone)]
pub struct StandInConfig {
    /// Single-model or router mode.
    pub mode: Mode,
    /// The models; in single mode only the first is served.
    pub models: Vec<ModelSpec>,
    /// The key clients must send as `Authorization: Bearer <key>`; `None` accepts anything.
    pub api_key: Option<String>,
    /// Whether the server is ready at start; `false` means "loading" (every endpoint 503s).
    pub ready: bool,
    /// Pause before each streamed token.
    pub token_pace: Duration,
    /// Time one prompt batch takes, for completions asking `return_progress`.
    pub prompt_pace: Duration,
    /// Prompt tokens per batch (llama-server's `n_batch`); at least 1.
    pub batch_tokens: usize,
    /// How many times its pace a token step or prompt batch takes while another slot of the same
    /// model is busy; 1.0 turns contention off, and lower values count as 1.0.
    pub contention_factor: f64,
    /// How long a router-mode load takes.
    pub load_time: Duration,
    /// Size of `/v1/embeddings` vectors.
    pub embedding_dim: usize,
    /// Whether `/v1/embeddings` is served (`--embeddings`); otherwise it answers 501.
    pub serves_embeddings: bool,
    /// Port to bind on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// A file that gets one line per request, as it arrives: milliseconds since the Unix epoch,
    /// the method and the path (`1796330064044 GET /slots`). For scripts that check, from
    /// outside the process, what was asked of the server and when.
    pub request_log: Option<PathBuf>,
}

impl StandInConfig {
    /// A single-model server, ready, with model `id`.
    pub fn single(id: impl Into<String>) -> StandInConfig {
        StandInConfig::with_models(Mode::Single, vec![ModelSpec::new(id, ModelStatus::Loaded)])
    }

    /// A router-mode server with these models and statuses.
    pub fn router<I, S>(models: I) -> StandInConfig
    where
        I: IntoIterator<Item = (S, ModelStatus)>,
        S: Into<String>,
    {
        let models = models
            .into_iter()
            .map(|(id, status)| ModelSpec::new(id, status))
            .collect();
        StandInConfig::with_models(Mode::Router, models)
    }

    fn with_models(mode: Mode, models: Vec<ModelSpec>) -> StandInConfig {
        StandInConfig {
            mode,
            models,
            api_key: None,
            ready: true,
            token_pace: DEFAULT_TOKEN_PACE,
            prompt_pace: DEFAULT_PROMPT_PACE,
            batch_tokens: DEFAULT_BATCH_TOKENS,
            contention_factor: DEFAULT_CONTENTION_FACTOR,
            load_time: DEFAULT_LOAD_TIME,
            embedding_dim: DEFAULT_EMBEDDING_DIM,
            serves_embeddings: true,
            port: 0,
            request_log: None,
        }
    }

    /// Requires this bearer key on non-public endpoints.
    pub fn with_api_key(mut self, key: impl Into<String>) -> StandInConfig {
        self.api_key = Some(key.into());
        self
    }

    /// Starts in the "loading model" state (503 everywhere) until [`StandIn::set_ready`].
    pub fn loading(mut self) -> StandInConfig {
        self.ready = false;
        self
    }

    /// Sets the pause before each streamed token.
    pub fn with_pace(mut self, pace: Duration) -> StandInConfig {
        self.token_pace = pace;
        self
    }

    /// Sets the time one prompt batch takes (completions asking `return_progress`).
    pub fn with_prompt_pace(mut self, pace: Duration) -> StandInConfig {
        self.prompt_pace = pace;
        self
    }

    /// Sets the prompt tokens per batch, so a test can get many progress chunks from a short
    /// prompt.
    pub fn with_batch_tokens(mut self, batch_tokens: usize) -> StandInConfig {
        self.batch_tokens = batch_tokens;
        self
    }

    /// Sets how many times slower a step is while another slot of the model is busy; 1.0 turns
    /// the shared-compute slowdown off.
    pub fn with_contention_factor(mut self, factor: f64) -> StandInConfig {
        self.contention_factor = factor;
        self
    }

    /// Sets every model's slot count.
    pub fn with_slots(mut self, n_slots: usize) -> StandInConfig {
        for model in &mut self.models {
            model.n_slots = n_slots;
        }
        self
    }

    /// Sets how long a router-mode load takes.
    pub fn with_load_time(mut self, load_time: Duration) -> StandInConfig {
        self.load_time = load_time;
        self
    }

    /// Sets the embedding dimension.
    pub fn with_embedding_dim(mut self, dim: usize) -> StandInConfig {
        self.embedding_dim = dim;
        self
    }

    /// Turns `/v1/embeddings` off (501), like a server started without `--embeddings`.
    pub fn without_embeddings(mut self) -> StandInConfig {
        self.serves_embeddings = false;
        self
    }

    /// Binds this port instead of a free one (for the binary and demos).
    pub fn with_port(mut self, port: u16) -> StandInConfig {
        self.port = port;
        self
    }

    /// Appends a line per request to `path` (see [`StandInConfig::request_log`]).
    pub fn with_request_log(mut self, path: impl Into<PathBuf>) -> StandInConfig {
        self.request_log = Some(path.into());
        self
    }
}

/// The endpoints the stand-in counts and can inject faults on. Aliases share one variant
/// (`/health` and `/v1/health` are both [`Endpoint::Health`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// `GET /health`, `GET /v1/health`.
    Health,
    /// `GET /models`, `GET /v1/models`.
    Models,
    /// `GET /slots`.
    Slots,
    /// `POST /v1/chat/completions`, `POST /chat/completions`.
    ChatCompletions,
    /// `POST /completion`, `POST /completions`: llama-server's own completion on a prompt.
    Completion,
    /// `POST /tokenize`.
    Tokenize,
    /// `POST /apply-template`.
    ApplyTemplate,
    /// `POST /v1/embeddings`, `POST /embeddings`.
    Embeddings,
    /// `POST /models/load`, `POST /models/unload` (router mode).
    ModelsAdmin,
    /// Anything else (answered 404 like the real server).
    Other,
}

impl Endpoint {
    /// Classifies a request path.
    pub fn of_path(path: &str) -> Endpoint {
        match path {
            "/health" | "/v1/health" => Endpoint::Health,
            "/models" | "/v1/models" => Endpoint::Models,
            "/slots" => Endpoint::Slots,
            "/v1/chat/completions" | "/chat/completions" => Endpoint::ChatCompletions,
            "/completion" | "/completions" => Endpoint::Completion,
            "/tokenize" => Endpoint::Tokenize,
            "/apply-template" => Endpoint::ApplyTemplate,
            "/v1/embeddings" | "/embeddings" => Endpoint::Embeddings,
            "/models/load" | "/models/unload" => Endpoint::ModelsAdmin,
            _ => Endpoint::Other,
        }
    }
}

/// A fault to inject on an endpoint; it applies to every request there until cleared, before
/// the readiness and key checks (it models a broken server, not a refusing one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer 500 with llama.cpp's `server_error` shape.
    Status500,
    /// Answer 200 with a body that is not JSON.
    Garbage,
    /// Never answer (until the stand-in stops).
    Hang,
    /// Wait this long, then answer normally.
    Slow(Duration),
    /// Cut the connection without a whole answer, as a server process that dies or a proxy
    /// that resets does: the client sees its request fail mid-answer.
    Reset,
}

/// One model load (or wake) a request caused in router mode.
#[derive(Debug, Clone)]
pub struct LoadEvent {
    /// The model loaded.
    pub model: String,
    /// Its status before the load (`unloaded`, `sleeping`, `downloading`).
    pub from: ModelStatus,
    /// The endpoint whose request caused it.
    pub cause: Endpoint,
    /// When the load started.
    pub at: Instant,
}

/// A completion whose client went away before its last chunk (or, for a `/completion`, its
/// answer): seen at the next write, which for a prompt being read is after its last batch.
#[derive(Debug, Clone)]
pub struct StreamDrop {
    /// Where the request came in ([`Endpoint::ChatCompletions`] or [`Endpoint::Completion`]).
    pub endpoint: Endpoint,
    /// The model the completion ran on.
    pub model: String,
    /// The slot it held (freed at `at`).
    pub slot: usize,
    /// Content tokens sent before the drop was seen.
    pub tokens_sent: usize,
    /// When the stand-in saw the drop and freed the slot.
    pub at: Instant,
}

/// One prompt a request had a slot read, logged when the read ended.
#[derive(Debug, Clone)]
pub struct PromptRead {
    /// Where the request came in ([`Endpoint::ChatCompletions`] or [`Endpoint::Completion`]).
    pub endpoint: Endpoint,
    /// The model read on.
    pub model: String,
    /// The slot that read it.
    pub slot: usize,
    /// The prompt's tokens (`prompt_progress.total`).
    pub total: usize,
    /// Tokens found in the slot's cache and not read again (`prompt_progress.cache`).
    pub cached: usize,
    /// When the read started (the request had its slot).
    pub started: Instant,
    /// When the last batch was read (`started` for a read that takes no time).
    pub ended: Instant,
    /// Whether the client was seen gone by the end of the read (it was read to its end anyway).
    pub client_gone: bool,
}

/// One request as the stand-in received it (before faults, readiness or auth).
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// HTTP method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// Which endpoint it counts as.
    pub endpoint: Endpoint,
    /// When it arrived.
    pub at: Instant,
}

/// What one `GET /slots` answered, logged as it was sent: a test checks that a client acted only
/// on an answer that said the slots were free.
#[derive(Debug, Clone)]
pub struct SlotsAnswer {
    /// The model asked about.
    pub model: String,
    /// Slots a test held busy ([`StandIn::set_busy`]): the person's own turns.
    pub forced_busy: usize,
    /// Slots a completion held.
    pub in_flight: usize,
    /// When the request arrived (an injected slowness lies between the two).
    pub asked: Instant,
    /// When the answer was sent.
    pub at: Instant,
}

pub(crate) struct SlotState {
    pub(crate) forced_busy: bool,
    pub(crate) in_flight: usize,
    pub(crate) id_task: i64,
    /// The prompt cache: the tokens this slot read last, as far as it read them.
    pub(crate) cache: Vec<u32>,
}

impl SlotState {
    pub(crate) fn is_processing(&self) -> bool {
        self.forced_busy || self.in_flight > 0
    }
}

pub(crate) struct ModelState {
    pub(crate) id: String,
    pub(crate) status: ModelStatus,
    pub(crate) slots: Vec<SlotState>,
    pub(crate) replies: VecDeque<String>,
    /// Content tokens its streamed completions have sent (see [`StandIn::tokens_streamed`]).
    pub(crate) tokens_streamed: u64,
}

pub(crate) struct Inner {
    pub(crate) mode: Mode,
    pub(crate) ready: bool,
    pub(crate) api_key: Option<String>,
    pub(crate) token_pace: Duration,
    pub(crate) prompt_pace: Duration,
    pub(crate) batch_tokens: usize,
    pub(crate) contention_factor: f64,
    pub(crate) load_time: Duration,
    pub(crate) embedding_dim: usize,
    pub(crate) serves_embeddings: bool,
    pub(crate) models: Vec<ModelState>,
    pub(crate) faults: HashMap<Endpoint, Fault>,
    pub(crate) counts: HashMap<Endpoint, u64>,
    pub(crate) requests: Vec<RequestRecord>,
    /// Where [`StandInConfig::request_log`] lines go.
    pub(crate) request_log: Option<std::fs::File>,
    pub(crate) loads: Vec<LoadEvent>,
    pub(crate) drops: Vec<StreamDrop>,
    pub(crate) prompt_reads: Vec<PromptRead>,
    pub(crate) slots_answers: Vec<SlotsAnswer>,
    /// Prompt reads under way apart from their request (they outlive a client that went);
    /// each ends at its prompt's end or when the stand-in stops, and [`StandIn::stop`] waits.
    pub(crate) readers: Vec<JoinHandle<()>>,
    pub(crate) chat_bodies: Vec<serde_json::Value>,
    /// Answers a completion that has no scripted reply (see [`StandIn::set_responder`]).
    pub(crate) responder: Option<Responder>,
    pub(crate) next_task_id: i64,
    pub(crate) created: u64,
}

impl Inner {
    pub(crate) fn model_mut(&mut self, id: &str) -> Option<&mut ModelState> {
        self.models.iter_mut().find(|model| model.id == id)
    }

    pub(crate) fn model(&self, id: &str) -> Option<&ModelState> {
        self.models.iter().find(|model| model.id == id)
    }
}

/// What [`StandIn::set_responder`] takes: the request's JSON body in, the reply's text out
/// (`None`: [`DEFAULT_REPLY`]).
pub type Responder = Arc<dyn Fn(&serde_json::Value) -> Option<String> + Send + Sync>;

/// State shared between the control API and the HTTP handlers.
pub(crate) struct Shared {
    inner: Mutex<Inner>,
    pub(crate) shutdown: watch::Receiver<bool>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panicking handler must not take the whole stand-in down with a poisoned lock.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running stand-in llama-server on 127.0.0.1; it stops when dropped.
pub struct StandIn {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl fmt::Debug for StandIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StandIn").field("addr", &self.addr).finish()
    }
}

/// Waits until `condition` holds (a counter of the stand-in reaching a value, usually),
/// looking every 5 ms on tokio's clock, so it works on a paused clock too; panics past `limit`.
/// Returns how long it took.
pub async fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> Duration {
    let started = tokio::time::Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    started.elapsed()
}

impl StandIn {
    /// Binds 127.0.0.1 (port from the config, 0 = any free one) and starts serving on the
    /// current tokio runtime.
    pub async fn start(config: StandInConfig) -> anyhow::Result<StandIn> {
        anyhow::ensure!(
            !config.models.is_empty(),
            "the stand-in needs at least one model"
        );
        let models = config
            .models
            .iter()
            .map(|spec| ModelState {
                id: spec.id.clone(),
                status: spec.status,
                slots: (0..spec.n_slots.max(1))
                    .map(|_| SlotState {
                        forced_busy: false,
                        in_flight: 0,
                        id_task: -1,
                        cache: Vec::new(),
                    })
                    .collect(),
                replies: VecDeque::new(),
                tokens_streamed: 0,
            })
            .collect();
        let request_log = match &config.request_log {
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .with_context(|| format!("opening the request log {}", path.display()))?,
            ),
            None => None,
        };
        let (shutdown, shutdown_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                mode: config.mode,
                ready: config.ready,
                api_key: config.api_key.clone(),
                token_pace: config.token_pace,
                prompt_pace: config.prompt_pace,
                batch_tokens: config.batch_tokens.max(1),
                contention_factor: config.contention_factor,
                load_time: config.load_time,
                embedding_dim: config.embedding_dim.max(1),
                serves_embeddings: config.serves_embeddings,
                models,
                faults: HashMap::new(),
                counts: HashMap::new(),
                requests: Vec::new(),
                request_log,
                loads: Vec::new(),
                drops: Vec::new(),
                prompt_reads: Vec::new(),
                slots_answers: Vec::new(),
                readers: Vec::new(),
                chat_bodies: Vec::new(),
                responder: None,
                next_task_id: 0,
                created: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0),
            }),
            shutdown: shutdown_rx.clone(),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|err| {
                anyhow::anyhow!("binding the stand-in on 127.0.0.1:{}: {err}", config.port)
            })?;
        let addr = listener.local_addr()?;
        let router = app::router(shared.clone());
        let mut stop_signal = shutdown_rx;
        let task = tokio::spawn(async move {
            let serving = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = stop_signal.wait_for(|stopped| *stopped).await;
            });
            if let Err(err) = serving.await {
                tracing::warn!("stand-in llama-server stopped with an error: {err}");
            }
        });
        Ok(StandIn {
            shared,
            addr,
            shutdown,
            task: Some(task),
        })
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>`, the server's root (where `/health`, `/models`, `/slots` live).
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:<port>/v1`, the OpenAI-compatible base URL, as the supervisor's state
    /// file records it.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.origin())
    }

    /// The key the server currently requires, if any.
    pub fn api_key(&self) -> Option<String> {
        self.shared.lock().api_key.clone()
    }

    /// Writes a supervisor-style state file (`base_url`, `api_key`, `pid`, `create_time`) at
    /// `path`, atomically (temporary file, then rename), creating missing folders.
    pub fn write_state_file(&self, path: &Path, pid: u32) -> std::io::Result<()> {
        let record = serde_json::json!({
            "base_url": self.base_url(),
            "api_key": self.api_key().unwrap_or_default(),
            "pid": pid,
            "create_time": SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0),
        });
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(&record)?)?;
        std::fs::rename(&tmp, path)
    }

    /// Ready (`/health` 200) or loading (503 on every endpoint).
    pub fn set_ready(&self, ready: bool) {
        self.shared.lock().ready = ready;
    }

    /// Changes the required key (`None` accepts any request).
    pub fn set_api_key(&self, key: Option<&str>) {
        self.shared.lock().api_key = key.map(str::to_owned);
    }

    /// Changes the pause before each streamed token (takes effect at the next token).
    pub fn set_pace(&self, pace: Duration) {
        self.shared.lock().token_pace = pace;
    }

    /// Changes the time one prompt batch takes (takes effect at the next batch).
    pub fn set_prompt_pace(&self, pace: Duration) {
        self.shared.lock().prompt_pace = pace;
    }

    /// Sets a model's status (router mode). Panics on an unknown model: that is a test bug.
    pub fn set_model_status(&self, model: &str, status: ModelStatus) {
        let mut inner = self.shared.lock();
        let state = inner
            .model_mut(model)
            .unwrap_or_else(|| panic!("the stand-in has no model '{model}'"));
        state.status = status;
    }

    /// A model's current status.
    pub fn model_status(&self, model: &str) -> Option<ModelStatus> {
        self.shared.lock().model(model).map(|state| state.status)
    }

    /// Forces a slot's `is_processing` on or off, whatever the requests in flight. Panics on an
    /// unknown model or slot: that is a test bug.
    pub fn set_busy(&self, model: &str, slot: usize, busy: bool) {
        let mut inner = self.shared.lock();
        let state = inner
            .model_mut(model)
            .unwrap_or_else(|| panic!("the stand-in has no model '{model}'"));
        let n_slots = state.slots.len();
        let slot_state = state
            .slots
            .get_mut(slot)
            .unwrap_or_else(|| panic!("model '{model}' has {n_slots} slots, not {}", slot + 1));
        slot_state.forced_busy = busy;
    }

    /// How many of a model's slots report `is_processing` now.
    pub fn busy_slots(&self, model: &str) -> usize {
        self.shared
            .lock()
            .model(model)
            .map(|state| state.slots.iter().filter(|s| s.is_processing()).count())
            .unwrap_or(0)
    }

    /// Queues a reply text for the next completion on `model` (may be deliberately broken JSON);
    /// without one, completions answer [`DEFAULT_REPLY`].
    pub fn push_reply(&self, model: &str, text: impl Into<String>) {
        let mut inner = self.shared.lock();
        let state = inner
            .model_mut(model)
            .unwrap_or_else(|| panic!("the stand-in has no model '{model}'"));
        state.replies.push_back(text.into());
    }

    /// Answers every completion that finds no scripted reply queued with `responder`'s text for
    /// its request body, for a test whose requests come in an order it cannot script (an engine
    /// killed mid-request leaves a queued reply half-used, or used by the wrong request).
    pub fn set_responder(&self, responder: Responder) {
        self.shared.lock().responder = Some(responder);
    }

    /// Injects a fault on every request to `endpoint` until [`StandIn::clear_fault`].
    pub fn inject_fault(&self, endpoint: Endpoint, fault: Fault) {
        self.shared.lock().faults.insert(endpoint, fault);
    }

    /// Removes the fault on `endpoint`.
    pub fn clear_fault(&self, endpoint: Endpoint) {
        self.shared.lock().faults.remove(&endpoint);
    }

    /// Removes every fault.
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Requests received at `endpoint` since start or the last [`StandIn::reset_counters`].
    pub fn requests(&self, endpoint: Endpoint) -> u64 {
        self.shared
            .lock()
            .counts
            .get(&endpoint)
            .copied()
            .unwrap_or(0)
    }

    /// Requests received at any endpoint since start or the last reset.
    pub fn total_requests(&self) -> u64 {
        self.shared.lock().counts.values().sum()
    }

    /// Every request received since start or the last reset, oldest first.
    pub fn request_log(&self) -> Vec<RequestRecord> {
        self.shared.lock().requests.clone()
    }

    /// Model loads (and wakes) requests caused since start or the last reset.
    pub fn loads(&self) -> Vec<LoadEvent> {
        self.shared.lock().loads.clone()
    }

    /// Completions (streamed chat, or `/completion`) whose client went away, since start or the
    /// last reset, in the order the stand-in saw them gone.
    pub fn stream_drops(&self) -> Vec<StreamDrop> {
        self.shared.lock().drops.clone()
    }

    /// Content tokens (one chunk each, at the token pace) the streamed completions on `model`
    /// have sent since start or the last reset, finished or dropped streams included; 0 for an
    /// unknown model. A test waits on it for "the stream went on for N tokens" instead of
    /// sleeping on the wall clock.
    pub fn tokens_streamed(&self, model: &str) -> u64 {
        self.shared
            .lock()
            .model(model)
            .map_or(0, |state| state.tokens_streamed)
    }

    /// Prompts read since start or the last reset (chat completions and `/completion`), in the
    /// order their reads ended. A test waits on it for "the prompt was read to its end".
    pub fn prompt_reads(&self) -> Vec<PromptRead> {
        self.shared.lock().prompt_reads.clone()
    }

    /// Every `GET /slots` answer sent since start or the last reset, oldest first.
    pub fn slots_answers(&self) -> Vec<SlotsAnswer> {
        self.shared.lock().slots_answers.clone()
    }

    /// How many tokens a slot's prompt cache holds now; 0 for an unknown model or slot.
    pub fn cached_tokens(&self, model: &str, slot: usize) -> usize {
        self.shared
            .lock()
            .model(model)
            .and_then(|state| state.slots.get(slot))
            .map_or(0, |slot| slot.cache.len())
    }

    /// Bodies of the chat completion requests received, oldest first.
    pub fn chat_requests(&self) -> Vec<serde_json::Value> {
        self.shared.lock().chat_bodies.clone()
    }

    /// Zeroes the request and streamed-token counters and clears the request, load, drop,
    /// prompt-read, `/slots` and chat logs (not the slots' prompt caches).
    pub fn reset_counters(&self) {
        let mut inner = self.shared.lock();
        inner.counts.clear();
        for model in &mut inner.models {
            model.tokens_streamed = 0;
        }
        inner.requests.clear();
        inner.loads.clear();
        inner.drops.clear();
        inner.prompt_reads.clear();
        inner.slots_answers.clear();
        inner.chat_bodies.clear();
    }

    /// Stops accepting connections, ends hanging and streaming responses and prompt reads, and
    /// waits (briefly) for the server task and the reads to finish.
    pub async fn stop(mut self) {
        let _ = self.shutdown.send(true);
        let readers = std::mem::take(&mut self.shared.lock().readers);
        let task = self.task.take();
        let _ = tokio::time::timeout(STOP_DEADLINE, async move {
            if let Some(task) = task {
                let _ = task.await;
            }
            for reader in readers {
                let _ = reader.await;
            }
        })
        .await;
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}
