//! The three learning policies a trace is replayed against, behind one small [`Learner`] trait
//! the driver calls as the agent would.
//!
//! - [`Immediate`]: every review starts when it is submitted and runs to its end.
//! - [`Hermes`]: a model of Hermes Agent's in-memory review idle queue (see its docs).
//! - [`Production`]: Lull's own engine ([`Engine::open_with`]) with the simulator's seams; a
//!   restart shuts the engine down and opens a new one on the same store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::server::{ReadingCost, SimLlm, SimProbe, SimServer, SIM_BASE_URL, SIM_MODEL};
use super::SimError;
use crate::config::{Config, Paths};
use crate::engine::{Engine, ReviewSubmission, Seams};
use crate::gate::EngineClock;
use crate::llm::{ChatEndpoint, ChatRequest, LlmClient};
use crate::server::{CachedProbe, ServerProbe, READING_CACHE_TTL};
use crate::store::Store;

/// What the driver tells a learning process, in trace order. Only reported turns reach it.
pub(crate) trait Learner {
    /// The agent reports that a turn starts.
    async fn turn_started(&mut self, turn: usize) -> Result<(), SimError>;
    /// The agent reports that a turn ended.
    async fn turn_finished(&mut self, turn: usize) -> Result<(), SimError>;
    /// The agent submits `snapshot` of `session` for review.
    async fn submit(&mut self, session: &str, snapshot: usize) -> Result<(), SimError>;
    /// The learning process restarts.
    async fn restart(&mut self) -> Result<(), SimError>;
    /// The run is over: stop everything.
    async fn stop(&mut self) -> Result<(), SimError>;
}

fn endpoint() -> ChatEndpoint {
    ChatEndpoint {
        base_url: SIM_BASE_URL.to_string(),
        api_key: None,
        model: SIM_MODEL.to_string(),
    }
}

/// What `immediate` and `hermes` send: the whole transcript, every time.
fn review_request(server: &SimServer, snapshot: usize) -> ChatRequest {
    ChatRequest {
        messages: server.transcript(snapshot),
        json_schema: None,
        max_tokens: 1024,
    }
}

/// No scheduling at all: each review runs at once, to its end, beside whatever else runs.
pub(crate) struct Immediate {
    server: Arc<SimServer>,
    incarnation: u64,
    llm: Arc<SimLlm>,
    running: JoinSet<()>,
}

impl Immediate {
    pub(crate) fn new(server: Arc<SimServer>) -> Immediate {
        Immediate {
            llm: Arc::new(SimLlm::new(server.clone(), 0)),
            server,
            incarnation: 0,
            running: JoinSet::new(),
        }
    }
}

impl Learner for Immediate {
    async fn turn_started(&mut self, _turn: usize) -> Result<(), SimError> {
        Ok(())
    }

    async fn turn_finished(&mut self, _turn: usize) -> Result<(), SimError> {
        Ok(())
    }

    async fn submit(&mut self, _session: &str, snapshot: usize) -> Result<(), SimError> {
        while self.running.try_join_next().is_some() {}
        let llm = self.llm.clone();
        let request = review_request(&self.server, snapshot);
        self.running.spawn(async move {
            let _ = llm.chat(&endpoint(), request, None).await;
        });
        Ok(())
    }

    async fn restart(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.running.abort_all();
        self.incarnation += 1;
        self.llm = Arc::new(SimLlm::new(self.server.clone(), self.incarnation));
        Ok(())
    }

    async fn stop(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.running.abort_all();
        Ok(())
    }
}

/// The engine clock's reading at the start of a simulated day (2026-01-05 08:00 UTC): fixed,
/// so the wall clock adds nothing to a seeded day, and a restart's engine goes on from its
/// predecessor's reading instead of jumping back to the wall time.
const DAY_STARTS_AT_MS: i64 = 1_767_600_000_000;

/// Hermes' review idle queue: how often it looks.
pub const HERMES_POLL: Duration = Duration::from_secs(5);
/// Hermes' review idle queue: quiet time after the agent's own last turn.
pub const HERMES_SETTLE: Duration = Duration::from_secs(15);
/// Hermes' review idle queue: an item this old dispatches regardless of the server and of the
/// agent's own turns (deferral may delay a review, never lose it).
pub const HERMES_MAX_AGE: Duration = Duration::from_secs(30 * 60);

