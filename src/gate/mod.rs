//! The GPU gate: the one place that decides when learning work may use the managed server.
//!
//! [`IdleGate`] knows the live turns (leases the agent takes with `POST /v1/turns/start` and
//! returns with `finish`, lapsing after `turn_lease_s`), the settle window, and the server's idle
//! predicate. [`IdleGate::assess`] answers "may this piece of work run now?" with either
//! [`Verdict::Go`] or [`Verdict::Wait`] (with a reason a person can read and the latest time worth
//! asking again). [`IdleGate::admit`] takes the single permit for the managed server and only
//! then assesses, so a turn that started while the work waited for the permit wins. The
//! permit's [`Permit::preempted`] resolves when a live turn starts, another slot becomes busy
//! (noticed from the pace of our own stream, confirmed by one read) or a person asks for other
//! work to run now, and the caller then drops its request and requeues the work.
//!
//! Work a person asked for ([`Urgency::Now`]: a review with `focus`, *run now*, defer mode
//! `never`) skips the lull but not the server: it still needs a ready server with a loaded
//! model, and waits, saying why, until there is one.
//!
//! The gate has no timers of its own and never polls while nothing waits: callers sleep until a
//! [`IdleGate::changed`] notification or the deadline of a `Wait`. Time is tokio's, so tests and
//! the simulator run the same code on a paused clock.

mod rhythm;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::config::{PowerConfig, SchedulerConfig};
use crate::llm::StreamPace;
use crate::power::{self, PowerReading, PowerStatus};
use crate::server::{ModelStatus, ServerProbe, ServerReading, ServerState};

/// How often a waiting item re-reads a busy, starting or unreachable server.
pub const SERVER_RECHECK: Duration = Duration::from_secs(2);
/// How long after Lull's own request ended one busy slot may still be that request: the server
/// frees a slot a moment after the answer, and reads a dropped prompt step to its end.
const OWN_RELEASE_GRACE: Duration = Duration::from_secs(2);
/// How often the server is read again meanwhile.
const OWN_RELEASE_RECHECK: Duration = Duration::from_millis(250);
/// The person's rhythm lengthens the settle window by this much at most (and never past the
/// window after a preemption): a rhythm of long pauses must not delay learning much past what
/// the person configured (on the simulator's days, a longer stretch raised the median delay
/// past the design's 1.25× of Hermes').
const RHYTHM_MAX_EXTRA: Duration = Duration::from_secs(5);
/// What the Overview and the tray say between the machine's `PrepareForSleep` and its wake.
pub const SLEEP_HOLD: &str = "paused: the computer is going to sleep";

/// Milliseconds on the engine's clock: wall time at start plus tokio's monotonic time since,
/// plus the time the machine slept meanwhile.
///
/// Stored timestamps (enqueue times, back-offs) use it, so ages advance with a paused test clock
/// too, and a review's age counts a night the laptop slept (tokio's clock, the OS's monotonic
/// one, stands still in suspend; the gate adds each sleep it is told of). Clones share the count.
#[derive(Debug, Clone)]
pub struct EngineClock {
    origin_ms: i64,
    origin: Instant,
    slept_ms: Arc<AtomicU64>,
}

impl EngineClock {
    /// A clock reading the wall time now.
    pub fn start() -> EngineClock {
        EngineClock::starting_at(crate::store::now_ms())
    }

    /// A clock that reads `origin_ms` now and moves with tokio's clock from there: on a paused
    /// clock, the same instants every run (the simulator's seeded days replay exactly).
    pub fn starting_at(origin_ms: i64) -> EngineClock {
        EngineClock {
            origin_ms,
            origin: Instant::now(),
            slept_ms: Arc::default(),
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.origin_ms + self.origin.elapsed().as_millis() as i64 + self.slept().as_millis() as i64
    }

    /// The time the machine slept since this clock started, as the gate was told.
    pub fn slept(&self) -> Duration {
        Duration::from_millis(self.slept_ms.load(Ordering::SeqCst))
    }

    fn add_slept(&self, slept: Duration) {
        self.slept_ms
            .fetch_add(slept.as_millis() as u64, Ordering::SeqCst);
    }
}

/// The gate's timing, from `[scheduler]`.
#[derive(Debug, Clone, Copy)]
pub struct GateTiming {
    /// Quiet time after the last turn before a lull begins.
    pub settle: Duration,
    /// The same after a preemption, until work completes (at least `settle`).
    pub settle_after_preemption: Duration,
    /// Age at which queued work runs regardless.
    pub max_age: Duration,
    /// Lifetime of a turn lease.
    pub turn_lease: Duration,
}

impl From<&SchedulerConfig> for GateTiming {
    fn from(config: &SchedulerConfig) -> GateTiming {
        GateTiming {
            settle: Duration::from_secs(config.settle_s),
            settle_after_preemption: Duration::from_secs(
                config.settle_after_preemption_s.max(config.settle_s),
            ),
            max_age: Duration::from_secs(config.max_age_s),
            turn_lease: Duration::from_secs(config.turn_lease_s),
        }
    }
}

/// The gate's answer for one piece of work.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Run now.
    Go(Go),
    /// Not yet.
    Wait(Wait),
}

/// Where and why work may run now.
#[derive(Debug, Clone, PartialEq)]
pub struct Go {
    /// The model to run on.
    pub model: String,
    /// True when the work runs only because it waited past `max_age`.
    pub aged: bool,
    /// The reading the decision was made on.
    pub reading: ServerReading,
}

/// Why work may not run yet, and when to ask again.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    /// Why, in words for the Overview.
    pub reason: String,
    /// Ask again by then at the latest; `None` means only when something changes.
    pub recheck_at: Option<Instant>,
    /// The machine holds learning (battery, sleep): a pause, not a wait for a lull.
    pub held: bool,
}

/// How long a piece of work is willing to wait for the managed server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    /// Waits for a lull (DESIGN §2.1), or until it ages out.
    Deferred,
    /// A person or the agent asked for it now: no lull needed, but a ready server with a loaded
    /// model still is (learning never loads a model, which could evict the person's).
    Now,
}

