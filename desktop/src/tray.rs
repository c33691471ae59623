//! The tray icon and its menu (DESIGN §1), as a StatusNotifierItem with a com.canonical.dbusmenu
//! menu over D-Bus (`ksni`): no GTK, no webview.
//!
//! Invariant: everything the tray offers is a menu item, because on Linux the tray sends no click
//! events (a left click opens the menu too). The menu, top to bottom:
//!
//! - *N drafts waiting for review…* (review pending or blocked): opens the window on Drafts
//! - *Queue: N deferred reviews*: opens the window on Reviews
//! - *Defer learning until idle* (check): defer mode `auto` ↔ `never`
//! - *Pause learning* (check)
//! - *Open Lull*, *Quit*
//!
//! Labels, checks and the icon's look follow the engine: [`TrayHandle::refresh`] wakes one
//! updater task ([`update_forever`]), which reads the engine's status once and hands the tray a
//! new [`TrayModel`] when it differs (ksni sends only the properties that changed). Engine events
//! call `refresh`; nothing polls. A click only sends a [`Command`]; the check marks show what the
//! engine says, never the click itself.
//!
//! The item needs no StatusNotifierWatcher: it serves its object (`/StatusNotifierItem`, menu at
//! `/MenuBar`) on its own connection and registers with a watcher when one is, or comes, online.

use std::sync::{Arc, OnceLock};

use ksni::menu::{CheckmarkItem, StandardItem};
use ksni::{MenuItem, OfflineReason, ToolTip, TrayMethods as _};
use lull::config::DeferMode;
use lull::engine::DraftCounts;
use lull::Status;
use tokio::sync::{mpsc, Notify};

use crate::app::{Command, Desktop};
use crate::host::HostState;
use crate::window::View;

/// The item's id (StatusNotifierItem `Id`): stable across sessions.
const TRAY_ID: &str = "lull";
/// The check items' labels (DESIGN §1).
const DEFER_LABEL: &str = "Defer learning until idle";
const PAUSE_LABEL: &str = "Pause learning";
const OPEN_LABEL: &str = "Open Lull";
const QUIT_LABEL: &str = "Quit";

/// How the tray icon looks: what the engine is doing, at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrayLook {
    /// Nothing to do, or waiting for a lull.
    Idle,
    /// Learning work is running.
    Learning,
    /// The person paused learning, or the machine holds it (on battery, going to sleep).
    Paused,
    /// Drafts are waiting for review.
    Attention,
}

impl TrayLook {
    /// Every look, in the order of DESIGN §1.
    pub const ALL: [TrayLook; 4] = [Self::Idle, Self::Learning, Self::Paused, Self::Attention];

    /// The icon as the StatusNotifierItem sends it (ARGB32), decoded once from
    /// `icons/tray/<look>.png` (rendered from its SVG by `icons/render.sh`).
    pub fn icon(self) -> &'static ksni::Icon {
        static ICONS: OnceLock<[ksni::Icon; 4]> = OnceLock::new();
        let icons = ICONS.get_or_init(|| {
            TrayLook::ALL.map(|look| {
                decode_pixmap(look.png())
                    .unwrap_or_else(|error| panic!("the embedded {look:?} tray icon: {error}"))
            })
        });
        &icons[self as usize]
    }

    /// The PNG drawn for this look.
    fn png(self) -> &'static [u8] {
        match self {
            Self::Idle => include_bytes!("../../icons/tray/idle.png"),
            Self::Learning => include_bytes!("../../icons/tray/learning.png"),
            Self::Paused => include_bytes!("../../icons/tray/paused.png"),
            Self::Attention => include_bytes!("../../icons/tray/attention.png"),
        }
    }

    /// The tooltip and title.
    pub fn tooltip(self) -> &'static str {
        match self {
            Self::Idle => "Lull: idle",
            Self::Learning => "Lull: learning",
            Self::Paused => "Lull: learning paused",
            Self::Attention => "Lull: drafts waiting for review",
        }
    }

    /// The look for the engine's state: paused, then learning, then drafts waiting (a call to
    /// act outranks the machine's hold, which lifts by itself), then held by the machine, else
    /// idle.
    pub fn for_facts(facts: &TrayFacts) -> TrayLook {
        if facts.paused {
            TrayLook::Paused
        } else if facts.running_reviews > 0 || facts.running_jobs > 0 {
            TrayLook::Learning
        } else if facts.drafts_waiting > 0 {
            TrayLook::Attention
        } else if facts.machine_hold.is_some() {
            TrayLook::Paused
        } else {
            TrayLook::Idle
        }
    }
}

