//! The engine: one value that owns the store, the settings and the event bus, and offers every
//! operation the API, the CLI and the desktop shell perform.
//!
//! Adapters call these plain async methods and map the results to HTTP or IPC; nothing here
//! knows about either.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use ts_rs::TS;

use crate::config::{Config, DeferMode, Paths};
use crate::data_dir::{create_private_dir, DataDirLock};
use crate::drafts::candidates::{self, Candidate, CandidateStatus};
use crate::drafts::kinds::{DraftWorkParts, EvaluationWork, SynthesisWork};
use crate::drafts::picker::{DraftPicker, Pick};
use crate::drafts::records::{self, DraftStatus};
use crate::drafts::service::{DraftService, DraftView, RolledBack, SkillEntry};
use crate::error_code::ErrorCode;
use crate::events::{EngineEvent, EventBus};
use crate::gate::{EngineClock, GateTiming, IdleGate};
use crate::jobs::records::Stopping;
use crate::jobs::service::{JobService, JobView};
use crate::learning::work;
use crate::learning::{Activity, Dispatcher, RetryPolicy, Targets};
use crate::llm::{ChatEndpoint, ChatMessage, HttpLlmClient, LlmClient};
use crate::power::{self, HostSources, PowerStatus, SleepHandler};
use crate::reviews::{queue, Decision, NewReview, Review, ReviewQueue, ReviewStatus};
use crate::routing::{Outcome, RouteAnswer, RoutingService, RoutingStatus};
use crate::server::{InterestGuard, MonitorConfig, ServerMonitor, ServerProbe, ServerReading};
use crate::settings::{Settings, SettingsPatch};
use crate::skills::{remove_leftover_temp_files, SkillsIndex};
use crate::store::{now_ms, Store, StoreError};

/// Lull's version, reported by `/v1/health` and the UI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The longest `session_key` an agent may send (characters): a key names a session, it does
/// not carry data.
pub const MAX_SESSION_KEY_CHARS: usize = 256;
/// The message roles a transcript may hold (OpenAI's chat roles).
pub const MESSAGE_ROLES: [&str; 4] = ["system", "user", "assistant", "tool"];
/// How far ahead of the engine's clock a review's `snapshot_at` may be (ms): the agent runs on
/// the same machine, so this only absorbs a little skew.
pub const MAX_SNAPSHOT_AHEAD_MS: i64 = 10 * 60 * 1000;
/// How long a status answer waits for a fresh reading of the managed server before it says the
/// last one known: a hung or slow server must not make the API slow (a probe may take seconds).
pub const STATUS_READING_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Refuses a `session_key` that is empty or blank, longer than [`MAX_SESSION_KEY_CHARS`], or
/// holds a control character (a line break in a key would forge a line of the log, where keys
/// are written): the same rule for a live turn and a review of the session.
pub fn check_session_key(session_key: &str) -> Result<(), EngineError> {
    if session_key.trim().is_empty() {
        return Err(EngineError::Invalid("session_key must not be empty".into()));
    }
    if session_key.chars().count() > MAX_SESSION_KEY_CHARS {
        return Err(EngineError::Invalid(format!(
            "session_key is longer than {MAX_SESSION_KEY_CHARS} characters; send a short id of the session"
        )));
    }
    if let Some(c) = session_key.chars().find(|c| c.is_control()) {
        return Err(EngineError::Invalid(format!(
            "session_key holds a control character (U+{:04X}); send a plain id of the session",
            c as u32
        )));
    }
    Ok(())
}

/// Why an engine operation did not happen; each maps to one API status.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request is well-formed but asks for something invalid.
    #[error("{0}")]
    Invalid(String),
    /// The named thing does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// A person's *Approve* (or rollback) cannot go ahead; the message says why and what to do.
    #[error("{0}")]
    ApprovalRefused(String),
    /// The request conflicts with the state, for a reason an agent may act on by its `code`
    /// (`job_not_resumable`, `checkpoint_chain_broken`, `dataset_changed`, …).
    #[error("{message}")]
    Refused {
        /// The machine-readable reason.
        code: ErrorCode,
        /// What happened and what to do.
        message: String,
    },
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Starting up failed.
    #[error("{0}")]
    Startup(String),
}