/// What [`IdleGate::admit`] decided.
pub enum Admission {
    /// Run now, holding the permit (the work yields it by dropping it).
    Go(Permit, Go),
    /// Not yet; the permit is released.
    Wait(Wait),
}

/// Why running work must stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preemption {
    /// The agent reported a live turn.
    TurnStarted,
    /// Another client is using the server.
    ForeignSlotBusy,
    /// A person asked for other work to run now.
    RunNowRequested,
    /// The machine is about to sleep.
    MachineSleeping,
}

impl std::fmt::Display for Preemption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Preemption::TurnStarted => "preempted: a live turn started",
            Preemption::ForeignSlotBusy => "preempted: another client started using the server",
            Preemption::RunNowRequested => "preempted: other work was asked to run now",
            Preemption::MachineSleeping => "preempted: the computer is going to sleep",
        })
    }
}

struct Lease {
    expires: Instant,
}

#[derive(Default)]
struct Turns {
    leases: HashMap<String, Lease>,
    /// When the last turn started, finished or lapsed, or another client was seen busy; the
    /// settle window counts from here.
    last_activity: Option<Instant>,
    /// What `last_activity` was, for the person: "the last turn" or another client.
    last_activity_cause: ActivityCause,
    /// Learning work was preempted and none has completed since: the settle window is
    /// [`GateTiming::settle_after_preemption`].
    preempted: bool,
    /// When the person's last reported turn ended (no lease left), to measure their pause.
    quiet_since: Option<Instant>,
    /// The person's recent pauses between turns.
    rhythm: rhythm::Rhythm,
    /// When Lull's own last request on the managed server ended (its permit dropped).
    released: Option<Instant>,
}

/// Who was last seen using the GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum ActivityCause {
    /// A turn the agent reported.
    #[default]
    ReportedTurn,
    /// A busy slot nobody reported: another client of the server.
    BusySlot,
    /// Lull (re)started: it has seen nothing yet, and the agent's turn may be live (a crash
    /// does not end it), so the first lull starts a settle window after the start.
    EngineStarted,
    /// The machine woke: the person may be back at the keyboard, and the server's state is not
    /// known until it is read again.
    MachineWoke,
}

impl Turns {
    fn record(&mut self, at: Instant, cause: ActivityCause) {
        self.last_activity = Some(at);
        self.last_activity_cause = cause;
    }

    /// The quiet time a lull needs now: longer while a preemption is unanswered.
    fn settle_window(&self, timing: &GateTiming) -> Duration {
        if self.preempted {
            timing.settle_after_preemption
        } else {
            timing.settle
        }
    }

    /// The quiet a lull needs now, and whether the person's rhythm (not the window) sets it.
    fn quiet_needed(&self, timing: &GateTiming) -> (Duration, bool) {
        let window = self.settle_window(timing);
        let longest = (window + RHYTHM_MAX_EXTRA).min(timing.settle_after_preemption);
        match self.rhythm.usual_quiet() {
            Some(usual) if usual > window && longest > window => (usual.min(longest), true),
            _ => (window, false),
        }
    }

    /// The person started a turn now, after a pause if none was live.
    fn person_started(&mut self, now: Instant) {
        if let Some(quiet) = self.quiet_since.take() {
            self.rhythm.paused(now - quiet);
        }
    }

    /// A turn ended at `at`: when it was the last live one, the person's pause begins.
    fn turn_ended(&mut self, at: Instant) {
        if self.leases.is_empty() {
            self.quiet_since = Some(at);
        }
    }
}

impl Turns {
    /// Forgets lapsed leases, counting their expiry as activity.
    fn prune(&mut self, now: Instant) {
        let lapsed: Vec<Instant> = self
            .leases
            .values()
            .filter(|lease| lease.expires <= now)
            .map(|lease| lease.expires)
            .collect();
        if lapsed.is_empty() {
            return;
        }
        self.leases.retain(|_, lease| lease.expires > now);
        let latest = lapsed.into_iter().max().expect("at least one lapsed lease");
        if self.last_activity.is_none_or(|at| at < latest) {
            self.record(latest, ActivityCause::ReportedTurn);
        }
        self.turn_ended(latest);
        tracing::info!("a turn lease lapsed without a finish; counting it as finished");
    }
}

/// What the machine allows: its power, and whether it is going to sleep.
struct Host {
    policy: PowerConfig,
    power: PowerReading,
    /// Why the machine throttles to cool down, while it does.
    throttling: Option<String>,
    sleeping: bool,
    /// The machine woke since the server was last read: the next reading skips the probe's
    /// cache (the state file may be stale, the model unloaded).
    woke: bool,
}

/// The GPU gate; share it as `Arc<IdleGate>`.
pub struct IdleGate {
    timing: GateTiming,
    clock: EngineClock,
    server: Arc<dyn ServerProbe>,
    turns: Mutex<Turns>,
    host: Mutex<Host>,
    /// Bumped when the machine is about to sleep, for preemption.
    sleeps: watch::Sender<u64>,
    /// Bumped on every change that may turn a `Wait` into a `Go` or preempt running work.
    changes: watch::Sender<u64>,
    /// Bumped only when a turn starts, for preemption.
    turn_starts: watch::Sender<u64>,
    /// Bumped when work is asked to run now, so deferred work gives way to it.
    run_now_requests: watch::Sender<u64>,
    managed_slot: Arc<Semaphore>,
}

