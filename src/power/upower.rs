//! UPower on the system bus: `OnBattery` and the display device's `Percentage` (the charge of
//! all batteries as one), followed through their `PropertiesChanged` signals, so nothing polls.

use futures_util::StreamExt;
use tokio::sync::watch;

use super::PowerReading;
use crate::gate::IdleGate;

#[zbus::proxy(
    interface = "org.freedesktop.UPower",
    default_service = "org.freedesktop.UPower",
    default_path = "/org/freedesktop/UPower"
)]
trait UPower {
    #[zbus(property)]
    fn on_battery(&self) -> zbus::Result<bool>;
}

#[zbus::proxy(
    interface = "org.freedesktop.UPower.Device",
    default_service = "org.freedesktop.UPower",
    default_path = "/org/freedesktop/UPower/devices/DisplayDevice"
)]
trait DisplayDevice {
    #[zbus(property)]
    fn is_present(&self) -> zbus::Result<bool>;
    #[zbus(property)]
    fn percentage(&self) -> zbus::Result<f64>;
}

/// Follows UPower until `shutdown`, telling the gate each change; false at once when UPower is
/// not on the bus (the caller falls back to the kernel's files).
pub(super) async fn follow(
    bus: &zbus::Connection,
    gate: &IdleGate,
    shutdown: watch::Receiver<bool>,
) -> bool {
    let (upower, device) = match (
        UPowerProxy::new(bus).await,
        DisplayDeviceProxy::new(bus).await,
    ) {
        (Ok(upower), Ok(device)) => (upower, device),
        (Err(err), _) | (_, Err(err)) => {
            tracing::info!(error = %err, "UPower cannot be followed");
            return false;
        }
    };
    // Subscribed before the first reading, so a change in between is not missed.
    let mut source_changes = upower.receive_on_battery_changed().await;
    let mut charge_changes = device.receive_percentage_changed().await;
    if let Err(err) = upower.on_battery().await {
        tracing::info!(error = %err, "UPower is not on the system bus: power from /sys/class/power_supply");
        return false;
    }
    tracing::info!("following the machine's power through UPower");
    let stop = super::stopped(shutdown);
    tokio::pin!(stop);
    loop {
        gate.power_changed(reading(&upower, &device).await);
        tokio::select! {
            _ = &mut stop => return true,
            Some(_) = source_changes.next() => {}
            Some(_) = charge_changes.next() => {}
        }
    }
}

async fn reading(upower: &UPowerProxy<'_>, device: &DisplayDeviceProxy<'_>) -> PowerReading {
    if !upower.on_battery().await.unwrap_or(false) {
        return PowerReading::AC;
    }
    let percent = match device.is_present().await {
        Ok(true) => device.percentage().await.ok(),
        _ => None,
    };
    PowerReading::battery(percent)
}
