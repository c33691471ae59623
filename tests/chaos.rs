//! The chaos run: the supervisor's state file and the managed server misbehave many times a
//! second while an agent and a person use the engine, and the engine must keep answering, never
//! start learning while the person's turn holds the server, and account for every review.
//!
//! `lull serve` runs as a child process beside the stand-in llama-server (in this process), with
//! no settle window and the default age-out (30 min, so no work in this run may age out: every
//! dispatch must come from a lull). For a bounded time, three threads work at once:
//!
//! - **the storm** changes something every 10–120 ms: the state file rewritten (by rename or in
//!   place, in two halves), truncated, emptied, deleted, renamed away and back, filled with
//!   garbage, written with a BOM or naming a dead process; the server healed, loading, or faulted
//!   on one endpoint (slow, hung, 500, garbage, connection reset);
//! - **the person** holds a slot busy (their own turns, from flickers to turns of seconds), and
//!   sometimes the agent reports the turn through `/v1/turns/start` and `/finish` as well;
//! - **the agent and the person at the API** submit reviews for a few sessions, read the status,
//!   the queue and the drafts, approve or reject drafts as they come, and time every call.
//!
//! Then the storm stops, the server is healthy, and the queue must drain. What it proves:
//!
//! - every API call was answered as the API says, and the p99 of their latencies is under
//!   [`API_P99_BOUND`] (the maximum is printed too);
//! - no learning request (a chat completion, a `/completion`, or the `/apply-template` and
//!   `/tokenize` that open a prompt read in steps) came into a turn of the person's more than
//!   [`REACTION`] after the engine could know of it: from the agent's report, or from the first
//!   `/slots` answer that showed the slot busy (and came back within the probe's timeout).
//!   Nothing dispatches into a busy server, and what runs when a turn starts is dropped at once.
//!   How long after an idle `/slots` answer a learning request came at worst is printed too;
//!   with `/slots` slow or broken the engine keeps going on what it last saw;
//! - once left alone, every acknowledged review ends `done`, or `failed` with its reason, itself
//!   or through the newer snapshot of its session it was coalesced into; no learning work stays
//!   open; every approval's SKILL.md is on disk as approved, and nothing else was written;
//! - `PRAGMA integrity_check` is ok and the engine logged no panic.
//!
//! Run it: `cargo nextest run -p lull --test chaos --no-capture` (20 s of storm; it prints its
//! figures). Longer: `LULL_CHAOS_SECONDS=300`; a seed: `LULL_CHAOS_SEED` (it replays the
//! threads' choices, not their interleaving with the engine's own pace).

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/learner.rs"]
mod learner;
#[path = "common/managed.rs"]
mod managed;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use daemon::{integrity_check, read_only_db, request, serve_command, Daemon};
use learner::{Learner, LEARNED_SKILLS};
use lull::server::{PROBE_REQUEST_TIMEOUT, READING_CACHE_TTL};
use lull_stand_in::{Endpoint, Fault, StandIn, StandInConfig};

/// Seconds of storm in the default run; `LULL_CHAOS_SECONDS` sets another.
const DEFAULT_SECONDS: u64 = 20;
/// The stand-in's one model.
const MODEL: &str = "tiny";
/// Agent sessions; few, so that reviews of one session coalesce.
const SESSIONS: usize = 4;
/// The storm's pause between two changes (ms): many a second.
const STORM_GAP_MS: std::ops::Range<u64> = 10..120;
/// The p99 of the API's answers during the storm must stay under this. The API answers from the
/// database and the engine's last reading of the server; no call waits on the server.
const API_P99_BOUND: Duration = Duration::from_millis(250);
/// How long after the engine could know of the person's turn a learning request may still
/// arrive: the probe's reading cache, and the time a running stream takes to be seen stalled
/// (~0.5 s, the way the dispatcher notices a client it was not told of) and dropped, on a
/// loaded two-core machine. A new dispatch into the turn would come at any time in it.
const REACTION: Duration = Duration::from_millis(READING_CACHE_TTL.as_millis() as u64 + 1_250);
/// How long the queue may take to drain once the storm is over: a review that failed twice
/// waits out its back-off (5 s, then 10 s) before its last attempt.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);
/// How long `lull serve` may take to start (a debug build on a busy machine).
const START_LIMIT: Duration = Duration::from_secs(20);

