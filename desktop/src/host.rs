//! Hosts the learning engine in the tray's process, with its local API, exactly as `lull serve`
//! runs them: same paths, same configuration, same `api.json` and token.
//!
//! Invariant: the app never crashes because the engine cannot start. A failure (another engine
//! serving this data directory, the API port taken, a database from a newer Lull, …) becomes
//! [`HostState::Failed`], which the tray says, one notification announces, and a window opened
//! afterwards shows (`--engine-error`).
//!
//! Life: [`EngineHost::start`] → `starting` → `running` (or `failed`); [`EngineHost::stop`] (on
//! *Quit*) stops the API first (its shutdown future, then a deadline), then calls
//! `Engine::shutdown`, so nothing the engine was writing is lost.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lull::events::{EngineEvent, EventBus};
use lull::{Config, Engine, Paths};
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinHandle;

use crate::app::Desktop;
use crate::events;

/// How long *Quit* waits for the API's open connections to close before it stops waiting.
const API_STOP_DEADLINE: Duration = Duration::from_secs(3);
/// How long *Quit* waits for the engine to finish its database work (or its start).
const ENGINE_STOP_DEADLINE: Duration = Duration::from_secs(5);

/// Whether the engine runs, as the tray and the window say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostState {
    /// Opening the database and starting the workers.
    Starting,
    /// Running, with its local API.
    Running,
    /// It could not start, or its API stopped; `message` says why and what to do.
    Failed {
        /// For the person.
        message: String,
    },
    /// *Quit* is stopping it.
    Stopping,
}

/// The hosted engine and its tasks.
pub struct EngineHost {
    phase: Mutex<Phase>,
    /// The running engine, for those that follow it (the window's server interest).
    running: watch::Sender<Option<Engine>>,
}

enum Phase {
    Starting(Option<JoinHandle<()>>),
    Running(Running),
    Failed(String),
    Stopping,
}

struct Running {
    engine: Engine,
    api_shutdown: oneshot::Sender<()>,
    api_task: JoinHandle<()>,
    forwarder: JoinHandle<()>,
}

impl Phase {
    fn public(&self) -> HostState {
        match self {
            Phase::Starting(_) => HostState::Starting,
            Phase::Running(_) => HostState::Running,
            Phase::Failed(message) => HostState::Failed {
                message: message.clone(),
            },
            Phase::Stopping => HostState::Stopping,
        }
    }
}

impl Default for EngineHost {
    fn default() -> EngineHost {
        EngineHost {
            phase: Mutex::new(Phase::Starting(None)),
            running: watch::channel(None).0,
        }
    }
}

impl EngineHost {
    /// Loads the configuration and opens the engine in the background; returns at once. Every
    /// failure lands in [`HostState::Failed`].
    pub fn start(desktop: &Arc<Desktop>, paths: Paths) {
        let config = match Config::load(&paths.config_file, std::env::vars()) {
            Ok(config) => config,
            Err(error) => return desktop.host.fail(desktop, format!("{error:#}")),
        };
        tracing::info!(data_dir = %paths.data_dir.display(), "starting the engine");
        let opening_desktop = desktop.clone();
        let opening = tokio::spawn(async move {
            let desktop = opening_desktop;
            // Listening before the engine opens: a run a crash interrupted is announced while
            // it opens, and that note is the person's only word of it.
            let events = EventBus::default();
            let listener = events.subscribe();
            match Engine::open_on(config, paths, events).await {
                Ok(engine) => {
                    if let Err(engine) = desktop.host.run(&desktop, engine, listener) {
                        engine.shutdown().await;
                    }
                }
                Err(error) => desktop.host.fail(
                    &desktop,
                    format!("Lull's learning engine could not start: {error}"),
                ),
            }
        });
        let mut phase = desktop.host.lock();
        if let Phase::Starting(task) = &mut *phase {
            *task = Some(opening);
        }
    }

