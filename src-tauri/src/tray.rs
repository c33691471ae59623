//! The tray icon and its menu (DESIGN §1).
//!
//! Invariant: everything the tray offers is a menu item, because on Linux (AppIndicator) the
//! tray sends no click events. The menu, top to bottom:
//!
//! - *N drafts waiting for review…* (review pending or blocked): opens the window on Drafts
//! - *Queue: N deferred reviews*: opens the window on Reviews
//! - *Defer learning until idle* (check): defer mode `auto` ↔ `never`
//! - *Pause learning* (check)
//! - *Open Lull*, *Quit*
//!
//! Labels, checks and the icon's look follow the engine: [`refresh`] wakes one updater task,
//! which reads the engine's status once and applies a [`TrayModel`] (only what changed). Engine
//! events call [`refresh`]; nothing polls.

use std::sync::Arc;

use lull::config::DeferMode;
use lull::engine::DraftCounts;
use lull::settings::SettingsPatch;
use lull::Status;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{include_image, AppHandle, Manager as _, Wry};
use tokio::sync::Notify;

use crate::host::{EngineHost, HostState};
use crate::window;

/// The id of Lull's one tray icon, for `AppHandle::tray_by_id`.
pub const TRAY_ID: &str = "lull";
const MENU_DRAFTS: &str = "drafts";
const MENU_QUEUE: &str = "queue";
const MENU_DEFER: &str = "defer";
const MENU_PAUSE: &str = "pause";
const MENU_OPEN: &str = "open";
const MENU_QUIT: &str = "quit";
/// The check items' labels (DESIGN §1).
const DEFER_LABEL: &str = "Defer learning until idle";
const PAUSE_LABEL: &str = "Pause learning";

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

    /// The look for the engine's state: paused, then learning, then drafts waiting, else idle.
    pub fn for_facts(facts: &TrayFacts) -> TrayLook {
        if facts.paused {
            TrayLook::Paused
        } else if facts.running_reviews > 0 || facts.running_jobs > 0 {
            TrayLook::Learning
        } else if facts.drafts_waiting > 0 {
            TrayLook::Attention
        } else {
            TrayLook::Idle
        }
    }
}

/// The part of the engine's [`Status`] the tray shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrayFacts {
    /// Learning is paused.
    pub paused: bool,
    /// The defer mode in force.
    pub defer_mode: DeferMode,
    /// Reviews waiting for a lull.
    pub queued_reviews: u64,
    /// Reviews running now.
    pub running_reviews: u64,
    /// Training jobs running now.
    pub running_jobs: u64,
    /// Drafts waiting for a person: see [`drafts_waiting`].
    pub drafts_waiting: u64,
}

impl From<&Status> for TrayFacts {
    fn from(status: &Status) -> TrayFacts {
        TrayFacts {
            paused: status.paused,
            defer_mode: status.defer_mode,
            queued_reviews: status.queue.queued,
            running_reviews: status.queue.running,
            running_jobs: status.jobs.running,
            drafts_waiting: drafts_waiting(&status.drafts),
        }
    }
}

/// The drafts *N drafts waiting for review…* counts: those waiting for *Approve* / *Reject*
/// and those a critical finding blocked, because both wait for the person (a blocked draft's
/// finding can be dismissed, or the draft edited or rejected).
pub fn drafts_waiting(counts: &DraftCounts) -> u64 {
    counts.review_pending + counts.blocked
}

/// Everything the tray shows, computed from the engine's state alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrayModel {
    /// The icon.
    pub look: TrayLook,
    /// The tooltip.
    pub tooltip: String,
    /// The first item: drafts waiting (or why there is no engine).
    pub drafts_label: String,
    /// The second item: the deferred reviews.
    pub queue_label: String,
    /// Whether the queue item and the two check items can be used (the engine runs).
    pub engine_items_enabled: bool,
    /// *Defer learning until idle*: defer mode `auto`.
    pub defer_checked: bool,
    /// *Pause learning*.
    pub pause_checked: bool,
}

impl TrayModel {
    /// The tray for a running engine.
    pub fn for_facts(facts: &TrayFacts) -> TrayModel {
        let look = TrayLook::for_facts(facts);
        TrayModel {
            look,
            tooltip: look.tooltip().to_owned(),
            drafts_label: format!(
                "{} waiting for review…",
                plural(facts.drafts_waiting, "draft")
            ),
            queue_label: format!("Queue: {}", plural(facts.queued_reviews, "deferred review")),
            engine_items_enabled: true,
            defer_checked: facts.defer_mode == DeferMode::Auto,
            pause_checked: facts.paused,
        }
    }