#[test]
fn the_engine_keeps_answering_and_accounts_for_every_review_through_a_storm_of_faults() {
    let seed: u64 = env_number("LULL_CHAOS_SEED").unwrap_or_else(|| rand::rng().random());
    let seconds = env_number("LULL_CHAOS_SECONDS").unwrap_or(DEFAULT_SECONDS);
    println!("chaos: seed {seed} (LULL_CHAOS_SEED={seed} replays it), {seconds} s of storm");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stand_in_config = StandInConfig::single(MODEL)
        .with_pace(Duration::from_millis(2))
        .without_embeddings();
    let (server, state_file) =
        runtime.block_on(managed::managed_stand_in(dir.path(), stand_in_config));
    server.set_responder(Learner::responder());
    let data = dir.path().join("data");
    let log = dir.path().join("engine.log");
    let daemon = start_engine(&data, &state_file, &log);
    let api = Api {
        base_url: daemon.base_url.clone(),
        token: daemon.token.clone(),
    };

    let ledger = Mutex::new(Ledger::default());
    let turns = Mutex::new(Vec::<TurnSpan>::new());
    let storming = AtomicBool::new(true);
    let storm_until = Instant::now() + Duration::from_secs(seconds);
    let faults = thread::scope(|scope| {
        let storm =
            scope.spawn(|| Storm::new(&server, &state_file, seed).run(storm_until, &storming));
        let person = scope.spawn(|| run_person(&server, &api, &turns, seed ^ 1, &storming));
        let client = scope.spawn(|| run_client(&api, &ledger, seed ^ 2, &storming));
        let faults = storm.join().unwrap();
        person.join().unwrap();
        client.join().unwrap();
        faults
    });

    // The storm is over: a healthy server, a valid state file, a free slot.
    server.clear_faults();
    server.set_ready(true);
    server.set_busy(MODEL, 0, false);
    server
        .write_state_file(&state_file, std::process::id())
        .unwrap();
    let drained_in = drain(&api, &data);
    let mut ledger = ledger.into_inner().unwrap();
    approve_what_waits(&api, &mut ledger);

    let mut violations = ledger.errors.clone();
    violations.extend(check_latency(&ledger));
    let dispatches = check_dispatches(&server, &turns.into_inner().unwrap());
    violations.extend(dispatches.violations.iter().cloned());
    let reviews = check_reviews(&data, &ledger);
    violations.extend(reviews.violations);
    violations.extend(check_skills(&data, &api, &ledger));
    violations.extend(check_store(&data));
    drop(daemon);
    let engine_log = std::fs::read_to_string(&log).unwrap_or_default();
    if engine_log.contains("panicked") {
        violations.push(format!("the engine logged a panic:\n{engine_log}"));
    }

    let p99 = percentile(&ledger.latencies, 0.99);
    let (slowest_call, max) = &ledger.slowest;
    println!(
        "chaos: {seconds} s, seed {seed}: {} faults injected ({}), {} API calls (p99 {:.1} ms, \
         max {:.1} ms, {slowest_call}), {} learning requests (the latest {:.0} ms after an idle \
         /slots answer; into a turn at most {:.0} ms after the engine could know of it), \
         {} reviews acknowledged ({} done, {} failed with a reason), {} drafts approved, \
         drained in {:.1} s, {} invariant violations",
        faults.values().sum::<u64>(),
        faults
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        ledger.latencies.len(),
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        dispatches.learning,
        dispatches.stalest.as_secs_f64() * 1e3,
        dispatches.slowest_reaction.as_secs_f64() * 1e3,
        ledger.acknowledged.len(),
        reviews.done,
        reviews.failed,
        ledger.approved.len(),
        drained_in.as_secs_f64(),
        violations.len(),
    );
    assert!(
        violations.is_empty(),
        "chaos: seed {seed} (LULL_CHAOS_SEED={seed} replays it): {} violation(s):\n{}",
        violations.len(),
        violations.join("\n")
    );
    runtime.block_on(server.stop());
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|text| {
        text.parse()
            .unwrap_or_else(|_| panic!("{name} is a number"))
    })
}

