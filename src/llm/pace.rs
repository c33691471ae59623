//! The pace of our own streamed request, whose drops reveal another client on the server.
//!
//! llama-server puts every busy slot into one batch: while another client's prompt is being
//! processed, our stream's next token or prompt batch comes many times later than its own pace
//! (measured on llama.cpp: token gaps went from ~8 ms to 1.3–3 s, prompt batches slowed ~3×).
//! Watching that costs nothing, while asking `/slots` every second of a long review costs a
//! request a second. So running work watches its [`StreamPace`] and asks the server only when
//! the pace drops, to confirm ([`crate::gate::Permit::preempted`]).
//!
//! The client reports each step of its stream with [`StreamPace::advance`]: prompt tokens
//! processed (from llama-server's `prompt_progress`, asked for with `return_progress`) or
//! answer tokens. Each phase keeps its own baseline, because a prompt batch takes a hundred
//! times longer than a token.
//!
//! A pace can't see everything: a prompt step read while another client decodes comes back at
//! nearly its own pace, while the other client gets one token per step (measured on the real
//! server: the person's answer fell from ~150 to 9 tokens/s behind Lull's steps). And a reading
//! taken to judge a stall may be answered only after our step ended, when one busy slot is not
//! ours. So work read in steps also stops at a [`StreamPace::checkpoint`] between two steps,
//! when it holds no slot: its watcher reads the server, and any busy slot is another client's.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// No stall is declared before this much silence, however fast the stream was.
pub const STALL_FLOOR: Duration = Duration::from_millis(500);
/// A stream this many times slower than its own pace has stalled.
pub const STALL_FACTOR: f64 = 2.5;
/// False alarms widen the tolerance of their phase at most 2^this times.
const MAX_RELAXATIONS: u32 = 6;
/// Weight of the newest step in the running averages.
const EMA_WEIGHT: f64 = 0.2;

/// What the stream is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The server processes our prompt (units: prompt tokens).
    Prompt,
    /// The server writes the answer (units: tokens).
    Answer,
}

impl Phase {
    fn index(self) -> usize {
        match self {
            Phase::Prompt => 0,
            Phase::Answer => 1,
        }
    }
}

/// The pace of one streamed request; clone it to share between the client and the watcher.
#[derive(Clone)]
pub struct StreamPace {
    state: Arc<watch::Sender<PaceState>>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Baseline {
    /// Running average of the seconds between two steps.
    gap_s: Option<f64>,
    /// Running average of units per second.
    rate: Option<f64>,
    /// False alarms so far; each doubles the silence tolerated.
    relaxations: u32,
}

#[derive(Debug, Clone)]
struct PaceState {
    last_step: Instant,
    phase: Phase,
    baselines: [Baseline; 2],
    /// The last step came at a fraction of its phase's usual rate.
    slowed: bool,
    /// A stall was judged (see [`StreamPace::relax`]) and no step has come since.
    stall_judged: bool,
    /// The request waits at its checkpoints until a watcher clears them.
    checkpoints: bool,
    /// Checkpoints reached and cleared so far.
    reached: u64,
    cleared: u64,
}

impl PaceState {
    /// When the current silence becomes a stall.
    fn stall_deadline(&self) -> Instant {
        let baseline = self.baselines[self.phase.index()];
        let usual = baseline.gap_s.map_or(0.0, |gap| STALL_FACTOR * gap);
        let tolerated = STALL_FLOOR.as_secs_f64().max(usual) * f64::from(1 << baseline.relaxations);
        self.last_step + Duration::from_secs_f64(tolerated)
    }
}

fn average(previous: Option<f64>, sample: f64) -> f64 {
    previous.map_or(sample, |previous| {
        previous + EMA_WEIGHT * (sample - previous)
    })
}

impl Default for StreamPace {
    fn default() -> StreamPace {
        StreamPace::new()
    }
}

impl StreamPace {
    /// A pace whose stream starts now, in its prompt phase; its checkpoints hold nothing up.
    pub fn new() -> StreamPace {
        StreamPace::starting(false)
    }

