//! Hosts the learning engine in the app's process, with its local API, exactly as `lull serve`
//! runs them: same paths, same configuration, same `api.json` and token.
//!
//! Invariant: the app never crashes because the engine cannot start. A failure (another engine
//! serving this data directory, the API port taken, a database from a newer Lull, …) becomes
//! [`HostState::Failed`], which the window shows, the tray says, and one notification announces.
//!
//! Life: [`EngineHost::start`] (in `setup`) → `starting` → `running` (or `failed`);
//! [`EngineHost::stop`] (on *Quit*) stops the API first (its shutdown future, then a deadline),
//! then calls `Engine::shutdown`, so nothing the engine was writing is lost.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use lull::{Config, Engine, Paths};
use serde::Serialize;
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Emitter as _, Manager as _};
use tokio::sync::oneshot;

use crate::error::CommandError;
use crate::{events, notify, tray};

/// The event the window listens to for the host's state ([`HostState`]).
pub const HOST_EVENT: &str = "engine-host";
/// How long *Quit* waits for the API's open connections to close before it stops waiting.
const API_STOP_DEADLINE: Duration = Duration::from_secs(3);
/// How long *Quit* waits for the engine to finish its database work.
const ENGINE_STOP_DEADLINE: Duration = Duration::from_secs(5);

/// Where the engine's configuration and data live, from the command line or the environment,
/// with the same flags and variables as the `lull` CLI (`--config`/`LULL_CONFIG`,
/// `--data-dir`/`LULL_DATA_DIR`). Unset means the XDG defaults of DESIGN §5.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The configuration file.
    pub config: Option<PathBuf>,
    /// The data directory.
    pub data_dir: Option<PathBuf>,
}

impl Locations {
    /// Reads `--config X` / `--config=X` and `--data-dir X` / `--data-dir=X` from `args` (the
    /// program name first, as `std::env::args_os`), falling back to `env`. Other arguments (such
    /// as `--hidden`) are left to their readers.
    pub fn from_args(
        args: impl IntoIterator<Item = OsString>,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Locations {
        let mut locations = Locations {
            config: env("LULL_CONFIG").map(PathBuf::from),
            data_dir: env("LULL_DATA_DIR").map(PathBuf::from),
        };
        let mut args = args.into_iter().skip(1);
        while let Some(arg) = args.next() {
            let arg = arg.to_string_lossy().into_owned();
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(OsString::from(value))),
                None => (arg, None),
            };
            let slot = match flag.as_str() {
                "--config" => &mut locations.config,
                "--data-dir" => &mut locations.data_dir,
                _ => continue,
            };
            if let Some(value) = inline.or_else(|| args.next()) {
                *slot = Some(PathBuf::from(value));
            }
        }
        locations
    }
}

/// Whether the engine runs, as the window shows it: `{"state":"failed","message":"…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
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

/// The hosted engine and its tasks; Tauri managed state.
#[derive(Default)]
pub struct EngineHost {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    state: Phase,
    /// Keeps the log file writer alive; dropping it flushes the file.
    log_guard: Option<Box<dyn std::any::Any + Send>>,
}

#[derive(Default)]
enum Phase {
    #[default]
    Starting,
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
            Phase::Starting => HostState::Starting,
            Phase::Running(_) => HostState::Running,
            Phase::Failed(message) => HostState::Failed {
                message: message.clone(),
            },
            Phase::Stopping => HostState::Stopping,
        }
    }
}