fn start_engine(data: &Path, state_file: &Path, log: &Path) -> Daemon {
    let mut command = serve_command(data, state_file);
    command
        .env("LULL_SCHEDULER_SETTLE_AFTER_PREEMPTION_S", "0")
        // Open candidates are drafted within a second, not at the next five-minute pass.
        .env("LULL_LEARNING_INTERVAL_S", "1")
        .env("RUST_LOG", "warn");
    let stderr = std::fs::File::create(log).unwrap();
    Daemon::spawn_with_stderr(&mut command, data, START_LIMIT, Stdio::from(stderr))
}

/// The engine's API, as the agent and the person call it.
struct Api {
    base_url: String,
    token: String,
}

impl Api {
    /// One call, timed; `Err` says what was wrong with its answer.
    fn call(&self, method: &str, path: &str, body: Option<Value>, expected: &[u16]) -> Answer {
        let body = body.map(|body| body.to_string());
        let started = Instant::now();
        let answer = request(
            method,
            &format!("{}{path}", self.base_url),
            Some(&self.token),
            body.as_deref(),
        );
        let took = started.elapsed();
        let call = format!("{method} {path}");
        let result = match answer {
            Err(unanswered) => Err(format!("{method} {path}: no answer ({unanswered:?})")),
            Ok((status, text)) if expected.contains(&status) => {
                Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
            }
            Ok((status, text)) => Err(format!("{method} {path} answered {status}: {text}")),
        };
        Answer { call, result, took }
    }
}

/// An API call's answer (or what was wrong with it) and how long it took.
struct Answer {
    call: String,
    result: Result<Value, String>,
    took: Duration,
}

/// What the API told the client, and how fast.
#[derive(Default)]
struct Ledger {
    latencies: Vec<Duration>,
    /// The slowest call: what it was and how long it took.
    slowest: (String, Duration),
    /// Each acknowledged review: its session, snapshot time and queue slot.
    acknowledged: Vec<(String, i64, String)>,
    /// Drafts approved, in order: the skill and the SKILL.md the approval answered with.
    approved: Vec<(String, String)>,
    errors: Vec<String>,
}

impl Ledger {
    fn note(&mut self, answer: Answer) -> Option<Value> {
        self.latencies.push(answer.took);
        if answer.took > self.slowest.1 {
            self.slowest = (answer.call, answer.took);
        }
        answer.result.map_err(|error| self.errors.push(error)).ok()
    }
}

