//! The crash harness: `lull serve` is killed with SIGKILL at random moments while an agent and
//! a person use it, over and over, and after every kill what it left behind is checked.
//!
//! Each cycle starts the engine on the same data folder beside the stand-in llama-server (in
//! this process: only the engine dies), lets a seeded client drive it — turns started and
//! finished, several reviews per session (so they coalesce), drafts approved, edited then
//! approved, or rejected as they appear, routes and their outcomes, training jobs — and kills
//! the engine a seeded moment later, often while a request is on its way. Then, with the engine
//! dead, the database is read directly (read-only), and after the next start the engine's
//! answers and the skills folder. What it proves, for every cycle:
//!
//! - every snapshot the client got a 202 for is queued, running or done exactly once, or was
//!   coalesced into (or superseded by) a newer snapshot of its session that is; a request the
//!   kill cut off may or may not have landed, and either is accepted, but nothing else: no review
//!   of a snapshot that was never sent, none lost, none reviewed twice;
//! - no candidate of a review that is not done, no candidate with two drafts, no candidate being
//!   drafted or draft being evaluated without its queued work, no acknowledged route or outcome
//!   missing;
//! - every approved draft has its provenance and every provenance its approved draft; every skill
//!   Lull wrote is on disk with the sha256 it recorded, whole; nothing else is in the skills
//!   folder (no temporary file, no unrecorded skill) beside the skills it started with, which
//!   are untouched; an approval the kill cut off succeeds when the person clicks again;
//! - every training job's checkpoints form an intact chain (rounds 1‥n, each parent the previous
//!   round's sha256, each sha256 the state's) as long as its `rounds_completed`, its receipts
//!   are dense with reproducible digests, and a job `running` or `queued` at the kill is
//!   `interrupted` (`adopted_after_restart`, a refusal receipt last) after the restart;
//! - `PRAGMA integrity_check` says ok;
//! - the routing head's saved update count never goes down, never exceeds the outcomes logged,
//!   matches the saved snapshot's own count, and the restarted head's count is not below it.
//!
//! After the last cycle the engine runs undisturbed until the queue drains, and every
//! acknowledged snapshot must then be reviewed (`done`), itself or through the newer snapshot
//! it was coalesced into: deferral and crashes may delay learning, never lose it.
//!
//! Run it: `cargo nextest run -p lull --test crash --no-capture` (50 cycles, about a minute on two
//! cores; it prints `crash: N cycles, seed S, K kills mid-request, 0 invariant violations`).
//! Longer: `LULL_CRASH_CYCLES=500`. The seed is printed and taken from `LULL_CRASH_SEED`: it
//! replays the client's choices and the kill delays, though not the engine's own pace against
//! the wall clock, so a failure is reproduced by running its seed a few times.

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/learner.rs"]
mod learner;
#[path = "common/managed.rs"]
mod managed;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value};

use daemon::{read_only_db, request, serve_command, Daemon, Unanswered};
use learner::{Learner, LEARNED_SKILLS};
use lull::jobs::records::{receipt_digest, ReceiptKind};
use lull::routing::HeadSnapshot;
use lull::skills::sha256_hex;
use lull_stand_in::StandInConfig;

/// Cycles of the default run; `LULL_CRASH_CYCLES` sets another number.
const DEFAULT_CYCLES: u64 = 50;
/// The stand-in's one model.
const MODEL: &str = "tiny";
/// Agent sessions the client talks in; few, so that reviews of one session coalesce.
const SESSIONS: usize = 4;
/// The skills folder's skills before the first start: what routes rank from the start, and
/// what no approval may touch.
const SEED_SKILLS: [(&str, &str); 3] = [
    (
        "deploy-staging",
        "Deploy a service to the staging cluster and check its health",
    ),
    (
        "db-migration",
        "Write and run a database migration safely, with a rollback",
    ),
    ("rotate-certs", "Rotate TLS certificates before they expire"),
];
/// How long the engine runs before it is killed, from its first answer (ms).
const KILL_AFTER_MS: std::ops::Range<u64> = 50..1_500;
/// A client's pause between two calls (ms): an agent's pace, and room for the engine's own work.
const CALL_GAP_MS: std::ops::Range<u64> = 2..40;
/// Reviews and routes the client sends at most per cycle, so the work stays bounded.
const REVIEWS_PER_CYCLE: u32 = 3;
const ROUTES_PER_CYCLE: u32 = 10;
/// Outcomes logged before the client asks for a training job (a job needs examples to train
/// on and to hold out).
const OUTCOMES_BEFORE_JOBS: usize = 30;
/// Rounds a job asks for: a few, so a job often runs across a kill and sometimes finishes.
const JOB_ROUNDS: std::ops::Range<u32> = 2..6;
/// How long a start may take (a debug build on a busy machine).
const START_LIMIT: Duration = Duration::from_secs(20);
/// How long the final drain of the queue may take.
const DRAIN_LIMIT: Duration = Duration::from_secs(90);

