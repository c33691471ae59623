//! The app's parts ([`Desktop`]) and its run loop.
//!
//! Everything the person asks for arrives as one [`Command`] on one channel: a tray click, a
//! later launch's request (`instance`), SIGTERM or SIGINT (which are *Quit*). The loop handles
//! them in order until *Quit*, which stops in this order: window processes (SIGTERM), the local
//! API, the engine, the notifications still on their way, the tray. Exit code 0.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use lull::config::DeferMode;
use lull::settings::{Settings, SettingsPatch};
use lull::Paths;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::host::EngineHost;
use crate::instance::{self, Claim, Instance, Request};
use crate::launch::Launch;
use crate::notify::Notifier;
use crate::tray::{self, TrayHandle};
use crate::window::{self, View, WindowLauncher, WindowRequest};

/// How long the runtime lets its last blocking work finish once *Quit* is done.
const RUNTIME_STOP_DEADLINE: Duration = Duration::from_secs(1);

/// What the person asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Open the window (*Open Lull*, the drafts and queue items, a later launch).
    OpenWindow {
        /// The view to open on.
        view: Option<View>,
        /// The click's XDG activation token, when the panel sent one.
        activation_token: Option<String>,
    },
    /// *Defer learning until idle*: defer mode `auto` ↔ `never`.
    ToggleDefer,
    /// *Pause learning*.
    TogglePause,
    /// *Quit*, SIGTERM or SIGINT.
    Quit,
}

/// The app's parts, shared by its tasks.
pub struct Desktop {
    /// The hosted engine and its API.
    pub host: EngineHost,
    /// The tray icon and menu.
    pub tray: TrayHandle,
    /// The desktop notifications.
    pub notes: Notifier,
    /// The window processes.
    pub windows: WindowLauncher,
}

/// Runs the app for `launch` until *Quit*; a later launch hands over to the running one instead.
pub fn main(launch: Launch) -> anyhow::Result<()> {
    let paths = Paths::resolve(
        launch.locations.data_dir.clone(),
        launch.locations.config.clone(),
    )?;
    let instance = match instance::claim(&paths.data_dir)? {
        Claim::First(instance) => instance,
        // The login item while the tray already runs: nothing to do.
        Claim::Running(_) if launch.hidden => return Ok(()),
        Claim::Running(socket) => return instance::hand_over(&socket, Request::Open(None)),
    };
    // Kept until the end: dropping it flushes the log file.
    let _log_guard = match lull::logging::init(Some(&paths.logs_dir())) {
        Ok(guard) => guard,
        Err(error) => {
            eprintln!("lull-desktop: logging is off: {error:#}");
            None
        }
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let ran = runtime.block_on(run(launch, paths, instance));
    runtime.shutdown_timeout(RUNTIME_STOP_DEADLINE);
    ran
}

async fn run(launch: Launch, paths: Paths, mut instance: Instance) -> anyhow::Result<()> {
    let (commands, mut received) = mpsc::unbounded_channel();
    let mut tasks: Vec<JoinHandle<()>> = vec![tokio::spawn(quit_on_signal(commands.clone())?)];
    let tray = TrayHandle::spawn(commands.clone())
        .await
        .context("cannot show Lull's tray icon (is there a D-Bus session bus?)")?;
    let desktop = Arc::new(Desktop {
        host: EngineHost::default(),
        tray,
        notes: Notifier::start(),
        windows: WindowLauncher::new(WindowLauncher::program(), &paths),
    });
    tasks.push(tokio::spawn(tray::update_forever(desktop.clone())));
    tasks.push(tokio::spawn(window::hold_server_interest(
        desktop.windows.open_windows(),
        desktop.host.running(),
    )));
    let (requests, mut later_launches) = mpsc::unbounded_channel();
    tasks.push(tokio::spawn(async move { instance.serve(requests).await }));
    let launch_commands = commands.clone();
    tasks.push(tokio::spawn(async move {
        while let Some(Request::Open(view)) = later_launches.recv().await {
            let open = Command::OpenWindow {
                view,
                activation_token: None,
            };
            if launch_commands.send(open).is_err() {
                return;
            }
        }
    }));
    EngineHost::start(&desktop, paths);
    if !launch.hidden {
        desktop.open_window(None, None);
    }

    while let Some(command) = received.recv().await {
        match command {
            Command::OpenWindow {
                view,
                activation_token,
            } => desktop.open_window(view, activation_token),
            Command::ToggleDefer => {
                desktop
                    .change_settings(|settings| SettingsPatch {
                        defer_mode: Some(match settings.defer_mode {
                            DeferMode::Auto => DeferMode::Never,
                            DeferMode::Never => DeferMode::Auto,
                        }),
                        ..SettingsPatch::default()
                    })
                    .await
            }
            Command::TogglePause => {
                desktop
                    .change_settings(|settings| SettingsPatch {
                        paused: Some(!settings.paused),
                        ..SettingsPatch::default()
                    })
                    .await
            }
            Command::Quit => break,
        }
    }
    desktop.quit().await;
    for task in tasks {
        task.abort();
    }
    Ok(())
}

/// Sends *Quit* on the first SIGTERM or SIGINT.
fn quit_on_signal(
    commands: mpsc::UnboundedSender<Command>,
) -> anyhow::Result<impl std::future::Future<Output = ()>> {
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM: quitting"),
            _ = interrupt.recv() => tracing::info!("SIGINT: quitting"),
        }
        let _ = commands.send(Command::Quit);
    })
}

impl Desktop {
    /// Starts a window on `view`; when the engine failed, the window is told why.
    fn open_window(&self, view: Option<View>, activation_token: Option<String>) {
        let request = WindowRequest {
            view,
            engine_error: self.host.failure(),
            activation_token,
        };
        if let Err(error) = self.windows.open(&request) {
            tracing::error!(%error, "could not open the Lull window");
            self.notes.show(crate::notify::Note {
                title: "The Lull window could not open".into(),
                body: format!(
                    "{error} ({}). Reinstalling Lull puts it back.",
                    WindowLauncher::program().display()
                ),
            });
        }
    }

    /// Flips a setting from its value in the engine (a click says "toggle", not what the check
    /// showed), then lets the tray show the engine's answer.
    async fn change_settings(&self, patch_for: impl FnOnce(&Settings) -> SettingsPatch) {
        let Some(engine) = self.host.engine() else {
            return; // the check items are disabled while no engine runs
        };
        let patch = patch_for(&engine.settings());
        if let Err(error) = engine.update_settings(patch).await {
            tracing::error!(%error, "cannot change the settings from the tray");
        }
        self.tray.refresh();
    }

    /// Closes the windows, stops the engine cleanly, and takes the tray off the bus.
    async fn quit(&self) {
        tracing::info!("quitting");
        self.windows.close_all().await;
        self.host.stop(self).await;
        self.notes.flush().await;
        self.tray.shutdown().await;
    }
}