impl EngineError {
    /// The code a program acts on: the one mapping of engine errors to [`ErrorCode`], which the
    /// API answers and every client reads back.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::Invalid(_) => ErrorCode::InvalidRequest,
            EngineError::NotFound(_) => ErrorCode::NotFound,
            EngineError::Conflict(_) => ErrorCode::Conflict,
            EngineError::ApprovalRefused(_) => ErrorCode::ApprovalRefused,
            EngineError::Refused { code, .. } => *code,
            EngineError::Store(StoreError::Closed) => ErrorCode::ShuttingDown,
            EngineError::Store(StoreError::Full { .. }) => ErrorCode::StorageFull,
            EngineError::Store(_) | EngineError::Startup(_) => ErrorCode::Internal,
        }
    }
}

/// What the engine is doing, as `GET /v1/status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Status {
    /// Lull's version.
    pub version: String,
    /// The defer mode in force.
    pub defer_mode: DeferMode,
    /// Whether learning is paused.
    pub paused: bool,
    /// Whether reviews are enabled.
    pub reviews_enabled: bool,
    /// The managed server.
    pub server: ServerReading,
    /// What the learning engine is doing now, and why it waits.
    pub learning: Activity,
    /// Live turns the agent reported.
    pub live_turns: usize,
    /// The routing head and its embedder.
    pub routing: RoutingStatus,
    /// The review queue.
    pub queue: QueueCounts,
    /// Drafts waiting for a person.
    pub drafts: DraftCounts,
    /// Training jobs.
    pub jobs: JobCounts,
    /// The machine's power and sleep, and what they hold.
    pub power: PowerStatus,
}

/// Review queue counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct QueueCounts {
    /// Reviews waiting to run.
    pub queued: u64,
    /// Reviews running now.
    pub running: u64,
}

/// Draft counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct DraftCounts {
    /// Drafts waiting for Approve / Reject.
    pub review_pending: u64,
    /// Drafts a critical finding stopped before evaluation; they wait for a person too.
    pub blocked: u64,
}

/// Job counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct JobCounts {
    /// Jobs running now.
    pub running: u64,
}

/// The engine; cheap to clone, every clone is the same engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<EngineInner>,
}

struct EngineInner {
    config: Config,
    paths: Paths,
    store: Store,
    events: EventBus,
    settings: watch::Sender<Settings>,
    /// Serialises settings changes, so concurrent patches each see the other's result.
    settings_update: tokio::sync::Mutex<()>,
    generation: i64,
    server: Arc<dyn ServerProbe>,
    gate: Arc<IdleGate>,
    reviews: Arc<ReviewQueue>,
    dispatcher: Arc<Dispatcher>,
    picker: Arc<DraftPicker>,
    drafts: DraftService,
    jobs: JobService,
    routing: RoutingService,
    shutdown: watch::Sender<bool>,
    /// This engine's hold on the data folder (`None` with a store of the caller's own), let go
    /// by [`Engine::shutdown`].
    data_dir_lock: std::sync::Mutex<Option<DataDirLock>>,
}

/// The engine's replaceable parts: the managed server's probe and the LLM client.
///
/// Production uses [`Engine::open`]; tests and the simulator pass their own to
/// [`Engine::open_with`] and run the very same scheduling code.
pub struct Seams {
    /// Reads the managed server.
    pub server: Arc<dyn ServerProbe>,
    /// Announces changes of the managed server's reading, when something watches it.
    pub server_changes: Option<watch::Receiver<ServerReading>>,
    /// Sends chat requests.
    pub llm: Arc<dyn LlmClient>,
    /// The database; `None` opens `<data_dir>/lull.db`, after taking the folder's lock (one
    /// engine per data folder).
    pub store: Option<Store>,
    /// Where routing gets embeddings besides the built-in embedder: the managed server's
    /// ([`crate::routing::ServerEmbedderSource`]) in production; tests pass
    /// [`crate::routing::BuiltInEmbedderOnly`], so that none reaches a real server.
    pub embedders: Arc<dyn crate::routing::EmbedderSource>,
    /// The engine's clock of record (queue times, the gate's ages); `None` reads the system's.
    /// The simulator passes one that starts at a fixed instant of its virtual day.
    pub clock: Option<EngineClock>,
    /// Where the engine announces what happens, from the first thing it does while opening.
    pub events: EventBus,
    /// Where the machine's power and sleep are read; `None` follows neither (the machine counts
    /// as on AC and never sleeping), as tests and the simulator want.
    pub host: Option<HostSources>,
}

