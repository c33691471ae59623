//! `lull-desktop`: the process that lives in Lull's tray all day. Command line and glue; the
//! engine is the `lull` library.
//!
//! It hosts the learning engine and its local API in-process (exactly like `lull serve`), shows
//! the tray icon and menu over D-Bus, sends the desktop notifications, and starts the window —
//! a process of its own, `lull-window` — when the person asks for it. It loads no webview and no
//! GUI toolkit, so it stays small beside a local model: the webview's memory lives and dies with
//! the window process.
//!
//! What lives where:
//! - `launch`: the command line, `lull-desktop [--hidden] [--data-dir D] [--config C]`.
//! - `instance`: one tray per data folder (`desktop.lock`); a later launch hands over through
//!   `desktop.sock` and exits 0.
//! - `app`: the app's parts and its run loop; tray clicks, later launches and SIGTERM/SIGINT
//!   become one stream of commands. *Quit* closes the windows, then the API, then the engine.
//! - `host`: hosts the engine and its API; a failure to start is said, never a crash.
//! - `events`: each engine event refreshes the tray and may become a notification. Nothing polls.
//! - `tray`: the StatusNotifierItem, its menu and its looks (idle, learning, paused, attention).
//! - `notify`: which events deserve a notification, and their delivery over D-Bus.
//! - `window`: starts and reaps the window processes, and holds the engine's server interest
//!   while one lives, so the Overview stays current.

#![deny(missing_docs)]

mod app;
mod events;
mod host;
mod instance;
mod launch;
mod notify;
mod tray;
mod window;

use std::process::ExitCode;

fn main() -> ExitCode {
    match app::main(launch::Launch::from_env()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lull-desktop: {error:#}");
            ExitCode::FAILURE
        }
    }
}
