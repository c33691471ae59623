//! The simulated managed server, and the seams every policy reaches it through.
//!
//! [`SimServer`] keeps the truth on the virtual clock: how many live turns hold a slot, which
//! learning requests decode, and the meters (contention, wasted decode, requests, completions).
//! A policy talks to it only through a [`SimProbe`] (a [`ServerProbe`] whose readings cost
//! what the policy's own probe asks, see [`ReadingCost`]) and a [`SimLlm`] (an [`LlmClient`] that decodes for the review's modelled time and stops
//! the moment its future is dropped, as llama-server does on its next write).
//!
//! Both belong to one *incarnation* of the learning process. [`SimServer::kill`] ends an
//! incarnation as a process exit would: its requests stop decoding (counted apart from wasted
//! decode, which is preemption's), and any later read or request of that incarnation never
//! answers, so the dead process's tasks go quiet forever instead of acting on the shared store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use crate::llm::{
    ChatEndpoint, ChatMessage, ChatReply, ChatRequest, LlmClient, LlmError, Phase, StreamPace,
};
use crate::server::{
    ModelReading, ModelStatus, ReadingFuture, ServerMode, ServerProbe, ServerReading, ServerState,
};

/// The URL the `immediate` and `hermes` policies send reviews to (the simulated LLM ignores it).
pub const SIM_BASE_URL: &str = "http://127.0.0.1:8080/v1";
/// Its one model.
pub const SIM_MODEL: &str = "sim-model";
/// Models the simulated server has loaded: [`SIM_MODEL`] alone.
const SIM_LOADED_MODELS: u64 = 1;
/// What a review answers: valid, and with nothing to learn (the simulator measures scheduling).
const SIM_ANSWER: &str = r#"{"candidates":[]}"#;
/// Time between two streamed tokens of a learning request while it has the GPU to itself.
const TOKEN_STEP: Duration = Duration::from_millis(100);
/// How much longer our token gap is while another slot decodes beside ours (both in one batch).
/// Measured on the real llama-server (see [`OtherSlot`]): 1.7–2.1× beside the answer to a
/// ~120-token prompt, 2.2–2.4× beside the answer to a ~1.8k-token one (a longer context to
/// attend over); the median of the six runs is taken.
const DECODE_SLOWDOWN: f64 = 2.2;
/// Share of a live turn spent processing its prompt, before its answer streams. Measured on the
/// real llama-server (see [`OtherSlot`]): 0.46–0.49 of a turn of a ~120-token prompt and a
/// 32-token answer, 0.92–0.93 with a ~1.8k-token prompt; the short prompt's is taken (the
/// shorter silence, the kinder to a stall detector). A real answer is longer than 32 tokens,
/// which would shorten the share; on this machine any prompt of more than ~70 new tokens still
/// silences our stream past the pace's 500 ms floor.
const PROMPT_SHARE: f64 = 0.47;
/// Starts every transcript message, followed by `<session number>:<message index>`.
const MESSAGE_MARK: &str = "lull-sim-message ";

/// What a request shows of a transcript: its session number, the highest message index and the
/// number of messages, read from the marks wherever the prompt quotes them.
fn shown_messages(request: &ChatRequest) -> Option<(usize, usize, usize)> {
    let mut seen = None;
    for message in &request.messages {
        for (at, _) in message.content.match_indices(MESSAGE_MARK) {
            let rest = &message.content[at + MESSAGE_MARK.len()..];
            let number = |text: &str| -> Option<(usize, usize)> {
                let digits = text.chars().take_while(char::is_ascii_digit).count();
                Some((text[..digits].parse().ok()?, digits))
            };
            let (session, width) = number(rest)?;
            let (index, _) = number(rest[width..].strip_prefix(':')?)?;
            let (_, last, count) = seen.unwrap_or((session, index, 0));
            seen = Some((session, last.max(index), count + 1));
        }
    }
    seen
}

/// One submitted snapshot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Its session.
    pub session: String,
    /// When the agent submitted it.
    pub submitted: Instant,
    /// Turns in it.
    pub turns: u32,
    /// How long reviewing all of it decodes.
    pub decode: Duration,
}