/// The agent and the person at the API, until the storm ends.
fn run_client(api: &Api, ledger: &Mutex<Ledger>, seed: u64, storming: &AtomicBool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut conversations = vec![Vec::<Value>::new(); SESSIONS];
    let mut snapshot_at = 1_000_i64;
    while storming.load(Ordering::Relaxed) {
        let choice = rng.random_range(0..10);
        let mut ledger = ledger.lock().unwrap();
        match choice {
            0..=2 => {
                let session = rng.random_range(0..SESSIONS);
                let skill = LEARNED_SKILLS[rng.random_range(0..LEARNED_SKILLS.len())];
                snapshot_at += 1;
                conversations[session].extend([
                    json!({"role": "user", "content": format!("the build broke again (turn {snapshot_at})")}),
                    json!({"role": "assistant", "content": "I reproduced it, found the change and checked the fix"}),
                    json!({"role": "user", "content": format!("good; remember this as {skill}")}),
                ]);
                let session_key = format!("s{session}");
                let body = json!({"session_key": session_key, "messages": conversations[session],
                                  "snapshot_at": snapshot_at});
                let answer = api.call("POST", "/v1/reviews", Some(body), &[202]);
                if let Some(answer) = ledger.note(answer) {
                    let id = answer["review_id"].as_str().unwrap_or_default().to_string();
                    ledger.acknowledged.push((session_key, snapshot_at, id));
                }
            }
            3..=4 => {
                ledger.note(api.call("GET", "/v1/status", None, &[200]));
            }
            5 => {
                ledger.note(api.call("GET", "/v1/reviews", None, &[200]));
            }
            _ => {
                let listed = api.call("GET", "/v1/drafts?status=review_pending", None, &[200]);
                let Some(listed) = ledger.note(listed) else {
                    continue;
                };
                let Some(draft) = listed["drafts"].as_array().and_then(|d| d.first()).cloned()
                else {
                    continue;
                };
                let id = draft["id"].as_str().unwrap_or_default().to_string();
                if rng.random_bool(0.75) {
                    let path = format!("/v1/drafts/{id}/approve");
                    if let Some(approved) =
                        ledger.note(api.call("POST", &path, Some(json!({})), &[200]))
                    {
                        let skill = approved["skill"].as_str().unwrap_or_default().to_string();
                        let skill_md = approved["skill_md"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        ledger.approved.push((skill, skill_md));
                    }
                } else {
                    let path = format!("/v1/drafts/{id}/reject");
                    let body = json!({"reason": "not now"});
                    ledger.note(api.call("POST", &path, Some(body), &[200]));
                }
            }
        }
        drop(ledger);
        thread::sleep(Duration::from_millis(rng.random_range(5..60)));
    }
}

/// One of the person's turns: the slot held busy from `from` to `to`.
struct TurnSpan {
    from: Instant,
    to: Instant,
    /// When the engine acknowledged the agent's report of it (`/v1/turns/start`), if it did.
    reported: Option<Instant>,
}

/// The person: their turns hold a slot of the server (flickers, and turns of seconds); about one
/// in three the agent also reports through the API, just before.
fn run_person(
    server: &StandIn,
    api: &Api,
    turns: &Mutex<Vec<TurnSpan>>,
    seed: u64,
    storming: &AtomicBool,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    while storming.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(rng.random_range(100..3_000)));
        let length = if rng.random_bool(0.6) {
            rng.random_range(10..200)
        } else {
            rng.random_range(300..2_500)
        };
        let reported = rng.random_bool(0.35).then(|| {
            let answer = api.call(
                "POST",
                "/v1/turns/start",
                Some(json!({"session_key": "s0"})),
                &[200],
            );
            let lease = answer.result.ok()?["lease_id"].as_str()?.to_string();
            Some((lease, Instant::now()))
        });
        let reported = reported.flatten();
        server.set_busy(MODEL, 0, true);
        let from = Instant::now();
        thread::sleep(Duration::from_millis(length));
        // The turn ends as the agent says so: before the slot is free, a dispatch is still early.
        let to = Instant::now();
        if let Some((lease, _)) = &reported {
            let _ = api.call(
                "POST",
                "/v1/turns/finish",
                Some(json!({ "lease_id": lease })),
                &[204],
            );
        }
        server.set_busy(MODEL, 0, false);
        let reported = reported.map(|(_, at)| at);
        turns.lock().unwrap().push(TurnSpan { from, to, reported });
    }
    server.set_busy(MODEL, 0, false);
}

/// What the storm does to the state file and the server.
struct Storm<'a> {
    server: &'a StandIn,
    state_file: &'a Path,
    moved: PathBuf,
    dead_pid: u32,
    rng: StdRng,
    counts: BTreeMap<&'static str, u64>,
}

/// The endpoints the storm faults: everything the engine asks the server.
const FAULTED: [Endpoint; 7] = [
    Endpoint::Health,
    Endpoint::Models,
    Endpoint::Slots,
    Endpoint::ChatCompletions,
    Endpoint::Completion,
    Endpoint::Tokenize,
    Endpoint::ApplyTemplate,
];

