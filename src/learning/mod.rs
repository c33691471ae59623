//! One durable queue of learning work and the one dispatcher that runs it (DESIGN §2.1).
//!
//! Every LLM-bound piece of learning — a review, a draft's synthesis, its evaluation — is a
//! [`WorkKind`]: a small module that says what of its kind is due, claims an item, runs it
//! against an endpoint, and records its answer, its failure or its requeue. Each kind keeps its
//! queue rows durably in SQLite (a review in `reviews`, the others in `learning_work`,
//! [`work`]); [`Dispatcher`] reads them as one queue, the urgent first and then the longest
//! waiting, and owns everything they share:
//!
//! - **where work runs** ([`Targets`]): the endpoint the item names, else `[reviews]`
//!   `base_url`, else the managed server; work for another endpoint runs at once, beside it;
//! - **the gate**: the first item for the managed server is admitted by the [`IdleGate`] (a lull
//!   for deferred work, a ready server with a loaded model for urgent work) and holds its one
//!   permit while it runs;
//! - **preemption and requeue**: deferred work yields to a live turn, another client or a run-now
//!   request and goes back to the queue, never lost;
//! - **back-off**: a kind's failed run waits out its [`RetryPolicy`] before it is due again; the
//!   dispatcher sleeps, without a timer, until the next item is due or something changes;
//! - **the [`Activity`]** the Overview shows: what runs, or why the rest waits.
//!
//! Pause holds everything; a kind may refuse its items under the settings in force (reviews
//! disabled), and those are dropped at dispatch with the reason. The dispatcher survives any
//! single failure.

pub mod work;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;
use ts_rs::TS;

use crate::config::{DeferMode, ReviewsConfig};
use crate::events::{EngineEvent, EventBus};
use crate::gate::{earliest, Admission, IdleGate, Permit, Preemption, Urgency};
use crate::llm::{ChatEndpoint, StreamPace};
use crate::settings::Settings;
use crate::store::{Store, StoreError};

/// The wait before retrying work after its endpoint's first error; it doubles each time.
pub const RETRY_FIRST_BACKOFF: Duration = Duration::from_secs(5);
/// The longest wait between two retries.
pub const RETRY_MAX_BACKOFF: Duration = Duration::from_secs(5 * 60);
/// Pause before the dispatcher retries after its own database error.
const DISPATCH_ERROR_BACKOFF: Duration = Duration::from_secs(5);

/// How failed runs are retried: a growing back-off, then terminal failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Failed runs after which an item fails for good.
    pub max_failures: u32,
    /// The wait after the first failure; it doubles with each further one.
    pub first_backoff: Duration,
    /// The longest wait.
    pub max_backoff: Duration,
}

impl RetryPolicy {
    /// The policy of `learning.max_retries` failed runs (at least one).
    pub fn with_max_failures(max_failures: u32) -> RetryPolicy {
        RetryPolicy {
            max_failures: max_failures.max(1),
            first_backoff: RETRY_FIRST_BACKOFF,
            max_backoff: RETRY_MAX_BACKOFF,
        }
    }

    /// The wait before the next run after `failures` failed ones.
    pub fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(20);
        self.first_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

/// What the dispatcher is doing, for the Overview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Activity {
    /// Its state.
    pub state: ActivityState,
    /// Why it waits, or what it runs.
    pub reason: Option<String>,
}

/// The dispatcher's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ActivityState {
    /// Nothing to do.
    Idle,
    /// Learning is paused: by the person, or by the machine (on battery, going to sleep).
    Paused,
    /// Work is due but waits (for a lull, the server, a model or a back-off).
    Waiting,
    /// Work runs on the managed server.
    Running,
}

/// One queued item a kind says is due.
#[derive(Debug, Clone, PartialEq)]
pub struct Due {
    /// The item's id in its kind's table.
    pub id: String,
    /// When it was first queued (engine ms); the oldest runs first and ages out first.
    pub enqueued_at: i64,
    /// Asked to run now: skips the lull (still waits for a ready server).
    pub urgent: bool,
    /// The endpoint it names, if any (a review's `runtime`).
    pub runtime: Option<ChatEndpoint>,
}

