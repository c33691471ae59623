//! The window is a process of its own, `lull-window`: started on demand, gone when it closes.
//!
//! Why: a webview costs a few hundred megabytes, and Lull sits in the tray all day beside a
//! local model that counts every hundred. This process never loads one; the window process
//! talks to the engine through its local API and event stream, like any client.
//!
//! Invariants: every window process is reaped (one task per child waits for it, and its handle
//! is kept); while at least one lives, the engine's server interest is held
//! ([`hold_server_interest`]), so the Overview's busy slots and model states stay current, and
//! nothing is polled once the last one exits; *Quit* sends SIGTERM to the live ones, then waits
//! [`TERM_DEADLINE`] before it kills them. A second window request while one is open starts
//! another `lull-window`, which hands its view to the first and exits (the window's own single
//! instance).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use lull::server::InterestGuard;
use lull::{Engine, Paths};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Overrides where the window's program is (tests, a development build elsewhere).
pub const WINDOW_BIN_ENV: &str = "LULL_WINDOW_BIN";
/// The window's program, next to this one.
const WINDOW_BIN: &str = "lull-window";
/// How long *Quit* lets a window process end after SIGTERM before it kills it.
pub const TERM_DEADLINE: Duration = Duration::from_secs(3);

/// A view of the window, by the UI's id (`ui/src/lib/views.ts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The managed server and what the engine does now (and why it is not running, if so).
    Overview,
    /// The review queue.
    Reviews,
    /// Drafts waiting for review.
    Drafts,
    /// Training runs.
    Jobs,
    /// The routing head.
    Routing,
    /// Settings.
    Settings,
}

impl View {
    /// Every view, in the window's navigation order.
    pub const ALL: [View; 6] = [
        View::Overview,
        View::Reviews,
        View::Drafts,
        View::Jobs,
        View::Routing,
        View::Settings,
    ];

    /// The UI's id of this view (`--view <id>`).
    pub fn id(self) -> &'static str {
        match self {
            View::Overview => "overview",
            View::Reviews => "reviews",
            View::Drafts => "drafts",
            View::Jobs => "jobs",
            View::Routing => "routing",
            View::Settings => "settings",
        }
    }

    /// The view with this id, if any.
    pub fn from_id(id: &str) -> Option<View> {
        View::ALL.into_iter().find(|view| view.id() == id)
    }
}

/// One request for a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowRequest {
    /// The view to open on (or turn an open window to).
    pub view: Option<View>,
    /// Why the engine is not running, for the window to say.
    pub engine_error: Option<String>,
    /// The XDG activation token of the click, so the window may take the focus (Wayland).
    pub activation_token: Option<String>,
}

/// Starts window processes and keeps track of them.
pub struct WindowLauncher {
    program: PathBuf,
    data_dir: PathBuf,
    config_file: PathBuf,
    /// How many window processes live.
    open: watch::Sender<usize>,
    /// Set by *Quit*: every child's task sends SIGTERM.
    quitting: watch::Sender<bool>,
    /// One task per child, waiting for it.
    children: Mutex<JoinSet<()>>,
}

impl WindowLauncher {
    /// A launcher of `program` for the engine at `paths`.
    pub fn new(program: PathBuf, paths: &Paths) -> WindowLauncher {
        WindowLauncher {
            program,
            data_dir: std::path::absolute(&paths.data_dir).unwrap_or(paths.data_dir.clone()),
            config_file: std::path::absolute(&paths.config_file)
                .unwrap_or(paths.config_file.clone()),
            open: watch::channel(0).0,
            quitting: watch::channel(false).0,
            children: Mutex::new(JoinSet::new()),
        }
    }