impl<'a> Storm<'a> {
    fn new(server: &'a StandIn, state_file: &'a Path, seed: u64) -> Storm<'a> {
        // A process that has exited: its pid names no live server.
        let mut gone = Command::new("true").spawn().unwrap();
        let dead_pid = gone.id();
        gone.wait().unwrap();
        Storm {
            server,
            state_file,
            moved: state_file.with_extension("json.moved"),
            dead_pid,
            rng: StdRng::seed_from_u64(seed),
            counts: BTreeMap::new(),
        }
    }

    /// Changes something every few tens of milliseconds until `until`; returns what it did.
    fn run(mut self, until: Instant, storming: &AtomicBool) -> BTreeMap<&'static str, u64> {
        while Instant::now() < until {
            let kind = if self.rng.random_bool(0.5) {
                self.file()
            } else {
                self.serve()
            };
            *self.counts.entry(kind).or_default() += 1;
            thread::sleep(Duration::from_millis(self.rng.random_range(STORM_GAP_MS)));
        }
        storming.store(false, Ordering::Relaxed);
        self.counts
    }

    fn valid_record(&self, pid: u32) -> String {
        json!({"base_url": self.server.base_url(), "api_key": "", "pid": pid}).to_string()
    }

    /// One change of the supervisor's state file.
    fn file(&mut self) -> &'static str {
        let path = self.state_file;
        let record = self.valid_record(std::process::id());
        match self.rng.random_range(0..10) {
            0..=2 => {
                self.server
                    .write_state_file(path, std::process::id())
                    .unwrap();
                "file rewritten by rename"
            }
            3 => {
                // In place, in two writes, as a supervisor that does not rename does.
                use std::io::Write;
                let (head, tail) = record.split_at(record.len() / 2);
                let mut file = std::fs::File::create(path).unwrap();
                file.write_all(head.as_bytes()).unwrap();
                file.flush().unwrap();
                thread::sleep(Duration::from_millis(self.rng.random_range(0..20)));
                file.write_all(tail.as_bytes()).unwrap();
                "file rewritten in place"
            }
            4 => {
                let keep = if self.rng.random_bool(0.5) {
                    0
                } else {
                    record.len() / 2
                };
                std::fs::write(path, &record[..keep]).unwrap();
                "file truncated"
            }
            5 => {
                let _ = std::fs::remove_file(path);
                "file deleted"
            }
            6 => {
                if self.rng.random_bool(0.5) {
                    let _ = std::fs::rename(path, &self.moved);
                } else {
                    let _ = std::fs::rename(&self.moved, path);
                }
                "file renamed away or back"
            }
            7 => {
                std::fs::write(path, "{\"base_url\": \u{0} not json at all").unwrap();
                "file garbage"
            }
            8 => {
                std::fs::write(path, format!("\u{feff}{record}")).unwrap();
                "file with a BOM"
            }
            _ => {
                std::fs::write(path, self.valid_record(self.dead_pid)).unwrap();
                "file names a dead process"
            }
        }
    }

    /// One change of the server.
    fn serve(&mut self) -> &'static str {
        let server = self.server;
        match self.rng.random_range(0..9) {
            0..=2 => {
                server.clear_faults();
                server.set_ready(true);
                "server healed"
            }
            3 => {
                server.set_ready(false);
                "server loading"
            }
            n => {
                let endpoint = FAULTED[self.rng.random_range(0..FAULTED.len())];
                let (fault, kind) = match n {
                    4 => (
                        Fault::Slow(Duration::from_millis(self.rng.random_range(50..3_000))),
                        "server slow",
                    ),
                    5 => (Fault::Hang, "server hung"),
                    6 => (Fault::Status500, "server erroring"),
                    7 => (Fault::Garbage, "server speaking garbage"),
                    _ => (Fault::Reset, "server resetting"),
                };
                server.inject_fault(endpoint, fault);
                kind
            }
        }
    }
}

/// The person comes back and approves every draft that waits for them.
fn approve_what_waits(api: &Api, ledger: &mut Ledger) {
    let listed = api.call("GET", "/v1/drafts?status=review_pending", None, &[200]);
    let drafts = ledger.note(listed).unwrap_or_default();
    for draft in drafts["drafts"].as_array().into_iter().flatten() {
        approve(api, ledger, draft["id"].as_str().unwrap_or_default());
    }
    if ledger.approved.is_empty() {
        ledger.errors.push("no draft reached the person".into());
    }
}

