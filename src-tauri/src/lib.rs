//! `lull-window`: Lull's window, a process of its own that shows the engine of a running Lull.
//!
//! The tray (`lull-desktop`) hosts the engine and starts this process on *Open Lull*; the
//! window talks to the engine only through its local API, so the tray never loads WebKit and
//! closing the window gives all of the webview's memory back (issue 17: the tree with the
//! window closed stays small).
//!
//! What lives where:
//! - [`run`] builds the Tauri app as a readable list: plugins, managed state, the commands the
//!   UI may call (grouped by domain), then the window and the event follower.
//! - `link`: [`link::EngineLink`], the API client of the data folder's engine
//!   (`lull::client::EngineClient`), connected again when the engine restarts.
//! - `<domain>::commands`: the commands the UI calls. Each is one API call whose JSON answer
//!   goes to the UI as it came, and fails with the API's `{code, message}`
//!   (`error::CommandError`, from `lull::client::ClientError`).
//! - `events`: follows `GET /v1/events` (`engine-event`) and says whether the engine is there
//!   (`engine-host`, also the `host_state` command), reconnecting with a back-off.
//! - `window`: the one window; the process exits when it closes. A second launch for the same
//!   data folder hands its `--view` over (`tauri-plugin-single-instance`) and exits.
//! - `autostart`: *Start at login*, the XDG autostart entry of the tray.
//! - `launch`: the command line (`--data-dir`, `--config`, `--view`, `--engine-error`).

#![deny(missing_docs)]

mod about;
mod autostart;
mod drafts;
#[cfg(test)]
mod engine_tests;
mod error;
mod events;
#[cfg(test)]
mod ipc_hostile_tests;
mod jobs;
mod launch;
mod link;
mod reviews;
mod settings;
mod status;
mod window;

use std::sync::Mutex;

use anyhow::Context as _;
use lull::Paths;
use tauri::async_runtime::JoinHandle;
use tauri::{Manager as _, RunEvent};

use crate::events::HostCell;
use crate::launch::{flag_value, Locations, ENGINE_ERROR_FLAG, VIEW_FLAG};
use crate::link::EngineLink;

include!("command_names.rs");

/// The event follower's task, aborted when the app exits.
struct Follower(Mutex<Option<JoinHandle<()>>>);

/// Every command the window's UI may invoke, grouped by domain. Every name here must be in
/// `COMMAND_NAMES` (src/command_names.rs) and granted in capabilities/, and the UI must call
/// exactly these (ui/src/lib/backend.ts); the tests below check all three. The hostile-input
/// tests (`ipc_hostile_tests`) invoke them through this very handler.
fn commands<R: tauri::Runtime>() -> impl Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        // About the app: version and build facts.
        about::commands::app_version,
        // The engine's status (Overview, header, badges) and whether it is reachable.
        status::commands::engine_status,
        status::commands::host_state,
        // Reviews: the queue, run now, drop.
        reviews::commands::list_reviews,
        reviews::commands::run_review_now,
        reviews::commands::drop_review,
        // Drafts: read, edit, dismiss a finding, approve or reject.
        drafts::commands::list_drafts,
        drafts::commands::get_draft,
        drafts::commands::approve_draft,
        drafts::commands::reject_draft,
        drafts::commands::edit_draft,
        drafts::commands::dismiss_finding,
        // Training jobs: start, follow, cancel, resume, promote.
        jobs::commands::start_job,
        jobs::commands::list_jobs,
        jobs::commands::get_job,
        jobs::commands::cancel_job,
        jobs::commands::resume_job,
        jobs::commands::promote_job,
        // Settings: defer mode, pause, reviews on or off.
        settings::commands::get_settings,
        settings::commands::update_settings,
        // Start at login: the tray's XDG autostart entry.
        autostart::commands::get_autostart,
        autostart::commands::set_autostart,
    ]
}

