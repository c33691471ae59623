//! The main window: one at a time, labelled [`MAIN_WINDOW_LABEL`].
//!
//! Invariant: the window is destroyed when closed (Tauri's default; nothing here prevents the
//! close), so a closed window holds no webview memory. [`show_main`] focuses the window when it
//! exists and builds it anew when it does not.

use tauri::{AppHandle, Manager as _, WebviewUrl, WebviewWindowBuilder};

/// The label of the main window; capabilities/default.json grants permissions to it by name.
pub const MAIN_WINDOW_LABEL: &str = "main";
const TITLE: &str = "Lull";
const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 640.0;
const MIN_WIDTH: f64 = 640.0;
const MIN_HEIGHT: f64 = 420.0;

/// Brings the main window to the front, building it when it was closed. Failures are logged:
/// a tray app has nowhere better to report them.
pub fn show_main(app: &AppHandle) {
    if let Err(error) = try_show_main(app) {
        tracing::error!(%error, "could not open the Lull window");
    }
}

fn try_show_main(app: &AppHandle) -> tauri::Result<()> {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW_LABEL) {
        window.unminimize()?;
        window.show()?;
        return window.set_focus();
    }
    WebviewWindowBuilder::new(app, MAIN_WINDOW_LABEL, WebviewUrl::App("index.html".into()))
        .title(TITLE)
        .inner_size(WIDTH, HEIGHT)
        .min_inner_size(MIN_WIDTH, MIN_HEIGHT)
        .center()
        .focused(true)
        .build()?;
    Ok(())
}