fn approve(api: &Api, ledger: &mut Ledger, id: &str) {
    let path = format!("/v1/drafts/{id}/approve");
    if let Some(approved) = ledger.note(api.call("POST", &path, Some(json!({})), &[200])) {
        let skill = approved["skill"].as_str().unwrap_or_default().to_string();
        let skill_md = approved["skill_md"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        ledger.approved.push((skill, skill_md));
    }
}

/// Waits until no review or learning work is open; returns how long it took.
fn drain(api: &Api, data: &Path) -> Duration {
    let started = Instant::now();
    loop {
        let open: i64 = read_only_db(data)
            .query_row(
                "SELECT (SELECT COUNT(*) FROM reviews WHERE status IN ('queued', 'running'))
                      + (SELECT COUNT(*) FROM learning_work WHERE status IN ('queued', 'running'))
                      + (SELECT COUNT(*) FROM candidates WHERE status IN ('open', 'drafting'))",
                [],
                |row| row.get(0),
            )
            .unwrap();
        if open == 0 {
            return started.elapsed();
        }
        if started.elapsed() > DRAIN_LIMIT {
            let status = api.call("GET", "/v1/status", None, &[200]).result;
            panic!(
                "chaos: {open} reviews or pieces of learning work still open {DRAIN_LIMIT:?} \
                 after the storm; the engine's status: {status:?}"
            );
        }
        thread::sleep(Duration::from_millis(100));
    }
}

fn percentile(latencies: &[Duration], q: f64) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let index = ((sorted.len() as f64 * q).ceil() as usize).saturating_sub(1);
    sorted.get(index).copied().unwrap_or_default()
}

fn check_latency(ledger: &Ledger) -> Vec<String> {
    let p99 = percentile(&ledger.latencies, 0.99);
    let mut found = Vec::new();
    if ledger.latencies.len() < 100 {
        found.push(format!(
            "only {} API calls were made",
            ledger.latencies.len()
        ));
    }
    if p99 > API_P99_BOUND {
        found.push(format!(
            "the API's p99 was {:.1} ms, over the bound of {API_P99_BOUND:?}",
            p99.as_secs_f64() * 1e3
        ));
    }
    found
}

/// What the dispatch check measured, and what broke the rule.
#[derive(Default)]
struct Dispatches {
    /// Requests that take a slot or start one (chat completions, `/completion`, and the
    /// `/apply-template` and `/tokenize` that open a prompt read in steps).
    learning: usize,
    /// The latest any of them came after a `/slots` answer showing the person's slot free.
    stalest: Duration,
    /// The longest a learning request still came after the engine could know of a turn.
    slowest_reaction: Duration,
    violations: Vec<String>,
}

/// No learning request may come into a turn of the person's more than [`REACTION`] after the
/// engine could know of it: from the agent's report, or from the first `/slots` answer that
/// showed the slot busy and came back within the probe's timeout (a later one the engine gave up
/// on). Age-outs cannot happen in this run, so there is no exception.
fn check_dispatches(server: &StandIn, turns: &[TurnSpan]) -> Dispatches {
    let answers = server.slots_answers();
    let learning: Vec<(Instant, Endpoint)> = server
        .request_log()
        .into_iter()
        .filter(|record| {
            matches!(
                record.endpoint,
                Endpoint::ChatCompletions
                    | Endpoint::Completion
                    | Endpoint::Tokenize
                    | Endpoint::ApplyTemplate
            )
        })
        .map(|record| (record.at, record.endpoint))
        .collect();
    let mut found = Dispatches {
        learning: learning.len(),
        ..Dispatches::default()
    };
    for &(at, endpoint) in &learning {
        if let Some(idle) = answers
            .iter()
            .rev()
            .find(|answer| answer.forced_busy == 0 && answer.at <= at)
        {
            found.stalest = found.stalest.max(at - idle.at);
        }
        let Some(turn) = turns.iter().find(|turn| turn.from <= at && at < turn.to) else {
            continue;
        };
        let seen = answers
            .iter()
            .filter(|answer| answer.forced_busy > 0 && answer.at >= turn.from && answer.at <= at)
            .filter(|answer| answer.at - answer.asked < PROBE_REQUEST_TIMEOUT)
            .map(|answer| answer.at)
            .chain(turn.reported)
            .min();
        let Some(seen) = seen else {
            continue; // the engine could not know of this turn yet
        };
        let after = at.saturating_duration_since(seen);
        found.slowest_reaction = found.slowest_reaction.max(after);
        if after > REACTION {
            found.violations.push(format!(
                "a {endpoint:?} request came {:.0} ms into the person's turn, {:.0} ms after \
                 the engine could know of it ({})",
                (at - turn.from).as_secs_f64() * 1e3,
                after.as_secs_f64() * 1e3,
                if turn.reported.is_some() {
                    "the agent reported it"
                } else {
                    "a /slots answer showed it"
                }
            ));
        }
    }
    found
}

