//! The tray icon and its menu.
//!
//! Invariant: everything the tray offers is a menu item, because on Linux (AppIndicator) the
//! tray sends no click events. The menu is *Open Lull* and *Quit* for now; DESIGN §1 lists the
//! items the engine will add (drafts waiting, queue, defer, pause).

use tauri::image::Image;
use tauri::menu::{Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{include_image, AppHandle};

use crate::window;

/// The id of Lull's one tray icon, for `AppHandle::tray_by_id`.
pub const TRAY_ID: &str = "lull";
const MENU_OPEN: &str = "open";
const MENU_QUIT: &str = "quit";

/// How the tray icon looks: what the engine is doing, at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrayLook {
    /// Nothing to do, or waiting for a lull.
    Idle,
    /// Learning work is running.
    Learning,
    /// The person paused learning.
    Paused,
    /// Drafts are waiting for review.
    Attention,
}

impl TrayLook {
    /// Every look, in the order of DESIGN §1.
    pub const ALL: [TrayLook; 4] = [Self::Idle, Self::Learning, Self::Paused, Self::Attention];

    /// The icon, rendered from `icons/tray/<look>.svg` by `icons/render.sh`.
    pub fn icon(self) -> Image<'static> {
        match self {
            Self::Idle => include_image!("../icons/tray/idle.png"),
            Self::Learning => include_image!("../icons/tray/learning.png"),
            Self::Paused => include_image!("../icons/tray/paused.png"),
            Self::Attention => include_image!("../icons/tray/attention.png"),
        }
    }

    /// The tooltip (where the platform shows one).
    pub fn tooltip(self) -> &'static str {
        match self {
            Self::Idle => "Lull: idle",
            Self::Learning => "Lull: learning",
            Self::Paused => "Lull: learning paused",
            Self::Attention => "Lull: drafts waiting for review",
        }
    }
}

/// Creates the tray icon with its menu, looking [`TrayLook::Idle`].
pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let open = MenuItem::with_id(app, MENU_OPEN, "Open Lull", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, MENU_QUIT, "Quit", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&open, &separator, &quit])?;
    let look = TrayLook::Idle;
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(look.icon())
        .tooltip(look.tooltip())
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu_event)
        .build(app)?;
    Ok(())
}

/// Changes the tray icon's look. Does nothing when the tray is gone (the app is quitting).
pub fn set_look(app: &AppHandle, look: TrayLook) -> tauri::Result<()> {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return Ok(());
    };
    tray.set_icon(Some(look.icon()))?;
    tray.set_tooltip(Some(look.tooltip()))
}

fn on_menu_event(app: &AppHandle, event: MenuEvent) {
    match event.id().as_ref() {
        MENU_OPEN => window::show_main(app),
        MENU_QUIT => app.exit(0),
        other => tracing::warn!(id = other, "unknown tray menu item"),
    }
}

#[cfg(test)]
mod tests {
    use super::TrayLook;

    #[test]
    fn every_look_has_a_square_icon_and_a_tooltip() {
        for look in TrayLook::ALL {
            let icon = look.icon();
            assert_eq!((icon.width(), icon.height()), (64, 64), "{look:?}");
            assert_eq!(icon.rgba().len(), 64 * 64 * 4, "{look:?}");
            assert!(look.tooltip().starts_with("Lull"), "{look:?}");
        }
    }
}