/// A model of Hermes Agent's in-memory review idle queue, the design Lull's gate grows from.
///
/// - The queue lives in the agent's process: one item per session, the newest snapshot wins,
///   the item keeps its first enqueue time (as charitable to Hermes as Lull's own rule).
/// - A worker wakes every [`HERMES_POLL`]. When the oldest item is [`HERMES_MAX_AGE`] old it runs
///   it at once, reading nothing. Otherwise, with something queued, no live turn of its own and
///   [`HERMES_SETTLE`] since its own last turn, it reads the server — `GET /models`, then
///   `GET /slots` for each loaded model, uncached ([`ReadingCost::ModelsThenSlots`]) — and, when
///   no slot is processing, runs the oldest item. It reads nothing while it has nothing queued,
///   while its own turn is live or settling, or while a review runs.
/// - Only its own turns preempt a running review (it cannot see other clients once it runs); the
///   item always goes back, keeping its first enqueue time (the source has no requeue cap).
/// - A restart of the process loses the queue and whatever ran.
pub(crate) struct Hermes {
    server: Arc<SimServer>,
    incarnation: u64,
    shared: Arc<HermesShared>,
    worker: JoinHandle<()>,
}

struct HermesShared {
    state: Mutex<HermesState>,
    turn_starts: watch::Sender<u64>,
}

#[derive(Default)]
struct HermesState {
    queue: Vec<HermesItem>,
    live: HashSet<usize>,
    last_activity: Option<Instant>,
}

struct HermesItem {
    session: String,
    snapshot: usize,
    enqueued: Instant,
}

impl HermesShared {
    fn state(&self) -> std::sync::MutexGuard<'_, HermesState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Hermes {
    pub(crate) fn new(server: Arc<SimServer>) -> Hermes {
        let shared = Arc::new(HermesShared {
            state: Mutex::default(),
            turn_starts: watch::channel(0).0,
        });
        let worker = tokio::spawn(hermes_worker(server.clone(), 0, shared.clone()));
        Hermes {
            server,
            incarnation: 0,
            shared,
            worker,
        }
    }
}

async fn hermes_worker(server: Arc<SimServer>, incarnation: u64, shared: Arc<HermesShared>) {
    let probe = SimProbe::new(server.clone(), incarnation, ReadingCost::ModelsThenSlots);
    let llm = SimLlm::new(server.clone(), incarnation);
    loop {
        tokio::time::sleep(HERMES_POLL).await;
        let aged_out = {
            let state = shared.state();
            let now = Instant::now();
            let aged_out = state
                .queue
                .iter()
                .any(|item| now >= item.enqueued + HERMES_MAX_AGE);
            let settled = state
                .last_activity
                .is_none_or(|at| now >= at + HERMES_SETTLE);
            if !aged_out && (state.queue.is_empty() || !state.live.is_empty() || !settled) {
                continue;
            }
            aged_out
        };
        if !aged_out && !probe.read().await.idle {
            continue;
        }
        let item = {
            let mut state = shared.state();
            let Some(oldest) = (0..state.queue.len()).min_by_key(|&i| state.queue[i].enqueued)
            else {
                continue;
            };
            state.queue.remove(oldest)
        };
        let mut turn_starts = shared.turn_starts.subscribe();
        let endpoint = endpoint();
        tokio::select! {
            biased;
            _ = turn_starts.changed() => {
                // The chat future is dropped here: the request stops, and the item goes back.
                let mut state = shared.state();
                let newer_queued = state.queue.iter_mut().find(|queued| queued.session == item.session);
                match newer_queued {
                    Some(newer) => newer.enqueued = newer.enqueued.min(item.enqueued),
                    None => state.queue.push(item),
                }
            }
            _ = llm.chat(&endpoint, review_request(&server, item.snapshot), None) => {}
        }
    }
}

impl Learner for Hermes {
    async fn turn_started(&mut self, turn: usize) -> Result<(), SimError> {
        {
            let mut state = self.shared.state();
            state.live.insert(turn);
            state.last_activity = Some(Instant::now());
        }
        self.shared.turn_starts.send_modify(|n| *n += 1);
        Ok(())
    }

    async fn turn_finished(&mut self, turn: usize) -> Result<(), SimError> {
        let mut state = self.shared.state();
        if state.live.remove(&turn) {
            state.last_activity = Some(Instant::now());
        }
        Ok(())
    }