struct ReviewAccount {
    done: usize,
    failed: usize,
    violations: Vec<String>,
}

/// Every acknowledged snapshot ends `done` or `failed` with a reason, itself or through the
/// newer snapshot of its session it was coalesced into.
fn check_reviews(data: &Path, ledger: &Ledger) -> ReviewAccount {
    let db = read_only_db(data);
    let mut account = ReviewAccount {
        done: 0,
        failed: 0,
        violations: Vec::new(),
    };
    let mut ended = BTreeSet::new();
    for (session, snapshot_at, review_id) in &ledger.acknowledged {
        let outcome: Option<(String, String, Option<String>)> = db
            .query_row(
                "SELECT id, status, last_error FROM reviews
                  WHERE session_key = ?1 AND status IN ('done', 'failed') AND snapshot_at >= ?2
                  ORDER BY snapshot_at LIMIT 1",
                rusqlite::params![session, snapshot_at],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .ok();
        match outcome {
            None => account.violations.push(format!(
                "review {review_id} (session {session}, snapshot {snapshot_at}) is neither done \
                 nor failed, itself or through a newer snapshot of its session"
            )),
            Some((_, status, last_error)) if status == "failed" && last_error.is_none() => account
                .violations
                .push(format!("review {review_id} failed without saying why")),
            Some((id, status, _)) => {
                if ended.insert(id) {
                    match status.as_str() {
                        "done" => account.done += 1,
                        _ => account.failed += 1,
                    }
                }
            }
        }
    }
    account
}

/// Every approval's SKILL.md is on disk as the approval answered, and nothing else is in the
/// skills folder.
fn check_skills(data: &Path, api: &Api, ledger: &Ledger) -> Vec<String> {
    let skills = data.join("skills");
    let mut found = Vec::new();
    let mut latest: BTreeMap<&str, &str> = BTreeMap::new();
    for (skill, skill_md) in &ledger.approved {
        latest.insert(skill, skill_md);
    }
    let listed = api
        .call("GET", "/v1/skills", None, &[200])
        .result
        .unwrap_or_default();
    for (skill, approved) in &latest {
        let on_disk = std::fs::read_to_string(skills.join(skill).join("SKILL.md"));
        if on_disk.as_deref().ok() != Some(*approved) {
            found.push(format!(
                "approved skill {skill}'s SKILL.md is not on disk as approved"
            ));
        }
        let listed = listed["skills"]
            .as_array()
            .is_some_and(|all| all.iter().any(|s| s["name"] == *skill));
        if !listed {
            found.push(format!("approved skill {skill} is not in GET /v1/skills"));
        }
    }
    for name in names_in(&skills) {
        if !latest.contains_key(name.as_str()) {
            found.push(format!(
                "{name} is in the skills folder, but no approval wrote it"
            ));
        }
        let folder = skills.join(&name);
        let files = names_in(&folder);
        if files != ["SKILL.md"] {
            found.push(format!(
                "{} holds {files:?}, not one SKILL.md",
                folder.display()
            ));
        }
    }
    found
}

/// The names in `folder` (none when it is missing).
fn names_in(folder: &Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn check_store(data: &Path) -> Vec<String> {
    let integrity = integrity_check(data);
    if integrity == "ok" {
        Vec::new()
    } else {
        vec![format!("PRAGMA integrity_check: {integrity}")]
    }
}