/// A kind of learning work: what is due, how to claim, run and record one item.
///
/// The dispatcher calls `due` and `next_retry_at` inside the store's writer; the rest are
/// async. An implementation never decides *when* to run: that is the dispatcher's.
pub trait WorkKind: Send + Sync + 'static {
    /// A claimed item, as the kind needs it to run.
    type Item: Send + Sync + 'static;
    /// What a successful run produced, for [`WorkKind::finish`].
    type Answer: Send + 'static;

    /// Queued items whose back-off is over.
    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError>;
    /// When the next backed-off item becomes due (engine ms), if any.
    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError>;
    /// Why this kind's items must not run under `settings` (they are dropped at dispatch).
    fn refusal(&self, _settings: &Settings) -> Option<&'static str> {
        None
    }
    /// Drops a queued item for `reason` (one [`WorkKind::refusal`] refused); false if it was no
    /// longer queued. A kind that never refuses keeps this default.
    fn drop_queued(&self, _id: &str, _reason: &str) -> impl Future<Output = bool> + Send {
        async { false }
    }
    /// Marks a queued item running; `None` if it is no longer queued.
    fn claim(&self, id: &str) -> impl Future<Output = Option<Self::Item>> + Send;
    /// What running `item` is, for the Overview ("reviewing session s1").
    fn doing(&self, item: &Self::Item) -> String;
    /// Runs `item` on `endpoint`. With a `pace`, the work yields to the person and every step
    /// of its streams must advance the pace. Dropping the future cancels the request.
    fn execute<'a>(
        &'a self,
        item: &'a Self::Item,
        endpoint: &'a ChatEndpoint,
        pace: Option<&'a StreamPace>,
    ) -> impl Future<Output = Result<Self::Answer, String>> + Send + 'a;
    /// Records the end of a run: its answer, or its error (retried after a back-off, or failed).
    fn finish(
        &self,
        item: &Self::Item,
        result: Result<Self::Answer, String>,
    ) -> impl Future<Output = ()> + Send;
    /// Puts a preempted item back in the queue, keeping its place.
    fn requeue(&self, item: &Self::Item, reason: String) -> impl Future<Output = ()> + Send;
}

/// Where an item will run.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// Not the managed server: run at once, ungated.
    Elsewhere(ChatEndpoint),
    /// The managed server, on the named model or its first loaded one.
    Managed {
        /// The model asked for, if any.
        model: Option<String>,
    },
}

/// Resolves where work runs (DESIGN §2.1): the endpoint it names, else `[reviews]`
/// `base_url`/`model`, else the managed server; an endpoint is "managed" on an exact
/// `host:port` match with the supervisor's state file.
#[derive(Clone)]
pub struct Targets {
    gate: Arc<IdleGate>,
    fallback: Option<ChatEndpoint>,
}

impl Targets {
    /// Targets over the gate's server reading and the configured fallback endpoint.
    pub fn new(gate: Arc<IdleGate>, reviews: &ReviewsConfig) -> Targets {
        let fallback = reviews.base_url.as_ref().map(|base_url| ChatEndpoint {
            base_url: base_url.clone(),
            api_key: reviews.api_key.clone(),
            model: reviews.model.clone().unwrap_or_default(),
        });
        Targets { gate, fallback }
    }

    /// Where work naming `runtime` runs.
    pub async fn resolve(&self, runtime: Option<&ChatEndpoint>) -> Target {
        let Some(endpoint) = runtime.or(self.fallback.as_ref()) else {
            return Target::Managed { model: None };
        };
        if self
            .gate
            .read_server()
            .await
            .is_managed_url(&endpoint.base_url)
        {
            let model = Some(endpoint.model.clone()).filter(|model| !model.is_empty());
            Target::Managed { model }
        } else {
            Target::Elsewhere(endpoint.clone())
        }
    }
}