/// A PNG as an ARGB32 pixmap in network byte order (`A R G B` per pixel), the StatusNotifierItem's
/// `IconPixmap` format.
fn decode_pixmap(png_bytes: &[u8]) -> Result<ksni::Icon, png::DecodingError> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    // 8 bits per channel, palettes expanded, and an alpha channel whatever the file had.
    decoder.set_transformations(
        png::Transformations::EXPAND | png::Transformations::STRIP_16 | png::Transformations::ALPHA,
    );
    let mut reader = decoder.read_info()?;
    let mut pixels = vec![0; reader.output_buffer_size().unwrap_or_default()];
    let frame = reader.next_frame(&mut pixels)?;
    pixels.truncate(frame.buffer_size());
    let data = match frame.color_type {
        png::ColorType::Rgba => rgba_to_argb(&pixels),
        png::ColorType::GrayscaleAlpha => {
            let rgba: Vec<u8> = pixels
                .chunks_exact(2)
                .flat_map(|ga| [ga[0], ga[0], ga[0], ga[1]])
                .collect();
            rgba_to_argb(&rgba)
        }
        other => unreachable!("the ALPHA transformation gives RGBA or grey + alpha, not {other:?}"),
    };
    Ok(ksni::Icon {
        width: frame.width as i32,
        height: frame.height as i32,
        data,
    })
}