#[test]
fn the_engine_keeps_its_invariants_across_kill_9s_at_random_moments() {
    let seed: u64 = std::env::var("LULL_CRASH_SEED")
        .ok()
        .map(|text| text.parse().expect("LULL_CRASH_SEED is a number"))
        .unwrap_or_else(|| rand::rng().random());
    let cycles: u64 = std::env::var("LULL_CRASH_CYCLES")
        .ok()
        .map(|text| text.parse().expect("LULL_CRASH_CYCLES is a number"))
        .unwrap_or(DEFAULT_CYCLES);
    println!("crash: seed {seed} (LULL_CRASH_SEED={seed} replays it), {cycles} cycles");
    let started = Instant::now();

    // The stand-in lives on its own runtime's threads, beside this blocking test.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stand_in_config = StandInConfig::single(MODEL)
        .with_pace(Duration::from_millis(1))
        .without_embeddings();
    let (server, state_file) =
        runtime.block_on(managed::managed_stand_in(dir.path(), stand_in_config));
    server.set_responder(Learner::responder());

    let mut harness = Harness::new(dir.path().join("data"), state_file, seed);
    for cycle in 1..=cycles {
        harness.cycle(cycle);
    }
    harness.drain_and_stop(cycles + 1);
    println!(
        "crash: {cycles} cycles, seed {seed}, {} kills mid-request, 0 invariant violations \
         ({} reviews acknowledged, {} of them coalesced, {} approvals, {} jobs, {} interrupted \
         by a kill; {:.0} s)",
        harness.ledger.kills_mid_request,
        harness
            .ledger
            .submissions
            .iter()
            .filter(|submission| submission.review_id.is_some())
            .count(),
        harness.ledger.coalesced,
        harness.ledger.approved.len(),
        harness.ledger.jobs.len(),
        harness.jobs_adopted,
        started.elapsed().as_secs_f64()
    );
    runtime.block_on(server.stop());
}

/// What the client was told, and what it cannot know (a request the kill cut off).
#[derive(Default)]
struct Ledger {
    /// Every review that may have landed, in the order sent.
    submissions: Vec<Submission>,
    /// Each session's conversation so far.
    conversations: Vec<Vec<Value>>,
    /// The next snapshot's time: strictly increasing, so each snapshot is told apart.
    next_snapshot_at: i64,
    /// Drafts whose approval the client got a 200 for.
    approved: BTreeSet<String>,
    /// An approval the kill cut off: the person clicks again after the restart.
    approval_in_flight: Option<String>,
    /// Routes and outcomes acknowledged.
    routes: Vec<String>,
    outcomes: Vec<String>,
    /// Jobs acknowledged (201).
    jobs: Vec<String>,
    /// Reviews the engine said it coalesced into its session's queued one.
    coalesced: u64,
    /// Kills that cut a request off (sent, no whole answer).
    kills_mid_request: u64,
}

struct Submission {
    session: String,
    snapshot_at: i64,
    /// The queue slot's id, when the client got its 202; `None`: cut off by the kill.
    review_id: Option<String>,
}

/// A broken invariant: which, and what was seen.
struct Violation {
    invariant: &'static str,
    detail: String,
}

fn violation(invariant: &'static str, detail: impl Into<String>) -> Violation {
    Violation {
        invariant,
        detail: detail.into(),
    }
}

struct Harness {
    data: PathBuf,
    state_file: PathBuf,
    seed: u64,
    rng: StdRng,
    ledger: Ledger,
    /// What the last stopped-engine check saw: jobs that must be adopted, the head's saved count.
    orphans: BTreeMap<String, i64>,
    persisted_updates: i64,
    jobs_adopted: usize,
}

impl Harness {
    fn new(data: PathBuf, state_file: PathBuf, seed: u64) -> Harness {
        for (name, description) in SEED_SKILLS {
            let folder = data.join("skills").join(name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("SKILL.md"), seed_skill_md(name, description)).unwrap();
        }
        Harness {
            data,
            state_file,
            seed,
            rng: StdRng::seed_from_u64(seed),
            ledger: Ledger {
                conversations: vec![Vec::new(); SESSIONS],
                next_snapshot_at: 1_000,
                ..Ledger::default()
            },
            orphans: BTreeMap::new(),
            persisted_updates: 0,
            jobs_adopted: 0,
        }
    }

    /// One start, the checks a restart allows, the client's calls, the kill, the checks of
    /// what the dead engine left.
    fn cycle(&mut self, cycle: u64) {
        let mut daemon = self.start();
        let api = Api::of(&daemon);
        let restarted = self.check_restarted(&api);
        self.assert_held(cycle, restarted);

        let kill_after = Duration::from_millis(self.rng.random_range(KILL_AFTER_MS));
        let client_seed = self.rng.random();
        let ledger = Mutex::new(std::mem::take(&mut self.ledger));
        let client_error = thread::scope(|scope| {
            let client = scope.spawn(|| Client::new(&api, &ledger, client_seed).run());
            thread::sleep(kill_after);
            daemon.child.kill().unwrap(); // SIGKILL: nothing on the engine's way out runs
            daemon.child.wait().unwrap();
            client.join().unwrap()
        });
        self.ledger = ledger.into_inner().unwrap();
        drop(daemon);
        if let Some(error) = client_error {
            self.fail(
                cycle,
                vec![violation("the engine answers as the API says", error)],
            );
        }
        let stopped = self.check_stopped();
        self.assert_held(cycle, stopped);
    }

