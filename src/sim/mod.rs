//! `lull simulate`: a day of user activity replayed against the production scheduler on a
//! virtual clock, beside two other ways of scheduling the same learning work.
//!
//! Lull's claim is that learning almost never takes the GPU from a person's live turn, loses
//! nothing, and waits little. This module measures it:
//!
//! - [`trace`] holds the input: a [`Trace`] of live turns (reported by the agent, or of other
//!   clients that only `/slots` reveals), review submissions and process restarts, drawn by the
//!   seeded [`trace::generate`] or read from a JSON-lines file ([`Trace::from_file`]; the
//!   format is documented there).
//! - [`run`] replays the trace once per policy, each on its own current-thread tokio runtime
//!   whose clock starts paused and auto-advances to the next timer, so a day takes well under a
//!   second. A simulated managed server counts slots, requests and overlaps; every policy reaches
//!   it only through the seams production code uses (a [`crate::server::ServerProbe`] and an
//!   [`crate::llm::LlmClient`]).
//! - The policies: `immediate` (run every review at once, to its end), `hermes` (a model of
//!   Hermes Agent's in-memory review idle queue) and `lull` — the production [`crate::Engine`]
//!   with its gate, durable queue and dispatcher, unchanged; a restart shuts it down and opens a
//!   new engine on the same store.
//! - [`Simulation`] holds the figures per policy ([`PolicyMetrics`]), serialises to the
//!   `"simulation"` object of `bench/results/latest.json`, renders a table and checks the
//!   targets ([`Simulation::targets`]).
//!
//! ```
//! let trace = lull::sim::trace::generate(7, 2.0).unwrap();
//! let simulation = lull::sim::run(&trace).unwrap();
//! assert_eq!(simulation.policies.lull.lost, 0);
//! ```

mod metrics;
mod policies;
mod server;
pub mod trace;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

pub use metrics::{PolicyDetail, PolicyMetrics};
pub use policies::{HERMES_MAX_AGE, HERMES_POLL, HERMES_SETTLE};
pub use server::{SIM_BASE_URL, SIM_MODEL};
pub use trace::{Trace, TraceError, TraceEvent, TraceSummary};

use crate::config::{Config, Paths, SchedulerConfig};
use policies::{Hermes, Immediate, Learner, Production};
use server::SimServer;

/// Silence after the trace's end before the figures are taken, so late work can still finish
/// (twice Lull's default `max_age`).
pub const DRAIN: Duration = Duration::from_secs(3600);
/// DESIGN §7: `lull`'s delivered-only p50 delay at most this many times `hermes'`, on the median
/// day.
pub const DELIVERED_P50_RATIO: f64 = 1.25;
/// Seed of `lull simulate` without `--seed`, and of the benchmark.
pub const DEFAULT_SEED: u64 = 42;
/// Hours of `lull simulate` without `--hours`, and of the benchmark.
pub const DEFAULT_HOURS: f64 = 8.0;

/// Why a simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The trace could not be read or drawn.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The production engine failed to open or to take a submission.
    #[error("the engine failed during the simulation")]
    Engine(#[from] crate::EngineError),
    /// The virtual-clock runtime could not be built.
    #[error("cannot start the simulation's runtime")]
    Runtime(#[from] std::io::Error),
}

/// What `lull simulate` was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The generator's seed (ignored with `trace_file`).
    pub seed: u64,
    /// The generated day's length in hours (ignored with `trace_file`).
    pub hours: f64,
    /// A JSON-lines trace to replay instead of a generated one.
    pub trace_file: Option<PathBuf>,
    /// The `lull` policy's `[scheduler]` settings (the defaults unless asked otherwise), so a
    /// person can see what another settle window would have done to the same day.
    pub scheduler: SchedulerConfig,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            seed: DEFAULT_SEED,
            hours: DEFAULT_HOURS,
            trace_file: None,
            scheduler: SchedulerConfig::default(),
        }
    }
}

