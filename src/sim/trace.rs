//! User-activity traces: a seeded generator of a plausible working day, and a JSON-lines format
//! so a person can replay a trace of their own.
//!
//! # The JSON-lines format
//!
//! One JSON object per line; blank lines and lines starting with `#` are skipped. Times are
//! seconds from the start of the trace (fractions allowed); lines may come in any order.
//!
//! ```text
//! {"kind":"turn","at":12.0,"session":"s1","duration":18.5,"reported":true}
//! {"kind":"turn","at":40.0,"session":"editor","duration":4.0,"reported":false}
//! {"kind":"review","at":30.5,"session":"s1","turns":4}
//! {"kind":"review","at":95.0,"session":"s1","turns":9,"decode_s":70}
//! {"kind":"restart","at":3600}
//! {"kind":"end","at":28800}
//! ```
//!
//! - `turn`: a live turn occupies one slot of the managed server from `at` for `duration`
//!   seconds. `reported: true` means the agent tells the learning process about it
//!   (`POST /v1/turns/start` and `finish`); `false` is another client of the same server (an
//!   editor plugin, another agent profile) that only `GET /slots` reveals.
//! - `review`: the agent submits a snapshot of `session`'s conversation for review at `at`
//!   (usually a turn's end). `turns` is the snapshot's length; the review takes `decode_s`
//!   seconds on an idle server (its prompt read, then its answer), by default
//!   [`decode_seconds`]`(turns)`.
//! - `restart`: the learning process restarts (quit and relaunch, or a crash): Lull's process, or
//!   the Hermes-style agent process that holds the `hermes` policy's queue.
//! - `end`: the end of the trace (optional; by default the end of the last turn or review).
//!
//! Every policy then gets a drain window ([`crate::sim::DRAIN`]) of silence after the end, so
//! "lost" means lost, not merely late.

use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Seconds of a review that do not grow with its snapshot: the answer (the simulated server
/// decodes it after the prompt).
pub const DECODE_BASE_S: f64 = 20.0;
/// Seconds of a review per turn of its snapshot: a longer transcript is a longer prompt, which
/// the simulated server reads before the answer.
pub const DECODE_PER_TURN_S: f64 = 2.0;
/// Longest modelled time of one review.
pub const DECODE_MAX_S: f64 = 180.0;

/// How long a review of a `turns`-turn snapshot takes on an idle managed server, when the trace
/// does not say: `20 s + 2 s × turns`, at most 180 s (a laptop GPU reading a growing transcript
/// and writing a short JSON answer; `sim::server`'s `Work` splits it into prompt and answer).
pub fn decode_seconds(turns: u32) -> f64 {
    (DECODE_BASE_S + DECODE_PER_TURN_S * f64::from(turns)).min(DECODE_MAX_S)
}

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceEvent {
    /// A live turn on the managed server.
    Turn {
        /// Start, seconds from the trace's start.
        at: f64,
        /// The agent session or client it belongs to.
        session: String,
        /// How long it holds its slot, in seconds.
        duration: f64,
        /// Whether the agent reports it to the learning process.
        reported: bool,
    },
    /// The agent submits a conversation snapshot for review.
    Review {
        /// When, seconds from the trace's start.
        at: f64,
        /// The agent session; one queue slot per session.
        session: String,
        /// Turns in the snapshot.
        turns: u32,
        /// Seconds the review takes on an idle server; default [`decode_seconds`]`(turns)`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decode_s: Option<f64>,
    },
    /// The learning process restarts.
    Restart {
        /// When, seconds from the trace's start.
        at: f64,
    },
    /// The end of the trace.
    End {
        /// When, seconds from the trace's start.
        at: f64,
    },
}

impl TraceEvent {
    /// When the event happens, seconds from the trace's start.
    pub fn at(&self) -> f64 {
        match self {
            TraceEvent::Turn { at, .. }
            | TraceEvent::Review { at, .. }
            | TraceEvent::Restart { at }
            | TraceEvent::End { at } => *at,
        }
    }

    /// When the event is over (a turn's end; the moment itself for the others).
    fn until(&self) -> f64 {
        match self {
            TraceEvent::Turn { at, duration, .. } => at + duration,
            other => other.at(),
        }
    }
}

/// Where a trace came from, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum TraceOrigin {
    /// [`generate`] with this seed and length.
    Generated {
        /// The generator's seed.
        seed: u64,
        /// The trace's length in hours.
        hours: f64,
    },
    /// A JSON-lines file.
    File {
        /// Its path as given.
        path: String,
    },
}