/// A [`WorkKind`] with its types erased, so the dispatcher holds kinds of every type.
trait AnyKind: Send + Sync {
    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError>;
    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError>;
    fn refusal(&self, settings: &Settings) -> Option<&'static str>;
    fn drop_queued<'a>(&'a self, id: &'a str, reason: &'a str) -> BoxFuture<'a, bool>;
    fn run_managed<'a>(&'a self, run: ManagedRun<'a>) -> BoxFuture<'a, ()>;
    /// Claims `id` and gives back its run on `endpoint`, to be spawned beside the dispatcher.
    fn claim_elsewhere(
        self: Arc<Self>,
        id: String,
        endpoint: ChatEndpoint,
        gate: Arc<IdleGate>,
    ) -> BoxFuture<'static, Option<BoxFuture<'static, ()>>>;
}

impl<K: WorkKind> AnyKind for K {
    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError> {
        WorkKind::due(self, connection, now_ms)
    }

    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        WorkKind::next_retry_at(self, connection, now_ms)
    }

    fn refusal(&self, settings: &Settings) -> Option<&'static str> {
        WorkKind::refusal(self, settings)
    }

    fn drop_queued<'a>(&'a self, id: &'a str, reason: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(WorkKind::drop_queued(self, id, reason))
    }

    fn run_managed<'a>(&'a self, run: ManagedRun<'a>) -> BoxFuture<'a, ()> {
        Box::pin(run.run(self))
    }

    fn claim_elsewhere(
        self: Arc<Self>,
        id: String,
        endpoint: ChatEndpoint,
        gate: Arc<IdleGate>,
    ) -> BoxFuture<'static, Option<BoxFuture<'static, ()>>> {
        Box::pin(async move {
            let mut sleeps = gate.sleeps();
            let item = self.claim(&id).await?;
            let run: BoxFuture<'static, ()> = Box::pin(async move {
                // Not the managed server's, but a request cut by the machine's sleep would fail
                // and count against the item: it is requeued instead.
                let result = tokio::select! {
                    result = self.execute(&item, &endpoint, None) => result,
                    Ok(()) = sleeps.changed() => {
                        self.requeue(&item, Preemption::MachineSleeping.to_string()).await;
                        gate.notify_change();
                        return;
                    }
                };
                self.finish(&item, result).await;
                gate.notify_change();
            });
            Some(run)
        })
    }
}

/// One admitted run on the managed server, under the gate's permit.
struct ManagedRun<'a> {
    dispatcher: &'a Dispatcher,
    id: &'a str,
    endpoint: ChatEndpoint,
    permit: Permit,
    /// Deferred work gives way to live turns, other clients and run-now requests.
    yields: bool,
}

impl ManagedRun<'_> {
    async fn run<K: WorkKind>(mut self, kind: &K) {
        let dispatcher = self.dispatcher;
        let Some(item) = kind.claim(self.id).await else {
            return;
        };
        let doing = kind.doing(&item);
        dispatcher.set_activity(ActivityState::Running, Some(doing.clone()));
        // Work that yields is watched: it stops between prompt steps until the gate looked.
        let pace = if self.yields {
            StreamPace::with_checkpoints()
        } else {
            StreamPace::new()
        };
        let work = kind.execute(&item, &self.endpoint, Some(&pace));
        tokio::pin!(work);
        let result = if self.yields {
            tokio::select! {
                result = &mut work => result,
                preemption = self.permit.preempted(&pace) => {
                    // `work` is dropped here, which closes the stream and frees the server's slot.
                    kind.requeue(&item, preemption.to_string()).await;
                    dispatcher.gate.notify_change();
                    return;
                }
            }
        } else {
            // Runs to the end, unless the machine sleeps; a run-now request meanwhile waits for
            // it, and the Overview says so.
            let mut run_now_requests = dispatcher.gate.run_now_requests();
            loop {
                tokio::select! {
                    result = &mut work => break result,
                    Ok(()) = run_now_requests.changed() => dispatcher.set_activity(
                        ActivityState::Running,
                        Some(format!("{doing}; the work asked to run now starts when it ends")),
                    ),
                    () = self.permit.machine_sleeping() => {
                        kind.requeue(&item, Preemption::MachineSleeping.to_string()).await;
                        dispatcher.gate.notify_change();
                        return;
                    }
                }
            }
        };
        if result.is_ok() {
            dispatcher.gate.work_completed();
        }
        kind.finish(&item, result).await;
        dispatcher.gate.notify_change();
    }
}

