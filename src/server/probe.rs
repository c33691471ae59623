//! Asking llama-server how it is: the [`ServerProbe`] seam, the HTTP probe, and a short cache.
//!
//! One probe is `GET /health`, then `GET /models` (falling back to `GET /v1/models` on a server
//! that lacks it), then `GET /slots` — once in single-model mode, once per **loaded** model with
//! `?model=<id>&autoload=false` in router mode. None of these wakes a model except `/slots`: the
//! real server wakes a sleeping model on it (in both modes), so it is only asked of models known
//! to be awake. In single-model mode `GET /props` (`is_sleeping`, exempt from the idle timer)
//! comes first, unless the server's own command line shows it cannot sleep
//! ([`super::launch`]); in router mode `/models` gives each status, and `autoload=false` makes
//! the router refuse rather than load if a model was unloaded in between. A single-model
//! server's model list is remembered for its process (base URL and pid), so later probes of it
//! ask only `/slots` (and `/props` if it may sleep). Every request has a short timeout, so a
//! hung server costs the caller at most a few seconds and reads `unreachable`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::time::Instant;

use super::launch::{sleep_mode, SleepMode};
use super::monitor::InterestGuard;
use super::reading::{ModelReading, ModelStatus, ServerMode, ServerReading, ServerState};
use super::state_file::{read_state_file, StateFileReading, StateFileRecord};
use super::ServerError;

/// Longest wait for one HTTP answer from the managed server. A healthy local server answers in
/// milliseconds; a busy one may take a moment to answer `/slots`.
pub const PROBE_REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest wait to open a connection to the managed server (it is local).
pub const PROBE_CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long a reading is reused before the server is asked again; shorter than the monitor's
/// poll interval, so each poll sees the server afresh.
pub const READING_CACHE_TTL: Duration = Duration::from_millis(250);

/// How the HTTP probe behaves; the defaults are the named constants above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeConfig {
    /// Longest wait for one answer.
    pub request_timeout: Duration,
    /// Longest wait to connect.
    pub connect_timeout: Duration,
    /// How long [`CachedProbe`] reuses a reading.
    pub cache_ttl: Duration,
}

impl Default for ProbeConfig {
    fn default() -> ProbeConfig {
        ProbeConfig {
            request_timeout: PROBE_REQUEST_TIMEOUT,
            connect_timeout: PROBE_CONNECT_TIMEOUT,
            cache_ttl: READING_CACHE_TTL,
        }
    }
}

/// The future a [`ServerProbe`] returns (boxed so the trait works as `Arc<dyn ServerProbe>`).
pub type ReadingFuture<'a> = Pin<Box<dyn Future<Output = ServerReading> + Send + 'a>>;

/// The seam the scheduler asks "is the GPU free?" through. Production uses [`ServerMonitor`]
/// (cached HTTP probe of the real server); tests and simulations use [`ManualProbe`] or their
/// own implementation on a paused clock.
///
/// [`ServerMonitor`]: super::ServerMonitor
pub trait ServerProbe: Send + Sync {
    /// The current reading; may do HTTP, bounded by the probe's timeouts; never fails.
    fn read(&self) -> ReadingFuture<'_>;

    /// A reading taken now, never one remembered from a moment ago: for a question whose answer
    /// changed a moment ago (Lull's own request just let go of its slot).
    fn read_afresh(&self) -> ReadingFuture<'_> {
        self.read()
    }

    /// Keeps the published reading fresh while the guard lives (an open window watching the
    /// server). Only [`ServerMonitor`] publishes readings; any other probe reads on demand, so
    /// its guard is counted by no one.
    ///
    /// [`ServerMonitor`]: super::ServerMonitor
    fn interest(&self) -> InterestGuard {
        InterestGuard::uncounted()
    }

    /// The last reading taken, without asking anyone; `None` when this probe keeps none. An
    /// answer that must not wait on a hung server says what was last known instead.
    fn last_reading(&self) -> Option<ServerReading> {
        None
    }
}

impl<P: ServerProbe + ?Sized> ServerProbe for Arc<P> {
    fn read(&self) -> ReadingFuture<'_> {
        (**self).read()
    }

    fn read_afresh(&self) -> ReadingFuture<'_> {
        (**self).read_afresh()
    }

    fn interest(&self) -> InterestGuard {
        (**self).interest()
    }

    fn last_reading(&self) -> Option<ServerReading> {
        (**self).last_reading()
    }
}