    /// The tray while no engine runs: the first item opens the window, which says why.
    pub fn without_engine(state: &HostState) -> TrayModel {
        let (drafts_label, tooltip) = match state {
            HostState::Failed { .. } => (
                "Learning engine not running: see why…",
                "Lull: learning engine not running",
            ),
            HostState::Stopping => ("Quitting…", "Lull: quitting"),
            HostState::Starting | HostState::Running => {
                ("Learning engine starting…", "Lull: starting")
            }
        };
        TrayModel {
            look: TrayLook::Idle,
            tooltip: tooltip.to_owned(),
            drafts_label: drafts_label.to_owned(),
            queue_label: "Queue: unknown".to_owned(),
            engine_items_enabled: false,
            defer_checked: false,
            pause_checked: false,
        }
    }
}

/// The menu's changing items, kept to update them; Tauri managed state.
struct TrayMenu {
    drafts: MenuItem<Wry>,
    queue: MenuItem<Wry>,
    defer: CheckMenuItem<Wry>,
    pause: CheckMenuItem<Wry>,
    wake: Arc<Notify>,
}

/// Creates the tray icon with its menu and starts its updater; it shows "starting" until the
/// engine runs.
pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let model = TrayModel::without_engine(&HostState::Starting);
    let drafts = MenuItem::with_id(app, MENU_DRAFTS, &model.drafts_label, true, None::<&str>)?;
    let queue = MenuItem::with_id(app, MENU_QUEUE, &model.queue_label, false, None::<&str>)?;
    let defer = CheckMenuItem::with_id(app, MENU_DEFER, DEFER_LABEL, false, false, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, MENU_PAUSE, PAUSE_LABEL, false, false, None::<&str>)?;
    let open = MenuItem::with_id(app, MENU_OPEN, "Open Lull", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, MENU_QUIT, "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &drafts,
            &queue,
            &PredefinedMenuItem::separator(app)?,
            &defer,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &quit,
        ],
    )?;
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(model.look.icon())
        .tooltip(&model.tooltip)
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(on_menu_event)
        .build(app)?;
    let wake = Arc::new(Notify::new());
    app.manage(TrayMenu {
        drafts,
        queue,
        defer,
        pause,
        wake: wake.clone(),
    });
    tauri::async_runtime::spawn(update_forever(app.clone(), wake, model));
    Ok(())
}

/// Asks the tray to re-read the engine. Cheap; a burst of calls becomes one or two reads.
pub fn refresh(app: &AppHandle) {
    if let Some(menu) = app.try_state::<TrayMenu>() {
        menu.wake.notify_one();
    }
}

/// Changes the tray icon's look. Does nothing when the tray is gone (the app is quitting).
pub fn set_look(app: &AppHandle, look: TrayLook) -> tauri::Result<()> {
    let Some(tray) = app.tray_by_id(TRAY_ID) else {
        return Ok(());
    };
    tray.set_icon(Some(look.icon()))?;
    tray.set_tooltip(Some(look.tooltip()))
}

async fn update_forever(app: AppHandle, wake: Arc<Notify>, mut shown: TrayModel) {
    loop {
        wake.notified().await;
        let next = current_model(&app).await;
        if let Err(error) = apply(&app, &shown, &next) {
            tracing::warn!(%error, "cannot update the tray");
        }
        shown = next;
    }
}

async fn current_model(app: &AppHandle) -> TrayModel {
    let host = app.state::<EngineHost>();
    let Ok(engine) = host.engine() else {
        return TrayModel::without_engine(&host.state());
    };
    match engine.status().await {
        Ok(status) => TrayModel::for_facts(&TrayFacts::from(&status)),
        Err(error) => {
            tracing::warn!(%error, "cannot read the engine's status for the tray");
            TrayModel::without_engine(&host.state())
        }
    }
}

/// Applies what differs between `shown` and `next` (on Linux every icon change writes a file).
fn apply(app: &AppHandle, shown: &TrayModel, next: &TrayModel) -> tauri::Result<()> {
    let menu = app.state::<TrayMenu>();
    if next.look != shown.look || next.tooltip != shown.tooltip {
        set_look(app, next.look)?;
        if let Some(tray) = app.tray_by_id(TRAY_ID) {
            tray.set_tooltip(Some(&next.tooltip))?;
        }
    }
    if next.drafts_label != shown.drafts_label {
        menu.drafts.set_text(&next.drafts_label)?;
    }
    if next.queue_label != shown.queue_label {
        menu.queue.set_text(&next.queue_label)?;
    }
    // The check items toggle themselves when clicked, whatever the engine then decides: always
    // set them back to the engine's word.
    menu.defer.set_checked(next.defer_checked)?;
    menu.pause.set_checked(next.pause_checked)?;
    if next.engine_items_enabled != shown.engine_items_enabled {
        menu.queue.set_enabled(next.engine_items_enabled)?;
        menu.defer.set_enabled(next.engine_items_enabled)?;
        menu.pause.set_enabled(next.engine_items_enabled)?;
    }
    Ok(())
}