impl Seams {
    /// The seams of production: the managed server watched through the supervisor's state
    /// file, the HTTP LLM client, the data folder's database, and this machine's power and
    /// sleep. A test that wants production but one part replaces that field.
    pub async fn for_this_machine(config: &Config, events: EventBus) -> Result<Seams, EngineError> {
        let monitor = ServerMonitor::start(MonitorConfig::new(config.state_file()))
            .await
            .map_err(|err| EngineError::Startup(err.to_string()))?;
        let server_changes = Some(monitor.subscribe());
        Ok(Seams {
            server: Arc::new(monitor),
            server_changes,
            llm: Arc::new(HttpLlmClient::default()),
            store: None,
            embedders: Arc::new(crate::routing::ServerEmbedderSource),
            clock: None,
            events,
            host: Some(HostSources::this_machine()),
        })
    }
}

/// A review as an agent submits it.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSubmission {
    /// The agent's session; one queue slot per session.
    pub session_key: String,
    /// The whole conversation.
    pub messages: Vec<ChatMessage>,
    /// What to look at; set means "run now".
    pub focus: Option<String>,
    /// The snapshot's time (unix ms); defaults to now. Newer snapshots replace older ones.
    pub snapshot_at: Option<i64>,
    /// Where to run the review.
    pub runtime: Option<ChatEndpoint>,
}

impl Engine {
    /// Opens the data directory and the database, watches the managed server, and starts the
    /// review dispatcher. Must run inside a tokio runtime.
    pub async fn open(config: Config, paths: Paths) -> Result<Engine, EngineError> {
        Engine::open_on(config, paths, EventBus::default()).await
    }

    /// [`Engine::open`], announcing on `events`: a listener subscribed before the call hears
    /// what the engine says while it opens (the training jobs a crash interrupted), which a
    /// listener of [`Engine::events`] subscribes too late for.
    pub async fn open_on(
        config: Config,
        paths: Paths,
        events: EventBus,
    ) -> Result<Engine, EngineError> {
        let seams = Seams::for_this_machine(&config, events).await?;
        Engine::open_with(config, paths, seams).await
    }

