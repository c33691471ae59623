//! The window: one, labelled [`MAIN_WINDOW_LABEL`], and the process ends when it closes.
//!
//! Invariant: nothing keeps the process alive without its window (no `prevent_exit`), so
//! closing it gives back all of the webview's memory; the tray starts a new process for the
//! next *Open Lull*. A second launch for the same data folder ([`instance_id`]) hands its
//! `--view` to this one ([`bring_forward`]) and exits.

use std::path::Path;

use tauri::{AppHandle, Emitter as _, Manager as _, WebviewUrl, WebviewWindowBuilder};

/// The label of the window; capabilities/default.json grants permissions to it by name.
pub const MAIN_WINDOW_LABEL: &str = "main";
const TITLE: &str = "Lull";
const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 640.0;
const MIN_WIDTH: f64 = 640.0;
const MIN_HEIGHT: f64 = 420.0;
/// The event that turns the window to a view; its payload is the view's id (`"drafts"`).
pub const NAVIGATE_EVENT: &str = "navigate";

/// Builds the window, on `view` when one is given (`index.html#drafts`).
pub fn open(app: &AppHandle, view: Option<&str>) -> tauri::Result<()> {
    let page = match view.filter(|view| is_view_id(view)) {
        Some(view) => format!("index.html#{view}"),
        None => "index.html".to_owned(),
    };
    WebviewWindowBuilder::new(app, MAIN_WINDOW_LABEL, WebviewUrl::App(page.into()))
        .title(TITLE)
        .inner_size(WIDTH, HEIGHT)
        .min_inner_size(MIN_WIDTH, MIN_HEIGHT)
        .center()
        .focused(true)
        .build()?;
    Ok(())
}

/// A second launch asked for the window: turn it to `view` (if any), unminimize and focus it.
/// Failures are logged: the second launch has already gone.
pub fn bring_forward(app: &AppHandle, view: Option<String>) {
    let Some(window) = app.get_webview_window(MAIN_WINDOW_LABEL) else {
        return;
    };
    if let Some(view) = view.filter(|view| is_view_id(view)) {
        if let Err(error) = app.emit_to(MAIN_WINDOW_LABEL, NAVIGATE_EVENT, view) {
            tracing::warn!(%error, "cannot turn the window to a view");
        }
    }
    let shown = window
        .unminimize()
        .and_then(|()| window.show())
        .and_then(|()| window.set_focus());
    if let Err(error) = shown {
        tracing::warn!(%error, "cannot bring the window forward");
    }
}

/// The single-instance D-Bus name of the window for one data folder: two data folders (two
/// trays) each get a window, and one folder never gets two.
pub fn instance_id(data_dir: &Path) -> String {
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    let digest = lull::skills::sha256_hex(dir.as_os_str().as_encoded_bytes());
    // A D-Bus name element must not start with a digit.
    format!("app.lull.window.d{}", &digest[..16])
}

/// A view id is lowercase letters (`ui/src/lib/views.ts`); anything else opens the Overview.
fn is_view_id(view: &str) -> bool {
    !view.is_empty() && view.bytes().all(|byte| byte.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_data_folder_is_one_window_name() {
        let dir = tempfile::tempdir().unwrap();
        let id = instance_id(dir.path());
        assert_eq!(id, instance_id(&dir.path().join(".")));
        assert_ne!(id, instance_id(&dir.path().join("other")));
        let last = id.rsplit('.').next().unwrap();
        assert!(last.starts_with('d') && last.len() == 17, "{id}");
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'));
    }

    #[test]
    fn only_view_ids_reach_the_page() {
        assert!(is_view_id("drafts"));
        assert!(!is_view_id(""));
        assert!(!is_view_id("drafts?x=1"));
        assert!(!is_view_id("../x"));
    }
}