/// The one dispatcher of learning work; share it as `Arc<Dispatcher>`.
pub struct Dispatcher {
    store: Store,
    gate: Arc<IdleGate>,
    targets: Targets,
    settings: watch::Receiver<Settings>,
    events: EventBus,
    kinds: Vec<Arc<dyn AnyKind>>,
    activity: watch::Sender<Activity>,
    /// Work running on other endpoints, beside the dispatcher.
    elsewhere: Mutex<JoinSet<()>>,
}

impl Dispatcher {
    /// A dispatcher with no kinds yet; add them with [`Dispatcher::with_kind`].
    pub fn new(
        store: Store,
        gate: Arc<IdleGate>,
        targets: Targets,
        settings: watch::Receiver<Settings>,
        events: EventBus,
    ) -> Dispatcher {
        Dispatcher {
            store,
            gate,
            targets,
            settings,
            events,
            kinds: Vec::new(),
            activity: watch::channel(Activity {
                state: ActivityState::Idle,
                reason: None,
            })
            .0,
            elsewhere: Mutex::default(),
        }
    }

    /// Adds a kind of work. Between items equally urgent and equally old, the kind added first
    /// runs first.
    pub fn with_kind<K: WorkKind>(mut self, kind: Arc<K>) -> Dispatcher {
        self.kinds.push(kind);
        self
    }

    /// What the dispatcher is doing now.
    pub fn activity(&self) -> Activity {
        self.activity.borrow().clone()
    }