/// Builds and runs the window until it closes. Returns an error only when it cannot start.
pub fn run() -> anyhow::Result<()> {
    let argv: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let locations = Locations::from_args(std::env::args_os(), |name| std::env::var_os(name));
    let paths = Paths::resolve(locations.data_dir, locations.config)?;
    let view = flag_value(&argv, VIEW_FLAG);
    let engine_error = flag_value(&argv, ENGINE_ERROR_FLAG);
    // Warnings to stderr only: the engine's log file is the tray's.
    if let Err(error) = lull::logging::init(None) {
        eprintln!("lull-window: logging is off: {error:#}");
    }
    let engine = EngineLink::new(paths.clone());

    let app = tauri::Builder::default()
        // Plugins. Single-instance comes first: a second window for this data folder hands its
        // view to the first and exits before it builds anything.
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(window::instance_id(&paths.data_dir))
                .callback(|app, argv, _cwd| {
                    window::bring_forward(app, flag_value(&argv, VIEW_FLAG));
                })
                .build(),
        )
        // Managed state: the link to the engine, the last host state, the follower's task.
        .manage(engine.clone())
        .manage(HostCell::default())
        .manage(Follower(Mutex::new(None)))
        .invoke_handler(commands())
        .setup(move |app| {
            window::open(app.handle(), view.as_deref())?;
            let follower = events::follow(engine, engine_error, app.handle().clone());
            *app.state::<Follower>().0.lock().expect("follower slot") = Some(follower);
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("could not start the Lull window")?;
    // No `prevent_exit`: closing the window ends the process.
    app.run(|app, event| {
        if let RunEvent::Exit = event {
            if let Some(follower) = app
                .state::<Follower>()
                .0
                .lock()
                .expect("follower slot")
                .take()
            {
                follower.abort();
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::COMMAND_NAMES;
    use std::collections::BTreeSet;
    use std::path::Path;

    /// The command function names inside `generate_handler![…]` in this file.
    fn registered_commands() -> BTreeSet<String> {
        let source = include_str!("lib.rs");
        // Spelled in two halves so this line does not match itself.
        let needle = concat!("generate_", "handler![");
        let start = source.find(needle).expect("lib.rs calls generate_handler!") + needle.len();
        let body = &source[start..start + source[start..].find(']').expect("closing ]")];
        body.lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .filter(|path| !path.is_empty())
            .map(|path| path.rsplit("::").next().unwrap_or(path).to_owned())
            .collect()
    }

    /// Every permission identifier granted by any capability file.
    fn granted_permissions() -> BTreeSet<String> {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("capabilities");
        let mut granted = BTreeSet::new();
        for entry in std::fs::read_dir(&folder).expect("read capabilities/") {
            let path = entry.expect("capability entry").path();
            let text = std::fs::read_to_string(&path).expect("read capability file");
            let capability: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            for permission in capability["permissions"]
                .as_array()
                .expect("permissions list")
            {
                // A permission is either "name" or {"identifier": "name", …}.
                let identifier = permission
                    .as_str()
                    .or_else(|| permission["identifier"].as_str())
                    .expect("permission identifier");
                granted.insert(identifier.to_owned());
            }
        }
        granted
    }

    /// The command names the UI invokes: `call<T>("name"` and `invoke<T>("name"` in
    /// ui/src/lib/backend.ts, the one place the UI talks to this app.
    fn ui_invoked_commands() -> BTreeSet<String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/backend.ts");
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let mut names = BTreeSet::new();
        for needle in ["call<", "invoke<"] {
            for (start, _) in source.match_indices(needle) {
                let rest = &source[start + needle.len()..];
                // The type argument (no nested generics there), then `("name"`.
                let Some(after_type) = rest.find('>').map(|end| &rest[end + 1..]) else {
                    continue;
                };
                let Some(quoted) = after_type.strip_prefix("(\"") else {
                    continue; // `call<T>(command: string…`: the helper itself.
                };
                let name = &quoted[..quoted.find('"').expect("closing quote")];
                names.insert(name.to_owned());
            }
        }
        names
    }

    #[test]
    fn the_ui_invokes_exactly_the_declared_commands() {
        let declared: BTreeSet<String> = COMMAND_NAMES.iter().map(|s| s.to_string()).collect();
        assert_eq!(ui_invoked_commands(), declared);
    }

    #[test]
    fn registered_commands_match_the_declared_names() {
        let declared: BTreeSet<String> = COMMAND_NAMES.iter().map(|s| s.to_string()).collect();
        assert_eq!(registered_commands(), declared);
    }

    #[test]
    fn every_command_is_granted_by_a_capability() {
        let granted = granted_permissions();
        for name in COMMAND_NAMES {
            let permission = format!("allow-{}", name.replace('_', "-"));
            assert!(
                granted.contains(&permission),
                "command `{name}` has no `{permission}` in src-tauri/capabilities/*.json"
            );
        }
    }
}