    /// [`Engine::open`] with the given seams.
    pub async fn open_with(
        config: Config,
        paths: Paths,
        seams: Seams,
    ) -> Result<Engine, EngineError> {
        let startup = |err: crate::data_dir::DataDirError| EngineError::Startup(err.to_string());
        create_private_dir(&paths.data_dir).map_err(startup)?;
        let (store, data_dir_lock) = match seams.store {
            Some(store) => (store, None),
            None => {
                let lock = DataDirLock::acquire(&paths.data_dir).map_err(startup)?;
                (Store::open(&paths.database())?, Some(lock))
            }
        };
        let defaults = Settings::defaults(&config);
        let (settings, generation) = store
            .call(move |connection| {
                let settings = Settings::load(connection, defaults)?;
                connection.execute(
                    "INSERT INTO engine_starts (started_at, pid, version) VALUES (?1, ?2, ?3)",
                    rusqlite::params![now_ms(), std::process::id(), VERSION],
                )?;
                Ok((settings, connection.last_insert_rowid()))
            })
            .await?;
        let events = seams.events;
        let settings = watch::channel(settings).0;
        let gate = Arc::new(IdleGate::new(
            GateTiming::from(&config.scheduler),
            seams.clock.unwrap_or_else(EngineClock::start),
            seams.server.clone(),
            config.power.clone(),
        ));
        let targets = Targets::new(gate.clone(), &config.reviews);
        let reviews = Arc::new(ReviewQueue::new(
            store.clone(),
            gate.clone(),
            seams.llm.clone(),
            targets.clone(),
            settings.subscribe(),
            events.clone(),
            &config.learning,
        ));
        reviews.recover().await?;
        let clock = gate.clock();
        let requeued = store
            .call(move |c| work::recover_running(c, clock.now_ms()))
            .await?;
        if requeued > 0 {
            tracing::info!(
                count = requeued,
                "requeued learning work interrupted by the last stop"
            );
        }
        let skills_dir = config.skills_dir(&paths.data_dir);
        let leftovers = {
            let skills_dir = skills_dir.clone();
            tokio::task::spawn_blocking(move || remove_leftover_temp_files(&skills_dir))
                .await
                .map_err(|err| EngineError::Startup(format!("the skills sweep panicked: {err}")))?
        };
        if !leftovers.is_empty() {
            tracing::info!(
                count = leftovers.len(),
                "removed temporary skill files a crash left behind"
            );
        }
        let skills = SkillsIndex::open(&skills_dir)
            .await
            .map_err(|err| EngineError::Startup(err.to_string()))?;
        let parts = DraftWorkParts {
            store: store.clone(),
            llm: seams.llm.clone(),
            clock: gate.clock(),
            events: events.clone(),
            skills: skills.clone(),
            retry: RetryPolicy::with_max_failures(config.learning.max_retries),
        };
        let dispatcher = Arc::new(
            Dispatcher::new(
                store.clone(),
                gate.clone(),
                targets,
                settings.subscribe(),
                events.clone(),
            )
            .with_kind(reviews.clone())
            .with_kind(Arc::new(SynthesisWork(parts.clone())))
            .with_kind(Arc::new(EvaluationWork(parts))),
        );
        let picker = Arc::new(DraftPicker::new(
            store.clone(),
            gate.clone(),
            events.clone(),
            config.learning.max_drafts_per_run,
            Duration::from_secs(config.learning.interval_s.max(1)),
        ));
        let drafts = DraftService::new(store.clone(), events.clone(), gate.clock(), skills.clone());
        drafts.finish_interrupted_approvals().await?;
        let routing = RoutingService::start(
            store.clone(),
            &config,
            skills.clone(),
            seams.server.clone(),
            seams.embedders,
        )
        .await?;
        let jobs = JobService::new(
            store.clone(),
            events.clone(),
            gate.clone(),
            routing.clone(),
            generation,
        );
        jobs.adopt_orphans().await?;
        let shutdown = watch::channel(false).0;
        tokio::spawn(picker.clone().run(events.subscribe(), shutdown.subscribe()));
        tokio::spawn(dispatcher.clone().run(shutdown.subscribe()));
        if let Some(sources) = seams.host {
            tokio::spawn(power::watch_host(
                sources,
                gate.clone(),
                Arc::new(SleepingJobs(jobs.clone())),
                shutdown.subscribe(),
            ));
        }
        if let Some(changes) = seams.server_changes {
            tokio::spawn(forward_server_changes(
                changes,
                gate.clone(),
                events.clone(),
                shutdown.subscribe(),
            ));
        }
        let engine = Engine {
            inner: Arc::new(EngineInner {
                config,
                paths,
                store,
                events,
                settings,
                settings_update: tokio::sync::Mutex::new(()),
                generation,
                server: seams.server,
                gate,
                reviews,
                dispatcher,
                picker,
                drafts,
                jobs,
                routing,
                shutdown,
                data_dir_lock: std::sync::Mutex::new(data_dir_lock),
            }),
        };
        engine.inner.events.emit(EngineEvent::EngineStarted {
            version: VERSION.to_string(),
            generation,
        });
        Ok(engine)
    }

    /// The configuration this engine started with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Where this engine keeps its files.
    pub fn paths(&self) -> &Paths {
        &self.inner.paths
    }

    /// The event bus, for listeners.
    pub fn events(&self) -> &EventBus {
        &self.inner.events
    }

    /// This start's generation number (increases by one each start).
    pub fn generation(&self) -> i64 {
        self.inner.generation
    }

    /// The settings in force.
    pub fn settings(&self) -> Settings {
        self.inner.settings.borrow().clone()
    }

    /// Changes settings, stores them, and announces the change.
    pub async fn update_settings(&self, patch: SettingsPatch) -> Result<Settings, EngineError> {
        if patch.is_empty() {
            return Ok(self.settings());
        }
        // Read, merge, write and publish under one lock: two patches at the same moment (a tray
        // toggle and an agent's PATCH) both land, in memory as in the database.
        let _serialised = self.inner.settings_update.lock().await;
        let current = self.settings();
        let next = self
            .inner
            .store
            .call(move |connection| current.apply(connection, &patch))
            .await?;
        self.inner.settings.send_replace(next.clone());
        self.inner.gate.notify_change();
        self.inner.events.emit(EngineEvent::SettingsChanged {
            settings: next.clone(),
        });
        Ok(next)
    }

    /// Keeps the managed server's reading fresh while the guard lives: the server monitor polls
    /// (every [`crate::server::INTEREST_POLL_INTERVAL`]) and publishes each change as a
    /// `server_changed` event, so a window that shows busy slots and model states stays current.
    /// Hold it only while someone looks (the desktop holds it while a window is open); with no
    /// guard alive nothing polls.
    pub fn server_interest(&self) -> InterestGuard {
        self.inner.server.interest()
    }

