//! The simulated managed server, and the seams every policy reaches it through.
//!
//! [`SimServer`] keeps the truth on the virtual clock: how many live turns hold a slot, which
//! learning requests hold one (reading their prompt, or decoding their answer), and the meters
//! (contention, wasted work, requests, completions). A policy talks to it only through a
//! [`SimProbe`] (a [`ServerProbe`] whose readings cost what the policy's own probe asks, see
//! [`ReadingCost`]) and a [`SimLlm`] (an [`LlmClient`] that sends the requests the production
//! client sends: with a pace, the prompt in steps first, as `llm::prefill` plans them, then the
//! chat request; without one, the chat request alone).
//!
//! A learning request's work is its prompt, read first, then its answer ([`Work`]). What a
//! dropped request still costs follows llama-server: an answer stops at the next write, but a
//! prompt being read is read to its end, so the slot stays busy for the rest of the step (Lull)
//! or of the whole prompt (`hermes`, `immediate`) after its client went.
//!
//! Both seams belong to one *incarnation* of the learning process. [`SimServer::kill`] ends an
//! incarnation as a process exit would: its connections close, so its answers stop and its
//! prompts are read to their end (counted apart from wasted work, which is preemption's), and
//! any later read or request of that incarnation never answers, so the dead process's tasks go
//! quiet forever instead of acting on the shared store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use crate::llm::{
    ChatEndpoint, ChatMessage, ChatReply, ChatRequest, LlmClient, LlmError, Phase, PromptSteps,
    StreamPace,
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
/// Prompt tokens the modelled server reads a second, while no live turn's prompt is read beside
/// them. The modelled server is a laptop GPU with a 7–8B model: published `llama-bench` runs of
/// Llama 3.1 8B Q4_K_M give a `pp512` of 1,194 tokens/s on an RTX 2070 Max-Q and 2,365 on an
/// RTX 4070 Laptop GPU. 2,048 lies between, and it puts Lull's steps on whole milliseconds of the
/// virtual clock (the first, [`crate::llm::PREFILL_STEP_TOKENS`], in 125 ms; then 1,024 tokens in
/// [`crate::llm::PREFILL_STEP_TIME`]). The count of Lull's steps hardly depends on it: a step is
/// sized to half a second of reading, so a review pays about one request per half second of its
/// prompt, whatever the rate.
const PROMPT_TOKENS_PER_S: f64 = 2048.0;
/// What a review request costs the server besides its reading and decoding (loopback HTTP, the
/// JSON of a step's token list, the slot's cache lookup). Not measured here; a real request
/// costs a few milliseconds, and this takes the least the virtual clock resolves. It matters in
/// that it is not zero: a step of [`crate::llm::PREFILL_STEP_TIME`] then takes a little longer
/// than that, as on any real server, instead of ending on the very instant a pace of the same
/// length would be judged.
const REQUEST_OVERHEAD: Duration = Duration::from_millis(1);
/// Prompt tokens left below which a read is done (the clock's arithmetic is in floats).
const READ_DONE: f64 = 1e-6;
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
    /// How long reviewing all of it takes on an idle server: its prompt read, then its answer.
    pub decode: Duration,
}

impl Snapshot {
    /// Messages in its transcript: a person's message and the agent's answer per turn.
    fn n_messages(&self) -> usize {
        (2 * self.turns as usize).max(1)
    }

    /// What a review costs the server that is shown `shown` of its messages (see [`Work`]).
    fn work_of(&self, shown: usize) -> Work {
        let total = self.n_messages();
        let base = self
            .decode
            .min(Duration::from_secs_f64(super::trace::DECODE_BASE_S));
        let transcript = (self.decode - base).mul_f64(shown.min(total) as f64 / total as f64);
        Work {
            prompt_tokens: (transcript.as_secs_f64() * PROMPT_TOKENS_PER_S).round() as usize,
            answer: base,
        }
    }
}