/// `R G B A` pixels → `A R G B`.
fn rgba_to_argb(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .flat_map(|p| [p[3], p[0], p[1], p[2]])
        .collect()
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
    /// Why the machine holds learning ("paused: on battery (34 %); …"), if it does.
    pub machine_hold: Option<String>,
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
            machine_hold: status.power.learning_held.clone(),
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
        let tooltip = match &facts.machine_hold {
            Some(hold) if look == TrayLook::Paused && !facts.paused => format!("Lull: {hold}"),
            Some(hold) if look != TrayLook::Paused => format!("{} · {hold}", look.tooltip()),
            _ => look.tooltip().to_owned(),
        };
        TrayModel {
            look,
            tooltip,
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

/// The StatusNotifierItem: what it shows is its [`TrayModel`]; a click sends a [`Command`].
pub struct LullTray {
    model: TrayModel,
    commands: mpsc::UnboundedSender<Command>,
}

impl LullTray {
    /// Sends `command` to the app; the XDG activation token of the click (if the panel sent one)
    /// goes with a window request, so the window may take the focus on Wayland.
    fn send(&self, command: Command) {
        // The receiver is gone only while the app quits: nothing left to do with a click.
        let _ = self.commands.send(command);
    }

    fn open(&self, view: Option<View>) {
        self.send(Command::OpenWindow {
            view,
            activation_token: ksni::current_xdg_activation_token(),
        });
    }
}

impl ksni::Tray for LullTray {
    // On Linux a panel sends no click events worth having: a left click opens the menu.
    const MENU_ON_ACTIVATE: bool = true;

    fn id(&self) -> String {
        TRAY_ID.into()
    }

    fn title(&self) -> String {
        self.model.tooltip.clone()
    }

    fn icon_pixmap(&self) -> Vec<ksni::Icon> {
        vec![self.model.look.icon().clone()]
    }

    fn tool_tip(&self) -> ToolTip {
        ToolTip {
            title: self.model.tooltip.clone(),
            ..ToolTip::default()
        }
    }

    fn menu(&self) -> Vec<MenuItem<Self>> {
        let model = &self.model;
        // Without an engine the drafts item says why; the Overview shows the reason in full.
        let drafts_view = if model.engine_items_enabled {
            View::Drafts
        } else {
            View::Overview
        };
        vec![
            StandardItem {
                label: model.drafts_label.clone(),
                activate: Box::new(move |tray: &mut Self| tray.open(Some(drafts_view))),
                ..StandardItem::default()
            }
            .into(),
            StandardItem {
                label: model.queue_label.clone(),
                enabled: model.engine_items_enabled,
                activate: Box::new(|tray: &mut Self| tray.open(Some(View::Reviews))),
                ..StandardItem::default()
            }
            .into(),
            MenuItem::Separator,
            CheckmarkItem {
                label: DEFER_LABEL.into(),
                enabled: model.engine_items_enabled,
                checked: model.defer_checked,
                activate: Box::new(|tray: &mut Self| tray.send(Command::ToggleDefer)),
                ..CheckmarkItem::default()
            }
            .into(),
            CheckmarkItem {
                label: PAUSE_LABEL.into(),
                enabled: model.engine_items_enabled,
                checked: model.pause_checked,
                activate: Box::new(|tray: &mut Self| tray.send(Command::TogglePause)),
                ..CheckmarkItem::default()
            }
            .into(),
            MenuItem::Separator,
            StandardItem {
                label: OPEN_LABEL.into(),
                activate: Box::new(|tray: &mut Self| tray.open(None)),
                ..StandardItem::default()
            }
            .into(),
            StandardItem {
                label: QUIT_LABEL.into(),
                activate: Box::new(|tray: &mut Self| tray.send(Command::Quit)),
                ..StandardItem::default()
            }
            .into(),
        ]
    }

    /// No StatusNotifierWatcher (no panel yet, a bare session): keep serving the item, which
    /// registers once a watcher appears.
    fn watcher_offline(&self, reason: OfflineReason) -> bool {
        tracing::info!(
            ?reason,
            "no StatusNotifierWatcher on the session bus; the tray icon shows once a panel starts"
        );
        true
    }
}

/// The running tray: wake its updater, or take it off the bus.
pub struct TrayHandle {
    handle: ksni::Handle<LullTray>,
    wake: Arc<Notify>,
}

impl TrayHandle {
    /// Puts the tray on the session bus, showing "starting" until the engine runs.
    pub async fn spawn(
        commands: mpsc::UnboundedSender<Command>,
    ) -> Result<TrayHandle, ksni::Error> {
        let tray = LullTray {
            model: TrayModel::without_engine(&HostState::Starting),
            commands,
        };
        let handle = tray.assume_sni_available(true).spawn().await?;
        Ok(TrayHandle {
            handle,
            wake: Arc::new(Notify::new()),
        })
    }

    /// Asks the tray to re-read the engine. Cheap; a burst of calls becomes one or two reads.
    pub fn refresh(&self) {
        self.wake.notify_one();
    }

    /// Takes the item off the bus.
    pub async fn shutdown(&self) {
        self.handle.shutdown().await;
    }
}

/// Applies the engine's state to the tray each time [`TrayHandle::refresh`] is called.
pub async fn update_forever(desktop: Arc<Desktop>) {
    let mut shown = TrayModel::without_engine(&HostState::Starting);
    loop {
        desktop.tray.wake.notified().await;
        let next = current_model(&desktop).await;
        if next == shown {
            continue;
        }
        let model = next.clone();
        if desktop
            .tray
            .handle
            .update(move |tray| tray.model = model)
            .await
            .is_none()
        {
            return; // the tray was taken off the bus
        }
        shown = next;
    }
}

async fn current_model(desktop: &Desktop) -> TrayModel {
    let Some(engine) = desktop.host.engine() else {
        return TrayModel::without_engine(&desktop.host.state());
    };
    match engine.status().await {
        Ok(status) => TrayModel::for_facts(&TrayFacts::from(&status)),
        Err(error) => {
            tracing::warn!(%error, "cannot read the engine's status for the tray");
            TrayModel::without_engine(&desktop.host.state())
        }
    }
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
    use ksni::Tray as _;

    #[test]
    fn every_look_has_a_square_icon_and_a_tooltip() {
        for look in TrayLook::ALL {
            let icon = look.icon();
            assert_eq!((icon.width, icon.height), (64, 64), "{look:?}");
            assert_eq!(icon.data.len(), 64 * 64 * 4, "{look:?}");
            assert!(look.tooltip().starts_with("Lull"), "{look:?}");
        }
        let distinct: std::collections::HashSet<_> =
            TrayLook::ALL.iter().map(|look| &look.icon().data).collect();
        assert_eq!(distinct.len(), 4, "each look is drawn differently");
    }

    #[test]
    fn pixels_are_sent_alpha_first() {
        assert_eq!(
            rgba_to_argb(&[1, 2, 3, 4, 10, 20, 30, 40]),
            [4, 1, 2, 3, 40, 10, 20, 30]
        );
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
        let job = TrayFacts {
            running_jobs: 1,
            ..facts(0, 0, 0, false)
        };
        check(job, TrayLook::Learning);
    }

    /// Issue 27: the machine's hold shows as the paused look with its reason, unless drafts
    /// wait or work still runs; the person's own pause item stays unchecked.
    #[test]
    fn the_machines_hold_is_a_pause_with_its_reason() {
        let hold = "paused: on battery (34 %); learning resumes on AC or above 50 %";
        let held = TrayFacts {
            machine_hold: Some(hold.into()),
            ..facts(2, 0, 0, false)
        };
        let model = TrayModel::for_facts(&held);
        assert_eq!(model.look, TrayLook::Paused);
        assert_eq!(
            model.tooltip,
            "Lull: paused: on battery (34 %); learning resumes on AC or above 50 %"
        );
        assert!(!model.pause_checked);
        let drafts = TrayFacts {
            drafts_waiting: 1,
            ..held.clone()
        };
        let model = TrayModel::for_facts(&drafts);
        assert_eq!(model.look, TrayLook::Attention);
        assert_eq!(
            model.tooltip,
            format!("Lull: drafts waiting for review · {hold}")
        );
        let person = TrayFacts {
            paused: true,
            ..held
        };
        assert_eq!(
            TrayModel::for_facts(&person).tooltip,
            "Lull: learning paused"
        );
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

    fn tray(model: TrayModel) -> (LullTray, mpsc::UnboundedReceiver<Command>) {
        let (commands, received) = mpsc::unbounded_channel();
        (LullTray { model, commands }, received)
    }

    /// `label [check] (disabled)` per item, `---` for a separator.
    fn outline(tray: &LullTray) -> Vec<String> {
        tray.menu()
            .iter()
            .map(|item| match item {
                MenuItem::Standard(item) => {
                    format!(
                        "{}{}",
                        item.label,
                        if item.enabled { "" } else { " (disabled)" }
                    )
                }
                MenuItem::Checkmark(item) => format!(
                    "{} [{}]{}",
                    item.label,
                    if item.checked { "x" } else { " " },
                    if item.enabled { "" } else { " (disabled)" }
                ),
                MenuItem::Separator => "---".into(),
                other => panic!("unexpected menu item {other:?}"),
            })
            .collect()
    }

    #[test]
    fn the_menu_holds_the_items_of_design_1_in_order() {
        let (running, _) = tray(TrayModel::for_facts(&facts(2, 0, 1, true)));
        assert_eq!(
            outline(&running),
            [
                "1 draft waiting for review…",
                "Queue: 2 deferred reviews",
                "---",
                "Defer learning until idle [x]",
                "Pause learning [x]",
                "---",
                "Open Lull",
                "Quit",
            ]
        );
        let (starting, _) = tray(TrayModel::without_engine(&HostState::Starting));
        assert_eq!(
            outline(&starting),
            [
                "Learning engine starting…",
                "Queue: unknown (disabled)",
                "---",
                "Defer learning until idle [ ] (disabled)",
                "Pause learning [ ] (disabled)",
                "---",
                "Open Lull",
                "Quit",
            ]
        );
    }

    /// Clicks the item at `index` of the menu and returns the command it sent.
    fn click(
        tray: &mut LullTray,
        received: &mut mpsc::UnboundedReceiver<Command>,
        index: usize,
    ) -> Command {
        let menu = tray.menu();
        match &menu[index] {
            MenuItem::Standard(item) => (item.activate)(tray),
            MenuItem::Checkmark(item) => (item.activate)(tray),
            other => panic!("item {index} is not clickable: {other:?}"),
        }
        received.try_recv().expect("a click sends one command")
    }

    #[test]
    fn each_item_sends_its_command() {
        let (mut running, mut received) = tray(TrayModel::for_facts(&facts(0, 0, 1, false)));
        let opens = |command: Command| match command {
            Command::OpenWindow { view, .. } => view,
            other => panic!("expected a window, got {other:?}"),
        };
        assert_eq!(
            opens(click(&mut running, &mut received, 0)),
            Some(View::Drafts)
        );
        assert_eq!(
            opens(click(&mut running, &mut received, 1)),
            Some(View::Reviews)
        );
        assert!(matches!(
            click(&mut running, &mut received, 3),
            Command::ToggleDefer
        ));
        assert!(matches!(
            click(&mut running, &mut received, 4),
            Command::TogglePause
        ));
        assert_eq!(opens(click(&mut running, &mut received, 6)), None);
        assert!(matches!(
            click(&mut running, &mut received, 7),
            Command::Quit
        ));

        let (mut failed, mut received) = tray(TrayModel::without_engine(&HostState::Failed {
            message: "port taken".into(),
        }));
        assert_eq!(
            opens(click(&mut failed, &mut received, 0)),
            Some(View::Overview),
            "without an engine the first item opens the Overview, which says why"
        );
    }
}