    /// A snapshot of what the engine is doing; reads the managed server (through its cache).
    pub async fn status(&self) -> Result<Status, EngineError> {
        let settings = self.settings();
        let ((queued, running), (review_pending, blocked)) = self
            .inner
            .store
            .call(|c| Ok((queue::counts(c)?, records::waiting_counts(c)?)))
            .await?;
        Ok(Status {
            version: VERSION.to_string(),
            defer_mode: settings.defer_mode,
            paused: settings.paused,
            reviews_enabled: settings.reviews_enabled,
            server: self.server_reading_for_status().await,
            learning: self.inner.dispatcher.activity(),
            live_turns: self.inner.gate.live_turns(),
            routing: self.inner.routing.status().await?,
            queue: QueueCounts { queued, running },
            drafts: DraftCounts {
                review_pending,
                blocked,
            },
            jobs: JobCounts {
                running: self.inner.jobs.running().await?,
            },
            power: self.inner.gate.power_status(),
        })
    }

    /// A fresh reading of the managed server if one comes within [`STATUS_READING_WAIT`], else
    /// the last one known. The probe runs on, bounded by its own timeouts, and publishes what
    /// it finds for the next answer.
    async fn server_reading_for_status(&self) -> ServerReading {
        let server = self.inner.server.clone();
        let Some(last) = server.last_reading() else {
            return server.read().await;
        };
        let probe = tokio::spawn(async move { server.read().await });
        match tokio::time::timeout(STATUS_READING_WAIT, probe).await {
            Ok(Ok(reading)) => reading,
            _ => last,
        }
    }

    /// Records a live turn (the agent is about to use the GPU); returns its lease id.
    pub fn start_turn(&self) -> String {
        let lease_id = self.inner.gate.turn_started();
        self.inner.events.emit(EngineEvent::TurnStarted {
            lease_id: lease_id.clone(),
        });
        lease_id
    }

    /// Ends a live turn.
    pub fn finish_turn(&self, lease_id: &str) -> Result<(), EngineError> {
        if !self.inner.gate.turn_finished(lease_id) {
            return Err(EngineError::NotFound(format!(
                "no live turn with lease {lease_id}: it finished already or lapsed after turn_lease_s"
            )));
        }
        self.inner.events.emit(EngineEvent::TurnFinished {
            lease_id: lease_id.to_string(),
        });
        Ok(())
    }

    /// Takes a finished conversation for review.
    pub async fn submit_review(
        &self,
        submission: ReviewSubmission,
    ) -> Result<(String, Decision), EngineError> {
        check_session_key(&submission.session_key)?;
        let now = self.inner.gate.clock().now_ms();
        if let Some(snapshot_at) = submission.snapshot_at {
            // The newest snapshot of a session wins, so a time from the far future would win
            // over every real one: the session's queue slot and review progress would never
            // move again.
            if !(0..=now.saturating_add(MAX_SNAPSHOT_AHEAD_MS)).contains(&snapshot_at) {
                return Err(EngineError::Invalid(format!(
                    "snapshot_at {snapshot_at} is not a time of this conversation: send unix milliseconds, at most {} s ahead of now ({now}), or leave it out for now",
                    MAX_SNAPSHOT_AHEAD_MS / 1000
                )));
            }
        }
        if submission.messages.is_empty() {
            return Err(EngineError::Invalid(
                "messages must hold the conversation; it is empty".into(),
            ));
        }
        if let Some((index, message)) = submission
            .messages
            .iter()
            .enumerate()
            .find(|(_, message)| !MESSAGE_ROLES.contains(&message.role.as_str()))
        {
            return Err(EngineError::Invalid(format!(
                "messages[{index}].role is `{}`; it must be one of {}",
                message.role,
                MESSAGE_ROLES.join(", ")
            )));
        }
        if let Some(runtime) = &submission.runtime {
            if !(runtime.base_url.starts_with("http://")
                || runtime.base_url.starts_with("https://"))
            {
                return Err(EngineError::Invalid(format!(
                    "runtime.base_url `{}` is not an http(s) URL",
                    runtime.base_url
                )));
            }
        }
        let review = NewReview {
            session_key: submission.session_key,
            messages: submission.messages,
            focus: submission.focus.filter(|focus| !focus.trim().is_empty()),
            snapshot_at: submission.snapshot_at.unwrap_or(now),
            runtime: submission.runtime,
        };
        Ok(self.inner.reviews.submit(review).await?)
    }