    /// The dispatcher loop; returns when `shutdown` becomes true, stopping the work that runs
    /// on other endpoints (the next start requeues it).
    pub async fn run(self: Arc<Self>, mut shutdown: watch::Receiver<bool>) {
        let mut changes = self.gate.changed();
        let mut settings = self.settings.clone();
        while !*shutdown.borrow() {
            // Marked seen before looking, so a change that arrives while it looks wakes it
            // again rather than being lost.
            changes.mark_unchanged();
            settings.mark_unchanged();
            let recheck_at = match self.dispatch_once().await {
                Ok(Step::Again) => continue,
                Ok(Step::Wait(recheck_at)) => recheck_at,
                Err(err) => {
                    tracing::error!(error = %err, "learning dispatcher failed; retrying");
                    Some(Instant::now() + DISPATCH_ERROR_BACKOFF)
                }
            };
            let sleep = async {
                match recheck_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            // A closed settings or shutdown channel means the engine is gone: stop, rather than
            // wake on the closed channel again and again.
            let engine_gone = tokio::select! {
                _ = changes.changed() => false,
                changed = settings.changed() => changed.is_err(),
                changed = shutdown.changed() => changed.is_err(),
                _ = sleep => false,
            };
            if engine_gone {
                break;
            }
        }
        self.elsewhere_tasks().abort_all();
    }

    async fn dispatch_once(self: &Arc<Self>) -> Result<Step, StoreError> {
        self.reap_elsewhere();
        let settings = self.settings.borrow().clone();
        if settings.paused {
            self.set_activity(ActivityState::Paused, Some("learning is paused".into()));
            return Ok(Step::Wait(None));
        }
        if self.gate.is_sleeping() {
            // Nothing starts, on any endpoint; the wake is a change that looks again.
            self.set_activity(ActivityState::Paused, Some(crate::gate::SLEEP_HOLD.into()));
            return Ok(Step::Wait(None));
        }
        let now = self.gate.clock().now_ms();
        let kinds = self.kinds.clone();
        let (mut due, retry_at_ms) = self
            .store
            .call(move |c| {
                let mut due = Vec::new();
                let mut retry_at = None;
                for (index, kind) in kinds.iter().enumerate() {
                    due.extend(kind.due(c, now)?.into_iter().map(|item| (index, item)));
                    retry_at = earliest_ms(retry_at, kind.next_retry_at(c, now)?);
                }
                Ok((due, retry_at))
            })
            .await?;
        due.sort_by_key(|(index, item)| (!item.urgent, item.enqueued_at, *index));
        let retry_at = retry_at_ms.map(|at| Instant::now() + ms_until(now, at));
        for (index, item) in &due {
            if let Some(reason) = self.kinds[*index].refusal(&settings) {
                self.kinds[*index].drop_queued(&item.id, reason).await;
                return Ok(Step::Again);
            }
        }
        let mut managed = None;
        for (index, item) in due {
            match self.targets.resolve(item.runtime.as_ref()).await {
                Target::Elsewhere(endpoint) => {
                    let kind = self.kinds[index].clone();
                    // Claimed before the dispatcher looks again, so nothing starts twice.
                    if let Some(run) = kind
                        .claim_elsewhere(item.id, endpoint, self.gate.clone())
                        .await
                    {
                        self.elsewhere_tasks().spawn(run);
                    }
                }
                Target::Managed { model } => {
                    managed.get_or_insert((index, item, model));
                }
            }
        }
        let Some((index, item, model)) = managed else {
            match retry_at_ms {
                Some(at) => self.set_activity(
                    ActivityState::Waiting,
                    Some(format!(
                        "waiting: retrying after an error in {} s",
                        ms_until(now, at).as_secs().max(1)
                    )),
                ),
                None => self.set_activity(ActivityState::Idle, None),
            }
            return Ok(Step::Wait(retry_at));
        };
        let urgency = if item.urgent || settings.defer_mode == DeferMode::Never {
            Urgency::Now
        } else {
            Urgency::Deferred
        };
        match self
            .gate
            .admit(item.enqueued_at, model.as_deref(), urgency)
            .await
        {
            Admission::Wait(wait) => {
                let state = if wait.held {
                    ActivityState::Paused
                } else {
                    ActivityState::Waiting
                };
                self.set_activity(state, Some(wait.reason));
                Ok(Step::Wait(earliest(&[wait.recheck_at, retry_at])))
            }
            Admission::Go(permit, go) => {
                let endpoint = ChatEndpoint {
                    base_url: go.reading.base_url.clone().unwrap_or_default(),
                    api_key: go
                        .reading
                        .api_key
                        .as_ref()
                        .map(|key| key.expose().to_string()),
                    model: go.model,
                };
                let run = ManagedRun {
                    dispatcher: self,
                    id: &item.id,
                    endpoint,
                    permit,
                    yields: !go.aged && urgency == Urgency::Deferred,
                };
                self.kinds[index].run_managed(run).await;
                Ok(Step::Again)
            }
        }
    }

    fn elsewhere_tasks(&self) -> std::sync::MutexGuard<'_, JoinSet<()>> {
        self.elsewhere
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Forgets finished work of other endpoints, logging a panic.
    fn reap_elsewhere(&self) {
        let mut tasks = self.elsewhere_tasks();
        while let Some(finished) = tasks.try_join_next() {
            if let Err(err) = finished {
                tracing::error!(error = %err, "learning work on another endpoint panicked");
            }
        }
    }

    fn set_activity(&self, state: ActivityState, reason: Option<String>) {
        let activity = Activity { state, reason };
        let changed = self.activity.send_if_modified(|current| {
            if *current == activity {
                return false;
            }
            *current = activity.clone();
            true
        });
        if changed {
            self.events.emit(EngineEvent::LearningActivity { activity });
        }
    }
}

enum Step {
    Again,
    Wait(Option<Instant>),
}

fn earliest_ms(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The time from `now_ms` to `at_ms` on the engine's clock.
fn ms_until(now_ms: i64, at_ms: i64) -> Duration {
    Duration::from_millis((at_ms - now_ms).max(0) as u64)
}