/// The uncached probe: reads the state file, then asks the server over HTTP.
#[derive(Debug, Clone)]
pub struct HttpProbe {
    state_file: PathBuf,
    client: reqwest::Client,
    config: ProbeConfig,
    /// The single-model server last read: its process, model list and sleep setting.
    single_server: Arc<Mutex<Option<KnownServer>>>,
}

/// What cannot change while a single-model server's process lives.
#[derive(Debug, Clone)]
struct KnownServer {
    /// Base URL and pid.
    process: (String, Option<u32>),
    models: Vec<ModelReading>,
    sleep: SleepMode,
}

/// Why one HTTP step failed; turned into a reading's state and reason.
enum StepError {
    Unreachable(String),
    Starting(String),
}

impl HttpProbe {
    /// A probe of the server named by the state file at `state_file`.
    pub fn new(
        state_file: impl Into<PathBuf>,
        config: ProbeConfig,
    ) -> Result<HttpProbe, ServerError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            // The managed server is local; a desktop proxy setting must not reroute the probe.
            .no_proxy()
            .build()
            .map_err(ServerError::HttpClient)?;
        Ok(HttpProbe {
            state_file: state_file.into(),
            client,
            config,
            single_server: Arc::default(),
        })
    }

    /// The state file this probe reads.
    pub fn state_file(&self) -> &Path {
        &self.state_file
    }

    /// Reads the state file and, if it names a live server, asks the server.
    pub async fn probe(&self) -> ServerReading {
        match read_state_file(&self.state_file) {
            StateFileReading::Absent => ServerReading::not_ready(
                ServerState::Absent,
                None,
                format!(
                    "no managed server: {} does not exist",
                    self.state_file.display()
                ),
            ),
            StateFileReading::Invalid { reason } => {
                ServerReading::not_ready(ServerState::Invalid, None, reason)
            }
            StateFileReading::Stale { record, reason } => {
                ServerReading::not_ready(ServerState::Stale, Some(record.base_url), reason)
            }
            StateFileReading::Alive(record) => self.probe_record(&record).await,
        }
    }

    /// Asks the server a state-file record names (no file read).
    pub async fn probe_record(&self, record: &StateFileRecord) -> ServerReading {
        // Each request is bounded by the client's timeout; this bounds the whole sequence too.
        let deadline = self.config.request_timeout * 3 + self.config.connect_timeout;
        let outcome = tokio::time::timeout(deadline, self.probe_steps(record)).await;
        let mut reading = match outcome {
            Ok(Ok(reading)) => reading,
            Ok(Err(StepError::Starting(reason))) => ServerReading::not_ready(
                ServerState::Starting,
                Some(record.base_url.clone()),
                reason,
            ),
            Ok(Err(StepError::Unreachable(reason))) => ServerReading::not_ready(
                ServerState::Unreachable,
                Some(record.base_url.clone()),
                reason,
            ),
            Err(_) => ServerReading::not_ready(
                ServerState::Unreachable,
                Some(record.base_url.clone()),
                format!("the server did not finish answering within {deadline:?}"),
            ),
        };
        reading.api_key = record.api_key.clone();
        reading
    }

    async fn probe_steps(&self, record: &StateFileRecord) -> Result<ServerReading, StepError> {
        let process = (record.base_url.clone(), record.pid);
        let remembered = self
            .single_server
            .lock()
            .expect("single_server lock")
            .as_ref()
            .filter(|known| known.process == process)
            .cloned();
        let sleep = match &remembered {
            Some(known) => known.sleep,
            None => record.pid.map_or(SleepMode::Unknown, sleep_mode),
        };
        let steps = self
            .steps(record, remembered.map(|known| known.models), sleep)
            .await;
        let mut single_server = self.single_server.lock().expect("single_server lock");
        *single_server = match &steps {
            Ok(reading) if reading.mode == Some(ServerMode::Single) => {
                let mut models = reading.models.clone();
                for model in &mut models {
                    (model.status, model.busy_slots) = (ModelStatus::Loaded, 0);
                }
                Some(KnownServer {
                    process,
                    models,
                    sleep,
                })
            }
            // Anything else (an error, router mode) asks for the whole sequence next time.
            _ => None,
        };
        steps
    }

    /// The HTTP steps of one reading. A single-model server's model list cannot change while
    /// its process lives, so with `remembered` models it asks only `/props` (unless `sleep` is
    /// [`SleepMode::Never`]) and `/slots` (both answer 503 while the model loads, which
    /// `/health` would otherwise have said).
    async fn steps(
        &self,
        record: &StateFileRecord,
        remembered: Option<Vec<ModelReading>>,
        sleep: SleepMode,
    ) -> Result<ServerReading, StepError> {
        let origin = server_origin(&record.base_url);
        let key = record.api_key.as_ref().map(|key| key.expose());

        let (mode, mut models) = match remembered {
            Some(models) => (ServerMode::Single, models),
            None => {
                self.health(&origin, key).await?;
                self.models(&origin, key).await?
            }
        };
        let mut unknown_slots = None;
        match mode {
            ServerMode::Single
                if sleep != SleepMode::Never && self.is_sleeping(&origin, key).await? =>
            {
                // `/slots` would wake it; a sleeping model is idle by definition.
                for model in &mut models {
                    model.status = ModelStatus::Sleeping;
                }
            }
            ServerMode::Single => {
                match self.slots(&origin, key, None).await? {
                    SlotsAnswer::Busy(n_busy) => {
                        for model in &mut models {
                            model.busy_slots = n_busy;
                        }
                    }
                    SlotsAnswer::Disabled => unknown_slots = Some(()),
                    // A single-model server that is loading says so on /health first; treat a
                    // late "not loaded" like loading.
                    SlotsAnswer::NotLoaded | SlotsAnswer::Loading => {
                        return Err(StepError::Starting(
                            "the server is loading its model (/slots answered 503)".to_owned(),
                        ))
                    }
                }
            }
            ServerMode::Router => {
                let loaded: Vec<usize> = (0..models.len())
                    .filter(|&index| models[index].status == ModelStatus::Loaded)
                    .collect();
                let answers = futures_util::future::join_all(
                    loaded
                        .iter()
                        .map(|&index| self.slots(&origin, key, Some(&models[index].id))),
                )
                .await;
                for (index, answer) in loaded.into_iter().zip(answers) {
                    match answer? {
                        SlotsAnswer::Busy(n_busy) => models[index].busy_slots = n_busy,
                        SlotsAnswer::Disabled => unknown_slots = Some(()),
                        SlotsAnswer::NotLoaded => models[index].status = ModelStatus::Unloaded,
                        SlotsAnswer::Loading => models[index].status = ModelStatus::Loading,
                    }
                }
            }
        }

        let busy: Vec<String> = models
            .iter()
            .filter(|model| model.status == ModelStatus::Loaded && model.busy_slots > 0)
            .map(|model| format!("{} ({} busy)", model.id, model.busy_slots))
            .collect();
        let (idle, reason) = if unknown_slots.is_some() {
            (
                false,
                Some("the server does not serve /slots (started with --no-slots), so Lull cannot tell whether the GPU is free".to_owned()),
            )
        } else if busy.is_empty() {
            (true, None)
        } else {
            (
                false,
                Some(format!("the server is processing: {}", busy.join(", "))),
            )
        };
        Ok(ServerReading {
            state: ServerState::Ready,
            base_url: Some(record.base_url.clone()),
            models,
            idle,
            reason,
            mode: Some(mode),
            api_key: None,
        })
    }

    async fn get(
        &self,
        origin: &str,
        path: &str,
        query: &[(&str, &str)],
        key: Option<&str>,
    ) -> Result<(StatusCode, Result<Value, String>), StepError> {
        let mut request = self.client.get(format!("{origin}{path}"));
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|err| self.transport_error(path, err))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|err| self.transport_error(path, err))?;
        let body = serde_json::from_slice::<Value>(&bytes).map_err(|_| snippet(&bytes));
        Ok((status, body))
    }

    fn transport_error(&self, path: &str, err: reqwest::Error) -> StepError {
        if err.is_timeout() {
            StepError::Unreachable(format!(
                "no answer from {path} within {:?} (the server may be hung)",
                self.config.request_timeout
            ))
        } else if err.is_connect() {
            StepError::Unreachable(format!(
                "cannot connect to the server for {path}: {}",
                error_chain(&err)
            ))
        } else {
            StepError::Unreachable(format!("{path} failed: {}", error_chain(&err)))
        }
    }

    async fn health(&self, origin: &str, key: Option<&str>) -> Result<(), StepError> {
        let (status, body) = self.get(origin, "/health", &[], key).await?;
        match status {
            StatusCode::OK => match body {
                Ok(_) => Ok(()),
                Err(text) => Err(StepError::Unreachable(format!(
                    "/health answered 200 with a body that is not JSON: {text}"
                ))),
            },
            StatusCode::SERVICE_UNAVAILABLE => Err(StepError::Starting(format!(
                "the server is starting: /health answered 503 ({})",
                error_message(&body)
            ))),
            other => Err(refusal_or_error("/health", other, &body)),
        }
    }

    /// Single-model mode: whether the server put its model to sleep (`--sleep-idle-seconds`).
    /// Asked before `/slots` because the real server wakes a sleeping model on `/slots`, and
    /// `/props` does not. A server without `/props` (older builds) has no sleep mode.
    async fn is_sleeping(&self, origin: &str, key: Option<&str>) -> Result<bool, StepError> {
        let (status, body) = self.get(origin, "/props", &[], key).await?;
        match status {
            StatusCode::OK => Ok(body
                .ok()
                .and_then(|props| props.get("is_sleeping").and_then(Value::as_bool))
                .unwrap_or(false)),
            StatusCode::NOT_FOUND => Ok(false),
            StatusCode::SERVICE_UNAVAILABLE => Err(StepError::Starting(
                "the server is loading its model (/props answered 503)".to_owned(),
            )),
            other => Err(refusal_or_error("/props", other, &body)),
        }
    }

    async fn models(
        &self,
        origin: &str,
        key: Option<&str>,
    ) -> Result<(ServerMode, Vec<ModelReading>), StepError> {
        let mut path = "/models";
        let (mut status, mut body) = self.get(origin, path, &[], key).await?;
        if status == StatusCode::NOT_FOUND {
            path = "/v1/models";
            (status, body) = self.get(origin, path, &[], key).await?;
        }
        match status {
            StatusCode::OK => {}
            StatusCode::SERVICE_UNAVAILABLE => {
                return Err(StepError::Starting(format!(
                    "the server is starting: {path} answered 503 ({})",
                    error_message(&body)
                )))
            }
            other => return Err(refusal_or_error(path, other, &body)),
        }
        let body = body.map_err(|text| {
            StepError::Unreachable(format!("{path} answered a body that is not JSON: {text}"))
        })?;
        let Some(entries) = body.get("data").and_then(Value::as_array) else {
            return Err(StepError::Unreachable(format!(
                "{path} answered JSON without a `data` list"
            )));
        };
        let is_router = entries.iter().any(|entry| entry.get("status").is_some());
        let mut models = Vec::with_capacity(entries.len());
        for entry in entries {
            let Some(id) = entry.get("id").and_then(Value::as_str) else {
                return Err(StepError::Unreachable(format!(
                    "{path} listed a model without a string `id`"
                )));
            };
            let status = if is_router {
                entry
                    .get("status")
                    .and_then(|status| status.get("value"))
                    .and_then(Value::as_str)
                    .map(ModelStatus::from_wire)
                    .unwrap_or(ModelStatus::Unknown)
            } else {
                ModelStatus::Loaded
            };
            models.push(ModelReading {
                id: id.to_owned(),
                status,
                busy_slots: 0,
            });
        }
        let mode = if is_router {
            ServerMode::Router
        } else {
            ServerMode::Single
        };
        Ok((mode, models))
    }

    async fn slots(
        &self,
        origin: &str,
        key: Option<&str>,
        model: Option<&str>,
    ) -> Result<SlotsAnswer, StepError> {
        let query: Vec<(&str, &str)> = match model {
            Some(model) => vec![("model", model), ("autoload", "false")],
            None => Vec::new(),
        };
        let what = match model {
            Some(model) => format!("/slots for model {model}"),
            None => "/slots".to_owned(),
        };
        let (status, body) = self.get(origin, "/slots", &query, key).await?;
        match status {
            StatusCode::OK => {}
            StatusCode::NOT_IMPLEMENTED => return Ok(SlotsAnswer::Disabled),
            StatusCode::SERVICE_UNAVAILABLE => return Ok(SlotsAnswer::Loading),
            StatusCode::BAD_REQUEST if model.is_some() => return Ok(SlotsAnswer::NotLoaded),
            other => return Err(refusal_or_error(&what, other, &body)),
        }
        let body = body.map_err(|text| {
            StepError::Unreachable(format!("{what} answered a body that is not JSON: {text}"))
        })?;
        let Some(slots) = body.as_array() else {
            return Err(StepError::Unreachable(format!(
                "{what} answered JSON that is not a list of slots"
            )));
        };
        let n_busy = slots
            .iter()
            .filter(|slot| slot.get("is_processing").and_then(Value::as_bool) == Some(true))
            .count();
        Ok(SlotsAnswer::Busy(n_busy))
    }
}