    /// `$LULL_WINDOW_BIN`, else `lull-window` next to this program, else `lull-window` on `PATH`.
    pub fn program() -> PathBuf {
        if let Some(program) = std::env::var_os(WINDOW_BIN_ENV) {
            return program.into();
        }
        std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join(WINDOW_BIN)))
            .unwrap_or_else(|| WINDOW_BIN.into())
    }

    /// The number of live window processes, as it changes.
    pub fn open_windows(&self) -> watch::Receiver<usize> {
        self.open.subscribe()
    }

    /// The window's arguments: the engine's paths, and the view and the engine's failure when
    /// there are.
    fn args(&self, request: &WindowRequest) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--data-dir".into(),
            self.data_dir.clone().into(),
            "--config".into(),
            self.config_file.clone().into(),
        ];
        if let Some(view) = request.view {
            args.extend(["--view".into(), view.id().into()]);
        }
        if let Some(message) = &request.engine_error {
            args.extend(["--engine-error".into(), message.into()]);
        }
        args
    }

    /// Starts a window process for `request`. Must run on the tokio runtime.
    pub fn open(&self, request: &WindowRequest) -> std::io::Result<()> {
        let mut command = Command::new(&self.program);
        command.args(self.args(request)).stdin(Stdio::null());
        if let Some(token) = &request.activation_token {
            command.env("XDG_ACTIVATION_TOKEN", token);
        }
        let child = command.spawn()?;
        tracing::info!(pid = child.id(), view = ?request.view, "opened a window");
        self.open.send_modify(|n| *n += 1);
        let open = self.open.clone();
        let quitting = self.quitting.subscribe();
        let mut children = lock(&self.children);
        while children.try_join_next().is_some() {}
        children.spawn(async move {
            let status = wait_or_terminate(child, quitting).await;
            match status {
                Ok(status) if status.success() => tracing::info!("a window closed"),
                Ok(status) => tracing::warn!(%status, "a window process ended badly"),
                Err(error) => tracing::warn!(%error, "cannot wait for a window process"),
            }
            open.send_modify(|n| *n -= 1);
        });
        Ok(())
    }

    /// Asks every live window to close (SIGTERM), and waits until each ended (killed after
    /// [`TERM_DEADLINE`]). Windows requested after this start, and are asked to close at once.
    pub async fn close_all(&self) {
        self.quitting.send_replace(true);
        let children = std::mem::take(&mut *lock(&self.children));
        children.join_all().await;
    }
}

/// Waits for `child`; once *Quit* is asked, sends it SIGTERM, and kills it after the deadline.
async fn wait_or_terminate(
    mut child: Child,
    mut quitting: watch::Receiver<bool>,
) -> std::io::Result<std::process::ExitStatus> {
    tokio::select! {
        status = child.wait() => return status,
        _ = quitting.wait_for(|quitting| *quitting) => {}
    }
    if let Some(pid) = child.id() {
        // Not reaped yet (only this task waits for it), so the pid is still this child's.
        // SAFETY: kill(2) has no memory effects.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    }
    match tokio::time::timeout(TERM_DEADLINE, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            tracing::warn!("a window did not close within {TERM_DEADLINE:?}; killing it");
            child.kill().await?;
            child.wait().await
        }
    }
}