/// A user-activity trace: what happens on the managed server and in the agent, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Where it came from.
    pub origin: TraceOrigin,
    /// The events, sorted by time.
    pub events: Vec<TraceEvent>,
    /// The trace's end, seconds from its start.
    pub end_s: f64,
}

/// Why a trace file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file cannot be read.
    #[error("cannot read trace {path}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a trace event.
    #[error("trace {path}, line {line}: {message} (see `lull simulate --help` for the format)")]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The generator was asked for an empty day.
    #[error("--hours must be a positive number of hours, not {0}")]
    Hours(f64),
}

impl Trace {
    /// A trace of these events (sorted here); `end_s` defaults to when the last one is over.
    pub fn new(origin: TraceOrigin, mut events: Vec<TraceEvent>) -> Trace {
        events.sort_by(|a, b| a.at().total_cmp(&b.at()));
        let explicit_end = events.iter().find_map(|event| match event {
            TraceEvent::End { at } => Some(*at),
            _ => None,
        });
        let last = events.iter().map(TraceEvent::until).fold(0.0, f64::max);
        let end_s = explicit_end.unwrap_or(last).max(last);
        events.retain(|event| !matches!(event, TraceEvent::End { .. }));
        Trace {
            origin,
            events,
            end_s,
        }
    }

    /// Reads a JSON-lines trace file.
    pub fn from_file(path: &Path) -> Result<Trace, TraceError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TraceError::Read {
            path: shown.clone(),
            source,
        })?;
        Trace::parse(&text, TraceOrigin::File { path: shown })
    }

    /// Parses JSON-lines text.
    pub fn parse(text: &str, origin: TraceOrigin) -> Result<Trace, TraceError> {
        let path = match &origin {
            TraceOrigin::File { path } => path.clone(),
            TraceOrigin::Generated { .. } => "<generated>".into(),
        };
        let mut events = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fail = |message: String| TraceError::Line {
                path: path.clone(),
                line: index + 1,
                message,
            };
            let event: TraceEvent =
                serde_json::from_str(line).map_err(|err| fail(err.to_string()))?;
            validate(&event).map_err(fail)?;
            events.push(event);
        }
        Ok(Trace::new(origin, events))
    }

    /// The trace as JSON lines, one event per line, ending with its `end`.
    pub fn to_jsonl(&self) -> String {
        let mut text = String::new();
        for event in self
            .events
            .iter()
            .chain(std::iter::once(&TraceEvent::End { at: self.end_s }))
        {
            text += &serde_json::to_string(event).expect("trace events serialise");
            text.push('\n');
        }
        text
    }

    /// Counts for the report.
    pub fn summary(&self) -> TraceSummary {
        let mut summary = TraceSummary {
            origin: self.origin.clone(),
            hours: self.end_s / 3600.0,
            reported_turns: 0,
            foreign_turns: 0,
            busy_hours: 0.0,
            reviews: 0,
            sessions: 0,
            restarts: 0,
        };
        let mut sessions = std::collections::BTreeSet::new();
        for event in &self.events {
            match event {
                TraceEvent::Turn {
                    reported, duration, ..
                } => {
                    if *reported {
                        summary.reported_turns += 1;
                    } else {
                        summary.foreign_turns += 1;
                    }
                    summary.busy_hours += duration / 3600.0;
                }
                TraceEvent::Review { session, .. } => {
                    summary.reviews += 1;
                    sessions.insert(session.clone());
                }
                TraceEvent::Restart { .. } => summary.restarts += 1,
                TraceEvent::End { .. } => {}
            }
        }
        summary.sessions = sessions.len();
        summary
    }
}

/// What a trace holds, as the report's `"trace"` object shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSummary {
    /// Where it came from (`source`: `generated` with `seed` and `hours`, or `file` with `path`).
    #[serde(flatten)]
    pub origin: TraceOrigin,
    /// Its length in hours (the drain window not included).
    #[serde(rename = "length_h")]
    pub hours: f64,
    /// Turns the agent reports.
    pub reported_turns: usize,
    /// Turns of other clients, seen only in `/slots`.
    pub foreign_turns: usize,
    /// Slot-hours of live turns.
    pub busy_hours: f64,
    /// Review submissions.
    pub reviews: usize,
    /// Distinct sessions that submitted reviews.
    pub sessions: usize,
    /// Injected restarts.
    pub restarts: usize,
}