    async fn submit(&mut self, session: &str, snapshot: usize) -> Result<(), SimError> {
        let mut state = self.shared.state();
        match state.queue.iter_mut().find(|item| item.session == session) {
            Some(item) => item.snapshot = snapshot,
            None => state.queue.push(HermesItem {
                session: session.to_string(),
                snapshot,
                enqueued: Instant::now(),
            }),
        }
        Ok(())
    }

    async fn restart(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.worker.abort();
        self.incarnation += 1;
        *self.shared.state() = HermesState::default();
        self.worker = tokio::spawn(hermes_worker(
            self.server.clone(),
            self.incarnation,
            self.shared.clone(),
        ));
        Ok(())
    }

    async fn stop(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.worker.abort();
        Ok(())
    }
}

/// Lull's production engine, with the simulator's probe and LLM client as its seams.
///
/// The probe is wrapped in the production [`CachedProbe`] with [`READING_CACHE_TTL`], as
/// [`crate::server::ServerMonitor`] wraps its HTTP probe, so server requests count as they would.
pub(crate) struct Production {
    server: Arc<SimServer>,
    store: Store,
    config: Config,
    paths: Paths,
    incarnation: u64,
    engine: Engine,
    clock: EngineClock,
    leases: HashMap<usize, String>,
}

impl Production {
    pub(crate) async fn open(
        server: Arc<SimServer>,
        config: Config,
        paths: Paths,
    ) -> Result<Production, SimError> {
        let store = Store::open_in_memory().map_err(crate::EngineError::from)?;
        let clock = EngineClock::starting_at(DAY_STARTS_AT_MS);
        let engine = open_engine(&server, 0, &store, &config, &paths, clock.clone()).await?;
        // The day begins with Lull long up, past the settle window every start opens with;
        // restarts within the day pay it (an agent's turn does not end because Lull stopped).
        tokio::time::sleep(Duration::from_secs(config.scheduler.settle_s)).await;
        Ok(Production {
            server,
            store,
            config,
            paths,
            incarnation: 0,
            engine,
            clock,
            leases: HashMap::new(),
        })
    }
}

async fn open_engine(
    server: &Arc<SimServer>,
    incarnation: u64,
    store: &Store,
    config: &Config,
    paths: &Paths,
    clock: EngineClock,
) -> Result<Engine, SimError> {
    let probe: Arc<dyn ServerProbe> = Arc::new(CachedProbe::new(
        SimProbe::new(server.clone(), incarnation, ReadingCost::Production),
        READING_CACHE_TTL,
    ));
    let seams = Seams {
        server: probe,
        server_changes: None,
        llm: Arc::new(SimLlm::new(server.clone(), incarnation)),
        store: Some(store.clone()),
        embedders: Arc::new(crate::routing::BuiltInEmbedderOnly),
        clock: Some(clock),
        events: Default::default(),
        host: None,
    };
    Ok(Engine::open_with(config.clone(), paths.clone(), seams).await?)
}

impl Learner for Production {
    async fn turn_started(&mut self, turn: usize) -> Result<(), SimError> {
        let lease = self.engine.start_turn();
        self.leases.insert(turn, lease);
        Ok(())
    }

    async fn turn_finished(&mut self, turn: usize) -> Result<(), SimError> {
        if let Some(lease) = self.leases.remove(&turn) {
            // A lease taken before a restart is unknown to the new engine; the agent's client
            // fails soft on that, and so does this.
            let _ = self.engine.finish_turn(&lease);
        }
        Ok(())
    }

    async fn submit(&mut self, session: &str, snapshot: usize) -> Result<(), SimError> {
        self.engine
            .submit_review(ReviewSubmission {
                session_key: session.to_string(),
                messages: self.server.transcript(snapshot),
                focus: None,
                snapshot_at: None,
                runtime: None,
            })
            .await?;
        Ok(())
    }

    async fn restart(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.engine.shutdown().await;
        self.incarnation += 1;
        self.leases.clear();
        // The next engine's clock goes on from where this one's stopped, as wall time would.
        self.clock = EngineClock::starting_at(self.clock.now_ms());
        self.engine = open_engine(
            &self.server,
            self.incarnation,
            &self.store,
            &self.config,
            &self.paths,
            self.clock.clone(),
        )
        .await?;
        Ok(())
    }

    async fn stop(&mut self) -> Result<(), SimError> {
        self.server.kill(self.incarnation);
        self.engine.shutdown().await;
        Ok(())
    }
}