impl ServerProbe for HttpProbe {
    fn read(&self) -> ReadingFuture<'_> {
        Box::pin(self.probe())
    }
}

enum SlotsAnswer {
    Busy(usize),
    Disabled,
    NotLoaded,
    Loading,
}

/// The server's root from its `/v1` base URL: `http://h:p/v1` → `http://h:p`, keeping any
/// `--api-prefix` before `/v1`. llama-server's own routes (`/health`, `/slots`, `/tokenize`, …)
/// live there.
pub fn server_origin(base_url: &str) -> String {
    let trimmed = base_url.trim().trim_end_matches('/');
    trimmed.strip_suffix("/v1").unwrap_or(trimmed).to_owned()
}

fn refusal_or_error(what: &str, status: StatusCode, body: &Result<Value, String>) -> StepError {
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        StepError::Unreachable(format!(
            "the server refused the api key from the state file ({what} answered {})",
            status.as_u16()
        ))
    } else {
        StepError::Unreachable(format!(
            "{what} answered {} ({})",
            status.as_u16(),
            error_message(body)
        ))
    }
}

/// llama.cpp's `error.message`, or a snippet of whatever came back.
fn error_message(body: &Result<Value, String>) -> String {
    match body {
        Ok(value) => value
            .get("error")
            .and_then(|error| error.get("message"))
            .and_then(Value::as_str)
            .map(|message| format!("\"{message}\""))
            .unwrap_or_else(|| "no error message".to_owned()),
        Err(text) => format!("not JSON: {text}"),
    }
}

