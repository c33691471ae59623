//! The laptop Lull is a guest on: its power and its sleep (DESIGN §2.1, power and sleep).
//!
//! A lull on battery is not a moment to spend the battery on learning, and a machine about to
//! sleep must not take half a review with it. This module reads the machine and tells the
//! [`crate::gate::IdleGate`], which decides:
//!
//! - **power** ([`PowerReading`]): UPower on the system bus (`upower.rs`), its `OnBattery` and
//!   display device's `Percentage`, followed by their change signals; without UPower,
//!   `/sys/class/power_supply` (`supply.rs`), read again every [`SUPPLY_POLL`]; with neither,
//!   "on AC", as a desktop is.
//! - **heat** (`thermal.rs`): a thermal zone past its passive trip point holds new learning
//!   until it cools, read every [`THERMAL_POLL`] where the platform has such a trip point.
//! - **sleep** (`logind.rs`): a logind *delay* inhibitor is held while Lull runs; on
//!   `PrepareForSleep(true)` the gate stops running work (requeued) and holds new work, jobs
//!   pause at their next mini-batch, and then the inhibitor is let go; on `PrepareForSleep(false)`
//!   the gate is told how long the machine slept ([`SuspendClock`]), and the inhibitor is taken
//!   again.
//!
//! The system bus is found as every D-Bus client finds it (`DBUS_SYSTEM_BUS_ADDRESS`, else the
//! well-known socket), so a test gives a fake UPower and logind on a private `dbus-daemon`.
//! Nothing here decides what learning does; [`learning_hold`] and [`training_hold`] are the
//! policy, pure over a reading and `[power]`.

mod logind;
mod supply;
mod thermal;
mod upower;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use ts_rs::TS;

use crate::config::{BatteryLearning, PowerConfig};
use crate::gate::IdleGate;

pub use supply::read_power_supply;
pub use thermal::{throttling, THERMAL_POLL};

/// How often `/sys/class/power_supply` is read again when UPower (which signals changes) is not
/// there: the kernel's files have no change notification `inotify` sees.
pub const SUPPLY_POLL: Duration = Duration::from_secs(30);
/// How long the machine's sleep waits for running learning to be requeued and a running job to
/// pause, before the inhibitor is let go anyway (logind's `InhibitDelayMaxSec` is 5 s).
pub const SLEEP_DRAIN: Duration = Duration::from_secs(3);
/// How long Lull waits for the system bus before it goes on without it.
const BUS_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the machine's power comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PowerSource {
    /// Mains power, or a machine without a battery.
    #[default]
    Ac,
    /// The battery.
    Battery,
}

/// The machine's power as last read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct PowerReading {
    /// AC or battery.
    pub source: PowerSource,
    /// The battery's charge (0–100), when the machine has one and says.
    pub percent: Option<f64>,
}

impl PowerReading {
    /// A machine on AC (or without a battery, or that says nothing).
    pub const AC: PowerReading = PowerReading {
        source: PowerSource::Ac,
        percent: None,
    };

    /// On battery at `percent`.
    pub fn battery(percent: Option<f64>) -> PowerReading {
        PowerReading {
            source: PowerSource::Battery,
            percent,
        }
    }

    fn on_battery(&self) -> bool {
        self.source == PowerSource::Battery
    }

    fn described(&self) -> String {
        match self.percent {
            Some(percent) => format!("on battery ({percent:.0} %)"),
            None => "on battery".into(),
        }
    }
}

/// Why learning may not use the managed server on this power, in words for the Overview and
/// the tray; `None` when it may.
pub fn learning_hold(power: &PowerReading, config: &PowerConfig) -> Option<String> {
    if !power.on_battery() {
        return None;
    }
    match config.on_battery {
        BatteryLearning::Always => None,
        BatteryLearning::Pause => Some(format!(
            "paused: {}; learning resumes on AC (power.on_battery = \"pause\")",
            power.described()
        )),
        BatteryLearning::Above => {
            let threshold = f64::from(config.battery_threshold_percent);
            // A battery that does not say its charge is not known to be above the threshold.
            if power.percent.is_some_and(|percent| percent > threshold) {
                return None;
            }
            Some(format!(
                "paused: {}; learning resumes on AC or above {threshold:.0} %",
                power.described()
            ))
        }
    }
}

