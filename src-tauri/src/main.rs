//! The `lull-window` binary: everything lives in the library (`lib.rs`).

// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    if let Err(error) = lull_window_lib::run() {
        eprintln!("lull-window: {error:#}");
        std::process::exit(1);
    }
}