    /// The same, for a request someone watches: it waits at each [`StreamPace::checkpoint`]
    /// until the watcher clears it (or drops the request).
    pub fn with_checkpoints() -> StreamPace {
        StreamPace::starting(true)
    }

    fn starting(checkpoints: bool) -> StreamPace {
        StreamPace {
            state: Arc::new(watch::Sender::new(PaceState {
                last_step: Instant::now(),
                phase: Phase::Prompt,
                baselines: [Baseline::default(); 2],
                slowed: false,
                stall_judged: false,
                checkpoints,
                reached: 0,
                cleared: 0,
            })),
        }
    }

    /// The request holds no slot of the server until its next step: with checkpoints, waits
    /// `settle` (for the server to take up what queued meanwhile), then until the watcher has
    /// looked at the server and cleared it.
    pub async fn checkpoint(&self, settle: Duration) {
        if !self.state.borrow().checkpoints {
            return;
        }
        tokio::time::sleep(settle).await;
        let mut reached = 0;
        self.state.send_modify(|state| {
            state.reached += 1;
            reached = state.reached;
        });
        let mut changes = self.state.subscribe();
        // The sender lives in `self`, so `wait_for` cannot fail here.
        let _ = changes.wait_for(|state| state.cleared >= reached).await;
    }

    /// Resolves once the request waits at a checkpoint.
    pub async fn checkpoint_reached(&self) {
        let mut changes = self.state.subscribe();
        let _ = changes
            .wait_for(|state| state.reached > state.cleared)
            .await;
    }

    /// Lets the request waiting at its checkpoint go on. Its silence counts from now: the
    /// watcher's reading is no step of the stream's.
    pub fn clear_checkpoint(&self) {
        self.state.send_modify(|state| {
            state.cleared = state.reached;
            state.last_step = Instant::now();
        });
    }

    /// The stream moved `units` forward in `phase` (zero: alive, with nothing to count yet).
    pub fn advance(&self, phase: Phase, units: u64) {
        let now = Instant::now();
        self.state.send_modify(|state| {
            let gap = (now - state.last_step).as_secs_f64();
            // The step that ends a silence already judged a stall is not judged again.
            let after_stall = std::mem::take(&mut state.stall_judged);
            state.last_step = now;
            if state.phase != phase {
                // A new phase has no pace of its own yet; its first step only starts the clock.
                state.phase = phase;
                return;
            }
            if units == 0 {
                return;
            }
            let rate = units as f64 / gap.max(1e-3);
            let baseline = &mut state.baselines[phase.index()];
            if let Some(usual) = baseline.rate {
                if !after_stall && gap >= STALL_FLOOR.as_secs_f64() && rate * STALL_FACTOR < usual {
                    state.slowed = true;
                }
            }
            baseline.gap_s = Some(average(baseline.gap_s, gap));
            baseline.rate = Some(average(baseline.rate, rate));
        });
    }

    /// Resolves once the stream stalls: silent for [`STALL_FACTOR`] times its usual gap (at
    /// least [`STALL_FLOOR`]), or a step came at under 1/[`STALL_FACTOR`] of its usual rate.
    pub async fn stalled(&self) {
        let mut changes = self.state.subscribe();
        loop {
            let (slowed, deadline) = {
                let state = changes.borrow_and_update();
                (state.slowed, state.stall_deadline())
            };
            if slowed {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return,
                // The sender lives in `self`, so `changed` cannot fail here.
                _ = changes.changed() => {}
            }
        }
    }

