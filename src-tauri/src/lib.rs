//! `lull-desktop`: Lull's tray app, a thin desktop shell over the learning engine.
//!
//! What lives where:
//! - [`run`] builds the Tauri app as a readable list: plugins, managed state, the commands the
//!   UI may call (grouped by domain), then the engine, the tray and the run loop.
//! - `host`: hosts the engine (`lull::Engine`) and its local API in this process, exactly like
//!   `lull serve`; a failure to start is shown, never a crash. *Quit* stops the API, then the
//!   engine.
//! - `events`: forwards each engine event to the window (`engine-event`), the tray and the
//!   notifications (`notify`). Nothing polls.
//! - [`tray`]: the tray icon, its menu (drafts waiting, queue, *Defer learning until idle*,
//!   *Pause learning*, *Open Lull*, *Quit*) and its looks ([`tray::TrayLook`]). On Linux the
//!   tray sends no click events, so everything is reachable from the menu.
//! - `window`: the main window. It is opened from the tray and **destroyed** when closed, to
//!   give the webview's memory back; *Open Lull* builds it anew.
//! - `<domain>::commands`: the commands the UI calls. Commands only delegate to engine
//!   operations and fail with one shape, `error::CommandError` (`{code, message}`, the API's
//!   codes).
//!
//! Closing the window never quits: only *Quit* does. A second launch focuses the first
//! instance (`tauri-plugin-single-instance`).

#![deny(missing_docs)]

mod about;
mod drafts;
mod error;
mod events;
mod host;
mod jobs;
mod notify;
mod reviews;
mod settings;
mod status;
pub mod tray;
mod window;

use anyhow::Context as _;
use tauri::{AppHandle, Manager as _, RunEvent};
use tauri_plugin_autostart::MacosLauncher;

use crate::host::{EngineHost, Locations};

include!("command_names.rs");

/// Passed by the login item (autostart): start in the tray without opening the window.
pub const START_HIDDEN_FLAG: &str = "--hidden";

/// Builds and runs the app until *Quit*. Returns an error only when Tauri cannot start.
pub fn run() -> anyhow::Result<()> {
    let app = tauri::Builder::default()
        // Plugins. Single-instance comes first: a second launch hands over to the first
        // instance (which shows its window) and exits before it builds anything.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            window::show_main(app);
        }))
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_autostart::init(
            MacosLauncher::LaunchAgent,
            Some(vec![START_HIDDEN_FLAG]),
        ))
        // Managed state: the hosted engine (started in `setup`, stopped by *Quit*).
        .manage(EngineHost::default())
        .manage(notify::ServerPresence::default())
        // Commands, grouped by domain. Every name here must be in `COMMAND_NAMES`
        // (src/command_names.rs) and granted in capabilities/, and the UI must call exactly
        // these (ui/src/lib/backend.ts); the tests below check all three.
        .invoke_handler(tauri::generate_handler![
            // About the app: version and build facts.
            about::commands::app_version,
            // The engine's status: Overview, header, badges.
            status::commands::engine_status,
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
            jobs::commands::start_job,
            jobs::commands::list_jobs,
            jobs::commands::get_job,
            jobs::commands::cancel_job,
            jobs::commands::resume_job,
            jobs::commands::promote_job,
            // Settings: defer mode, pause, reviews on or off.
            settings::commands::get_settings,
            settings::commands::update_settings,
        ])
        .setup(|app| {
            tray::create(app.handle())?;
            EngineHost::start(
                app.handle(),
                Locations::from_args(std::env::args_os(), |name| std::env::var_os(name)),
            );
            if !std::env::args().any(|arg| arg == START_HIDDEN_FLAG) {
                window::show_main(app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("could not start the desktop app")?;
    app.run(on_run_event);
    Ok(())
}

/// Keeps the app alive in the tray when its last window closes: Tauri asks to exit then with
/// no exit code, while *Quit* (after stopping the engine) calls `AppHandle::exit`, which carries
/// one and goes through. Any other way out still stops the engine before the process ends.
fn on_run_event(app: &AppHandle, event: RunEvent) {
    match event {
        RunEvent::ExitRequested {
            code: None, api, ..
        } => api.prevent_exit(),
        RunEvent::Exit => tauri::async_runtime::block_on(app.state::<EngineHost>().stop()),
        _ => {}
    }
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