/// Why training jobs may not run on this power; `None` when they may.
pub fn training_hold(power: &PowerReading, config: &PowerConfig) -> Option<String> {
    (power.on_battery() && !config.jobs_on_battery).then(|| {
        format!(
            "paused: {}; training resumes on AC (power.jobs_on_battery = false)",
            power.described()
        )
    })
}

/// The machine as the engine's status shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct PowerStatus {
    /// The last power reading.
    pub power: PowerReading,
    /// The machine is going to sleep (between logind's `PrepareForSleep` and the wake).
    pub sleeping: bool,
    /// Why the machine holds learning now ("paused: on battery (34 %); …", its sleep, its heat),
    /// if it does.
    pub learning_held: Option<String>,
    /// Why it holds training jobs now, if it does.
    pub training_held: Option<String>,
}

/// Time the machine spent suspended: it tells a sleep from a pause, because tokio's clock (the
/// OS's monotonic clock) stands still while the machine sleeps.
pub trait SuspendClock: Send + Sync {
    /// Total time suspended since some fixed moment (boot, on Linux).
    fn suspended(&self) -> Duration;
}

/// Linux's own count: `CLOCK_BOOTTIME` runs through suspend, `CLOCK_MONOTONIC` does not.
pub struct BootClock;

impl SuspendClock for BootClock {
    fn suspended(&self) -> Duration {
        let boot = clock_time(libc::CLOCK_BOOTTIME);
        let monotonic = clock_time(libc::CLOCK_MONOTONIC);
        boot.saturating_sub(monotonic)
    }
}

fn clock_time(clock: libc::clockid_t) -> Duration {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `time` is a valid, writable timespec; both clocks exist on every Linux since 2.6.39.
    let result = unsafe { libc::clock_gettime(clock, &mut time) };
    if result != 0 {
        return Duration::ZERO;
    }
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

/// A [`SuspendClock`] a test moves by hand, to simulate a suspend of any length.
#[derive(Debug, Default)]
pub struct ManualSuspendClock(std::sync::Mutex<Duration>);

impl ManualSuspendClock {
    /// Counts `slept` more time suspended.
    pub fn sleep_for(&self, slept: Duration) {
        *self.0.lock().expect("suspend clock lock") += slept;
    }
}

impl SuspendClock for ManualSuspendClock {
    fn suspended(&self) -> Duration {
        *self.0.lock().expect("suspend clock lock")
    }
}

/// Where the engine reads the machine from.
pub struct HostSources {
    /// The system bus: `None` connects as every client does (`DBUS_SYSTEM_BUS_ADDRESS`, else the
    /// well-known socket); `Some(address)` connects there (a test's private bus).
    pub bus_address: Option<String>,
    /// The kernel's power-supply folder, read when UPower is not on the bus.
    pub power_supply_dir: PathBuf,
    /// The kernel's thermal zones.
    pub thermal_dir: PathBuf,
    /// How long the machine slept.
    pub suspend_clock: Arc<dyn SuspendClock>,
}

impl HostSources {
    /// The machine Lull runs on.
    pub fn this_machine() -> HostSources {
        HostSources {
            bus_address: None,
            power_supply_dir: PathBuf::from("/sys/class/power_supply"),
            thermal_dir: PathBuf::from("/sys/class/thermal"),
            suspend_clock: Arc::new(BootClock),
        }
    }
}

/// What the machine's sleep asks of the engine before it goes, beside the gate (which requeues
/// learning itself): training pauses.
pub trait SleepHandler: Send + Sync + 'static {
    /// The machine is about to sleep: stop what runs, within about `within`.
    fn sleeping(&self, within: Duration) -> futures_util::future::BoxFuture<'_, ()>;
}