    /// The last start: in-flight work finishes undisturbed, then every acknowledged snapshot
    /// must have been reviewed; a clean stop, and the checks of a stopped engine once more.
    fn drain_and_stop(&mut self, cycle: u64) {
        let mut daemon = self.start();
        let api = Api::of(&daemon);
        let restarted = self.check_restarted(&api);
        self.assert_held(cycle, restarted);
        let deadline = Instant::now() + DRAIN_LIMIT;
        while self.open_work() > 0 {
            if Instant::now() > deadline {
                let open = self.open_work();
                self.fail(
                    cycle,
                    vec![violation(
                        "queued learning work is done once the engine is left alone",
                        format!(
                            "{open} reviews or pieces of work still open after {DRAIN_LIMIT:?}"
                        ),
                    )],
                );
            }
            thread::sleep(Duration::from_millis(50));
        }
        let reviewed = self.check_all_reviewed();
        self.assert_held(cycle, reviewed);
        // SAFETY: sending SIGTERM to our own child.
        unsafe { libc::kill(daemon.child.id() as libc::pid_t, libc::SIGTERM) };
        let exit = daemon.child.wait().unwrap();
        assert!(
            exit.success(),
            "cycle {cycle}, seed {}: {exit:?}",
            self.seed
        );
        drop(daemon);
        let stopped = self.check_stopped();
        self.assert_held(cycle, stopped);
    }

    fn start(&self) -> Daemon {
        // A killed engine leaves its api.json: wait for the new one.
        let _ = std::fs::remove_file(self.data.join("api.json"));
        // No settle window: learning runs between the client's calls, so kills land in it.
        let mut command = serve_command(&self.data, &self.state_file);
        command
            .env("LULL_SCHEDULER_SETTLE_AFTER_PREEMPTION_S", "0")
            .env("RUST_LOG", "error");
        Daemon::spawn(&mut command, &self.data, START_LIMIT)
    }

    fn db(&self) -> Connection {
        read_only_db(&self.data)
    }

    fn assert_held(&self, cycle: u64, violations: Vec<Violation>) {
        if !violations.is_empty() {
            self.fail(cycle, violations);
        }
    }

    fn fail(&self, cycle: u64, violations: Vec<Violation>) -> ! {
        let listed: Vec<String> = violations
            .iter()
            .map(|v| format!("invariant `{}` violated: {}", v.invariant, v.detail))
            .collect();
        panic!(
            "crash: cycle {cycle}, seed {} (LULL_CRASH_SEED={} replays it): {} invariant \
             violation(s):\n{}",
            self.seed,
            self.seed,
            listed.len(),
            listed.join("\n")
        );
    }

    /// With the engine dead: the database as it left it.
    fn check_stopped(&mut self) -> Vec<Violation> {
        let db = self.db();
        let mut found = Vec::new();
        let integrity: String = db
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        if integrity != "ok" {
            found.push(violation("PRAGMA integrity_check is ok", integrity));
        }
        found.extend(check_reviews(&db, &self.ledger));
        found.extend(check_learning(&db, &self.ledger));
        let (jobs, orphans) = check_jobs(&db, &self.ledger);
        found.extend(jobs);
        self.orphans = orphans;
        let (routing, persisted) = check_routing(&db, &self.ledger, self.persisted_updates);
        found.extend(routing);
        self.persisted_updates = persisted;
        found
    }

    /// With the engine started again and the client quiet: the approval a kill cut off, the
    /// jobs it interrupted, the head it loaded, the skills folder.
    fn check_restarted(&mut self, api: &Api) -> Vec<Violation> {
        let mut found = Vec::new();
        if let Some(id) = self.ledger.approval_in_flight.take() {
            let (status, draft) = api.read(&format!("/v1/drafts/{id}"));
            if status == 200 && draft["status"] == "review_pending" {
                match api.call("POST", &format!("/v1/drafts/{id}/approve"), Some(json!({}))) {
                    Ok((200, _)) => {
                        self.ledger.approved.insert(id);
                    }
                    answer => found.push(violation(
                        "an approval cut off by a kill succeeds when clicked again",
                        format!("draft {id}: {answer:?}"),
                    )),
                }
            } else if draft["status"] == "approved" {
                self.ledger.approved.insert(id);
            }
        }
        for (id, rounds) in std::mem::take(&mut self.orphans) {
            let (_, job) = api.read(&format!("/v1/jobs/{id}"));
            let refusal = job["receipts"].as_array().and_then(|r| r.last()).cloned();
            let adopted = job["status"] == "interrupted"
                && job["stop_reason"] == "adopted_after_restart"
                && job["rounds_completed"] == rounds
                && refusal.as_ref().is_some_and(|receipt| {
                    receipt["kind"] == "refusal"
                        && receipt["payload"]["reason"] == "adopted_after_restart"
                });
            if !adopted {
                found.push(violation(
                    "a job running at the kill is interrupted on restart, its rounds kept",
                    format!("job {id} had {rounds} rounds at the kill; now {job}"),
                ));
            }
            self.jobs_adopted += 1;
        }
        let (_, status) = api.read("/v1/status");
        let updates = status["routing"]["updates"].as_i64().unwrap_or(-1);
        if updates < self.persisted_updates {
            found.push(violation(
                "the restarted head's update count is not below its saved snapshot's",
                format!(
                    "{updates} updates after the restart, {} saved",
                    self.persisted_updates
                ),
            ));
        }
        found.extend(check_skills_folder(&self.db(), &self.data.join("skills")));
        found
    }