fn on_menu_event(app: &AppHandle, event: MenuEvent) {
    match event.id().as_ref() {
        MENU_DRAFTS => {
            let engine_runs = app.state::<EngineHost>().engine().is_ok();
            window::show_view(app, if engine_runs { "drafts" } else { "overview" });
        }
        MENU_QUEUE => window::show_view(app, "reviews"),
        MENU_DEFER => change_settings(app, |settings| SettingsPatch {
            defer_mode: Some(match settings.defer_mode {
                DeferMode::Auto => DeferMode::Never,
                DeferMode::Never => DeferMode::Auto,
            }),
            ..SettingsPatch::default()
        }),
        MENU_PAUSE => change_settings(app, |settings| SettingsPatch {
            paused: Some(!settings.paused),
            ..SettingsPatch::default()
        }),
        MENU_OPEN => window::show_main(app),
        MENU_QUIT => quit(app),
        other => tracing::warn!(id = other, "unknown tray menu item"),
    }
}

/// Flips a setting from its value in the engine (not from the check mark, which GTK has already
/// toggled), then lets the tray show the engine's answer.
fn change_settings(
    app: &AppHandle,
    patch_for: impl FnOnce(&lull::settings::Settings) -> SettingsPatch + Send + 'static,
) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Ok(engine) = app.state::<EngineHost>().engine() {
            let patch = patch_for(&engine.settings());
            if let Err(error) = engine.update_settings(patch).await {
                tracing::error!(%error, "cannot change the settings from the tray");
            }
        }
        refresh(&app);
    });
}

/// Stops the engine cleanly, then ends the app.
fn quit(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        app.state::<EngineHost>().stop().await;
        app.exit(0);
    });
}

/// `"1 draft"`, `"3 drafts"`: the tray's and the notifications' counts.
pub(crate) fn plural(n: u64, singular: &str) -> String {
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {singular}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_look_has_a_square_icon_and_a_tooltip() {
        for look in TrayLook::ALL {
            let icon = look.icon();
            assert_eq!((icon.width(), icon.height()), (64, 64), "{look:?}");
            assert_eq!(icon.rgba().len(), 64 * 64 * 4, "{look:?}");
            assert!(look.tooltip().starts_with("Lull"), "{look:?}");
        }
    }

    fn facts(queued: u64, running: u64, drafts: u64, paused: bool) -> TrayFacts {
        TrayFacts {
            paused,
            queued_reviews: queued,
            running_reviews: running,
            drafts_waiting: drafts,
            ..TrayFacts::default()
        }
    }

    #[test]
    fn the_look_puts_pause_before_learning_before_drafts() {
        let check = |facts: TrayFacts, look: TrayLook| {
            assert_eq!(TrayLook::for_facts(&facts), look, "{facts:?}");
        };
        check(facts(3, 0, 0, false), TrayLook::Idle);
        check(facts(0, 0, 2, false), TrayLook::Attention);
        check(facts(0, 1, 2, false), TrayLook::Learning);
        check(facts(0, 1, 2, true), TrayLook::Paused);
    }

    #[test]
    fn labels_count_drafts_and_deferred_reviews() {
        let model = TrayModel::for_facts(&facts(1, 1, 0, true));
        assert_eq!(model.drafts_label, "0 drafts waiting for review…");
        assert_eq!(model.queue_label, "Queue: 1 deferred review");
        assert!(model.defer_checked && model.pause_checked && model.engine_items_enabled);

        let never = TrayFacts {
            defer_mode: DeferMode::Never,
            ..facts(2, 0, 1, false)
        };
        let model = TrayModel::for_facts(&never);
        assert_eq!(model.drafts_label, "1 draft waiting for review…");
        assert_eq!(model.queue_label, "Queue: 2 deferred reviews");
        assert!(!model.defer_checked && !model.pause_checked);
    }

    #[test]
    fn blocked_drafts_wait_for_the_person_too() {
        let counts = DraftCounts {
            review_pending: 2,
            blocked: 1,
        };
        assert_eq!(drafts_waiting(&counts), 3);
        assert_eq!(drafts_waiting(&DraftCounts::default()), 0);
    }

    #[test]
    fn without_an_engine_the_tray_says_so_and_disables_its_switches() {
        let failed = TrayModel::without_engine(&HostState::Failed {
            message: "port taken".into(),
        });
        assert_eq!(failed.drafts_label, "Learning engine not running: see why…");
        assert!(!failed.engine_items_enabled);
        assert_eq!(failed.look, TrayLook::Idle);
    }
}