impl Snapshot {
    /// Messages in its transcript: a person's message and the agent's answer per turn.
    fn n_messages(&self) -> usize {
        (2 * self.turns as usize).max(1)
    }

    /// How long a review decodes that is shown `shown` of its messages: the fixed part of
    /// [`super::trace::DECODE_BASE_S`] plus the per-message rest in proportion.
    fn decode_of(&self, shown: usize) -> Duration {
        let total = self.n_messages();
        if shown >= total {
            return self.decode;
        }
        let base = self
            .decode
            .min(Duration::from_secs_f64(super::trace::DECODE_BASE_S));
        base + (self.decode - base).mul_f64(shown as f64 / total as f64)
    }
}

/// What the server's other slots do to our stream's pace: the stall model.
///
/// Based on `scripts/llama/measure_stall.py` (issue 16): the real llama-server with the real
/// model (SmolLM2-135M-Instruct Q4_1), two slots, one decode thread, on the 2-core development
/// machine with no build running (figures in `bench/results/stall.json`, three runs per prompt
/// size). Our stream decoded alone at a token every 15–17 ms (median); while another client's
/// prompt was processed our stream got **no token at all** until that prompt was read: one gap
/// of 0.83–0.87 s for a ~120-token prompt (read in 0.83–0.87 s), of 14.1–16.6 s for a
/// ~1.8k-token one (read in 14.1–16.6 s; with ~3.6k tokens, 3–4 gaps of up to 22–26 s over
/// 42–48 s, `bench/results/stall-3600-tokens.json`); while the other client then decoded its
/// answer beside ours, our gaps were 1.7–2.4× our pace alone. So the model: silent while a live
/// turn reads its prompt (its first [`PROMPT_SHARE`]), [`DECODE_SLOWDOWN`] × [`TOKEN_STEP`]
/// while it answers or another learning request decodes, [`TOKEN_STEP`] alone. The measured
/// machine is a CPU and the modelled one a laptop GPU, so the model takes shares and ratios from
/// the measurement, not seconds. The completion time is not stretched: the model keeps the
/// review's modelled decode time, and only the stream's pace shows the contention.
///
/// What it means for Lull's pace detector: a turn's prompt phase here is 0.9 s or more (the
/// shortest turn is 2 s), past the detector's 500 ms floor, so Lull still notices every turn of
/// another client — as it would on the real server, where any prompt of more than ~70 new tokens
/// silenced our stream that long. What the model leaves out is a turn whose prompt the server
/// has nearly all cached (a follow-up in one conversation): its silence can be under the floor,
/// and then only the 1.7–2.4× slower answer phase shows, which the detector does not call a
/// stall.
enum OtherSlot {
    /// Nobody else is on the server.
    Idle,
    /// Another slot decodes beside ours.
    Decoding,
    /// A live turn's prompt is being read until `until`: our stream is silent.
    ReadingPrompt { until: Instant },
}

struct Learning {
    incarnation: u64,
    started: Instant,
}

#[derive(Default)]
struct Meters {
    contention_s: f64,
    wasted_s: f64,
    killed_s: f64,
    probe_reads: u64,
    probe_requests: u64,
    probe_reads_running: u64,
    llm_requests: u64,
    preemptions: u64,
}

struct State {
    /// Live turns (reported or not), each with the moment its prompt is read and its answer
    /// begins to stream.
    live: HashMap<usize, Instant>,
    learning: HashMap<u64, Learning>,
    next_request: u64,
    last_change: Instant,
    dead: HashSet<u64>,
    snapshots: Vec<Snapshot>,
    /// `(snapshot, when)` for every review that decoded to the end.
    completions: Vec<(usize, Instant)>,
    meters: Meters,
}

impl State {
    /// Books the time since the last change: every decoding request overlapping a live turn.
    fn book(&mut self, now: Instant) {
        if !self.live.is_empty() {
            let span = (now - self.last_change).as_secs_f64();
            self.meters.contention_s += span * self.learning.len() as f64;
        }
        self.last_change = now;
    }
}