fn validate(event: &TraceEvent) -> Result<(), String> {
    let at = event.at();
    if !at.is_finite() || at < 0.0 {
        return Err(format!(
            "`at` must be a non-negative number of seconds, not {at}"
        ));
    }
    match event {
        TraceEvent::Turn {
            duration, session, ..
        } => {
            if !duration.is_finite() || *duration <= 0.0 {
                return Err(format!(
                    "a turn's `duration` must be positive seconds, not {duration}"
                ));
            }
            if session.is_empty() {
                return Err("`session` must not be empty".into());
            }
        }
        TraceEvent::Review {
            session, decode_s, ..
        } => {
            if session.is_empty() {
                return Err("`session` must not be empty".into());
            }
            if let Some(decode) = decode_s {
                if !decode.is_finite() || *decode <= 0.0 {
                    return Err(format!("`decode_s` must be positive seconds, not {decode}"));
                }
            }
        }
        TraceEvent::Restart { .. } | TraceEvent::End { .. } => {}
    }
    Ok(())
}

/// The generator's model of a working day; every figure is a plain constant so the day it
/// draws can be read off here.
mod day {
    /// Share of the trace that is the night at its end (nothing happens; queues drain).
    pub const NIGHT_SHARE: f64 = 1.0 / 3.0;
    /// A work session lasts this long (seconds), uniformly.
    pub const SESSION_S: (f64, f64) = (20.0 * 60.0, 75.0 * 60.0);
    /// Between sessions: a coffee break (seconds), or with [`LONG_BREAK_P`] a long one (lunch).
    pub const COFFEE_S: (f64, f64) = (5.0 * 60.0, 20.0 * 60.0);
    pub const LONG_BREAK_S: (f64, f64) = (30.0 * 60.0, 60.0 * 60.0);
    pub const LONG_BREAK_P: f64 = 0.25;
    /// Prompts per burst, uniformly.
    pub const BURST_TURNS: (u32, u32) = (2, 9);
    /// A turn (prompt processing plus the answer) takes this long: log-uniform, seconds.
    pub const TURN_S: (f64, f64) = (4.0, 90.0);
    /// Think time between two prompts of a burst: log-uniform, seconds.
    pub const THINK_S: (f64, f64) = (4.0, 60.0);
    /// Between bursts (reading, editing, running things): log-uniform, seconds.
    pub const BURST_GAP_S: (f64, f64) = (45.0, 900.0);
    /// The agent asks for a review every this many turns of a session, and at its end.
    pub const REVIEW_EVERY_TURNS: u32 = 4;
    /// Another client (an editor plugin, another agent profile) starts a request this often
    /// during the working day: exponential gaps with this mean, seconds.
    pub const FOREIGN_MEAN_GAP_S: f64 = 6.0 * 60.0;
    /// A foreign request takes this long: log-uniform, seconds.
    pub const FOREIGN_TURN_S: (f64, f64) = (2.0, 45.0);
    /// The agent process or Lull restarts (a crash, an update, the person quits and relaunches)
    /// once per this many work sessions, rounded up: as often as before issue 16, when each
    /// restart followed a session's final review by 2–12 s — inside Hermes' settle window, where
    /// it was certain to cost Hermes. Its moments are now drawn uniformly over the working day.
    pub const RESTART_EVERY_SESSIONS: usize = 2;
}