impl Options {
    /// The trace these options name.
    pub fn trace(&self) -> Result<Trace, SimError> {
        Ok(match &self.trace_file {
            Some(path) => Trace::from_file(path)?,
            None => trace::generate(self.seed, self.hours)?,
        })
    }
}

/// The figures of one trace under each policy: the `"simulation"` object of `latest.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    /// What was replayed.
    pub trace: TraceSummary,
    /// The figures per policy.
    pub policies: Policies,
}

/// One [`PolicyMetrics`] per policy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Policies {
    /// Every review at once, to its end.
    pub immediate: PolicyMetrics,
    /// Hermes Agent's in-memory review idle queue.
    pub hermes: PolicyMetrics,
    /// Lull's production scheduler.
    pub lull: PolicyMetrics,
}

/// One of the claims the simulation checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The claim, in words.
    pub claim: &'static str,
    /// Whether this run bears it out.
    pub holds: bool,
    /// The figures compared.
    pub figures: String,
}

/// Replays the options' trace on a thread of its own; for callers already inside a runtime.
pub async fn run_detached(options: Options) -> Result<Simulation, SimError> {
    tokio::task::spawn_blocking(move || run_with(&options.trace()?, &options.scheduler))
        .await
        .expect("the simulation thread does not panic")
}

/// Replays `trace` under each policy, `lull` with the default settings. Builds its own
/// runtimes: call it outside any runtime.
pub fn run(trace: &Trace) -> Result<Simulation, SimError> {
    run_with(trace, &SchedulerConfig::default())
}

/// [`run`] with `lull`'s `[scheduler]` settings given.
pub fn run_with(trace: &Trace, scheduler: &SchedulerConfig) -> Result<Simulation, SimError> {
    Ok(Simulation {
        trace: trace.summary(),
        policies: Policies {
            immediate: on_virtual_clock(trace, &Policy::Immediate)?,
            hermes: on_virtual_clock(trace, &Policy::Hermes)?,
            lull: on_virtual_clock(trace, &Policy::Lull(scheduler.clone()))?,
        },
    })
}

/// The `lull` policy alone on `trace` with these settings: what a sweep of settings needs, the
/// other two policies not depending on them.
pub fn run_lull_with(
    trace: &Trace,
    scheduler: &SchedulerConfig,
) -> Result<PolicyMetrics, SimError> {
    on_virtual_clock(trace, &Policy::Lull(scheduler.clone()))
}

#[derive(Debug, Clone)]
enum Policy {
    Immediate,
    Hermes,
    Lull(SchedulerConfig),
}

fn on_virtual_clock(trace: &Trace, policy: &Policy) -> Result<PolicyMetrics, SimError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()?;
    runtime.block_on(async {
        let server = SimServer::new();
        match policy {
            Policy::Immediate => drive(trace, &server, Immediate::new(server.clone())).await?,
            Policy::Hermes => drive(trace, &server, Hermes::new(server.clone())).await?,
            Policy::Lull(scheduler) => {
                let data_dir = ScratchDir::new()?;
                let paths = Paths {
                    config_file: data_dir.0.join("config.toml"),
                    data_dir: data_dir.0.clone(),
                };
                // The simulation measures reviews: its modelled model answers as a reviewer, so
                // the candidates it yields are not drafted (README, the simulator's limits).
                let mut config = Config {
                    scheduler: scheduler.clone(),
                    ..Config::default()
                };
                config.learning.max_drafts_per_run = 0;
                let production = Production::open(server.clone(), config, paths).await?;
                drive(trace, &server, production).await?;
            }
        }
        Ok(metrics::measure(&server.tally()))
    })
}

/// One moment of the replay; at equal times they apply in this order.
#[derive(Debug)]
enum Step<'a> {
    TurnEnd {
        turn: usize,
        reported: bool,
    },
    Review {
        session: &'a str,
        turns: u32,
        decode: Duration,
    },
    Restart,
    TurnStart {
        turn: usize,
        reported: bool,
        duration: Duration,
    },
}