impl IdleGate {
    /// A gate with no live turns, whose first settle window starts now, on a machine on AC
    /// until [`IdleGate::power_changed`] says otherwise.
    pub fn new(
        timing: GateTiming,
        clock: EngineClock,
        server: Arc<dyn ServerProbe>,
        policy: PowerConfig,
    ) -> IdleGate {
        let mut turns = Turns::default();
        turns.record(Instant::now(), ActivityCause::EngineStarted);
        IdleGate {
            timing,
            clock,
            server,
            turns: Mutex::new(turns),
            host: Mutex::new(Host {
                policy,
                power: PowerReading::AC,
                throttling: None,
                sleeping: false,
                woke: false,
            }),
            sleeps: watch::channel(0).0,
            changes: watch::channel(0).0,
            turn_starts: watch::channel(0).0,
            run_now_requests: watch::channel(0).0,
            managed_slot: Arc::new(Semaphore::new(1)),
        }
    }

    /// The engine's clock.
    pub fn clock(&self) -> EngineClock {
        self.clock.clone()
    }

    /// The machine's power changed (or was first read): learning may be held or let go.
    pub fn power_changed(&self, power: PowerReading) {
        let changed = {
            let mut host = self.host.lock().expect("host lock");
            std::mem::replace(&mut host.power, power) != power
        };
        if changed {
            tracing::info!(?power, "the machine's power changed");
            self.notify_change();
        }
    }

    /// The machine started or stopped throttling to cool down (`Some` says why): new learning
    /// waits while it does; running work goes on.
    pub fn heat_changed(&self, throttling: Option<String>) {
        let changed = {
            let mut host = self.host.lock().expect("host lock");
            let was = std::mem::replace(&mut host.throttling, throttling);
            was.is_some() != host.throttling.is_some()
        };
        if changed {
            tracing::info!("the machine's throttling changed");
            self.notify_change();
        }
    }

    /// The machine is about to sleep: running learning yields (its permit's
    /// [`Permit::preempted`] resolves, and non-yielding work is stopped too) and nothing new
    /// starts until [`IdleGate::machine_resumed`].
    pub fn machine_sleeping(&self) {
        self.host.lock().expect("host lock").sleeping = true;
        self.sleeps.send_modify(|n| *n += 1);
        self.notify_change();
    }

    /// The machine woke after `slept`. The engine's clock counts the sleep (a review's age
    /// does), leases taken before it lapse as if the time had passed, the person's pause before
    /// it is no pause of their rhythm, the settle window starts again, and the next reading of
    /// the server is a fresh one.
    pub fn machine_resumed(&self, slept: Duration) {
        self.clock.add_slept(slept);
        {
            let mut host = self.host.lock().expect("host lock");
            host.sleeping = false;
            host.woke = true;
        }
        let now = Instant::now();
        {
            let mut turns = self.turns.lock().expect("turns lock");
            for lease in turns.leases.values_mut() {
                lease.expires = lease.expires.checked_sub(slept).unwrap_or(now);
            }
            turns.prune(now);
            turns.quiet_since = None;
            turns.record(now, ActivityCause::MachineWoke);
        }
        self.notify_change();
    }

    /// Waits until no learning holds the managed server (the machine may sleep).
    pub async fn drained(&self) {
        let _idle = self
            .managed_slot
            .acquire()
            .await
            .expect("the gate's semaphore is never closed");
    }

    /// True between [`IdleGate::machine_sleeping`] and [`IdleGate::machine_resumed`].
    pub fn is_sleeping(&self) -> bool {
        self.host.lock().expect("host lock").sleeping
    }

    /// A receiver that sees every [`IdleGate::machine_sleeping`] from now on.
    pub fn sleeps(&self) -> watch::Receiver<u64> {
        self.sleeps.subscribe()
    }

    /// Why the machine holds learning now (sleep, or battery under `[power]`), if it does.
    pub fn learning_hold(&self) -> Option<String> {
        let host = self.host.lock().expect("host lock");
        if host.sleeping {
            return Some(SLEEP_HOLD.into());
        }
        power::learning_hold(&host.power, &host.policy).or_else(|| host.throttling.clone())
    }

    /// Why training jobs must wait now: a live turn, the machine's sleep, or its battery.
    pub fn training_hold(&self) -> Option<String> {
        let live = self.live_turns();
        if live > 0 {
            return Some(format!("paused: {live} live turn(s) in progress"));
        }
        self.machine_training_hold()
    }

    fn machine_training_hold(&self) -> Option<String> {
        let host = self.host.lock().expect("host lock");
        if host.sleeping {
            return Some(SLEEP_HOLD.into());
        }
        power::training_hold(&host.power, &host.policy).or_else(|| host.throttling.clone())
    }

    /// The machine as the gate sees it, for the status.
    pub fn power_status(&self) -> PowerStatus {
        let (power, sleeping) = {
            let host = self.host.lock().expect("host lock");
            (host.power, host.sleeping)
        };
        PowerStatus {
            power,
            sleeping,
            learning_held: self.learning_hold(),
            training_held: self.machine_training_hold(),
        }
    }

    /// The server's reading, fresh when the machine woke since the last one.
    async fn server_reading(&self) -> ServerReading {
        let woke = std::mem::take(&mut self.host.lock().expect("host lock").woke);
        if woke {
            self.server.read_afresh().await
        } else {
            self.server.read().await
        }
    }

    /// The managed server's current reading.
    pub async fn read_server(&self) -> ServerReading {
        self.server.read().await
    }

    /// Records a live turn and returns its lease id; running learning work will be preempted.
    pub fn turn_started(&self) -> String {
        let lease_id = uuid::Uuid::new_v4().to_string();
        let now = Instant::now();
        {
            let mut turns = self.turns.lock().expect("turns lock");
            turns.prune(now);
            if turns.leases.is_empty() {
                turns.person_started(now);
            }
            turns.leases.insert(
                lease_id.clone(),
                Lease {
                    expires: now + self.timing.turn_lease,
                },
            );
            turns.record(now, ActivityCause::ReportedTurn);
        }
        self.turn_starts.send_modify(|n| *n += 1);
        self.notify_change();
        lease_id
    }

