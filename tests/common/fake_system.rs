//! A fake UPower and a fake logind on a private `dbus-daemon`, as the engine finds them on the
//! system bus, for the tests of issue 27 (battery and sleep).

#![allow(dead_code)] // each test crate uses its own part of it

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lull::power::{HostSources, ManualSuspendClock};
use zbus::object_server::SignalEmitter;

const UPOWER: &str = "/org/freedesktop/UPower";
const DISPLAY_DEVICE: &str = "/org/freedesktop/UPower/devices/DisplayDevice";
const LOGIND: &str = "/org/freedesktop/login1";

/// A private message bus, stopped with the test.
struct PrivateBus {
    daemon: Child,
    address: String,
}

impl PrivateBus {
    fn start() -> PrivateBus {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon runs (Debian's `dbus` package; `make test` installs it)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        PrivateBus {
            daemon,
            address: address.trim().to_string(),
        }
    }

    async fn connect(&self) -> zbus::connection::Builder<'static> {
        zbus::connection::Builder::address(self.address.as_str()).unwrap()
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

struct FakeUPower {
    on_battery: bool,
}

#[zbus::interface(name = "org.freedesktop.UPower")]
impl FakeUPower {
    #[zbus(property)]
    fn on_battery(&self) -> bool {
        self.on_battery
    }
}

struct FakeDisplayDevice {
    percentage: f64,
}

#[zbus::interface(name = "org.freedesktop.UPower.Device")]
impl FakeDisplayDevice {
    #[zbus(property)]
    fn is_present(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn percentage(&self) -> f64 {
        self.percentage
    }
}

/// One inhibitor logind handed out: the read end of the pipe whose write end the engine holds.
struct Inhibitor {
    what: String,
    mode: String,
    held: std::io::PipeReader,
}

impl Inhibitor {
    /// True once the engine closed its end.
    fn released(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.held.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        ready > 0 && poll.revents & libc::POLLHUP != 0
    }
}

#[derive(Default, Clone)]
struct FakeLogind {
    inhibitors: Arc<Mutex<Vec<Inhibitor>>>,
}

#[zbus::interface(name = "org.freedesktop.login1.Manager")]
impl FakeLogind {
    fn inhibit(
        &self,
        what: &str,
        _who: &str,
        _why: &str,
        mode: &str,
    ) -> zbus::fdo::Result<zbus::zvariant::OwnedFd> {
        let (held, handed) =
            std::io::pipe().map_err(|err| zbus::fdo::Error::Failed(err.to_string()))?;
        self.inhibitors.lock().unwrap().push(Inhibitor {
            what: what.into(),
            mode: mode.into(),
            held,
        });
        Ok(std::os::fd::OwnedFd::from(handed).into())
    }

    #[zbus(signal)]
    async fn prepare_for_sleep(emitter: &SignalEmitter<'_>, start: bool) -> zbus::Result<()>;
}

/// UPower and logind as the test plays them.
pub struct FakeSystem {
    bus: PrivateBus,
    upower: zbus::Connection,
    logind: zbus::Connection,
    inhibitors: Arc<Mutex<Vec<Inhibitor>>>,
}

impl FakeSystem {
    /// The fakes, on AC or on battery at `percentage`.
    pub async fn start(on_battery: bool, percentage: f64) -> FakeSystem {
        let bus = PrivateBus::start();
        let upower = bus
            .connect()
            .await
            .name("org.freedesktop.UPower")
            .unwrap()
            .serve_at(UPOWER, FakeUPower { on_battery })
            .unwrap()
            .serve_at(DISPLAY_DEVICE, FakeDisplayDevice { percentage })
            .unwrap()
            .build()
            .await
            .unwrap();
        let fake = FakeLogind::default();
        let inhibitors = fake.inhibitors.clone();
        let logind = bus
            .connect()
            .await
            .name("org.freedesktop.login1")
            .unwrap()
            .serve_at(LOGIND, fake)
            .unwrap()
            .build()
            .await
            .unwrap();
        FakeSystem {
            bus,
            upower,
            logind,
            inhibitors,
        }
    }

    /// Plugs the machine in (`false`) or unplugs it, with UPower's change signal.
    pub async fn set_on_battery(&self, on_battery: bool) {
        let iface = self
            .upower
            .object_server()
            .interface::<_, FakeUPower>(UPOWER)
            .await
            .unwrap();
        iface.get_mut().await.on_battery = on_battery;
        iface
            .get()
            .await
            .on_battery_changed(iface.signal_emitter())
            .await
            .unwrap();
    }

    /// logind's `PrepareForSleep(start)`.
    pub async fn prepare_for_sleep(&self, start: bool) {
        let iface = self
            .logind
            .object_server()
            .interface::<_, FakeLogind>(LOGIND)
            .await
            .unwrap();
        FakeLogind::prepare_for_sleep(iface.signal_emitter(), start)
            .await
            .unwrap();
    }

    /// (inhibitors handed out, those still held).
    pub fn inhibitors(&self) -> (usize, usize) {
        let inhibitors = self.inhibitors.lock().unwrap();
        for inhibitor in inhibitors.iter() {
            assert_eq!(
                (inhibitor.what.as_str(), inhibitor.mode.as_str()),
                ("sleep", "delay")
            );
        }
        let held = inhibitors.iter().filter(|i| !i.released()).count();
        (inhibitors.len(), held)
    }

    /// Waits, at most 30 s, until logind handed out `handed` inhibitors of which `held` are held.
    pub async fn inhibitors_until(&self, handed: usize, held: usize) {
        tokio::time::timeout(Duration::from_secs(30), async {
            while self.inhibitors() != (handed, held) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "logind's inhibitors (handed out, held) stayed {:?}, not ({handed}, {held})",
                self.inhibitors()
            )
        });
    }

    /// Where an engine reads this machine: the fakes' bus, no power-supply folder, and
    /// `suspend_clock`.
    pub fn host_sources(&self, suspend_clock: Arc<ManualSuspendClock>) -> HostSources {
        HostSources {
            bus_address: Some(self.bus.address.clone()),
            power_supply_dir: "/nonexistent/power_supply".into(),
            thermal_dir: "/nonexistent/thermal".into(),
            suspend_clock,
        }
    }
}