/// Holds the engine's server interest while a window process lives and an engine runs; lets go
/// when the last window exits. Returns when either sender is gone.
pub async fn hold_server_interest(
    mut open_windows: watch::Receiver<usize>,
    mut engine: watch::Receiver<Option<Engine>>,
) {
    let mut held: Option<InterestGuard> = None;
    loop {
        let any_open = *open_windows.borrow_and_update() > 0;
        let running = engine.borrow_and_update().clone();
        held = match running {
            Some(engine) if any_open => held.or_else(|| Some(engine.server_interest())),
            _ => None,
        };
        tokio::select! {
            changed = open_windows.changed() => if changed.is_err() { return },
            changed = engine.changed() => if changed.is_err() { return },
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep going with it.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::Path;
    use std::sync::Arc;

    use lull::engine::Seams;
    use lull::llm::HttpLlmClient;
    use lull::routing::BuiltInEmbedderOnly;
    use lull::server::{MonitorConfig, ServerMonitor};
    use lull::Config;

    use super::*;

    fn paths(dir: &Path) -> Paths {
        Paths {
            data_dir: dir.join("data"),
            config_file: dir.join("config.toml"),
        }
    }

    /// A stand-in window: records its arguments, then lives until `$dir/close` exists or it
    /// receives SIGTERM (which it records).
    fn fake_window(dir: &Path) -> PathBuf {
        let program = dir.join("fake-window");
        let script = format!(
            "#!/bin/sh\n\
             trap 'echo term >> {dir}/terms; exit 0' TERM\n\
             printf '%s\\n' \"$@\" > {dir}/args.$$\n\
             while [ ! -e {dir}/close ]; do sleep 0.05; done\n",
            dir = dir.display()
        );
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        program
    }

    async fn until_open(windows: &mut watch::Receiver<usize>, n: usize) {
        tokio::time::timeout(Duration::from_secs(10), windows.wait_for(|open| *open == n))
            .await
            .unwrap_or_else(|_| panic!("{n} windows never were open"))
            .unwrap();
    }

    /// Waits until `n` fake windows wrote their arguments.
    async fn until_started(dir: &Path, n: usize) {
        let started = || {
            std::fs::read_dir(dir)
                .unwrap()
                .filter(|entry| {
                    let name = entry.as_ref().unwrap().file_name();
                    name.to_string_lossy().starts_with("args.")
                })
                .count()
        };
        tokio::time::timeout(Duration::from_secs(10), async {
            while started() < n {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{n} windows never started"));
    }

    #[test]
    fn views_are_the_uis() {
        let views = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/views.ts"),
        )
        .unwrap();
        let ids: Vec<&str> = views
            .match_indices("{ id: \"")
            .map(|(at, needle)| {
                let rest = &views[at + needle.len()..];
                &rest[..rest.find('"').unwrap()]
            })
            .collect();
        let ours: Vec<&str> = View::ALL.iter().map(|view| view.id()).collect();
        assert_eq!(ids, ours);
        assert_eq!(View::from_id("drafts"), Some(View::Drafts));
        assert_eq!(View::from_id("Drafts"), None);
    }

    #[test]
    fn a_window_gets_the_engines_paths_its_view_and_the_engines_failure() {
        let launcher = WindowLauncher::new("lull-window".into(), &paths(Path::new("/d")));
        let args = |request: WindowRequest| -> Vec<String> {
            launcher
                .args(&request)
                .into_iter()
                .map(|arg| arg.into_string().unwrap())
                .collect()
        };
        assert_eq!(
            args(WindowRequest::default()),
            ["--data-dir", "/d/data", "--config", "/d/config.toml"]
        );
        assert_eq!(
            args(WindowRequest {
                view: Some(View::Reviews),
                engine_error: Some("port taken".into()),
                activation_token: Some("token".into()),
            }),
            [
                "--data-dir",
                "/d/data",
                "--config",
                "/d/config.toml",
                "--view",
                "reviews",
                "--engine-error",
                "port taken"
            ]
        );
    }

    #[tokio::test]
    async fn windows_are_counted_until_they_exit_and_quit_terminates_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let launcher = WindowLauncher::new(fake_window(dir.path()), &paths(dir.path()));
        let mut windows = launcher.open_windows();
        launcher
            .open(&WindowRequest {
                view: Some(View::Drafts),
                ..WindowRequest::default()
            })
            .unwrap();
        until_open(&mut windows, 1).await;

        std::fs::write(dir.path().join("close"), "").unwrap();
        until_open(&mut windows, 0).await;
        std::fs::remove_file(dir.path().join("close")).unwrap();

        launcher.open(&WindowRequest::default()).unwrap();
        launcher.open(&WindowRequest::default()).unwrap();
        until_open(&mut windows, 2).await;
        // Each has set its SIGTERM trap once it wrote its arguments (3 windows so far).
        until_started(dir.path(), 3).await;
        launcher.close_all().await;
        assert_eq!(*windows.borrow(), 0, "both ended and were reaped");
        let terms = std::fs::read_to_string(dir.path().join("terms")).unwrap();
        assert_eq!(terms.lines().count(), 2, "each got SIGTERM: {terms:?}");
        assert!(launcher.children.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_window_that_cannot_start_is_an_error_and_counts_for_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let launcher = WindowLauncher::new(dir.path().join("missing"), &paths(dir.path()));
        assert!(launcher.open(&WindowRequest::default()).is_err());
        assert_eq!(*launcher.open_windows().borrow(), 0);
    }

    #[tokio::test]
    async fn the_server_is_watched_while_a_window_lives_and_an_engine_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::default();
        config.server.state_file = dir.path().join("no-supervisor/server.json");
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
        let engine = Engine::open_with(config, paths(dir.path()), seams)
            .await
            .unwrap();
        let (open_windows, windows) = watch::channel(0);
        let (running, engines) = watch::channel(None);
        let holder = tokio::spawn(hold_server_interest(windows, engines));
        let interested = |n: usize| {
            let monitor = monitor.clone();
            async move {
                tokio::time::timeout(Duration::from_secs(5), async {
                    while monitor.n_interested() != n {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                })
                .await
                .unwrap_or_else(|_| panic!("the interest count never was {n}"));
            }
        };

        open_windows.send_replace(1);
        tokio::task::yield_now().await;
        interested(0).await; // a window, but no engine yet
        running.send_replace(Some(engine.clone()));
        interested(1).await;
        open_windows.send_replace(2);
        interested(1).await; // one guard for any number of windows
        open_windows.send_replace(0);
        interested(0).await;
        open_windows.send_replace(1);
        interested(1).await;
        running.send_replace(None);
        interested(0).await; // the engine stopped

        drop(open_windows);
        holder.await.unwrap();
        engine.shutdown().await;
    }
}