    /// Ends a turn; false when the lease is unknown or already lapsed.
    pub fn turn_finished(&self, lease_id: &str) -> bool {
        let now = Instant::now();
        let known = {
            let mut turns = self.turns.lock().expect("turns lock");
            turns.prune(now);
            let known = turns.leases.remove(lease_id).is_some();
            if known {
                turns.record(now, ActivityCause::ReportedTurn);
                turns.turn_ended(now);
            }
            known
        };
        self.notify_change();
        known
    }

    /// Records that another client was seen using the server now: the settle window restarts.
    /// Returns when it ends.
    fn busy_slot_seen(&self) -> Instant {
        let now = Instant::now();
        let mut turns = self.turns.lock().expect("turns lock");
        turns.record(now, ActivityCause::BusySlot);
        now + turns.quiet_needed(&self.timing).0
    }

    /// Records that another client started using the server while learning ran: a person who
    /// tells Lull nothing came back after this pause (from when they were last seen; Lull's own
    /// start is not a sighting of the person).
    fn foreign_turn_started(&self) {
        let now = Instant::now();
        let mut turns = self.turns.lock().expect("turns lock");
        let seen = turns
            .last_activity
            .filter(|_| turns.last_activity_cause != ActivityCause::EngineStarted);
        if let Some(at) = seen {
            turns.rhythm.paused(now - at);
        }
    }

    /// Records that Lull's own request on the managed server ended: for a moment, one busy
    /// slot may still be it.
    fn own_request_ended(&self) {
        self.turns.lock().expect("turns lock").released = Some(Instant::now());
    }

    /// Records that learning work was preempted: the person is in a burst of prompts, so the
    /// longer settle window applies until work completes.
    fn work_preempted(&self) {
        self.turns.lock().expect("turns lock").preempted = true;
    }

    /// Records that a piece of learning work completed: the plain settle window applies again.
    pub fn work_completed(&self) {
        self.turns.lock().expect("turns lock").preempted = false;
    }

    /// Number of live (unlapsed) turns.
    pub fn live_turns(&self) -> usize {
        let mut turns = self.turns.lock().expect("turns lock");
        turns.prune(Instant::now());
        turns.leases.len()
    }