/// Follows the machine's power and sleep until `shutdown`, telling the gate and `handler`.
///
/// Never fails: without a system bus, power comes from `power_supply_dir` and sleep goes
/// unnoticed (logged once); without either, the machine counts as on AC.
pub async fn watch_host(
    sources: HostSources,
    gate: Arc<IdleGate>,
    handler: Arc<dyn SleepHandler>,
    shutdown: watch::Receiver<bool>,
) {
    let heat = {
        let (gate, dir, shutdown) = (gate.clone(), sources.thermal_dir.clone(), shutdown.clone());
        tokio::spawn(async move { thermal::follow(&dir, &gate, shutdown).await })
    };
    let bus = connect(sources.bus_address.as_deref()).await;
    let power = {
        let (gate, bus, dir, shutdown) = (
            gate.clone(),
            bus.clone(),
            sources.power_supply_dir.clone(),
            shutdown.clone(),
        );
        tokio::spawn(async move {
            let on_upower = match &bus {
                Some(bus) => upower::follow(bus, &gate, shutdown.clone()).await,
                None => false,
            };
            if !on_upower {
                supply::follow(&dir, &gate, shutdown).await;
            }
        })
    };
    if let Some(bus) = bus {
        logind::follow(&bus, sources.suspend_clock, &gate, handler, shutdown).await;
    }
    let _ = tokio::join!(power, heat);
}

async fn connect(address: Option<&str>) -> Option<zbus::Connection> {
    let connecting = async {
        match address {
            Some(address) => zbus::connection::Builder::address(address)?.build().await,
            None => zbus::Connection::system().await,
        }
    };
    match tokio::time::timeout(BUS_TIMEOUT, connecting).await {
        Ok(Ok(bus)) => Some(bus),
        Ok(Err(err)) => {
            tracing::info!(error = %err, "no system bus: power from /sys/class/power_supply, sleep not followed");
            None
        }
        Err(_) => {
            tracing::info!("the system bus did not answer: power from /sys/class/power_supply, sleep not followed");
            None
        }
    }
}

/// Waits until `shutdown` turns true (or its sender is gone).
async fn stopped(mut shutdown: watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(on_battery: BatteryLearning) -> PowerConfig {
        PowerConfig {
            on_battery,
            ..PowerConfig::default()
        }
    }

    #[test]
    fn the_default_holds_learning_on_battery_at_or_below_half_and_never_on_ac() {
        let defaults = PowerConfig::default();
        assert_eq!(learning_hold(&PowerReading::AC, &defaults), None);
        assert_eq!(
            learning_hold(&PowerReading::battery(Some(80.0)), &defaults),
            None
        );
        let held = learning_hold(&PowerReading::battery(Some(34.4)), &defaults).unwrap();
        assert_eq!(
            held,
            "paused: on battery (34 %); learning resumes on AC or above 50 %"
        );
        assert!(learning_hold(&PowerReading::battery(Some(50.0)), &defaults).is_some());
        assert!(
            learning_hold(&PowerReading::battery(None), &defaults).is_some(),
            "a charge nobody reported is not above the threshold"
        );
    }

    #[test]
    fn pause_holds_at_any_charge_and_always_never_holds() {
        let full = PowerReading::battery(Some(100.0));
        assert!(learning_hold(&full, &config(BatteryLearning::Pause))
            .unwrap()
            .contains("resumes on AC"));
        assert_eq!(
            learning_hold(
                &PowerReading::battery(Some(3.0)),
                &config(BatteryLearning::Always)
            ),
            None
        );
    }

    #[test]
    fn training_waits_on_battery_unless_allowed() {
        let battery = PowerReading::battery(Some(90.0));
        let defaults = PowerConfig::default();
        assert!(training_hold(&battery, &defaults)
            .unwrap()
            .contains("on battery (90 %)"));
        assert_eq!(training_hold(&PowerReading::AC, &defaults), None);
        let allowed = PowerConfig {
            jobs_on_battery: true,
            ..defaults
        };
        assert_eq!(training_hold(&battery, &allowed), None);
    }

    #[test]
    fn the_boot_clock_counts_no_suspend_backwards() {
        let first = BootClock.suspended();
        assert!(BootClock.suspended() + Duration::from_millis(5) >= first);
    }
}