    /// Reviews, newest first.
    pub async fn reviews(&self, status: Option<ReviewStatus>) -> Result<Vec<Review>, EngineError> {
        Ok(self
            .inner
            .store
            .call(move |c| queue::list(c, status))
            .await?)
    }

    /// Runs a queued review as soon as the managed server can take it, without waiting for a
    /// lull (a person asked); deferred work running meanwhile yields to it.
    pub async fn run_review_now(&self, id: &str) -> Result<(), EngineError> {
        self.require_queued(id).await?;
        if !self.inner.reviews.run_now(id).await? {
            return Err(EngineError::Conflict(format!(
                "review {id} started meanwhile; it is no longer queued"
            )));
        }
        Ok(())
    }

    /// Drops a queued review.
    pub async fn drop_review(&self, id: &str) -> Result<(), EngineError> {
        self.require_queued(id).await?;
        if !self
            .inner
            .reviews
            .drop_review(id, "dropped by request")
            .await?
        {
            return Err(EngineError::Conflict(format!(
                "review {id} started meanwhile; it can no longer be dropped"
            )));
        }
        Ok(())
    }

    /// One review by id (its transcript included).
    pub async fn review(&self, id: &str) -> Result<Review, EngineError> {
        let id_owned = id.to_string();
        let review = self
            .inner
            .store
            .call(move |c| queue::get(c, &id_owned))
            .await?;
        review.ok_or_else(|| EngineError::NotFound(format!("no review with id {id}")))
    }

    async fn require_queued(&self, id: &str) -> Result<(), EngineError> {
        let review = self.review(id).await?;
        if review.status != ReviewStatus::Queued {
            return Err(EngineError::Conflict(format!(
                "review {id} is {}, not queued",
                review.status.as_str()
            )));
        }
        Ok(())
    }

    /// Candidates, newest first.
    pub async fn candidates(
        &self,
        status: Option<CandidateStatus>,
    ) -> Result<Vec<Candidate>, EngineError> {
        Ok(self
            .inner
            .store
            .call(move |c| candidates::list(c, status))
            .await?)
    }

    /// Picks open candidates for drafting now, as the draft worker does every
    /// `learning.interval_s`.
    pub async fn pick_candidates(&self) -> Result<Pick, EngineError> {
        Ok(self.inner.picker.pick().await?)
    }

    /// Drafts, waiting ones first, optionally of one status.
    pub async fn drafts(&self, status: Option<DraftStatus>) -> Result<Vec<DraftView>, EngineError> {
        self.inner.drafts.list(status).await
    }

    /// One draft with its diff, findings and evaluation.
    pub async fn draft(&self, id: &str) -> Result<DraftView, EngineError> {
        self.inner.drafts.get(id).await
    }

    /// Writes a draft's SKILL.md into the skills directory (a person clicked *Approve*); once
    /// it returns, routing ranks the skill.
    pub async fn approve_draft(&self, id: &str) -> Result<DraftView, EngineError> {
        let approved = self.inner.drafts.approve(id).await?;
        self.inner.routing.catch_up_with_skills().await;
        Ok(approved)
    }

    /// Rejects a draft with the person's reason.
    pub async fn reject_draft(&self, id: &str, reason: &str) -> Result<DraftView, EngineError> {
        self.inner.drafts.reject(id, reason).await
    }

    /// Replaces a draft's text with the person's edit (checked again).
    pub async fn edit_draft(&self, id: &str, skill_md: &str) -> Result<DraftView, EngineError> {
        self.inner.drafts.edit(id, skill_md).await
    }

    /// Dismisses one of a draft's findings with the person's reason.
    pub async fn dismiss_finding(
        &self,
        id: &str,
        index: usize,
        reason: &str,
    ) -> Result<DraftView, EngineError> {
        self.inner.drafts.dismiss(id, index, reason).await
    }

    /// The skills in the skills directory, with which of them Lull wrote.
    pub async fn skills(&self) -> Result<Vec<SkillEntry>, EngineError> {
        self.inner.drafts.skills().await
    }