    /// Wakes everyone waiting on [`IdleGate::changed`]: call it when settings, the queue or the
    /// server change.
    pub fn notify_change(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that sees every change from now on.
    pub fn changed(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Announces work that must run now: running deferred work yields to it (its permit's
    /// [`Permit::preempted`] resolves), and waiters wake.
    pub fn run_now_requested(&self) {
        self.run_now_requests.send_modify(|n| *n += 1);
        self.notify_change();
    }

    /// A receiver that sees every [`IdleGate::run_now_requested`] from now on.
    pub fn run_now_requests(&self) -> watch::Receiver<u64> {
        self.run_now_requests.subscribe()
    }

    /// Takes the permit for the managed server (waiting while other work holds it), then
    /// assesses: a turn that started while this waited for the permit wins.
    pub async fn admit(
        self: &Arc<Self>,
        enqueued_at_ms: i64,
        model: Option<&str>,
        urgency: Urgency,
    ) -> Admission {
        let slot = self
            .managed_slot
            .clone()
            .acquire_owned()
            .await
            .expect("the gate's semaphore is never closed");
        // Subscribed before assessing: a turn that starts from here on preempts the work.
        let turn_starts = self.turn_starts.subscribe();
        let run_now_requests = self.run_now_requests.subscribe();
        let sleeps = self.sleeps.subscribe();
        match self.assess(enqueued_at_ms, model, urgency).await {
            Verdict::Wait(wait) => Admission::Wait(wait),
            Verdict::Go(go) => {
                let permit = Permit {
                    gate: self.clone(),
                    model: go.model.clone(),
                    _slot: slot,
                    turn_starts,
                    run_now_requests,
                    sleeps,
                };
                Admission::Go(permit, go)
            }
        }
    }

    /// May work enqueued at `enqueued_at_ms` run on the managed server, on `model` (or on its
    /// first loaded model when `None`)? [`Urgency::Now`] work skips the lull, not the server;
    /// nothing skips the machine's hold (its battery, its sleep), which lifts when the machine
    /// says so (a [`IdleGate::notify_change`]), so it sets no recheck.
    pub async fn assess(
        &self,
        enqueued_at_ms: i64,
        model: Option<&str>,
        urgency: Urgency,
    ) -> Verdict {
        if let Some(reason) = self.learning_hold() {
            return Verdict::Wait(Wait {
                reason,
                recheck_at: None,
                held: true,
            });
        }
        let now = Instant::now();
        let age = Duration::from_millis((self.clock.now_ms() - enqueued_at_ms).max(0) as u64);
        let aged = age >= self.timing.max_age;
        let age_deadline = (!aged).then(|| now + (self.timing.max_age - age));
        // Work asked for now needs no lull: it is judged like aged work, but never loads a model.
        let deferred = !aged && urgency == Urgency::Deferred;

        let (live, settle_deadline, next_lapse, cause, preempted, rhythm, released) = {
            let mut turns = self.turns.lock().expect("turns lock");
            turns.prune(now);
            let (quiet, by_rhythm) = turns.quiet_needed(&self.timing);
            let settle = turns
                .last_activity
                .map(|at| at + quiet)
                .filter(|&deadline| deadline > now);
            (
                turns.leases.len(),
                settle,
                turns.leases.values().map(|lease| lease.expires).min(),
                turns.last_activity_cause,
                turns.preempted,
                by_rhythm.then_some(quiet),
                turns.released,
            )
        };
        if deferred && live > 0 {
            return wait(
                format!("waiting: {live} live turn(s) in progress"),
                earliest(&[age_deadline, next_lapse]),
            );
        }
        // After a wake even aged work waits out the settle window: a night asleep ages every
        // queued review past `max_age`, and the person opening the lid is the moment to be quiet.
        let woke = cause == ActivityCause::MachineWoke && urgency == Urgency::Deferred;
        if (deferred || woke) && settle_deadline.is_some() {
            let after = match cause {
                ActivityCause::ReportedTurn => "the last turn",
                ActivityCause::BusySlot => "the server was last seen busy (another client)",
                ActivityCause::EngineStarted => "Lull started",
                ActivityCause::MachineWoke => "the computer woke",
            };
            let reason = match rhythm {
                Some(quiet) => format!(
                    "waiting: the person's usual pause between turns ({:.0} s) after {after}",
                    quiet.as_secs_f64().ceil()
                ),
                None if preempted => format!(
                    "waiting: the settle window after {after} (longer since learning was last preempted)"
                ),
                None => format!("waiting: the settle window after {after}"),
            };
            return wait(reason, earliest(&[age_deadline, settle_deadline]));
        }

        let reading = self.server_reading().await;
        let recheck = earliest(&[age_deadline, Some(now + SERVER_RECHECK)]);
        match reading.state {
            ServerState::Ready => {}
            ServerState::Absent | ServerState::Invalid | ServerState::Stale => {
                let why = reading
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("the managed server is {}", reading.state));
                // The state-file watcher announces the server's return; no need to poll.
                return wait(
                    format!("waiting for the managed server: {why}"),
                    age_deadline,
                );
            }
            ServerState::Starting | ServerState::Unreachable => {
                let why = reading
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("the managed server is {}", reading.state));
                return wait(format!("waiting for the managed server: {why}"), recheck);
            }
        }
        let chosen = match model {
            Some(id) => reading.model(id).cloned(),
            None => reading
                .first_loaded_model()
                .cloned()
                .or_else(|| reading.models.first().cloned()),
        };
        let Some(chosen) = chosen else {
            let what = model
                .map(|id| format!("model `{id}`"))
                .unwrap_or_else(|| "any model".into());
            return wait(
                format!("waiting: the managed server does not serve {what}"),
                recheck,
            );
        };
        if aged {
            return Verdict::Go(Go {
                model: chosen.id,
                aged: true,
                reading,
            });
        }
        if chosen.status != ModelStatus::Loaded {
            return wait(
                format!(
                    "waiting: model `{}` is {:?}; learning never loads a model, which could evict yours",
                    chosen.id, chosen.status
                )
                .to_lowercase(),
                recheck,
            );
        }
        if urgency == Urgency::Now {
            return Verdict::Go(Go {
                model: chosen.id,
                aged: false,
                reading,
            });
        }
        if !reading.idle {
            let own_moment_ago = released.is_some_and(|at| now < at + OWN_RELEASE_GRACE);
            if own_moment_ago && reading.n_busy_slots() <= 1 {
                // Likely Lull's own request, still being let go: look again shortly rather than
                // count it as another client and restart the settle window.
                return wait(
                    "waiting: the managed server is finishing Lull's last request".into(),
                    earliest(&[age_deadline, Some(now + OWN_RELEASE_RECHECK)]),
                );
            }
            // A busy slot is a live turn of another client (DESIGN §2.1): the settle window
            // counts from the last time it was seen busy, as it does for reported turns, so
            // nothing is worth asking before it ends.
            let settled = self.busy_slot_seen();
            return wait(
                format!(
                    "waiting: {} slot(s) busy on the managed server (another client), then the settle window",
                    reading.n_busy_slots()
                ),
                earliest(&[age_deadline, Some(settled)]),
            );
        }
        Verdict::Go(Go {
            model: chosen.id,
            aged: false,
            reading,
        })
    }
}

/// Held while learning work runs on the managed server; dropping it lets the next work in.
pub struct Permit {
    gate: Arc<IdleGate>,
    model: String,
    _slot: OwnedSemaphorePermit,
    turn_starts: watch::Receiver<u64>,
    run_now_requests: watch::Receiver<u64>,
    sleeps: watch::Receiver<u64>,
}

impl Permit {
    /// Resolves when the machine is about to sleep: all work stops then, even work that does
    /// not yield to the person, and is requeued.
    pub async fn machine_sleeping(&mut self) {
        if self.sleeps.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Resolves when deferred work must yield: a turn starts, a slot other than ours is busy,
    /// or other work is asked to run now.
    ///
    /// Reported turns need no request. Another client is noticed through `pace`, the pace of
    /// our own stream: when it stalls, one read of the server tells another client's prompt
    /// (preempt) from our own slowness (tolerate more and go on). Nothing is read while the
    /// stream keeps its pace, except at the request's checkpoints between two prompt steps
    /// ([`StreamPace::checkpoint`]): our request holds no slot there, so any busy slot is
    /// another client's, and the next step is not sent beside it. Yielding to run-now work is
    /// not the person's burst of prompts, so it leaves the settle window as it was.
    pub async fn preempted(&mut self, pace: &StreamPace) -> Preemption {
        loop {
            tokio::select! {
                changed = self.turn_starts.changed() => {
                    if changed.is_ok() {
                        self.gate.work_preempted();
                        return Preemption::TurnStarted;
                    }
                }
                changed = self.run_now_requests.changed() => {
                    if changed.is_ok() {
                        return Preemption::RunNowRequested;
                    }
                }
                changed = self.sleeps.changed() => {
                    if changed.is_ok() {
                        return Preemption::MachineSleeping;
                    }
                }
                _ = pace.stalled() => {
                    let reading = self.gate.server.read().await;
                    if foreign_busy_slots(&reading, &self.model) > 0 {
                        return self.foreign_slot_busy();
                    }
                    pace.relax();
                }
                _ = pace.checkpoint_reached() => {
                    // Afresh: a reading cached while our step ran would show our own slot busy.
                    if self.gate.server.read_afresh().await.n_busy_slots() > 0 {
                        return self.foreign_slot_busy();
                    }
                    pace.clear_checkpoint();
                }
            }
        }
    }

    fn foreign_slot_busy(&self) -> Preemption {
        self.gate.foreign_turn_started();
        self.gate.busy_slot_seen();
        self.gate.work_preempted();
        Preemption::ForeignSlotBusy
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.own_request_ended();
    }
}

/// Busy slots that are not our one request on `model`.
fn foreign_busy_slots(reading: &ServerReading, model: &str) -> usize {
    reading
        .models
        .iter()
        .map(|m| {
            if m.id == model {
                m.busy_slots.saturating_sub(1)
            } else {
                m.busy_slots
            }
        })
        .sum()
}

fn wait(reason: String, recheck_at: Option<Instant>) -> Verdict {
    Verdict::Wait(Wait {
        reason,
        recheck_at,
        held: false,
    })
}

/// The soonest of `deadlines` that is set.
pub(crate) fn earliest(deadlines: &[Option<Instant>]) -> Option<Instant> {
    deadlines.iter().flatten().min().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{ManualProbe, ModelReading, ServerMode};

    fn idle_server() -> ServerReading {
        ServerReading {
            state: ServerState::Ready,
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            models: vec![ModelReading {
                id: "m".into(),
                status: ModelStatus::Loaded,
                busy_slots: 0,
            }],
            idle: true,
            reason: None,
            mode: Some(ServerMode::Router),
            api_key: None,
        }
    }

    fn gate() -> Arc<IdleGate> {
        gate_on(Arc::new(ManualProbe::new(idle_server())), 15)
    }

    fn gate_on(probe: Arc<ManualProbe>, settle_s: u64) -> Arc<IdleGate> {
        gate_timed(probe, settle_s, 60)
    }

    fn gate_timed(
        probe: Arc<ManualProbe>,
        settle_s: u64,
        after_preemption_s: u64,
    ) -> Arc<IdleGate> {
        let timing = GateTiming {
            settle: Duration::from_secs(settle_s),
            settle_after_preemption: Duration::from_secs(after_preemption_s),
            max_age: Duration::from_secs(1800),
            turn_lease: Duration::from_secs(600),
        };
        Arc::new(IdleGate::new(
            timing,
            EngineClock::start(),
            probe,
            PowerConfig::default(),
        ))
    }

    fn busy_server(busy_slots: usize) -> ServerReading {
        let mut reading = idle_server();
        reading.models[0].busy_slots = busy_slots;
        reading.idle = busy_slots == 0;
        reading
    }

    /// Issue 30: a person in quick succession (3 s pauses, a 2 s settle window) meets no
    /// learning in their pauses once their rhythm is known; a pause longer than usual is a lull.
    #[tokio::test(start_paused = true)]
    async fn learning_waits_out_the_persons_usual_pause() {
        let gate = gate_on(Arc::new(ManualProbe::new(idle_server())), 2);
        tokio::time::advance(Duration::from_secs(3)).await;
        for _ in 0..3 {
            let lease = gate.turn_started();
            tokio::time::advance(Duration::from_secs(2)).await;
            assert!(gate.turn_finished(&lease));
            tokio::time::advance(Duration::from_secs(3)).await;
        }
        let lease = gate.turn_started();
        tokio::time::advance(Duration::from_secs(2)).await;
        gate.turn_finished(&lease);
        let now = gate.clock().now_ms();
        tokio::time::advance(Duration::from_secs(3)).await;
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert!(wait.reason.contains("usual pause"), "{wait:?}");
                // Three pauses of 3 s: the usual one with its margin, 4.5 s after the turn.
                assert_eq!(
                    wait.recheck_at,
                    Some(Instant::now() + Duration::from_millis(1500))
                );
            }
            go => panic!("a 3 s pause is this person's usual one, not a lull: {go:?}"),
        }
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert!(matches!(
            gate.assess(now, None, Urgency::Deferred).await,
            Verdict::Go(_)
        ));
    }