    /// The last stall was the stream's own doing (nobody else was on the server): tolerate twice
    /// the silence in this phase from now on, so a slow machine costs a few reads, not one per
    /// step.
    pub fn relax(&self) {
        self.state.send_modify(|state| {
            state.slowed = false;
            state.stall_judged = true;
            let baseline = &mut state.baselines[state.phase.index()];
            baseline.relaxations = (baseline.relaxations + 1).min(MAX_RELAXATIONS);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn steps(pace: &StreamPace, phase: Phase, n: usize, gap: Duration, units: u64) {
        for _ in 0..n {
            tokio::time::sleep(gap).await;
            pace.advance(phase, units);
        }
    }

    async fn stalls_within(pace: &StreamPace, limit: Duration) -> bool {
        tokio::time::timeout(limit, pace.stalled()).await.is_ok()
    }

    #[tokio::test(start_paused = true)]
    async fn a_steady_stream_never_stalls() {
        let pace = StreamPace::new();
        let watcher = {
            let pace = pace.clone();
            tokio::spawn(async move { pace.stalled().await })
        };
        steps(&pace, Phase::Answer, 400, Duration::from_millis(20), 1).await;
        assert!(!watcher.is_finished());
        watcher.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn silence_past_the_floor_is_a_stall() {
        let pace = StreamPace::new();
        steps(&pace, Phase::Answer, 20, Duration::from_millis(10), 1).await;
        let started = Instant::now();
        pace.stalled().await;
        let waited = started.elapsed();
        assert!(
            waited >= STALL_FLOOR && waited < STALL_FLOOR + Duration::from_millis(20),
            "{waited:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_phase_is_judged_by_its_own_pace() {
        // Prompt batches of 2048 tokens every 1.3 s: slow, but steady.
        let pace = StreamPace::new();
        pace.advance(Phase::Prompt, 0);
        steps(&pace, Phase::Prompt, 3, Duration::from_millis(1300), 2048).await;
        assert!(!stalls_within(&pace, Duration::from_millis(3000)).await);
        // The next batch carried another client's prompt: half the tokens, 3 s after the last.
        pace.advance(Phase::Prompt, 1024);
        assert!(stalls_within(&pace, Duration::from_millis(1)).await);
    }

    #[tokio::test(start_paused = true)]
    async fn relaxing_doubles_the_tolerated_silence() {
        let pace = StreamPace::new();
        steps(&pace, Phase::Answer, 5, Duration::from_millis(10), 1).await;
        pace.stalled().await;
        pace.relax();
        let started = Instant::now();
        pace.stalled().await;
        // The silence is now measured from the last step: 2 × the floor in all.
        assert!(started.elapsed() >= STALL_FLOOR - Duration::from_millis(1));
        assert!(started.elapsed() < STALL_FLOOR + Duration::from_millis(20));
    }

    #[tokio::test(start_paused = true)]
    async fn a_watched_request_waits_at_its_checkpoint_until_cleared() {
        // Unwatched: a checkpoint holds nothing up.
        let pace = StreamPace::new();
        let settle = Duration::from_millis(20);
        assert!(
            tokio::time::timeout(Duration::from_millis(1), pace.checkpoint(settle))
                .await
                .is_ok()
        );
        let pace = StreamPace::with_checkpoints();
        let started = Instant::now();
        let request = {
            let pace = pace.clone();
            tokio::spawn(async move {
                pace.checkpoint(settle).await;
                pace.checkpoint(Duration::ZERO).await;
            })
        };
        pace.checkpoint_reached().await;
        assert!(started.elapsed() >= settle, "reached after its settle");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(
            !request.is_finished(),
            "waits for its watcher, however long"
        );
        pace.clear_checkpoint();
        pace.checkpoint_reached().await;
        assert!(!request.is_finished(), "the second checkpoint waits too");
        // The watcher's time at the checkpoint is no silence of the stream's.
        assert!(!stalls_within(&pace, STALL_FLOOR - Duration::from_millis(1)).await);
        pace.clear_checkpoint();
        request.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn progress_after_a_stall_rearms_the_watch() {
        let pace = StreamPace::new();
        steps(&pace, Phase::Answer, 5, Duration::from_millis(10), 1).await;
        pace.stalled().await;
        pace.relax();
        steps(&pace, Phase::Answer, 50, Duration::from_millis(10), 1).await;
        assert!(!stalls_within(&pace, Duration::from_millis(900)).await);
        assert!(stalls_within(&pace, Duration::from_millis(200)).await);
    }
}