    /// Restores the text a skill had before Lull's last write of it, or removes the skill when
    /// that write created it.
    pub async fn rollback_skill(&self, name: &str) -> Result<RolledBack, EngineError> {
        let rolled_back = self.inner.drafts.rollback(name).await?;
        self.inner.routing.catch_up_with_skills().await;
        Ok(rolled_back)
    }

    /// Admits a training job of a routing head over the outcomes logged so far, and starts it.
    pub async fn start_job(&self, stopping: Stopping) -> Result<JobView, EngineError> {
        self.inner.jobs.start(stopping).await
    }

    /// Training jobs, newest first.
    pub async fn jobs(&self) -> Result<Vec<JobView>, EngineError> {
        self.inner.jobs.list().await
    }

    /// One training job with its receipts and checkpoints.
    pub async fn job(&self, id: &str) -> Result<JobView, EngineError> {
        self.inner.jobs.get(id).await
    }

    /// Stops a training job at once, keeping its checkpoints.
    pub async fn cancel_job(&self, id: &str) -> Result<JobView, EngineError> {
        self.inner.jobs.cancel(id).await
    }

    /// Continues an interrupted or budget-exhausted job, once its checkpoint chain verifies.
    pub async fn resume_job(&self, id: &str) -> Result<JobView, EngineError> {
        self.inner.jobs.resume(id).await
    }

    /// Makes a finished job's head the live routing head.
    pub async fn promote_job(&self, id: &str) -> Result<JobView, EngineError> {
        self.inner.jobs.promote(id).await
    }

    /// Ranks the known skills for `query` (DESIGN §2.3).
    pub async fn route(
        &self,
        query: &str,
        top_k: Option<usize>,
    ) -> Result<RouteAnswer, EngineError> {
        self.inner.routing.route(query, top_k).await
    }

    /// Reports how a routed skill did; the routing head learns from it.
    pub async fn record_outcome(
        &self,
        route_id: &str,
        skill: &str,
        outcome: Outcome,
    ) -> Result<(), EngineError> {
        self.inner.routing.outcome(route_id, skill, outcome).await
    }

    /// Stops the workers, saves the routing head, lets in-flight database work finish and lets
    /// go of the data folder; call once before exiting.
    pub async fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
        self.inner.jobs.shutdown().await;
        if let Err(err) = self.inner.routing.shutdown().await {
            tracing::error!(error = %err, "cannot save the routing head on shutdown");
        }
        self.inner.store.flush().await;
        self.inner
            .data_dir_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
    }
}

/// Announces each new server reading and wakes the gate's waiters.
async fn forward_server_changes(
    mut changes: watch::Receiver<ServerReading>,
    gate: Arc<IdleGate>,
    events: EventBus,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                let server = changes.borrow_and_update().clone();
                events.emit(EngineEvent::ServerChanged { server });
                gate.notify_change();
            }
            _ = shutdown.changed() => return,
        }
    }
}

/// The machine's sleep, as training jobs answer it: they pause at their next mini-batch (the
/// gate requeues learning itself).
struct SleepingJobs(JobService);

impl SleepHandler for SleepingJobs {
    fn sleeping(&self, within: Duration) -> futures_util::future::BoxFuture<'_, ()> {
        Box::pin(self.0.paused_for_sleep(within))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::BuiltInEmbedderOnly;

    #[tokio::test]
    async fn the_monitors_interest_count_follows_the_engines_guards() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.server.state_file = dir.path().join("no-supervisor/server.json");
        let paths = Paths {
            data_dir: dir.path().join("data"),
            config_file: dir.path().join("config.toml"),
        };
        let monitor = Arc::new(
            ServerMonitor::start(MonitorConfig::new(config.state_file()))
                .await
                .unwrap(),
        );
        let seams = Seams {
            server: monitor.clone(),
            server_changes: Some(monitor.subscribe()),
            llm: Arc::new(HttpLlmClient::default()),
            store: None,
            embedders: Arc::new(BuiltInEmbedderOnly),
            clock: None,
            events: Default::default(),
            host: None,
        };
        let engine = Engine::open_with(config, paths, seams).await.unwrap();
        assert_eq!(monitor.n_interested(), 0, "nobody looks yet");

        let window = engine.server_interest();
        let second_window = engine.server_interest();
        assert_eq!(monitor.n_interested(), 2);
        drop(window);
        assert_eq!(monitor.n_interested(), 1);
        drop(second_window);
        assert_eq!(
            monitor.n_interested(),
            0,
            "the last guard gone, polling stops"
        );
        engine.shutdown().await;
    }
}