fn snippet(bytes: &[u8]) -> String {
    const LIMIT: usize = 60;
    let text = String::from_utf8_lossy(bytes);
    let mut cut: String = text.chars().take(LIMIT).collect();
    cut = cut.escape_debug().to_string();
    if text.chars().count() > LIMIT {
        cut.push('…');
    }
    format!("\"{cut}\"")
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Wraps a probe with a short cache, so many askers in a burst cost the server one probe.
/// Concurrent askers share one probe in flight. Time is `tokio::time::Instant`, so the cache
/// runs on a paused test clock.
pub struct CachedProbe<P> {
    inner: P,
    ttl: Duration,
    cached: tokio::sync::Mutex<Option<(u64, Instant, ServerReading)>>,
    generation: AtomicU64,
}

impl<P: ServerProbe> CachedProbe<P> {
    /// Caches `inner`'s readings for `ttl`.
    pub fn new(inner: P, ttl: Duration) -> CachedProbe<P> {
        CachedProbe {
            inner,
            ttl,
            cached: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
        }
    }

    /// The wrapped probe.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// Forgets the cached reading (the state file changed): the next read asks again.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// A cached reading younger than the ttl, or a fresh one.
    pub async fn read_cached(&self) -> ServerReading {
        let mut cached = self.cached.lock().await;
        let generation = self.generation.load(Ordering::SeqCst);
        if let Some((cached_generation, at, reading)) = cached.as_ref() {
            if *cached_generation == generation && at.elapsed() < self.ttl {
                return reading.clone();
            }
        }
        let reading = self.inner.read().await;
        *cached = Some((generation, Instant::now(), reading.clone()));
        reading
    }
}

impl<P: ServerProbe> ServerProbe for CachedProbe<P> {
    fn read(&self) -> ReadingFuture<'_> {
        Box::pin(self.read_cached())
    }

    fn read_afresh(&self) -> ReadingFuture<'_> {
        self.invalidate();
        Box::pin(self.read_cached())
    }
}