    /// Reviews queued or running, and other learning work open.
    fn open_work(&self) -> i64 {
        self.db()
            .query_row(
                "SELECT (SELECT COUNT(*) FROM reviews WHERE status IN ('queued', 'running'))
                      + (SELECT COUNT(*) FROM learning_work WHERE status IN ('queued', 'running'))",
                [],
                |row| row.get(0),
            )
            .unwrap()
    }

    /// Once the queue drained: every acknowledged snapshot was reviewed, itself or through the
    /// newer one of its session it was coalesced into or superseded by.
    fn check_all_reviewed(&self) -> Vec<Violation> {
        let db = self.db();
        let mut found = Vec::new();
        for submission in &self.ledger.submissions {
            let Some(review_id) = &submission.review_id else {
                continue;
            };
            let reviewed: Option<String> = db
                .query_row(
                    "SELECT id FROM reviews WHERE session_key = ?1 AND status = 'done'
                         AND snapshot_at >= (SELECT snapshot_at FROM reviews WHERE id = ?2)",
                    [&submission.session, review_id],
                    |row| row.get(0),
                )
                .optional()
                .unwrap();
            if reviewed.is_none() {
                found.push(violation(
                    "every acknowledged snapshot is reviewed once the queue drains",
                    format!(
                        "session {} snapshot {} (review {review_id}) has no done review of it or \
                         a newer snapshot",
                        submission.session, submission.snapshot_at
                    ),
                ));
            }
        }
        found
    }
}

fn seed_skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
}

/// The review queue as the dead engine left it, against what the client sent and was told.
fn check_reviews(db: &Connection, ledger: &Ledger) -> Vec<Violation> {
    let mut found = Vec::new();
    let rows: Vec<(String, String, String, i64)> = query(
        db,
        "SELECT id, session_key, status, snapshot_at FROM reviews",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
    );
    let by_id: HashMap<&str, (&str, &str, i64)> = rows
        .iter()
        .map(|(id, session, status, at)| (id.as_str(), (session.as_str(), status.as_str(), *at)))
        .collect();
    let sent: BTreeSet<(&str, i64)> = ledger
        .submissions
        .iter()
        .map(|s| (s.session.as_str(), s.snapshot_at))
        .collect();
    let live = |status: &str| matches!(status, "queued" | "running" | "done");
    let mut live_per_snapshot: BTreeMap<(&str, i64), u32> = BTreeMap::new();
    let mut running_per_session: BTreeMap<&str, u32> = BTreeMap::new();
    for (id, session, status, at) in &rows {
        if !sent.contains(&(session.as_str(), *at)) {
            found.push(violation(
                "no review of a snapshot that was never sent",
                format!("review {id}: session {session} snapshot {at} ({status})"),
            ));
        }
        if live(status) {
            *live_per_snapshot.entry((session, *at)).or_default() += 1;
        }
        if status == "running" {
            *running_per_session.entry(session).or_default() += 1;
        }
    }
    for ((session, at), count) in live_per_snapshot {
        if count > 1 {
            found.push(violation(
                "a snapshot is queued, running or done exactly once",
                format!("session {session} snapshot {at}: {count} live reviews"),
            ));
        }
    }
    for (session, count) in running_per_session {
        if count > 1 {
            found.push(violation(
                "a session has at most one running review",
                format!("session {session}: {count}"),
            ));
        }
    }
    for submission in &ledger.submissions {
        let Some(id) = &submission.review_id else {
            continue;
        };
        let (session, snapshot) = (&submission.session, submission.snapshot_at);
        let Some(&(row_session, status, row_at)) = by_id.get(id.as_str()) else {
            found.push(violation(
                "every acknowledged review is stored",
                format!("review {id} (session {session} snapshot {snapshot}) is missing"),
            ));
            continue;
        };
        let kept = row_session == session
            && row_at >= snapshot
            && (live(status)
                || (status == "superseded"
                    && rows
                        .iter()
                        .any(|(_, s, st, at)| s == session && *at >= row_at && live(st))));
        if !kept {
            found.push(violation(
                "an acknowledged snapshot is live, or coalesced into a newer live one",
                format!(
                    "session {session} snapshot {snapshot}: its review {id} is {status} \
                     (session {row_session}, snapshot {row_at})"
                ),
            ));
        }
    }
    found
}

