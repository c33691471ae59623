//! `/sys/class/power_supply`: the kernel's own word on AC and battery, for machines without
//! UPower. The files change without any notification `inotify` sees, so they are read again
//! every [`super::SUPPLY_POLL`], and not at all on a machine with no battery.

use std::path::Path;

use tokio::sync::watch;

use super::{PowerReading, SUPPLY_POLL};
use crate::gate::IdleGate;

/// The power the folder describes: AC when a mains or USB supply is online, or when there is
/// no battery; on battery when a system battery discharges, or when the machine has mains
/// supplies and none is online. A peripheral's battery (`scope` = `Device`: a mouse) is not the
/// machine's. `None` when the folder has no system battery (nothing to follow).
pub fn read_power_supply(dir: &Path) -> Option<PowerReading> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut mains = Vec::new();
    let mut batteries = Vec::new();
    for entry in entries.flatten() {
        let supply = entry.path();
        let read = |name: &str| {
            std::fs::read_to_string(supply.join(name))
                .map(|text| text.trim().to_string())
                .unwrap_or_default()
        };
        match read("type").as_str() {
            "Mains" | "USB" => mains.push(read("online") == "1"),
            "Battery" if read("scope") != "Device" => {
                batteries.push((read("status"), read("capacity").parse::<f64>().ok()))
            }
            _ => {}
        }
    }
    if batteries.is_empty() {
        return None;
    }
    let discharging = batteries.iter().any(|(status, _)| status == "Discharging");
    let on_battery = !mains.iter().any(|online| *online) && (discharging || !mains.is_empty());
    if !on_battery {
        return Some(PowerReading::AC);
    }
    let charges: Vec<f64> = batteries.iter().filter_map(|(_, charge)| *charge).collect();
    let percent = (!charges.is_empty()).then(|| charges.iter().sum::<f64>() / charges.len() as f64);
    Some(PowerReading::battery(percent))
}

/// Tells the gate the folder's power, again every [`SUPPLY_POLL`] until `shutdown`; once, as
/// AC, when the machine has no battery.
pub(super) async fn follow(dir: &Path, gate: &IdleGate, shutdown: watch::Receiver<bool>) {
    let Some(first) = read_power_supply(dir) else {
        tracing::info!(dir = %dir.display(), "no battery found: learning runs as on AC");
        gate.power_changed(PowerReading::AC);
        return;
    };
    gate.power_changed(first);
    let stop = super::stopped(shutdown);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(SUPPLY_POLL) => {
                gate.power_changed(read_power_supply(dir).unwrap_or(PowerReading::AC));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::power::PowerSource;

    fn supply(root: &Path, name: &str, files: &[(&str, &str)]) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), format!("{text}\n")).unwrap();
        }
    }

    #[test]
    fn a_laptop_unplugged_is_on_battery_with_its_charge() {
        let root = tempfile::tempdir().unwrap();
        supply(root.path(), "AC", &[("type", "Mains"), ("online", "0")]);
        supply(
            root.path(),
            "BAT0",
            &[
                ("type", "Battery"),
                ("status", "Discharging"),
                ("capacity", "42"),
            ],
        );
        supply(
            root.path(),
            "hidpp_battery_0",
            &[
                ("type", "Battery"),
                ("scope", "Device"),
                ("status", "Discharging"),
                ("capacity", "5"),
            ],
        );
        let reading = read_power_supply(root.path()).unwrap();
        assert_eq!(
            reading,
            PowerReading::battery(Some(42.0)),
            "the mouse's battery is not the laptop's"
        );

        supply(root.path(), "AC", &[("online", "1")]);
        assert_eq!(
            read_power_supply(root.path()).unwrap().source,
            PowerSource::Ac
        );
    }

    #[test]
    fn a_battery_that_charges_without_a_mains_entry_is_on_ac_and_no_battery_is_nothing_to_follow() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(read_power_supply(root.path()), None);
        supply(root.path(), "ADP1", &[("type", "USB"), ("online", "0")]);
        assert_eq!(
            read_power_supply(root.path()),
            None,
            "a USB port is not a battery"
        );
        let root = tempfile::tempdir().unwrap();
        supply(
            root.path(),
            "BAT1",
            &[
                ("type", "Battery"),
                ("status", "Charging"),
                ("capacity", "n/a"),
            ],
        );
        assert_eq!(read_power_supply(root.path()), Some(PowerReading::AC));
        assert_eq!(
            read_power_supply(Path::new("/nonexistent/power_supply")),
            None
        );
    }
}