/// What one review request has the server do: read its prompt, then decode its answer.
///
/// The trace gives a review's time as [`super::trace::DECODE_BASE_S`] plus
/// [`super::trace::DECODE_PER_TURN_S`] a turn, the part that grows with the transcript. The part
/// that grows is the prompt: the transcript the review shows, read at [`PROMPT_TOKENS_PER_S`]
/// (4,096 tokens a turn, a turn with tool output), in proportion to the messages the request
/// shows. The fixed part is the answer, a short JSON object (the review's own instructions are a
/// few hundred tokens, a tenth of a second of reading, and are left in it). On an idle server a
/// review takes the trace's time, as before the prompt was modelled (and [`REQUEST_OVERHEAD`] a
/// request); Lull's count of prompt steps follows the prompt's share of it, one request per half
/// second of reading.
#[derive(Debug, Clone, Copy)]
struct Work {
    /// Prompt tokens the server reads before the answer.
    prompt_tokens: usize,
    /// How long the answer decodes.
    answer: Duration,
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
/// the measurement, not seconds. An answer's time is not stretched: the model keeps the
/// review's modelled answer time, and only the stream's pace shows the contention.
///
/// Our own prompt follows the same measurement: llama-server evaluates a batch whole before any
/// slot in it moves on, and a live turn's prompt fills the batch, so our prompt reading pauses
/// while a live turn reads its prompt and goes on at [`PROMPT_TOKENS_PER_S`] otherwise (beside a
/// slot that decodes, one token of theirs joins a batch of hundreds of ours). A prompt is a count
/// of tokens, so a pause stretches its reading; that is how a step of Lull's shows a turn to its
/// pace (the step ends late). Learning prompts beside each other (several of `immediate`'s at
/// once) are not modelled: each reads at the full rate. Once its client has gone, a prompt is
/// read to its end at the full rate ahead of the turn's: the person's prompt waits behind it,
/// which is the cost measured on the real server (`tests/real_llama.rs`: busy 0.33–0.54 s after
/// a drop with the prompt in steps, 16.8–22.5 s with a 2,000-word prompt sent whole and dropped
/// 1.5 s in), and the overlap the contention meter counts.
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

/// A learning request holding a slot, from its first request (a prompt step, or the chat
/// request) to its end, except while [`OnServer::Between`] two steps.
struct Learning {
    incarnation: u64,
    started: Instant,
    on_server: OnServer,
}

impl Learning {
    fn holds_slot(&self) -> bool {
        !matches!(self.on_server, OnServer::Between)
    }
}

/// What a learning request has the server do now.
#[derive(Debug, Clone, Copy)]
enum OnServer {
    /// Read `left` more prompt tokens, for its client.
    Reading { left: f64 },
    /// Decode its answer for its client, or nothing for an instant between two of its requests
    /// (a step's end and the next step's start): dropped now, it frees the slot at once.
    Answering,
    /// Between two prompt steps, stopped at its checkpoint: it holds no slot, so a reading
    /// does not count it busy.
    Between,
    /// Its client went (`cut`) while the server read its prompt: the server reads on until
    /// `until`, then frees the slot.
    Orphaned { until: Instant, cut: Cut },
}

/// Why a request's client went before its end.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// The policy dropped it (a preemption): its work so far is waste.
    Preempted,
    /// The process died: its work so far is lost to the restart.
    Killed,
}

/// A request a review sends to the server, for the meters.
#[derive(Debug, Clone, Copy)]
enum ReviewRequest {
    /// `/apply-template`, `/tokenize`, or one `/completion` step of the prompt.
    PromptStep,
    /// The chat request.
    Chat,
}

#[derive(Default)]
struct Meters {
    contention_s: f64,
    wasted_s: f64,
    killed_s: f64,
    probe_reads: u64,
    probe_requests: u64,
    probe_reads_running: u64,
    probe_reads_between_steps: u64,
    llm_requests: u64,
    prompt_requests: u64,
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
    /// Brings the books up to `now`: the overlap of learning with live turns, the prompt tokens
    /// read, and the orphaned reads that ended (each at its own moment).
    fn book(&mut self, now: Instant) {
        while let Some((id, until, cut)) = self
            .learning
            .iter()
            .filter_map(|(id, learning)| match learning.on_server {
                OnServer::Orphaned { until, cut } if until <= now => Some((*id, until, cut)),
                _ => None,
            })
            .min_by_key(|&(_, until, _)| until)
        {
            self.book_span(until);
            let learning = self.learning.remove(&id).expect("found above");
            self.meters.cut_off(&learning, until, cut);
        }
        self.book_span(now);
    }