/// Candidates, drafts, their queued work and their provenance.
fn check_learning(db: &Connection, ledger: &Ledger) -> Vec<Violation> {
    let mut found = Vec::new();
    let checks: [(&'static str, &str); 7] = [
        (
            "candidates come only from a review that is done",
            "SELECT c.id || ' of review ' || c.review_id || ' (' || COALESCE(r.status, 'missing') || ')'
             FROM candidates c LEFT JOIN reviews r ON r.id = c.review_id
             WHERE r.status IS NOT 'done'",
        ),
        (
            "no candidate has two drafts",
            "SELECT candidate_id || ': ' || COUNT(*) || ' drafts' FROM drafts
             GROUP BY candidate_id HAVING COUNT(*) > 1",
        ),
        (
            "a drafted candidate names its draft",
            "SELECT c.id FROM candidates c
             WHERE c.status = 'drafted'
               AND NOT EXISTS (SELECT 1 FROM drafts d WHERE d.id = c.draft_id AND d.candidate_id = c.id)",
        ),
        (
            "a candidate being drafted has its synthesis queued or running",
            "SELECT c.id FROM candidates c
             WHERE c.status = 'drafting'
               AND NOT EXISTS (SELECT 1 FROM learning_work w WHERE w.kind = 'synthesize'
                               AND w.subject_id = c.id AND w.status IN ('queued', 'running'))",
        ),
        (
            "a draft being evaluated has its evaluation queued or running",
            "SELECT d.id FROM drafts d
             WHERE d.status = 'evaluating'
               AND NOT EXISTS (SELECT 1 FROM learning_work w WHERE w.kind = 'evaluate'
                               AND w.subject_id = d.id AND w.status IN ('queued', 'running'))",
        ),
        (
            "an approved draft has its provenance",
            "SELECT d.id || ' (' || d.skill || ')' FROM drafts d
             WHERE d.status = 'approved'
               AND NOT EXISTS (SELECT 1 FROM skill_versions v WHERE v.draft_id = d.id AND v.action = 'approve')",
        ),
        (
            "a skill Lull wrote was written by an approved draft",
            "SELECT v.skill || ' v' || v.version FROM skill_versions v
             LEFT JOIN drafts d ON d.id = v.draft_id
             WHERE v.action = 'approve' AND d.status IS NOT 'approved'",
        ),
    ];
    for (invariant, sql) in checks {
        for offender in query(db, sql, [], |row| row.get::<_, String>(0)) {
            found.push(violation(invariant, offender));
        }
    }
    for id in &ledger.approved {
        let status: Option<String> = db
            .query_row("SELECT status FROM drafts WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
            .unwrap();
        if status.as_deref() != Some("approved") {
            found.push(violation(
                "a draft whose approval was acknowledged stays approved",
                format!("draft {id} is {status:?}"),
            ));
        }
    }
    let stored = |sql: &str, id: &str| -> bool {
        db.query_row(sql, [id], |_| Ok(()))
            .optional()
            .unwrap()
            .is_some()
    };
    for id in &ledger.routes {
        if !stored("SELECT 1 FROM routing_routes WHERE id = ?1", id) {
            found.push(violation("every acknowledged route is logged", id.clone()));
        }
    }
    for id in &ledger.outcomes {
        if !stored("SELECT 1 FROM routing_outcomes WHERE route_id = ?1", id) {
            found.push(violation(
                "every acknowledged outcome is logged",
                id.clone(),
            ));
        }
    }
    found
}

/// Every job's checkpoint chain and receipts; returns the jobs the next start must adopt (with
/// their rounds).
fn check_jobs(db: &Connection, ledger: &Ledger) -> (Vec<Violation>, BTreeMap<String, i64>) {
    let mut found = Vec::new();
    let jobs: Vec<(String, String, i64)> = query(
        db,
        "SELECT id, status, rounds_completed FROM jobs",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    );
    let known: BTreeSet<&str> = jobs.iter().map(|(id, _, _)| id.as_str()).collect();
    for id in &ledger.jobs {
        if !known.contains(id.as_str()) {
            found.push(violation("every acknowledged job is stored", id.clone()));
        }
    }
    let mut orphans = BTreeMap::new();
    for (id, status, rounds_completed) in &jobs {
        let checkpoints: Vec<(i64, Vec<u8>, String, Option<String>)> = query(
            db,
            "SELECT round, state, sha256, parent_sha256 FROM job_checkpoints
             WHERE job_id = ?1 ORDER BY round",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        );
        let mut parent: Option<String> = None;
        for (index, (round, state, sha, parent_sha)) in checkpoints.iter().enumerate() {
            let intact =
                *round == index as i64 + 1 && *sha == sha256_hex(state) && *parent_sha == parent;
            if !intact {
                found.push(violation(
                    "a job's checkpoints form an intact chain",
                    format!("job {id} round {round} (position {}): sha {sha}, parent {parent_sha:?}, expected parent {parent:?}", index + 1),
                ));
            }
            parent = Some(sha.clone());
        }
        if checkpoints.len() as i64 != *rounds_completed {
            found.push(violation(
                "a round counts only with its checkpoint",
                format!(
                    "job {id}: {rounds_completed} rounds completed, {} checkpoints",
                    checkpoints.len()
                ),
            ));
        }
        let receipts: Vec<(i64, String, String, String)> = query(
            db,
            "SELECT seq, kind, payload, digest FROM job_receipts WHERE job_id = ?1 ORDER BY seq",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        );
        for (index, (seq, kind, payload, digest)) in receipts.iter().enumerate() {
            let kind: ReceiptKind = serde_json::from_value(json!(kind)).unwrap();
            let payload: Value = serde_json::from_str(payload).unwrap();
            if *seq != index as i64 + 1 || *digest != receipt_digest(kind, &payload) {
                found.push(violation(
                    "a job's receipts are dense, each digest reproducible",
                    format!("job {id}: receipt {seq} at position {}", index + 1),
                ));
            }
        }
        if receipts.is_empty() {
            found.push(violation(
                "a job is admitted with its receipt",
                format!("job {id} ({status}) has no receipt"),
            ));
        }
        if matches!(status.as_str(), "running" | "queued") {
            orphans.insert(id.clone(), *rounds_completed);
        }
    }
    (found, orphans)
}

/// The saved head against the last one seen and the outcomes logged; returns its count.
fn check_routing(db: &Connection, ledger: &Ledger, last_persisted: i64) -> (Vec<Violation>, i64) {
    let mut found = Vec::new();
    let heads: Vec<(i64, Vec<u8>, i64)> = query(
        db,
        "SELECT dim, snapshot, update_count FROM routing_heads",
        [],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    );
    let outcomes: i64 = db
        .query_row("SELECT COUNT(*) FROM routing_outcomes", [], |row| {
            row.get(0)
        })
        .unwrap();
    if heads.len() > 1 {
        found.push(violation(
            "one embedder, one saved head",
            format!("{} saved heads", heads.len()),
        ));
    }
    let persisted = heads.first().map_or(0, |(_, _, count)| *count);
    if let Some((dim, snapshot, count)) = heads.first() {
        match HeadSnapshot::from_bytes(snapshot, *dim as usize) {
            Ok(head) if head.update_count as i64 == *count => {}
            other => found.push(violation(
                "the saved head's snapshot is whole and holds its count",
                format!(
                    "{count} updates recorded; the snapshot: {:?}",
                    other.map(|h| h.update_count)
                ),
            )),
        }
    }
    if persisted < last_persisted {
        found.push(violation(
            "the saved head's update count never goes down",
            format!("{persisted} saved, {last_persisted} before"),
        ));
    }
    if persisted > outcomes || (ledger.outcomes.len() as i64) > outcomes {
        found.push(violation(
            "the head learned only from logged outcomes, and every acknowledged one is logged",
            format!(
                "{persisted} updates saved, {outcomes} outcomes logged, {} acknowledged",
                ledger.outcomes.len()
            ),
        ));
    }
    (found, persisted)
}

/// The skills folder against the provenance: each skill Lull wrote as it recorded, whole; the
/// seed skills untouched; nothing else.
fn check_skills_folder(db: &Connection, dir: &Path) -> Vec<Violation> {
    let mut found = Vec::new();
    let latest: BTreeMap<String, Option<String>> = query(
        db,
        "SELECT skill, sha256 FROM skill_versions v
         WHERE version = (SELECT MAX(version) FROM skill_versions w WHERE w.skill = v.skill)",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .into_iter()
    .collect();
    let mut expected: BTreeMap<String, String> = SEED_SKILLS
        .iter()
        .map(|(name, description)| {
            (
                name.to_string(),
                sha256_hex(seed_skill_md(name, description).as_bytes()),
            )
        })
        .collect();
    for (skill, sha) in &latest {
        match sha {
            Some(sha) => {
                expected.insert(skill.clone(), sha.clone());
            }
            None => {
                expected.remove(skill);
            }
        }
    }
    let mut seen = BTreeSet::new();
    for entry in walk(dir) {
        let relative = entry
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let skill = relative.strip_suffix("/SKILL.md");
        match skill.and_then(|skill| expected.get(skill).map(|sha| (skill, sha))) {
            Some((skill, sha)) => {
                let on_disk = sha256_hex(&std::fs::read(&entry).unwrap());
                if on_disk != *sha {
                    found.push(violation(
                        "a skill on disk is whole and what its approval recorded",
                        format!("{relative}: sha256 {on_disk}, recorded {sha}"),
                    ));
                }
                seen.insert(skill.to_string());
            }
            None => found.push(violation(
                "nothing is in the skills folder that no approval wrote",
                relative,
            )),
        }
    }
    for skill in expected.keys().filter(|skill| !seen.contains(*skill)) {
        found.push(violation(
            "no approved skill is missing from disk",
            format!("{skill}/SKILL.md"),
        ));
    }
    found
}

/// Every file below `dir`, folders left out.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

fn query<T>(
    db: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Vec<T> {
    let mut statement = db.prepare(sql).unwrap();
    let rows = statement
        .query_map(params, map)
        .unwrap()
        .collect::<Result<Vec<T>, _>>()
        .unwrap();
    rows
}

/// The engine's API as the client calls it.
struct Api {
    base_url: String,
    token: String,
}

impl Api {
    fn of(daemon: &Daemon) -> Api {
        Api {
            base_url: daemon.base_url.clone(),
            token: daemon.token.trim().to_string(),
        }
    }

    /// A GET of an engine that must answer: nothing kills it while it is checked.
    fn read(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, None).unwrap_or_else(|unanswered| {
            panic!("GET {path} of the restarted engine: {unanswered:?}")
        })
    }

    /// `method path` with an optional JSON body: the status and the JSON answer (null if none).
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), Unanswered> {
        let body = body.map(|body| body.to_string());
        let (status, text) = request(
            method,
            &format!("{}{path}", self.base_url),
            Some(&self.token),
            body.as_deref(),
        )?;
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).map_err(|_| Unanswered::Lost)?
        };
        Ok((status, value))
    }
}

/// The agent and the person, for one cycle: calls until the engine stops answering.
struct Client<'a> {
    api: &'a Api,
    ledger: &'a Mutex<Ledger>,
    rng: StdRng,
    reviews_left: u32,
    routes_left: u32,
    lease: Option<String>,
}

