//! The engine: one value that owns the store, the settings and the event bus, and offers every
//! operation the API, the CLI and the desktop shell perform.
//!
//! Adapters call these plain async methods and map the results to HTTP or IPC; nothing here
//! knows about either.

use std::sync::{Arc, RwLock};

use serde::Serialize;

use crate::config::{Config, DeferMode, Paths};
use crate::events::{EngineEvent, EventBus};
use crate::settings::{Settings, SettingsPatch};
use crate::store::{now_ms, Store, StoreError};

/// Lull's version, reported by `/v1/health` and the UI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Starting up failed.
    #[error("{0}")]
    Startup(String),
}

/// What the engine is doing, as `GET /v1/status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    pub server: ServerStatus,
    /// The review queue.
    pub queue: QueueCounts,
    /// Drafts waiting for a person.
    pub drafts: DraftCounts,
    /// Training jobs.
    pub jobs: JobCounts,
}

/// The managed server as the status shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerStatus {
    /// `absent`, `invalid`, `stale`, `starting`, `ready` or `unreachable`.
    pub state: String,
    /// The server's OpenAI-compatible base URL, when known.
    pub base_url: Option<String>,
    /// Models the server reports.
    pub models: Vec<serde_json::Value>,
    /// True when no slot of any loaded model is processing.
    pub idle: bool,
}

/// Review queue counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueueCounts {
    /// Reviews waiting to run.
    pub queued: u64,
    /// Reviews running now.
    pub running: u64,
}

/// Draft counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DraftCounts {
    /// Drafts waiting for Approve / Reject.
    pub review_pending: u64,
}

/// Job counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    settings: RwLock<Settings>,
    generation: i64,
}

impl Engine {
    /// Opens the data directory and the database, and records this start's generation.
    pub async fn open(config: Config, paths: Paths) -> Result<Engine, EngineError> {
        create_private_dir(&paths.data_dir)?;
        let store = Store::open(&paths.database())?;
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
        let engine = Engine {
            inner: Arc::new(EngineInner {
                config,
                paths,
                store,
                events: EventBus::default(),
                settings: RwLock::new(settings),
                generation,
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
        self.inner.settings.read().expect("settings lock").clone()
    }

    /// Changes settings, stores them, and announces the change.
    pub async fn update_settings(&self, patch: SettingsPatch) -> Result<Settings, EngineError> {
        if patch.is_empty() {
            return Ok(self.settings());
        }
        let current = self.settings();
        let next = self
            .inner
            .store
            .call(move |connection| current.apply(connection, &patch))
            .await?;
        *self.inner.settings.write().expect("settings lock") = next.clone();
        self.inner.events.emit(EngineEvent::SettingsChanged {
            settings: next.clone(),
        });
        Ok(next)
    }

    /// A snapshot of what the engine is doing.
    pub async fn status(&self) -> Status {
        let settings = self.settings();
        Status {
            version: VERSION.to_string(),
            defer_mode: settings.defer_mode,
            paused: settings.paused,
            reviews_enabled: settings.reviews_enabled,
            server: ServerStatus {
                state: "absent".into(),
                base_url: None,
                models: Vec::new(),
                idle: false,
            },
            queue: QueueCounts::default(),
            drafts: DraftCounts::default(),
            jobs: JobCounts::default(),
        }
    }

    /// Lets in-flight database work finish; call once before the process exits.
    pub async fn shutdown(&self) {
        self.inner.events.emit(EngineEvent::EngineStopping);
        self.inner.store.flush().await;
    }
}

/// Creates `dir` (and parents) readable only by the user, since it holds the API token.
fn create_private_dir(dir: &std::path::Path) -> Result<(), EngineError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| {
            EngineError::Startup(format!(
                "cannot create data directory {}: {err}",
                dir.display()
            ))
        })
}
