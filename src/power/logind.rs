//! logind's sleep: a *delay* inhibitor held while Lull runs, so that on `PrepareForSleep(true)`
//! running learning is requeued (and a job paused) before the machine goes; the inhibitor is
//! then let go, and taken again on `PrepareForSleep(false)`, when the gate learns how long the
//! machine slept.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::sync::watch;
use zbus::zvariant::OwnedFd;

use super::{SleepHandler, SuspendClock, SLEEP_DRAIN};
use crate::gate::IdleGate;

#[zbus::proxy(
    interface = "org.freedesktop.login1.Manager",
    default_service = "org.freedesktop.login1",
    default_path = "/org/freedesktop/login1"
)]
trait Manager {
    fn inhibit(&self, what: &str, who: &str, why: &str, mode: &str) -> zbus::Result<OwnedFd>;

    #[zbus(signal)]
    fn prepare_for_sleep(&self, start: bool) -> zbus::Result<()>;
}

/// Follows the machine's sleep until `shutdown`.
pub(super) async fn follow(
    bus: &zbus::Connection,
    clock: Arc<dyn SuspendClock>,
    gate: &IdleGate,
    handler: Arc<dyn SleepHandler>,
    shutdown: watch::Receiver<bool>,
) {
    let manager = match ManagerProxy::new(bus).await {
        Ok(manager) => manager,
        Err(err) => {
            tracing::info!(error = %err, "logind cannot be followed: sleep goes unnoticed");
            return;
        }
    };
    let mut signals = match manager.receive_prepare_for_sleep().await {
        Ok(signals) => signals,
        Err(err) => {
            tracing::info!(error = %err, "logind's sleep signal cannot be followed");
            return;
        }
    };
    let mut inhibitor = take_inhibitor(&manager).await;
    let mut asleep_from = None;
    let stop = super::stopped(shutdown);
    tokio::pin!(stop);
    loop {
        let signal = tokio::select! {
            _ = &mut stop => return,
            signal = signals.next() => signal,
        };
        let Some(signal) = signal else {
            return;
        };
        let Ok(args) = signal.args() else {
            continue;
        };
        if *args.start() {
            tracing::info!("the machine is going to sleep: stopping learning first");
            asleep_from = Some(clock.suspended());
            gate.machine_sleeping();
            let drained = tokio::time::timeout(SLEEP_DRAIN, async {
                tokio::join!(gate.drained(), handler.sleeping(SLEEP_DRAIN));
            })
            .await;
            if drained.is_err() {
                tracing::warn!("learning did not stop within {SLEEP_DRAIN:?}; letting the machine sleep anyway");
            }
            // Let go: the machine sleeps once every delay inhibitor is gone.
            inhibitor = None;
        } else {
            let slept = asleep_from
                .take()
                .map(|from| clock.suspended().saturating_sub(from))
                .unwrap_or_default();
            tracing::info!(slept_s = slept.as_secs(), "the machine woke");
            gate.machine_resumed(slept);
            if inhibitor.is_none() {
                inhibitor = take_inhibitor(&manager).await;
            }
        }
    }
}

async fn take_inhibitor(manager: &ManagerProxy<'_>) -> Option<OwnedFd> {
    match manager
        .inhibit(
            "sleep",
            "Lull",
            "Stopping learning on the local model before the machine sleeps",
            "delay",
        )
        .await
    {
        Ok(fd) => Some(fd),
        Err(err) => {
            tracing::info!(error = %err, "logind refused a sleep inhibitor: work running at sleep is requeued after the wake");
            None
        }
    }
}