impl Step<'_> {
    fn rank(&self) -> u8 {
        match self {
            Step::TurnEnd { .. } => 0,
            Step::Review { .. } => 1,
            Step::Restart => 2,
            Step::TurnStart { .. } => 3,
        }
    }
}

/// Plays the trace to `learner` and the simulated server, then the drain window.
async fn drive<L: Learner>(
    trace: &Trace,
    server: &Arc<SimServer>,
    mut learner: L,
) -> Result<(), SimError> {
    let mut steps: Vec<(f64, Step<'_>)> = Vec::new();
    for (turn, event) in trace.events.iter().enumerate() {
        match event {
            TraceEvent::Turn {
                at,
                duration,
                reported,
                ..
            } => {
                let reported = *reported;
                steps.push((
                    *at,
                    Step::TurnStart {
                        turn,
                        reported,
                        duration: Duration::from_secs_f64(*duration),
                    },
                ));
                steps.push((at + duration, Step::TurnEnd { turn, reported }));
            }
            TraceEvent::Review {
                at,
                session,
                turns,
                decode_s,
            } => {
                let decode = decode_s.unwrap_or_else(|| trace::decode_seconds(*turns));
                steps.push((
                    *at,
                    Step::Review {
                        session,
                        turns: *turns,
                        decode: Duration::from_secs_f64(decode),
                    },
                ));
            }
            TraceEvent::Restart { at } => steps.push((*at, Step::Restart)),
            TraceEvent::End { .. } => {}
        }
    }
    // Stable: equal times keep trace order within a rank.
    steps.sort_by(|(a, x), (b, y)| a.total_cmp(b).then(x.rank().cmp(&y.rank())));

    let origin = Instant::now();
    for (at, step) in steps {
        tokio::time::sleep_until(origin + Duration::from_secs_f64(at)).await;
        match step {
            Step::TurnStart {
                turn,
                reported,
                duration,
            } => {
                // The agent tells Lull before it sends its prompt to the server.
                if reported {
                    learner.turn_started(turn).await?;
                }
                server.turn_started(turn, duration);
            }
            Step::TurnEnd { turn, reported } => {
                server.turn_finished(turn);
                if reported {
                    learner.turn_finished(turn).await?;
                }
            }
            Step::Review {
                session,
                turns,
                decode,
            } => {
                let snapshot = server.submit(session, turns, decode);
                learner.submit(session, snapshot).await?;
            }
            Step::Restart => learner.restart().await?,
        }
    }
    tokio::time::sleep_until(origin + Duration::from_secs_f64(trace.end_s) + DRAIN).await;
    learner.stop().await
}

/// A private temporary directory for the engine's data dir, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lull-sim-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Simulation {
    /// DESIGN §7's targets, checked on this run. The first four must hold on every day; the
    /// last is DESIGN's for the median day, checked here on this one (the frontier bench and
    /// `tests/sim_targets.rs` take the median over days).
    pub fn targets(&self) -> Vec<Target> {
        let Policies {
            immediate,
            hermes,
            lull,
        } = &self.policies;
        vec![
            Target {
                claim: "lull contention ≤ 1 % of immediate's",
                holds: lull.contention_s <= 0.01 * immediate.contention_s,
                figures: format!(
                    "{:.1} s vs {:.1} s ({:.2} %)",
                    lull.contention_s,
                    immediate.contention_s,
                    100.0 * lull.contention_s / immediate.contention_s.max(f64::MIN_POSITIVE)
                ),
            },
            Target {
                claim: "lull loses 0 reviews",
                holds: lull.lost == 0,
                figures: format!("{} (hermes {})", lull.lost, hermes.lost),
            },
            Target {
                claim: "lull wasted decode ≤ hermes'",
                holds: lull.wasted_s <= hermes.wasted_s,
                figures: format!("{:.1} s vs {:.1} s", lull.wasted_s, hermes.wasted_s),
            },
            Target {
                claim: "lull requests per review delivered < hermes'",
                holds: lull.requests_per_covered_review() < hermes.requests_per_covered_review(),
                figures: {
                    let split = |m: &PolicyMetrics| {
                        let (readings, steps, chats) = m.requests_per_covered_review_split();
                        format!(
                            "{readings:.2} readings + {steps:.2} prompt steps + {chats:.2} chat"
                        )
                    };
                    format!(
                        "{:.2} vs {:.2} (lull {}; hermes {}; {} vs {} requests, {} vs {} delivered)",
                        lull.requests_per_covered_review(),
                        hermes.requests_per_covered_review(),
                        split(lull),
                        split(hermes),
                        lull.server_requests,
                        hermes.server_requests,
                        lull.delivered,
                        hermes.delivered
                    )
                },
            },
            Target {
                claim: "lull delivered-only p50 delay ≤ 1.25× hermes' (DESIGN: on the median day)",
                holds: lull.delay_delivered_p50_s
                    <= DELIVERED_P50_RATIO * hermes.delay_delivered_p50_s,
                figures: format!(
                    "{:.1} s vs {:.1} s ({:.2}×; with lost reviews counted: {:.1} s vs {:.1} s)",
                    lull.delay_delivered_p50_s,
                    hermes.delay_delivered_p50_s,
                    self.delivered_p50_ratio(),
                    lull.delay_p50_s,
                    hermes.delay_p50_s
                ),
            },
        ]
    }

    /// `lull`'s delivered-only p50 delay over `hermes'`.
    pub fn delivered_p50_ratio(&self) -> f64 {
        let Policies { hermes, lull, .. } = &self.policies;
        lull.delay_delivered_p50_s / hermes.delay_delivered_p50_s.max(f64::MIN_POSITIVE)
    }

    /// The report as text: the trace, a row per policy, the targets.
    pub fn table(&self) -> String {
        let t = &self.trace;
        let origin = match &t.origin {
            trace::TraceOrigin::Generated { seed, hours } => {
                format!("generated day (seed {seed}, {hours} h)")
            }
            trace::TraceOrigin::File { path } => format!("trace {path}"),
        };
        let mut text = format!(
            "{origin}: {} reported turns, {} turns of other clients, {:.1} slot-hours busy, \
             {} reviews in {} sessions, {} restarts; drain {} min\n\n",
            t.reported_turns,
            t.foreign_turns,
            t.busy_hours,
            t.reviews,
            t.sessions,
            t.restarts,
            DRAIN.as_secs() / 60
        );
        text += "policy     contention_s  lost  delivered  delay_p50_s  delay_p95_s  delivered_p50_s  delivered_p95_s  wasted_s  server_requests  (readings [while running, between steps] = their requests + chat requests + prompt steps; preemptions)\n";
        for (name, m) in [
            ("immediate", &self.policies.immediate),
            ("hermes", &self.policies.hermes),
            ("lull", &self.policies.lull),
        ] {
            text += &format!(
                "{name:<9} {:>13.1} {:>5} {:>10} {:>12.1} {:>12.1} {:>16.1} {:>16.1} {:>9.1} {:>16}  ({} [{}, {}] = {} + {} + {}; {})\n",
                m.contention_s,
                m.lost,
                m.delivered,
                m.delay_p50_s,
                m.delay_p95_s,
                m.delay_delivered_p50_s,
                m.delay_delivered_p95_s,
                m.wasted_s,
                m.server_requests,
                m.detail.probe_reads,
                m.detail.probe_reads_running,
                m.detail.probe_reads_between_steps,
                m.detail.probe_requests,
                m.detail.llm_requests,
                m.detail.prompt_requests,
                m.detail.preemptions,
            );
        }
        text += "\ntargets:\n";
        for target in self.targets() {
            text += &format!(
                "  [{}] {}: {}\n",
                if target.holds { "ok" } else { "MISSED" },
                target.claim,
                target.figures
            );
        }
        text
    }
}