/// A probe that answers whatever it was last told, and counts how often it was asked: for the
/// scheduler's tests and `lull simulate`.
#[derive(Debug)]
pub struct ManualProbe {
    reading: Mutex<ServerReading>,
    reads: AtomicU64,
}

impl ManualProbe {
    /// Answers `reading` until told otherwise.
    pub fn new(reading: ServerReading) -> ManualProbe {
        ManualProbe {
            reading: Mutex::new(reading),
            reads: AtomicU64::new(0),
        }
    }

    /// Changes the answer.
    pub fn set(&self, reading: ServerReading) {
        *self.reading.lock().unwrap_or_else(|p| p.into_inner()) = reading;
    }

    /// How many times [`ServerProbe::read`] was called.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }
}

impl ServerProbe for ManualProbe {
    fn read(&self) -> ReadingFuture<'_> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let reading = self
            .reading
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Box::pin(std::future::ready(reading))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_strips_v1_and_keeps_prefixes() {
        assert_eq!(
            server_origin("http://127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            server_origin("http://127.0.0.1:8080/v1/"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(server_origin("http://h/llama/v1"), "http://h/llama");
        assert_eq!(server_origin("http://h:1"), "http://h:1");
    }

    #[test]
    fn snippet_is_short_and_escaped() {
        assert_eq!(snippet(b"<html>\0"), "\"<html>\\0\"");
        assert!(snippet(&[b'x'; 200]).ends_with("…\""));
    }
}