    /// Starts the API and the event forwarder around a freshly opened engine; gives the engine
    /// back when *Quit* came while it opened (*Quit* waits for the caller to stop it).
    fn run(
        &self,
        desktop: &Arc<Desktop>,
        engine: Engine,
        listener: broadcast::Receiver<EngineEvent>,
    ) -> Result<(), Engine> {
        // The phase is held from the check to `Running`: an API that fails to bind reports it
        // (`api_failed`) only once it sees `Running`, so a fast failure is never dropped while
        // the phase still says `Starting`, and a *Quit* meanwhile finds one phase or the other.
        let mut phase = self.lock();
        if !matches!(*phase, Phase::Starting(_)) {
            return Err(engine);
        }
        let forwarder = events::forward(desktop.clone(), engine.clone(), listener);
        let (api_shutdown, stop_requested) = oneshot::channel::<()>();
        let api_desktop = desktop.clone();
        let api_engine = engine.clone();
        let api_task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stop_requested.await;
            };
            if let Err(error) = lull::api::serve(api_engine, shutdown).await {
                let desktop = api_desktop;
                desktop
                    .host
                    .api_failed(&desktop, format!("{error:#}"))
                    .await;
            }
        });
        self.running.send_replace(Some(engine.clone()));
        *phase = Phase::Running(Running {
            engine,
            api_shutdown,
            api_task,
            forwarder,
        });
        drop(phase);
        desktop.tray.refresh();
        tracing::info!("engine started");
        Ok(())
    }

    /// The API stopped on its own (it could not bind, say): the engine stops too, since agents
    /// cannot reach it, and the person learns why.
    async fn api_failed(&self, desktop: &Arc<Desktop>, message: String) {
        tracing::error!(%message, "the local API stopped");
        let message = format!("Lull's local API is not serving: {message}");
        let running = {
            let mut phase = self.lock();
            if !matches!(*phase, Phase::Running(_)) {
                return;
            }
            std::mem::replace(&mut *phase, Phase::Failed(message.clone()))
        };
        self.running.send_replace(None);
        if let Phase::Running(running) = running {
            running.forwarder.abort();
            running.engine.shutdown().await;
        }
        tracing::error!(%message, "the engine is not running");
        desktop.notes.engine_failed(&message);
        desktop.tray.refresh();
    }

    /// The engine could not start. Said once (tray, notification), unless *Quit* is under way.
    fn fail(&self, desktop: &Desktop, message: String) {
        tracing::error!(%message, "the engine is not running");
        {
            let mut phase = self.lock();
            if matches!(*phase, Phase::Stopping) {
                return;
            }
            *phase = Phase::Failed(message.clone());
        }
        desktop.notes.engine_failed(&message);
        desktop.tray.refresh();
    }

    /// The state the tray shows.
    pub fn state(&self) -> HostState {
        self.lock().public()
    }

    /// The running engine, if it runs.
    pub fn engine(&self) -> Option<Engine> {
        match &*self.lock() {
            Phase::Running(running) => Some(running.engine.clone()),
            _ => None,
        }
    }

    /// Why the engine is not running, when it failed.
    pub fn failure(&self) -> Option<String> {
        match &*self.lock() {
            Phase::Failed(message) => Some(message.clone()),
            _ => None,
        }
    }

    /// The running engine as it comes and goes.
    pub fn running(&self) -> watch::Receiver<Option<Engine>> {
        self.running.subscribe()
    }

    /// Stops the API (graceful, then a deadline) and then the engine (or waits for it to finish
    /// starting, then stops it). Safe to call twice.
    pub async fn stop(&self, desktop: &Desktop) {
        let phase = std::mem::replace(&mut *self.lock(), Phase::Stopping);
        self.running.send_replace(None);
        desktop.tray.refresh();
        let running = match phase {
            Phase::Running(running) => running,
            Phase::Starting(Some(opening)) => {
                if tokio::time::timeout(ENGINE_STOP_DEADLINE, opening)
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        "the engine did not finish starting within {ENGINE_STOP_DEADLINE:?}"
                    );
                }
                return;
            }
            _ => return,
        };
        tracing::info!("stopping the engine");
        running.forwarder.abort();
        let _ = running.api_shutdown.send(());
        if tokio::time::timeout(API_STOP_DEADLINE, running.api_task)
            .await
            .is_err()
        {
            tracing::warn!(
                "the local API did not close its connections within {API_STOP_DEADLINE:?}"
            );
        }
        if tokio::time::timeout(ENGINE_STOP_DEADLINE, running.engine.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("the engine did not stop within {ENGINE_STOP_DEADLINE:?}");
        }
        tracing::info!("engine stopped");
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Phase> {
        // A panic while holding the lock leaves plain data behind; keep going with it.
        self.phase
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