/// What a policy's run measured, before per-snapshot coverage is worked out.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Decode-seconds of learning requests overlapping a live turn.
    pub contention_s: f64,
    /// Decode-seconds thrown away by preemption.
    pub wasted_s: f64,
    /// Decode-seconds cut off by process restarts (reported apart from `wasted_s`).
    pub killed_s: f64,
    /// `GET /slots`-style reads of the server.
    pub probe_reads: u64,
    /// The HTTP requests those readings cost.
    pub probe_requests: u64,
    /// Those made while a learning request decoded (checks for preemption).
    pub probe_reads_running: u64,
    /// Review requests sent to the server.
    pub llm_requests: u64,
    /// Requests dropped before their end by preemption.
    pub preemptions: u64,
    /// Every submitted snapshot.
    pub snapshots: Vec<Snapshot>,
    /// `(snapshot, when)` for every review that decoded to the end.
    pub completions: Vec<(usize, Instant)>,
    /// When the tally was taken: the end of the run, drain window included.
    pub ended: Instant,
}

/// The simulated managed server; share it as `Arc<SimServer>`.
pub struct SimServer {
    state: Mutex<State>,
}

impl SimServer {
    /// An idle server, ready, with one loaded model.
    pub fn new() -> Arc<SimServer> {
        Arc::new(SimServer {
            state: Mutex::new(State {
                live: HashMap::new(),
                learning: HashMap::new(),
                next_request: 0,
                last_change: Instant::now(),
                dead: HashSet::new(),
                snapshots: Vec::new(),
                completions: Vec::new(),
                meters: Meters::default(),
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Live turn `turn` (reported or not) takes a slot for `duration`: its prompt first (the
    /// first [`PROMPT_SHARE`] of it), then its answer.
    pub fn turn_started(&self, turn: usize, duration: Duration) {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        state
            .live
            .insert(turn, now + duration.mul_f64(PROMPT_SHARE));
    }

    /// Live turn `turn` frees its slot.
    pub fn turn_finished(&self, turn: usize) {
        let mut state = self.state();
        state.book(Instant::now());
        state.live.remove(&turn);
    }

    /// Records a submitted snapshot of `turns` turns and returns its number.
    pub fn submit(&self, session: &str, turns: u32, decode: Duration) -> usize {
        let mut state = self.state();
        state.snapshots.push(Snapshot {
            session: session.to_string(),
            submitted: Instant::now(),
            turns,
            decode,
        });
        state.snapshots.len() - 1
    }

    /// The transcript the agent submits for `snapshot`. A session's transcripts grow: each is the
    /// one before plus new turns, message for message. Every message is marked with its session
    /// and index, so the simulated model knows what a request reviews and how much it shows.
    pub fn transcript(&self, snapshot: usize) -> Vec<ChatMessage> {
        let state = self.state();
        let wanted = &state.snapshots[snapshot];
        let session = state
            .snapshots
            .iter()
            .position(|other| other.session == wanted.session)
            .expect("the snapshot's own session");
        (0..wanted.n_messages())
            .map(|index| ChatMessage {
                role: if index % 2 == 0 { "user" } else { "assistant" }.into(),
                content: format!("{MESSAGE_MARK}{session}:{index}"),
            })
            .collect()
    }

    /// Ends an incarnation of the learning process: its decoding requests stop now.
    pub fn kill(&self, incarnation: u64) {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        state.dead.insert(incarnation);
        let doomed: Vec<u64> = state
            .learning
            .iter()
            .filter(|(_, learning)| learning.incarnation == incarnation)
            .map(|(id, _)| *id)
            .collect();
        for id in doomed {
            let learning = state.learning.remove(&id).expect("listed above");
            state.meters.killed_s += (now - learning.started).as_secs_f64();
        }
    }

    /// What the other slots do to one learning request's stream now.
    fn other_slots(&self) -> OtherSlot {
        let now = Instant::now();
        let state = self.state();
        if let Some(read) = state.live.values().copied().filter(|&end| end > now).max() {
            return OtherSlot::ReadingPrompt { until: read };
        }
        if !state.live.is_empty() || state.learning.len() > 1 {
            return OtherSlot::Decoding;
        }
        OtherSlot::Idle
    }

    fn is_dead(&self, incarnation: u64) -> bool {
        self.state().dead.contains(&incarnation)
    }

    /// What a probe sees now; counts one reading of `requests` HTTP requests.
    fn read(&self, requests: u64) -> ServerReading {
        let mut state = self.state();
        state.meters.probe_reads += 1;
        state.meters.probe_requests += requests;
        if !state.learning.is_empty() {
            state.meters.probe_reads_running += 1;
        }
        let busy_slots = state.live.len() + state.learning.len();
        ServerReading {
            state: ServerState::Ready,
            // No `base_url`: the engine's routing service would take one as an invitation to
            // ask the real network for embeddings when it opens. The simulated reviews name no
            // runtime, so nothing else needs it (the simulated LLM ignores the URL it is sent).
            base_url: None,
            models: vec![ModelReading {
                id: SIM_MODEL.to_string(),
                status: ModelStatus::Loaded,
                busy_slots,
            }],
            idle: busy_slots == 0,
            reason: (busy_slots > 0).then(|| format!("{busy_slots} slot(s) busy")),
            mode: Some(ServerMode::Single),
            api_key: None,
        }
    }

    /// Starts decoding a review of the latest snapshot of `session` (numbered as in
    /// [`SimServer::transcript`]) that ends at message `last`, showing `shown` of its messages.
    /// Returns the request's id, the snapshot and the decode time; `None` for no such snapshot.
    fn begin(
        &self,
        (session, last, shown): (usize, usize, usize),
        incarnation: u64,
    ) -> Option<(u64, usize, Duration)> {
        let now = Instant::now();
        let mut state = self.state();
        let session = &state.snapshots.get(session)?.session;
        let snapshot = state
            .snapshots
            .iter()
            .rposition(|s| &s.session == session && s.n_messages() == last + 1)?;
        let decode = state.snapshots[snapshot].decode_of(shown);
        state.book(now);
        state.meters.llm_requests += 1;
        let id = state.next_request;
        state.next_request += 1;
        state.learning.insert(
            id,
            Learning {
                incarnation,
                started: now,
            },
        );
        Some((id, snapshot, decode))
    }

    /// The request decoded to its end; false if its process died meanwhile.
    fn complete(&self, id: u64, snapshot: usize) -> bool {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        if state.learning.remove(&id).is_none() {
            return false;
        }
        state.completions.push((snapshot, now));
        true
    }

    /// The client dropped the request before its end (preemption): the decode so far is waste.
    fn dropped(&self, id: u64) {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        if let Some(learning) = state.learning.remove(&id) {
            state.meters.wasted_s += (now - learning.started).as_secs_f64();
            state.meters.preemptions += 1;
        }
    }

    /// The meters and the record, at the end of a run.
    pub fn tally(&self) -> Tally {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        Tally {
            contention_s: state.meters.contention_s,
            wasted_s: state.meters.wasted_s,
            killed_s: state.meters.killed_s,
            probe_reads: state.meters.probe_reads,
            probe_requests: state.meters.probe_requests,
            probe_reads_running: state.meters.probe_reads_running,
            llm_requests: state.meters.llm_requests,
            preemptions: state.meters.preemptions,
            snapshots: state.snapshots.clone(),
            completions: state.completions.clone(),
            ended: now,
        }
    }
}

/// What one reading costs in HTTP requests.
#[derive(Debug, Clone, Copy)]
pub enum ReadingCost {
    /// Hermes' poll, as its source has it: `GET /models`, then `GET /slots` once per loaded
    /// model, nothing cached between polls (the simulated server has one loaded model: two).
    ModelsThenSlots,
    /// What Lull's [`crate::server::HttpProbe`] asks a ready single-model server started
    /// without `--sleep-idle-seconds` (llama-server's default, and the simulated server's):
    /// `/health`, `/models`, `/slots` the first time, then `/slots` alone (it remembers the model
    /// list for the server's process, and its command line says it never sleeps, so no
    /// `/props`; `tests/server_probe.rs` checks both counts).
    Production,
}

/// One incarnation's view of the server.
pub struct SimProbe {
    server: Arc<SimServer>,
    incarnation: u64,
    cost: ReadingCost,
    first: std::sync::atomic::AtomicBool,
}

impl SimProbe {
    /// The probe of process `incarnation`, whose readings cost `cost`.
    pub fn new(server: Arc<SimServer>, incarnation: u64, cost: ReadingCost) -> SimProbe {
        SimProbe {
            server,
            incarnation,
            cost,
            first: std::sync::atomic::AtomicBool::new(true),
        }
    }
}

impl ServerProbe for SimProbe {
    fn read(&self) -> ReadingFuture<'_> {
        if self.server.is_dead(self.incarnation) {
            return Box::pin(std::future::pending());
        }
        let first = self.first.swap(false, std::sync::atomic::Ordering::Relaxed);
        let requests = match (self.cost, first) {
            (ReadingCost::ModelsThenSlots, _) => 1 + SIM_LOADED_MODELS,
            (ReadingCost::Production, true) => 3,
            (ReadingCost::Production, false) => 1,
        };
        Box::pin(std::future::ready(self.server.read(requests)))
    }
}

/// One incarnation's LLM client: decodes for the snapshot's modelled time.
pub struct SimLlm {
    server: Arc<SimServer>,
    incarnation: u64,
}

impl SimLlm {
    /// The client of process `incarnation`.
    pub fn new(server: Arc<SimServer>, incarnation: u64) -> SimLlm {
        SimLlm {
            server,
            incarnation,
        }
    }
}

impl SimLlm {
    /// Decodes for `decode`, advancing `pace` by a token per step as the stream would.
    async fn stream(&self, decode: Duration, pace: &StreamPace) {
        let end = Instant::now() + decode;
        loop {
            let now = Instant::now();
            if now >= end {
                return;
            }
            let next = match self.server.other_slots() {
                OtherSlot::ReadingPrompt { until } => until.max(now + TOKEN_STEP),
                OtherSlot::Decoding => now + TOKEN_STEP.mul_f64(DECODE_SLOWDOWN),
                OtherSlot::Idle => now + TOKEN_STEP,
            };
            tokio::time::sleep_until(next.min(end)).await;
            pace.advance(Phase::Answer, 1);
        }
    }
}

/// Reports the request as dropped unless it finished.
struct DropGuard {
    server: Arc<SimServer>,
    id: u64,
    finished: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.server.dropped(self.id);
        }
    }
}

impl LlmClient for SimLlm {
    fn chat<'a>(
        &'a self,
        endpoint: &'a ChatEndpoint,
        request: ChatRequest,
        pace: Option<&'a StreamPace>,
    ) -> BoxFuture<'a, Result<ChatReply, LlmError>> {
        Box::pin(async move {
            if self.server.is_dead(self.incarnation) {
                return std::future::pending().await;
            }
            let protocol = |message: &str| LlmError::Protocol {
                url: endpoint.base_url.clone(),
                message: message.to_string(),
            };
            let shown = shown_messages(&request)
                .ok_or_else(|| protocol("the request shows no simulated transcript"))?;
            let (id, snapshot, decode) = self
                .server
                .begin(shown, self.incarnation)
                .ok_or_else(|| protocol("unknown simulated snapshot"))?;
            let mut guard = DropGuard {
                server: self.server.clone(),
                id,
                finished: false,
            };
            match pace {
                Some(pace) => self.stream(decode, pace).await,
                None => tokio::time::sleep(decode).await,
            }
            guard.finished = true;
            if !self.server.complete(id, snapshot) {
                // The process died while this decoded: a dead process never answers.
                return std::future::pending().await;
            }
            Ok(ChatReply {
                text: SIM_ANSWER.to_string(),
                prompt_tokens: None,
                completion_tokens: None,
            })
        })
    }
}