impl EngineHost {
    /// Resolves paths and configuration, starts logging, and opens the engine in the background;
    /// returns at once. Every failure lands in [`HostState::Failed`].
    pub fn start(app: &AppHandle, locations: Locations) {
        let host = app.state::<EngineHost>();
        let prepared = host.prepare(locations);
        let (config, paths) = match prepared {
            Ok(prepared) => prepared,
            Err(error) => return host.fail(app, format!("{error:#}")),
        };
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            let opened = Engine::open(config, paths).await;
            let host = app.state::<EngineHost>();
            match opened {
                Ok(engine) => host.run(&app, engine),
                Err(error) => host.fail(
                    &app,
                    format!("Lull's learning engine could not start: {error}"),
                ),
            }
        });
    }

    fn prepare(&self, locations: Locations) -> anyhow::Result<(Config, Paths)> {
        let paths = Paths::resolve(locations.data_dir, locations.config)?;
        match lull::logging::init(Some(&paths.logs_dir())) {
            Ok(guard) => {
                self.lock().log_guard =
                    guard.map(|guard| Box::new(guard) as Box<dyn std::any::Any + Send>)
            }
            Err(error) => eprintln!("lull-desktop: logging is off: {error:#}"),
        }
        let config = Config::load(&paths.config_file, std::env::vars())?;
        tracing::info!(data_dir = %paths.data_dir.display(), "starting the engine");
        Ok((config, paths))
    }

    /// Starts the API and the event forwarder around a freshly opened engine.
    fn run(&self, app: &AppHandle, engine: Engine) {
        let forwarder = events::forward(app.clone(), engine.clone(), engine.events().subscribe());
        let (api_shutdown, stop_requested) = oneshot::channel::<()>();
        let api_app = app.clone();
        let api_engine = engine.clone();
        let api_task = tauri::async_runtime::spawn(async move {
            let shutdown = async {
                let _ = stop_requested.await;
            };
            if let Err(error) = lull::api::serve(api_engine, shutdown).await {
                api_app
                    .state::<EngineHost>()
                    .api_failed(&api_app, format!("{error:#}"))
                    .await;
            }
        });
        self.set(
            app,
            Phase::Running(Running {
                engine,
                api_shutdown,
                api_task,
                forwarder,
            }),
        );
        tracing::info!("engine started");
    }

    /// The API stopped on its own (it could not bind, say): the engine stops too, since agents
    /// cannot reach it, and the person learns why.
    async fn api_failed(&self, app: &AppHandle, message: String) {
        let running = {
            let mut inner = self.lock();
            if !matches!(inner.state, Phase::Running(_)) {
                return;
            }
            std::mem::replace(&mut inner.state, Phase::Stopping)
        };
        tracing::error!(%message, "the local API stopped");
        if let Phase::Running(running) = running {
            running.forwarder.abort();
            running.engine.shutdown().await;
        }
        self.fail(app, format!("Lull's local API is not serving: {message}"));
    }

    fn fail(&self, app: &AppHandle, message: String) {
        tracing::error!(%message, "the engine is not running");
        notify::engine_failed(app, &message);
        self.set(app, Phase::Failed(message));
    }

    fn set(&self, app: &AppHandle, phase: Phase) {
        let state = {
            let mut inner = self.lock();
            inner.state = phase;
            inner.state.public()
        };
        if let Err(error) = app.emit(HOST_EVENT, &state) {
            tracing::warn!(%error, "cannot tell the window about the engine");
        }
        tray::refresh(app);
    }

    /// The state the window shows.
    pub fn state(&self) -> HostState {
        self.lock().state.public()
    }

    /// The running engine, or the error a command returns when there is none.
    pub fn engine(&self) -> Result<Engine, CommandError> {
        match &self.lock().state {
            Phase::Running(running) => Ok(running.engine.clone()),
            Phase::Starting => Err(CommandError::new(
                CommandError::ENGINE_STARTING,
                "Lull's learning engine is starting; this fills in by itself in a moment.",
            )),
            Phase::Failed(message) => Err(CommandError::new(
                CommandError::ENGINE_UNAVAILABLE,
                message.clone(),
            )),
            Phase::Stopping => Err(CommandError::new(
                "shutting_down",
                "Lull is quitting; its learning engine is stopping.",
            )),
        }
    }

    /// Stops the API (graceful, then a deadline) and then the engine. Safe to call twice.
    pub async fn stop(&self) {
        let phase = std::mem::replace(&mut self.lock().state, Phase::Stopping);
        let Phase::Running(running) = phase else {
            return;
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind; keep going with it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        std::iter::once("lull-desktop")
            .chain(list.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn locations_come_from_flags_then_the_environment() {
        let env = |name: &str| match name {
            "LULL_DATA_DIR" => Some(OsString::from("/env/data")),
            _ => None,
        };
        let check = |list: &[&str], expected: Locations| {
            assert_eq!(Locations::from_args(args(list), env), expected, "{list:?}");
        };
        check(
            &[],
            Locations {
                config: None,
                data_dir: Some("/env/data".into()),
            },
        );
        check(
            &["--hidden", "--data-dir", "/flag/data", "--config=/c.toml"],
            Locations {
                config: Some("/c.toml".into()),
                data_dir: Some("/flag/data".into()),
            },
        );
        check(
            &["--data-dir=/a", "--data-dir"],
            Locations {
                config: None,
                data_dir: Some("/a".into()),
            },
        );
    }

    #[test]
    fn host_state_serialises_with_a_state_tag() {
        let failed = HostState::Failed {
            message: "port taken".into(),
        };
        assert_eq!(
            serde_json::to_value(failed).unwrap(),
            serde_json::json!({"state": "failed", "message": "port taken"})
        );
        assert_eq!(
            serde_json::to_value(HostState::Starting).unwrap(),
            serde_json::json!({"state": "starting"})
        );
    }
}
