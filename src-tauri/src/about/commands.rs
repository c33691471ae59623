//! Commands of the "about" domain. Each only delegates; see `COMMAND_NAMES`.

/// The app's version, as in the workspace's `Cargo.toml` (for example `0.1.0`).
#[tauri::command]
pub fn app_version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