    /// Books the time since the last change, during which nothing started or ended.
    fn book_span(&mut self, to: Instant) {
        let to = to.max(self.last_change);
        if !self.live.is_empty() {
            let span = (to - self.last_change).as_secs_f64();
            self.meters.contention_s += span * self.learning_on_slots() as f64;
        }
        let reading_from = self
            .prompt_read_by_a_turn_until()
            .map_or(self.last_change, |until| until.clamp(self.last_change, to));
        let read = PROMPT_TOKENS_PER_S * (to - reading_from).as_secs_f64();
        for learning in self.learning.values_mut() {
            if let OnServer::Reading { left } = &mut learning.on_server {
                *left = (*left - read).max(0.0);
            }
        }
        self.last_change = to;
    }

    /// Learning requests holding a slot now (not waiting between two steps).
    fn learning_on_slots(&self) -> usize {
        self.learning.values().filter(|l| l.holds_slot()).count()
    }

    /// Until when the live turns' prompts are read (our prompts pause till then); may be past.
    fn prompt_read_by_a_turn_until(&self) -> Option<Instant> {
        self.live.values().copied().max()
    }

    /// The client of request `id` goes now: an answer stops at once, a prompt being read is read
    /// on to its end, alone. Returns whether the client still had the request (not orphaned yet).
    fn abandon(&mut self, id: u64, now: Instant, cut: Cut) -> bool {
        let Some(learning) = self.learning.get_mut(&id) else {
            return false;
        };
        match learning.on_server {
            OnServer::Orphaned { .. } => false,
            OnServer::Reading { left } if left > READ_DONE => {
                learning.on_server = OnServer::Orphaned {
                    until: now + Duration::from_secs_f64(left / PROMPT_TOKENS_PER_S),
                    cut,
                };
                true
            }
            OnServer::Reading { .. } | OnServer::Answering | OnServer::Between => {
                let learning = self.learning.remove(&id).expect("found above");
                self.meters.cut_off(&learning, now, cut);
                true
            }
        }
    }
}

impl Meters {
    /// A request whose client went freed its slot at `end`: what it did is waste or lost.
    fn cut_off(&mut self, learning: &Learning, end: Instant, cut: Cut) {
        let seconds = (end - learning.started).as_secs_f64();
        match cut {
            Cut::Preempted => self.wasted_s += seconds,
            Cut::Killed => self.killed_s += seconds,
        }
    }
}

/// What a policy's run measured, before per-snapshot coverage is worked out.
#[derive(Debug, Clone)]
pub struct Tally {
    /// Seconds of learning requests on the server (reading their prompt, even after their
    /// client went, or decoding) overlapping a live turn, summed over the requests.
    pub contention_s: f64,
    /// Seconds of learning thrown away by preemption, from a request's start until the server
    /// let its slot go (a dropped prompt's reading included).
    pub wasted_s: f64,
    /// The same cut off by process restarts (reported apart from `wasted_s`).
    pub killed_s: f64,
    /// `GET /slots`-style reads of the server.
    pub probe_reads: u64,
    /// The HTTP requests those readings cost.
    pub probe_requests: u64,
    /// Those made while a learning request decoded (checks for preemption).
    pub probe_reads_running: u64,
    /// Those made while a learning request waited at its checkpoint between two prompt steps.
    pub probe_reads_between_steps: u64,
    /// Chat requests of reviews sent to the server: one per review run.
    pub llm_requests: u64,
    /// The requests that had the server read a review's prompt in steps before its chat
    /// request (`/apply-template`, `/tokenize`, one `/completion` a step): Lull's only.
    pub prompt_requests: u64,
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