/// Why a call ended the client's cycle.
enum Stop {
    /// The engine was gone before the request: it did not land.
    NotSent,
    /// The kill cut the request off: it may have landed.
    Lost,
    /// The engine answered what the API does not allow.
    Wrong(String),
}

/// Requests a route is asked for: the seed skills' own words, so outcomes vary.
const QUERIES: [(&str, &str); 3] = [
    ("deploy the payments api to staging", "deploy-staging"),
    ("add a column to the orders table", "db-migration"),
    ("the certificate expires next week", "rotate-certs"),
];

impl<'a> Client<'a> {
    fn new(api: &'a Api, ledger: &'a Mutex<Ledger>, seed: u64) -> Client<'a> {
        Client {
            api,
            ledger,
            rng: StdRng::seed_from_u64(seed),
            reviews_left: REVIEWS_PER_CYCLE,
            routes_left: ROUTES_PER_CYCLE,
            lease: None,
        }
    }

    /// Calls until the engine is gone; `Some` names a wrong answer.
    fn run(mut self) -> Option<String> {
        loop {
            // An agent's pace between calls, not a wait for a condition.
            thread::sleep(Duration::from_millis(self.rng.random_range(CALL_GAP_MS)));
            let step = match self.rng.random_range(0..10) {
                0..=2 => self.submit_review(),
                3 => self.turn(),
                4..=6 => self.route(),
                7 | 8 => self.decide_drafts(),
                _ => self.start_job(),
            };
            match step {
                Ok(()) => continue,
                Err(Stop::NotSent | Stop::Lost) => return None,
                Err(Stop::Wrong(message)) => return Some(message),
            }
        }
    }

    /// A call whose answer must have one of the `expected` statuses; a request the kill cut
    /// off is counted.
    fn call(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
        expected: &[u16],
    ) -> Result<Value, Stop> {
        match self.api.call(method, path, body) {
            Ok((status, answer)) if expected.contains(&status) => Ok(answer),
            Ok((status, answer)) => Err(Stop::Wrong(format!(
                "{method} {path} answered {status}: {answer}"
            ))),
            Err(Unanswered::Lost) => {
                self.ledger.lock().unwrap().kills_mid_request += 1;
                Err(Stop::Lost)
            }
            Err(Unanswered::NotSent) => Err(Stop::NotSent),
        }
    }

    /// A read, when the budget of what it was asked to do is spent.
    fn look_around(&mut self) -> Result<(), Stop> {
        self.call("GET", "/v1/status", None, &[200]).map(drop)
    }

    /// The next snapshot of a session: its conversation grown by a turn that asks to remember
    /// one of the learned skills.
    fn submit_review(&mut self) -> Result<(), Stop> {
        if self.reviews_left == 0 {
            return self.look_around();
        }
        self.reviews_left -= 1;
        let session_index = self.rng.random_range(0..SESSIONS);
        let skill = LEARNED_SKILLS[self.rng.random_range(0..LEARNED_SKILLS.len())];
        let focus = self
            .rng
            .random_bool(0.1)
            .then_some("what the person asked to keep");
        let body = {
            let mut ledger = self.ledger.lock().unwrap();
            let snapshot_at = ledger.next_snapshot_at;
            ledger.next_snapshot_at += 1;
            let conversation = &mut ledger.conversations[session_index];
            conversation.extend([
                json!({"role": "user", "content": format!("the build broke again (turn {snapshot_at})")}),
                json!({"role": "assistant", "content": "I reproduced it, found the change and checked the fix"}),
                json!({"role": "user", "content": format!("good; remember this as {skill}")}),
            ]);
            let session = format!("s{session_index}");
            let body = json!({"session_key": session, "messages": conversation,
                              "focus": focus, "snapshot_at": snapshot_at});
            // Recorded before it is sent: a kill may land it without an answer.
            ledger.submissions.push(Submission {
                session,
                snapshot_at,
                review_id: None,
            });
            body
        };
        let answer = self.call("POST", "/v1/reviews", Some(body), &[202]);
        let mut ledger = self.ledger.lock().unwrap();
        match answer {
            Ok(answer) => {
                if answer["decision"] == "coalesced" {
                    ledger.coalesced += 1;
                }
                let submission = ledger.submissions.last_mut().unwrap();
                submission.review_id = answer["review_id"].as_str().map(str::to_string);
                Ok(())
            }
            Err(Stop::NotSent) => {
                ledger.submissions.pop();
                Err(Stop::NotSent)
            }
            Err(stop) => Err(stop),
        }
    }

    /// Starts a live turn, or finishes the one it holds.
    fn turn(&mut self) -> Result<(), Stop> {
        match self.lease.take() {
            Some(lease_id) => self
                .call(
                    "POST",
                    "/v1/turns/finish",
                    Some(json!({ "lease_id": lease_id })),
                    &[204],
                )
                .map(drop),
            None => {
                let session = format!("s{}", self.rng.random_range(0..SESSIONS));
                let answer = self.call(
                    "POST",
                    "/v1/turns/start",
                    Some(json!({ "session_key": session })),
                    &[200],
                )?;
                self.lease = answer["lease_id"].as_str().map(str::to_string);
                Ok(())
            }
        }
    }

    /// A route and the outcome of one of its skills: a success when it is the skill the
    /// request names.
    fn route(&mut self) -> Result<(), Stop> {
        if self.routes_left == 0 {
            return self.look_around();
        }
        self.routes_left -= 1;
        let (query, right) = QUERIES[self.rng.random_range(0..QUERIES.len())];
        let answer = self.call("POST", "/v1/route", Some(json!({ "query": query })), &[200])?;
        let route_id = answer["route_id"].as_str().unwrap_or_default().to_string();
        self.ledger.lock().unwrap().routes.push(route_id.clone());
        let ranked = answer["ranked"].as_array().cloned().unwrap_or_default();
        if ranked.is_empty() {
            return Err(Stop::Wrong(format!("a route ranked no skill: {answer}")));
        }
        let chosen = ranked[self.rng.random_range(0..ranked.len())]["skill"].clone();
        let outcome = if chosen == right {
            "success"
        } else {
            "failure"
        };
        let report = json!({ "route_id": route_id, "skill": chosen, "outcome": outcome });
        self.call("POST", "/v1/outcomes", Some(report), &[204])?;
        self.ledger.lock().unwrap().outcomes.push(route_id);
        Ok(())
    }

    /// The person decides the drafts that wait: approve, edit then approve, or reject.
    fn decide_drafts(&mut self) -> Result<(), Stop> {
        let answer = self.call("GET", "/v1/drafts?status=review_pending", None, &[200])?;
        for draft in answer["drafts"].as_array().cloned().unwrap_or_default() {
            let id = draft["id"].as_str().unwrap_or_default().to_string();
            match self.rng.random_range(0..10) {
                0..=4 => self.approve(&id)?,
                5 | 6 => {
                    let edited = format!(
                        "{}\nEdited by a person.\n",
                        draft["skill_md"].as_str().unwrap_or_default()
                    );
                    let path = format!("/v1/drafts/{id}/edit");
                    self.call("POST", &path, Some(json!({ "skill_md": edited })), &[200])?;
                    self.approve(&id)?;
                }
                _ => {
                    let path = format!("/v1/drafts/{id}/reject");
                    let reason = json!({ "reason": "not what I want" });
                    self.call("POST", &path, Some(reason), &[200])?;
                }
            }
        }
        Ok(())
    }

    fn approve(&mut self, id: &str) -> Result<(), Stop> {
        self.ledger.lock().unwrap().approval_in_flight = Some(id.to_string());
        let answer = self.call(
            "POST",
            &format!("/v1/drafts/{id}/approve"),
            Some(json!({})),
            &[200],
        );
        let mut ledger = self.ledger.lock().unwrap();
        match answer {
            Ok(_) => {
                ledger.approval_in_flight = None;
                ledger.approved.insert(id.to_string());
                Ok(())
            }
            Err(Stop::NotSent) => {
                ledger.approval_in_flight = None;
                Err(Stop::NotSent)
            }
            Err(stop) => Err(stop),
        }
    }

    /// Resumes a job a kill interrupted, or starts one once enough outcomes are logged; one
    /// job at a time, so training never starves the rest on two cores.
    fn start_job(&mut self) -> Result<(), Stop> {
        if self.ledger.lock().unwrap().outcomes.len() < OUTCOMES_BEFORE_JOBS {
            return self.look_around();
        }
        let jobs = self.call("GET", "/v1/jobs", None, &[200])?;
        let jobs = jobs["jobs"].as_array().cloned().unwrap_or_default();
        if jobs
            .iter()
            .any(|job| matches!(job["status"].as_str(), Some("queued" | "running")))
        {
            return Ok(());
        }
        if let Some(job) = jobs.iter().find(|job| job["resumable"] == true) {
            let path = format!("/v1/jobs/{}/resume", job["id"].as_str().unwrap_or_default());
            return self.call("POST", &path, None, &[200]).map(drop);
        }
        let max_rounds = self.rng.random_range(JOB_ROUNDS);
        let body = json!({"kind": "routing-head",
                          "stopping": {"max_rounds": max_rounds, "wall_clock_s": 120}});
        match self.api.call("POST", "/v1/jobs", Some(body)) {
            Ok((201, job)) => {
                let id = job["id"].as_str().unwrap_or_default().to_string();
                self.ledger.lock().unwrap().jobs.push(id);
                Ok(())
            }
            // Too few outcomes of this embedder held out yet: a refusal, not a fault.
            Ok((_, refused)) if refused["error"]["code"] == "no_data" => Ok(()),
            Ok((status, answer)) => Err(Stop::Wrong(format!(
                "POST /v1/jobs answered {status}: {answer}"
            ))),
            Err(Unanswered::Lost) => {
                self.ledger.lock().unwrap().kills_mid_request += 1;
                Err(Stop::Lost)
            }
            Err(Unanswered::NotSent) => Err(Stop::NotSent),
        }
    }
}
