//! The main window: one at a time, labelled [`MAIN_WINDOW_LABEL`].
//!
//! Invariant: the window is destroyed when closed (Tauri's default; nothing here prevents the
//! close), so a closed window holds no webview memory. [`show_main`] focuses the window when it
//! exists and builds it anew when it does not; [`show_view`] also turns it to one view (the
//! tray's *drafts waiting* and *queue* items): a new window starts there (`index.html#<view>`),
//! an open one receives [`NAVIGATE_EVENT`].

use tauri::{AppHandle, Emitter as _, Manager as _, WebviewUrl, WebviewWindowBuilder};

/// The label of the main window; capabilities/default.json grants permissions to it by name.
pub const MAIN_WINDOW_LABEL: &str = "main";
const TITLE: &str = "Lull";
const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 640.0;
const MIN_WIDTH: f64 = 640.0;
const MIN_HEIGHT: f64 = 420.0;
/// The event that turns an open window to a view; its payload is the view's id (`"drafts"`).
pub const NAVIGATE_EVENT: &str = "navigate";

/// Brings the main window to the front, building it when it was closed. Failures are logged:
/// a tray app has nowhere better to report them.
pub fn show_main(app: &AppHandle) {
    if let Err(error) = try_show(app, None) {
        tracing::error!(%error, "could not open the Lull window");
    }
}

/// [`show_main`], turned to the view with this id (see `ui/src/lib/views.ts`).
pub fn show_view(app: &AppHandle, view: &str) {
    if let Err(error) = try_show(app, Some(view)) {
        tracing::error!(%error, view, "could not open the Lull window");
    }
}

fn try_show(app: &AppHandle, view: Option<&str>) -> tauri::Result<()> {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW_LABEL) {
        if let Some(view) = view {
            app.emit_to(MAIN_WINDOW_LABEL, NAVIGATE_EVENT, view)?;
        }
        window.unminimize()?;
        window.show()?;
        return window.set_focus();
    }
    let page = match view {
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