    /// Ends an incarnation of the learning process: its connections close, so its answers stop
    /// now and the prompts it had the server read are read to their end.
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
            state.abandon(id, now, Cut::Killed);
        }
    }

    /// What the other slots do to one learning request's stream now.
    fn other_slots(&self) -> OtherSlot {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        if let Some(read) = state.live.values().copied().filter(|&end| end > now).max() {
            return OtherSlot::ReadingPrompt { until: read };
        }
        if !state.live.is_empty() || state.learning_on_slots() > 1 {
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
        // An orphaned prompt that ended since the last change no longer holds its slot.
        state.book(Instant::now());
        state.meters.probe_reads += 1;
        state.meters.probe_requests += requests;
        if state.learning.values().any(|l| !l.holds_slot()) {
            state.meters.probe_reads_between_steps += 1;
        } else if !state.learning.is_empty() {
            state.meters.probe_reads_running += 1;
        }
        let busy_slots = state.live.len() + state.learning_on_slots();
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

    /// Gives a review of the latest snapshot of `session` (numbered as in
    /// [`SimServer::transcript`]) that ends at message `last`, showing `shown` of its messages, a
    /// slot. Returns the request's id, the snapshot and its work; `None` for no such snapshot.
    fn begin(
        &self,
        (session, last, shown): (usize, usize, usize),
        incarnation: u64,
    ) -> Option<(u64, usize, Work)> {
        let now = Instant::now();
        let mut state = self.state();
        let session = &state.snapshots.get(session)?.session;
        let snapshot = state
            .snapshots
            .iter()
            .rposition(|s| &s.session == session && s.n_messages() == last + 1)?;
        let work = state.snapshots[snapshot].work_of(shown);
        state.book(now);
        let id = state.next_request;
        state.next_request += 1;
        state.learning.insert(
            id,
            Learning {
                incarnation,
                started: now,
                on_server: OnServer::Answering,
            },
        );
        Some((id, snapshot, work))
    }

    /// A review sends `request`: counted, and its [`REQUEST_OVERHEAD`] waited out.
    async fn send(&self, request: ReviewRequest) {
        {
            let mut state = self.state();
            match request {
                ReviewRequest::PromptStep => state.meters.prompt_requests += 1,
                ReviewRequest::Chat => state.meters.llm_requests += 1,
            }
        }
        tokio::time::sleep(REQUEST_OVERHEAD).await;
    }

    /// Has the server read `tokens` more of request `id`'s prompt for its client: at
    /// [`PROMPT_TOKENS_PER_S`], paused while a live turn's prompt is read (see [`OtherSlot`]).
    /// False if the client lost the request meanwhile (its process died).
    async fn read_prompt(&self, id: u64, tokens: usize) -> bool {
        {
            let mut state = self.state();
            state.book(Instant::now());
            match state.learning.get_mut(&id) {
                Some(learning)
                    if matches!(learning.on_server, OnServer::Answering | OnServer::Between) =>
                {
                    learning.on_server = OnServer::Reading {
                        left: tokens as f64,
                    };
                }
                _ => return false,
            }
        }
        loop {
            let done_at_the_earliest = {
                let now = Instant::now();
                let mut state = self.state();
                state.book(now);
                let resumes = state
                    .prompt_read_by_a_turn_until()
                    .map_or(now, |until| until.max(now));
                let Some(learning) = state.learning.get_mut(&id) else {
                    return false;
                };
                match learning.on_server {
                    OnServer::Reading { left } if left > READ_DONE => {
                        // A turn that starts meanwhile pauses the read: then this wakes early
                        // and waits again.
                        resumes + Duration::from_secs_f64(left / PROMPT_TOKENS_PER_S)
                    }
                    OnServer::Reading { .. } => {
                        learning.on_server = OnServer::Answering;
                        return true;
                    }
                    OnServer::Answering | OnServer::Between | OnServer::Orphaned { .. } => {
                        return false
                    }
                }
            };
            tokio::time::sleep_until(done_at_the_earliest).await;
        }
    }

    /// Request `id` read its step and waits at its checkpoint, on no slot.
    fn step_read(&self, id: u64) {
        let mut state = self.state();
        state.book(Instant::now());
        if let Some(learning) = state.learning.get_mut(&id) {
            if matches!(learning.on_server, OnServer::Answering) {
                learning.on_server = OnServer::Between;
            }
        }
    }

    /// The request decoded to its end; false if its process died meanwhile.
    fn complete(&self, id: u64, snapshot: usize) -> bool {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        match state.learning.get(&id) {
            Some(learning) if matches!(learning.on_server, OnServer::Answering) => {}
            _ => return false,
        }
        state.learning.remove(&id);
        state.completions.push((snapshot, now));
        true
    }

    /// The client dropped the request before its end (preemption): its work so far is waste,
    /// and a prompt being read is read to its end first.
    fn dropped(&self, id: u64) {
        let now = Instant::now();
        let mut state = self.state();
        state.book(now);
        if state.abandon(id, now, Cut::Preempted) {
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
            probe_reads_between_steps: state.meters.probe_reads_between_steps,
            llm_requests: state.meters.llm_requests,
            prompt_requests: state.meters.prompt_requests,
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

/// One incarnation's LLM client: sends the requests [`crate::llm::HttpLlmClient`] sends, and
/// has the server read and decode for the snapshot's modelled work.
pub struct SimLlm {
    server: Arc<SimServer>,
    incarnation: u64,
    /// The server's prompt pace as this process last saw it (the client's `ServerPaces`).
    prompt_rate: std::sync::Mutex<Option<f64>>,
}

impl SimLlm {
    /// The client of process `incarnation`.
    pub fn new(server: Arc<SimServer>, incarnation: u64) -> SimLlm {
        SimLlm {
            server,
            incarnation,
            prompt_rate: std::sync::Mutex::new(None),
        }
    }
}

impl SimLlm {
    /// What `llm::prefill` asks of the server before the chat request of work with a pace: the
    /// prompt templated and tokenized (two requests, each its [`REQUEST_OVERHEAD`]), then one
    /// `/completion` a step, planned by the client's own [`PromptSteps`], each advancing `pace`
    /// and stopping at its checkpoint.
    /// Returns the prompt tokens read (the chat request reads the rest), or `None` if the
    /// process died meanwhile.
    async fn read_in_steps(&self, id: u64, tokens: usize, pace: &StreamPace) -> Option<usize> {
        self.server.send(ReviewRequest::PromptStep).await;
        self.server.send(ReviewRequest::PromptStep).await;
        let remembered = *self.prompt_rate.lock().expect("prompt rate lock");
        let mut steps = PromptSteps::new(tokens, remembered);
        while let Some(step) = steps.upcoming() {
            let started = Instant::now();
            self.server.send(ReviewRequest::PromptStep).await;
            if !self.server.read_prompt(id, step.tokens).await {
                return None;
            }
            pace.advance(Phase::Prompt, step.tokens as u64);
            steps.took(started.elapsed(), step.tokens);
            *self.prompt_rate.lock().expect("prompt rate lock") = steps.rate();
            self.server.step_read(id);
            // The simulated server has no queue that a reading could overtake.
            pace.checkpoint(Duration::ZERO).await;
        }
        Some(steps.read())
    }

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
            let (id, snapshot, work) = self
                .server
                .begin(shown, self.incarnation)
                .ok_or_else(|| protocol("unknown simulated snapshot"))?;
            let mut guard = DropGuard {
                server: self.server.clone(),
                id,
                finished: false,
            };
            let read_in_steps = match pace {
                Some(pace) => self.read_in_steps(id, work.prompt_tokens, pace).await,
                None => Some(0),
            };
            let Some(read_in_steps) = read_in_steps else {
                // The process died during a step: a dead process sends nothing more.
                return std::future::pending().await;
            };
            self.server.send(ReviewRequest::Chat).await;
            let rest = work.prompt_tokens - read_in_steps;
            if !self.server.read_prompt(id, rest).await {
                // The process died while the server read the prompt: it never answers.
                return std::future::pending().await;
            }
            match pace {
                Some(pace) => {
                    pace.advance(Phase::Prompt, rest as u64);
                    self.stream(work.answer, pace).await;
                }
                None => tokio::time::sleep(work.answer).await,
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