    /// Issue 30: the rhythm never makes learning wait past the window after a preemption, so a
    /// review queued behind the person starts within that window (and one reading) of their
    /// last turn, whatever their pauses.
    #[tokio::test(start_paused = true)]
    async fn the_rhythm_stretches_the_settle_window_no_further_than_after_a_preemption() {
        let gate = gate_timed(Arc::new(ManualProbe::new(idle_server())), 2, 4);
        for _ in 0..4 {
            let lease = gate.turn_started();
            tokio::time::advance(Duration::from_secs(1)).await;
            gate.turn_finished(&lease);
            tokio::time::advance(Duration::from_secs(10)).await;
        }
        let lease = gate.turn_started();
        gate.turn_finished(&lease);
        let now = gate.clock().now_ms();
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert!(wait.reason.contains("between turns (4 s)"), "{wait:?}");
                assert_eq!(
                    wait.recheck_at,
                    Some(Instant::now() + Duration::from_secs(4))
                );
            }
            go => panic!("{go:?}"),
        }
        gate.work_preempted();
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert!(wait.reason.contains("longer since learning"), "{wait:?}");
                assert_eq!(
                    wait.recheck_at,
                    Some(Instant::now() + Duration::from_secs(4))
                );
            }
            go => panic!("{go:?}"),
        }
    }

    /// The time from Lull's start to another client's first request is no pause of the
    /// person's: only pauses after they were seen count.
    #[tokio::test(start_paused = true)]
    async fn a_pause_counts_from_the_person_not_from_lulls_start() {
        let gate = gate_on(Arc::new(ManualProbe::new(idle_server())), 2);
        let usual = |gate: &IdleGate| gate.turns.lock().unwrap().rhythm.usual_quiet();
        tokio::time::advance(Duration::from_secs(20)).await;
        gate.foreign_turn_started();
        for _ in 0..2 {
            gate.busy_slot_seen();
            tokio::time::advance(Duration::from_secs(3)).await;
            gate.foreign_turn_started();
        }
        assert_eq!(usual(&gate), None, "two pauses so far, not three");
        gate.busy_slot_seen();
        tokio::time::advance(Duration::from_secs(3)).await;
        gate.foreign_turn_started();
        assert_eq!(usual(&gate), Some(Duration::from_millis(4500)));
    }

    /// Issue 30: the one busy slot a reading shows right after Lull's own request ended is
    /// that request being let go, not another client: it restarts no settle window.
    #[tokio::test(start_paused = true)]
    async fn lulls_own_request_being_let_go_is_not_another_client() {
        let probe = Arc::new(ManualProbe::new(idle_server()));
        let gate = gate_on(probe.clone(), 15);
        tokio::time::advance(Duration::from_secs(16)).await;
        let now = gate.clock().now_ms();
        let Admission::Go(permit, _) = gate.admit(now, None, Urgency::Deferred).await else {
            panic!("an idle, settled server admits deferred work");
        };
        probe.set(busy_server(1));
        drop(permit);
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert!(wait.reason.contains("Lull's last request"), "{wait:?}");
                assert_eq!(wait.recheck_at, Some(Instant::now() + OWN_RELEASE_RECHECK));
            }
            go => panic!("{go:?}"),
        }
        probe.set(idle_server());
        tokio::time::advance(OWN_RELEASE_RECHECK).await;
        assert!(
            matches!(
                gate.assess(now, None, Urgency::Deferred).await,
                Verdict::Go(_)
            ),
            "the settle window did not restart"
        );
        // Past the grace, or with two busy slots, it is another client: the window restarts.
        probe.set(busy_server(1));
        tokio::time::advance(OWN_RELEASE_GRACE).await;
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => assert!(wait.reason.contains("another client"), "{wait:?}"),
            go => panic!("{go:?}"),
        }
    }

    /// Issue 11, item 3: work that waited for the permit is assessed after it gets it, so a turn
    /// that started meanwhile wins.
    #[tokio::test(start_paused = true)]
    async fn a_turn_that_starts_while_work_waits_for_the_permit_wins() {
        let gate = gate();
        tokio::time::advance(Duration::from_secs(16)).await;
        let now = gate.clock().now_ms();
        let Admission::Go(permit, _) = gate.admit(now, None, Urgency::Deferred).await else {
            panic!("an idle, settled server admits deferred work");
        };
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.admit(now, None, Urgency::Deferred).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "one permit: the second waits");
        let _lease = gate.turn_started();
        drop(permit);
        match waiting.await.unwrap() {
            Admission::Wait(wait) => assert!(wait.reason.contains("live turn"), "{wait:?}"),
            Admission::Go(..) => panic!("the turn that started meanwhile must win"),
        }
    }

    /// Issue 11, item 1: nothing deferred runs in the first settle window after a start; work
    /// asked for now does.
    #[tokio::test(start_paused = true)]
    async fn the_first_settle_window_starts_with_the_gate() {
        let gate = gate();
        let now = gate.clock().now_ms();
        match gate.assess(now, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert!(wait.reason.contains("after Lull started"), "{wait:?}");
                assert_eq!(
                    wait.recheck_at,
                    Some(Instant::now() + Duration::from_secs(15))
                );
            }
            go => panic!("{go:?}"),
        }
        assert!(matches!(
            gate.assess(now, None, Urgency::Now).await,
            Verdict::Go(_)
        ));
    }

    /// Issue 27: on battery below the threshold, work waits as a pause (with the reason the
    /// Overview shows and no timer: the power's change wakes it), whatever its urgency or age;
    /// AC lets it go without a restart.
    #[tokio::test(start_paused = true)]
    async fn the_battery_holds_learning_until_ac_returns() {
        let gate = gate();
        tokio::time::advance(Duration::from_secs(16)).await;
        let mut changes = gate.changed();
        gate.power_changed(PowerReading::battery(Some(30.0)));
        assert!(
            changes.has_changed().unwrap(),
            "a new power reading wakes waiters"
        );
        let long_ago = gate.clock().now_ms() - 3_600_000;
        for (enqueued_at, urgency) in [
            (gate.clock().now_ms(), Urgency::Deferred),
            (long_ago, Urgency::Now),
        ] {
            match gate.assess(enqueued_at, None, urgency).await {
                Verdict::Wait(wait) => {
                    assert_eq!(
                        wait.reason,
                        "paused: on battery (30 %); learning resumes on AC or above 50 %"
                    );
                    assert!(wait.held);
                    assert_eq!(wait.recheck_at, None);
                }
                go => panic!("{go:?}"),
            }
        }
        changes.mark_unchanged();
        gate.power_changed(PowerReading::battery(Some(30.0)));
        assert!(
            !changes.has_changed().unwrap(),
            "the same reading again is no change"
        );
        gate.power_changed(PowerReading::battery(Some(75.0)));
        assert!(matches!(
            gate.assess(gate.clock().now_ms(), None, Urgency::Deferred)
                .await,
            Verdict::Go(_)
        ));
        gate.power_changed(PowerReading::battery(Some(20.0)));
        assert!(gate.power_status().learning_held.is_some());
        assert!(gate
            .training_hold()
            .unwrap()
            .contains("training resumes on AC"));
        gate.power_changed(PowerReading::AC);
        assert_eq!(gate.power_status().learning_held, None);
        assert!(matches!(
            gate.assess(gate.clock().now_ms(), None, Urgency::Deferred)
                .await,
            Verdict::Go(_)
        ));
    }

    /// Issue 27: while the machine throttles, new learning and training wait, saying why.
    #[tokio::test(start_paused = true)]
    async fn a_throttling_machine_holds_new_learning_until_it_cools() {
        let gate = gate();
        tokio::time::advance(Duration::from_secs(16)).await;
        let hot =
            "paused: the machine is throttling to cool down (x86_pkg_temp at 96 °C, from 95 °C)";
        let mut changes = gate.changed();
        gate.heat_changed(Some(hot.into()));
        assert!(changes.has_changed().unwrap());
        match gate
            .assess(gate.clock().now_ms(), None, Urgency::Deferred)
            .await
        {
            Verdict::Wait(wait) => assert_eq!((wait.reason.as_str(), wait.held), (hot, true)),
            go => panic!("{go:?}"),
        }
        assert_eq!(gate.training_hold().as_deref(), Some(hot));
        changes.mark_unchanged();
        gate.heat_changed(Some(hot.replace("96", "97")));
        assert!(
            !changes.has_changed().unwrap(),
            "a degree warmer is no change of the hold"
        );
        gate.heat_changed(None);
        assert!(changes.has_changed().unwrap());
        assert!(matches!(
            gate.assess(gate.clock().now_ms(), None, Urgency::Deferred)
                .await,
            Verdict::Go(_)
        ));
    }

    /// Issue 27: before the machine sleeps, work running under the permit yields, nothing new
    /// is admitted (not even work asked for now), and `drained` resolves once the permit is
    /// back.
    #[tokio::test(start_paused = true)]
    async fn the_machines_sleep_preempts_running_work_and_holds_the_rest() {
        let gate = gate();
        tokio::time::advance(Duration::from_secs(16)).await;
        let now = gate.clock().now_ms();
        let Admission::Go(mut permit, _) = gate.admit(now, None, Urgency::Deferred).await else {
            panic!("an idle, settled server admits deferred work");
        };
        let pace = StreamPace::new();
        gate.machine_sleeping();
        assert_eq!(permit.preempted(&pace).await, Preemption::MachineSleeping);
        let drained = tokio::spawn({
            let gate = gate.clone();
            async move { gate.drained().await }
        });
        tokio::task::yield_now().await;
        assert!(!drained.is_finished(), "the permit is still held");
        drop(permit);
        drained.await.unwrap();
        match gate.assess(now, None, Urgency::Now).await {
            Verdict::Wait(wait) => {
                assert_eq!(wait.reason, SLEEP_HOLD);
                assert!(wait.held);
            }
            go => panic!("{go:?}"),
        }
        assert!(gate.is_sleeping());
        assert_eq!(gate.training_hold().as_deref(), Some(SLEEP_HOLD));
    }

    /// A probe that counts the readings taken past its cache.
    struct AfreshCounting {
        inner: ManualProbe,
        afresh: std::sync::atomic::AtomicU64,
    }

    impl ServerProbe for AfreshCounting {
        fn read(&self) -> crate::server::ReadingFuture<'_> {
            self.inner.read()
        }

        fn read_afresh(&self) -> crate::server::ReadingFuture<'_> {
            self.afresh.fetch_add(1, Ordering::SeqCst);
            self.inner.read()
        }
    }

    /// Issue 27, on a paused clock across a simulated suspend (tokio's clock stands still in a
    /// suspend, as the OS's monotonic clock does): after a long sleep the lease taken before it
    /// has lapsed, the engine's clock counts the sleep (so a review queued before it has aged
    /// out), the settle window starts again for deferred work, aged or not, the person's pause before the
    /// sleep is no pause of their rhythm, and the server is read afresh first.
    #[tokio::test(start_paused = true)]
    async fn a_long_sleep_lapses_leases_ages_reviews_and_restarts_the_settle_window() {
        let probe = Arc::new(AfreshCounting {
            inner: ManualProbe::new(idle_server()),
            afresh: Default::default(),
        });
        let timing = GateTiming {
            settle: Duration::from_secs(15),
            settle_after_preemption: Duration::from_secs(60),
            max_age: Duration::from_secs(1800),
            turn_lease: Duration::from_secs(600),
        };
        let gate = Arc::new(IdleGate::new(
            timing,
            EngineClock::start(),
            probe.clone(),
            PowerConfig::default(),
        ));
        tokio::time::advance(Duration::from_secs(16)).await;
        let queued_at = gate.clock().now_ms();
        let _lease = gate.turn_started();
        let before = gate.clock().now_ms();
        gate.machine_sleeping();
        let slept = Duration::from_secs(3 * 3600);
        gate.machine_resumed(slept);
        assert!(!gate.is_sleeping());
        assert_eq!(
            gate.live_turns(),
            0,
            "a 600 s lease taken before a 3 h sleep has lapsed"
        );
        assert_eq!(gate.clock().now_ms() - before, slept.as_millis() as i64);
        assert_eq!(gate.turns.lock().unwrap().quiet_since, None);
        let fresh = gate.clock().now_ms();
        match gate.assess(fresh, None, Urgency::Deferred).await {
            Verdict::Wait(wait) => {
                assert_eq!(
                    wait.reason,
                    "waiting: the settle window after the computer woke"
                );
                assert_eq!(wait.recheck_at, Some(Instant::now() + timing.settle));
            }
            go => panic!("{go:?}"),
        }
        assert_eq!(
            probe.afresh.load(Ordering::SeqCst),
            0,
            "nothing read during the settle window"
        );
        assert!(
            matches!(
                gate.assess(queued_at, None, Urgency::Deferred).await,
                Verdict::Wait(_)
            ),
            "even aged work waits out the settle window after a wake"
        );
        tokio::time::advance(timing.settle).await;
        match gate.assess(queued_at, None, Urgency::Deferred).await {
            Verdict::Go(go) => assert!(go.aged, "3 h asleep count towards the 30 min age-out"),
            wait => panic!("{wait:?}"),
        }
        assert_eq!(
            probe.afresh.load(Ordering::SeqCst),
            1,
            "the first reading after the wake is fresh"
        );
        gate.assess(queued_at, None, Urgency::Deferred).await;
        assert_eq!(probe.afresh.load(Ordering::SeqCst), 1, "and only the first");
    }

    /// A short sleep leaves a lease running: its remaining time is what is left of it.
    #[tokio::test(start_paused = true)]
    async fn a_short_sleep_keeps_a_live_turn_live() {
        let gate = gate();
        let _lease = gate.turn_started();
        gate.machine_sleeping();
        gate.machine_resumed(Duration::from_secs(60));
        assert_eq!(gate.live_turns(), 1);
        tokio::time::advance(Duration::from_secs(541)).await;
        assert_eq!(
            gate.live_turns(),
            0,
            "600 s lease: 60 s asleep and 541 s awake"
        );
    }
}
