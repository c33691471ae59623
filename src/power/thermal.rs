//! Heat: `/sys/class/thermal`, where a thermal zone whose temperature has reached its lowest
//! *passive* trip point is being cooled by slowing the CPU (or GPU) down. Learning started
//! there would run slowly and keep the machine hot, so no new learning starts until it cools.
//! The kernel's files change without notification, so they are read every [`THERMAL_POLL`],
//! and not at all on a machine whose zones have no passive trip point (nothing to follow).

use std::path::Path;
use std::time::Duration;

use tokio::sync::watch;

use crate::gate::IdleGate;

/// How often the thermal zones are read again.
pub const THERMAL_POLL: Duration = Duration::from_secs(10);

/// One zone as read: its name, temperature and lowest passive trip point (millidegrees C).
#[derive(Debug, Clone, PartialEq)]
struct Zone {
    name: String,
    temp: i64,
    passive: Option<i64>,
}

fn zones(dir: &Path) -> Vec<Zone> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut zones: Vec<Zone> = entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("thermal_zone")
        })
        .filter_map(|entry| {
            let zone = entry.path();
            let read = |name: &str| {
                std::fs::read_to_string(zone.join(name))
                    .ok()
                    .map(|text| text.trim().to_string())
            };
            let temp = read("temp")?.parse().ok()?;
            let passive = (0..32)
                .map_while(|n| {
                    Some((
                        read(&format!("trip_point_{n}_type"))?,
                        read(&format!("trip_point_{n}_temp")),
                    ))
                })
                .filter(|(kind, _)| kind == "passive")
                .filter_map(|(_, temp)| temp?.parse::<i64>().ok())
                .filter(|&temp| temp > 0)
                .min();
            Some(Zone {
                name: read("type").unwrap_or_else(|| entry.file_name().to_string_lossy().into()),
                temp,
                passive,
            })
        })
        .collect();
    zones.sort_by(|a, b| a.name.cmp(&b.name));
    zones
}

/// Why the machine is throttling, from the hottest zone at or past its passive trip point
/// ("paused: the machine is throttling to cool down (x86_pkg_temp at 96 °C, from 95 °C)");
/// `None` when no zone is.
pub fn throttling(dir: &Path) -> Option<String> {
    zones(dir)
        .into_iter()
        .filter_map(|zone| {
            let from = zone.passive?;
            (zone.temp >= from).then_some((zone, from))
        })
        .max_by_key(|(zone, from)| zone.temp - from)
        .map(|(zone, from)| {
            format!(
                "paused: the machine is throttling to cool down ({} at {} °C, from {} °C)",
                zone.name,
                zone.temp / 1000,
                from / 1000
            )
        })
}

/// Tells the gate whether the machine throttles, again every [`THERMAL_POLL`] until `shutdown`;
/// not at all when no zone has a passive trip point.
pub(super) async fn follow(dir: &Path, gate: &IdleGate, shutdown: watch::Receiver<bool>) {
    if !zones(dir).iter().any(|zone| zone.passive.is_some()) {
        tracing::info!(dir = %dir.display(), "no thermal zone with a passive trip point: heat is not followed");
        return;
    }
    let stop = super::stopped(shutdown);
    tokio::pin!(stop);
    loop {
        gate.heat_changed(throttling(dir));
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(THERMAL_POLL) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(root: &Path, n: u32, name: &str, temp: i64, trips: &[(&str, i64)]) {
        let dir = root.join(format!("thermal_zone{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("type"), format!("{name}\n")).unwrap();
        std::fs::write(dir.join("temp"), format!("{temp}\n")).unwrap();
        for (i, (kind, trip)) in trips.iter().enumerate() {
            std::fs::write(
                dir.join(format!("trip_point_{i}_type")),
                format!("{kind}\n"),
            )
            .unwrap();
            std::fs::write(
                dir.join(format!("trip_point_{i}_temp")),
                format!("{trip}\n"),
            )
            .unwrap();
        }
    }

    #[test]
    fn a_zone_past_its_passive_trip_point_is_throttling_and_a_critical_one_alone_is_not() {
        let root = tempfile::tempdir().unwrap();
        zone(root.path(), 0, "acpitz", 99_000, &[("critical", 98_000)]);
        zone(
            root.path(),
            1,
            "x86_pkg_temp",
            80_000,
            &[("critical", 105_000), ("passive", 95_000)],
        );
        assert_eq!(
            throttling(root.path()),
            None,
            "80 °C is below the 95 °C passive trip"
        );
        zone(
            root.path(),
            1,
            "x86_pkg_temp",
            96_500,
            &[("critical", 105_000), ("passive", 95_000)],
        );
        assert_eq!(
            throttling(root.path()).as_deref(),
            Some("paused: the machine is throttling to cool down (x86_pkg_temp at 96 °C, from 95 °C)")
        );
    }

    #[test]
    fn no_zones_or_no_passive_trip_is_nothing_to_follow() {
        let root = tempfile::tempdir().unwrap();
        assert!(zones(root.path()).is_empty());
        zone(root.path(), 0, "acpitz", 40_000, &[("critical", 98_000)]);
        assert!(zones(root.path()).iter().all(|zone| zone.passive.is_none()));
        assert_eq!(throttling(Path::new("/nonexistent/thermal")), None);
    }
}