/// Draws a working day of `hours` hours from `seed`: work sessions of bursty prompts with think
/// time, reviews every few turns and at each session's end, coffee breaks and a long break,
/// requests of other clients on the same server, restarts at random moments of the working day,
/// and a night.
pub fn generate(seed: u64, hours: f64) -> Result<Trace, TraceError> {
    if !hours.is_finite() || hours <= 0.0 {
        return Err(TraceError::Hours(hours));
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let end_s = hours * 3600.0;
    let day_end = end_s * (1.0 - day::NIGHT_SHARE);
    let mut events = Vec::new();

    // The person's agent sessions.
    let mut now = rng.random_range(0.0..120.0);
    let mut session_index = 0usize;
    let mut restarts = 0usize;
    while now < day_end {
        session_index += 1;
        let session = format!("s{session_index}");
        let session_end = (now + uniform(&mut rng, day::SESSION_S)).min(day_end);
        let mut turns = 0u32;
        let mut last_turn_end = now;
        'session: while now < session_end {
            let burst = rng.random_range(day::BURST_TURNS.0..=day::BURST_TURNS.1);
            for _ in 0..burst {
                let duration = log_uniform(&mut rng, day::TURN_S);
                if now + duration > session_end {
                    break 'session;
                }
                events.push(TraceEvent::Turn {
                    at: now,
                    session: session.clone(),
                    duration,
                    reported: true,
                });
                turns += 1;
                now += duration;
                last_turn_end = now;
                if turns.is_multiple_of(day::REVIEW_EVERY_TURNS) {
                    events.push(review(now, &session, turns));
                }
                now += log_uniform(&mut rng, day::THINK_S);
            }
            now += log_uniform(&mut rng, day::BURST_GAP_S);
        }
        if turns > 0 && !turns.is_multiple_of(day::REVIEW_EVERY_TURNS) {
            events.push(review(last_turn_end, &session, turns));
        }
        if turns > 0 && session_index % day::RESTART_EVERY_SESSIONS == 1 {
            restarts += 1;
            // Before issue 16 a restart was placed here, a few seconds after this session's
            // end. The draw is kept (and unused) so that a seed still draws the activity it drew
            // then, and today's figures compare with earlier reports on the same days.
            let _ = uniform(&mut rng, (2.0, 12.0));
        }
        now = session_end.max(now)
            + if rng.random_bool(day::LONG_BREAK_P) {
                uniform(&mut rng, day::LONG_BREAK_S)
            } else {
                uniform(&mut rng, day::COFFEE_S)
            };
    }

    // Other clients of the same server, through the working day (breaks included).
    let mut at = exponential(&mut rng, day::FOREIGN_MEAN_GAP_S);
    let mut client = 0usize;
    while at < day_end {
        client += 1;
        let duration = log_uniform(&mut rng, day::FOREIGN_TURN_S);
        events.push(TraceEvent::Turn {
            at,
            session: format!("other-client-{}", client % 3),
            duration,
            reported: false,
        });
        at += duration + exponential(&mut rng, day::FOREIGN_MEAN_GAP_S);
    }

    // Restarts, drawn last: where they fall never moves the day's activity.
    for _ in 0..restarts {
        events.push(TraceEvent::Restart {
            at: uniform(&mut rng, (0.0, day_end)),
        });
    }

    events.push(TraceEvent::End { at: end_s });
    // Milliseconds are plenty, and they survive a trip through JSON exactly.
    for event in &mut events {
        match event {
            TraceEvent::Turn { at, duration, .. } => {
                *at = to_ms(*at);
                *duration = to_ms(*duration).max(0.001);
            }
            TraceEvent::Review { at, .. } | TraceEvent::Restart { at } => *at = to_ms(*at),
            TraceEvent::End { .. } => {}
        }
    }
    Ok(Trace::new(TraceOrigin::Generated { seed, hours }, events))
}

fn to_ms(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn review(at: f64, session: &str, turns: u32) -> TraceEvent {
    TraceEvent::Review {
        at,
        session: session.to_string(),
        turns,
        decode_s: None,
    }
}

fn uniform(rng: &mut StdRng, (low, high): (f64, f64)) -> f64 {
    rng.random_range(low..high)
}

fn log_uniform(rng: &mut StdRng, (low, high): (f64, f64)) -> f64 {
    (rng.random_range(low.ln()..high.ln())).exp()
}

fn exponential(rng: &mut StdRng, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_day_and_another_seed_another() {
        let a = generate(7, 8.0).unwrap();
        assert_eq!(a, generate(7, 8.0).unwrap());
        assert_ne!(a.events, generate(8, 8.0).unwrap().events);
        let summary = a.summary();
        assert!(summary.reported_turns > 50, "{summary:?}");
        assert!(summary.foreign_turns > 10, "{summary:?}");
        assert!(summary.restarts >= 1, "{summary:?}");
        assert_eq!(a.end_s, 8.0 * 3600.0);
        let night = a.end_s * (1.0 - day::NIGHT_SHARE);
        assert!(a.events.iter().all(|e| e.until() <= night + 60.0));
    }

    #[test]
    fn a_trace_survives_a_round_trip_through_json_lines() {
        let trace = generate(3, 2.0).unwrap();
        let file = TraceOrigin::File { path: "x".into() };
        let again = Trace::parse(&trace.to_jsonl(), file.clone()).unwrap();
        assert_eq!(again.events, trace.events);
        assert_eq!(again.end_s, trace.end_s);
    }

    #[test]
    fn a_bad_line_names_its_number() {
        let text = "# a comment\n{\"kind\":\"restart\",\"at\":1}\n{\"kind\":\"turn\",\"at\":2}\n";
        let err = Trace::parse(
            text,
            TraceOrigin::File {
                path: "day.jsonl".into(),
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("day.jsonl, line 3"), "{err}");
        let err = Trace::parse(
            "{\"kind\":\"turn\",\"at\":2,\"session\":\"a\",\"duration\":-1,\"reported\":true}",
            TraceOrigin::File { path: "d".into() },
        )
        .unwrap_err();
        assert!(err.to_string().contains("duration"), "{err}");
    }
}
