//! Training jobs end to end on a real engine (DESIGN §2.4): a routing head is trained from
//! outcomes logged through the engine's own `route` and `outcome`, round by round, with a
//! checkpoint and receipts per round; each stopping rule; cancel at once; a live turn pausing
//! training; an engine restart under a running job (interrupted, not retrained) and the
//! explicit resume that verifies the chain (refused on a tampered or missing checkpoint and a
//! changed dataset); reproducible artifacts; promote; the battery and the machine's sleep
//! pausing training, the sleep not counted against the budget.

#[path = "common/fake_system.rs"]
mod fake_system;

use std::sync::Arc;
use std::time::Duration;

use lull::config::Config;
use lull::engine::Seams;
use lull::events::{EngineEvent, EventBus};
use lull::jobs::records::{JobStatus, ReceiptKind, Stopping};
use lull::jobs::service::JobView;
use lull::llm::HttpLlmClient;
use lull::routing::{BuiltInEmbedderOnly, Outcome};
use lull::server::{ManualProbe, ServerReading, ServerState};
use lull::store::Store;
use lull::{Engine, EngineError, ErrorCode, Paths};
use tokio::sync::broadcast;

const SKILLS: [(&str, &str); 3] = [
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

struct Harness {
    dir: tempfile::TempDir,
    engine: Engine,
    store: Store,
    /// Subscribed before the engine opened: it hears what the engine announced while opening.
    heard: broadcast::Receiver<EngineEvent>,
}

impl Harness {
    async fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        for (name, description) in SKILLS {
            let folder = paths_in(dir.path()).data_dir.join("skills").join(name);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(
                folder.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
            )
            .unwrap();
        }
        let (engine, store, heard) = open(dir.path(), None).await;
        Harness {
            dir,
            engine,
            store,
            heard,
        }
    }

    /// A harness whose engine reads the machine from `host`.
    async fn on_host(host: lull::power::HostSources) -> Harness {
        let harness = Harness::new().await;
        harness.engine.shutdown().await;
        let (engine, store, heard) = open(harness.dir.path(), Some(host)).await;
        Harness {
            engine,
            store,
            heard,
            ..harness
        }
    }

    /// Stops this engine (as a quit or a crash would leave its jobs) and starts a new one on
    /// the same data folder.
    async fn restart(self) -> Harness {
        self.engine.shutdown().await;
        let (engine, store, heard) = open(self.dir.path(), None).await;
        Harness {
            dir: self.dir,
            engine,
            store,
            heard,
        }
    }

    /// Logs `n` routes with outcomes: the skill a request names succeeds, the others fail.
    async fn log_outcomes(&self, n: usize) {
        let requests = [
            ("deploy the payments api to staging", "deploy-staging"),
            ("add a column to the orders table", "db-migration"),
            ("the certificate expires next week", "rotate-certs"),
        ];
        for i in 0..n {
            let (query, right) = requests[i % requests.len()];
            let answer = self
                .engine
                .route(&format!("{query} #{i}"), None)
                .await
                .unwrap();
            let chosen = &answer.ranked[i % answer.ranked.len()].skill;
            let outcome = if chosen == right {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            self.engine
                .record_outcome(&answer.route_id, chosen, outcome)
                .await
                .unwrap();
        }
    }

    /// Waits for the job to leave `queued`/`running`.
    async fn ended(&self, id: &str) -> JobView {
        for _ in 0..600 {
            let job = self.engine.job(id).await.unwrap();
            if !matches!(job.status, JobStatus::Queued | JobStatus::Running) {
                return job;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("job {id} did not end in 30 s");
    }
}

fn paths_in(dir: &std::path::Path) -> Paths {
    Paths {
        data_dir: dir.join("data"),
        config_file: dir.join("config.toml"),
    }
}

async fn open(
    dir: &std::path::Path,
    host: Option<lull::power::HostSources>,
) -> (Engine, Store, broadcast::Receiver<EngineEvent>) {
    let mut config = Config::default();
    config.server.state_file = dir.join("no-supervisor/server.json");
    config.learning.max_drafts_per_run = 0;
    let paths = paths_in(dir);
    lull::data_dir::create_private_dir(&paths.data_dir).unwrap();
    let store = Store::open(&paths.database()).unwrap();
    let seams = Seams {
        server: Arc::new(ManualProbe::new(ServerReading::not_ready(
            ServerState::Absent,
            None,
            "no managed server in this test",
        ))),
        server_changes: None,
        llm: Arc::new(HttpLlmClient::default()),
        store: Some(store.clone()),
        embedders: Arc::new(BuiltInEmbedderOnly),
        clock: None,
        events: EventBus::default(),
        host,
    };
    let heard = seams.events.subscribe();
    (
        Engine::open_with(config, paths, seams).await.unwrap(),
        store,
        heard,
    )
}

fn rounds(max_rounds: u32) -> Stopping {
    Stopping {
        max_rounds,
        target: None,
        min_improvement: None,
        wall_clock_s: 600,
    }
}

fn assert_dense(job: &JobView) {
    let seqs: Vec<u32> = job.receipts.iter().map(|r| r.seq).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u32).collect::<Vec<_>>(),
        "receipts are dense"
    );
    for receipt in &job.receipts {
        assert_eq!(
            receipt.digest,
            lull::jobs::records::receipt_digest(receipt.kind, &receipt.payload),
            "a receipt's digest is reproducible"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_trains_to_max_rounds_with_a_checkpoint_chain_and_a_reproducible_artifact() {
    let harness = Harness::new().await;
    harness.log_outcomes(240).await;
    let job = harness.engine.start_job(rounds(3)).await.unwrap();
    assert!(
        job.dataset.examples >= 200 && job.dataset.heldout > 0,
        "{:?}",
        job.dataset
    );
    let done = harness.ended(&job.id).await;
    assert_eq!(
        (done.status, done.rounds_completed),
        (JobStatus::Completed, 3)
    );
    assert_eq!(done.stop_reason.as_deref(), Some("max_rounds"));
    assert_eq!(done.metrics.len(), 3);
    assert!(done.metrics[0].heldout_loss.is_finite());
    assert!(
        done.metrics[0].live_heldout_loss.is_finite(),
        "the live head is measured too"
    );
    assert_eq!(done.checkpoints.len(), 3);
    assert_eq!(done.checkpoints[0].parent_sha256, None);
    for pair in done.checkpoints.windows(2) {
        assert_eq!(
            pair[1].parent_sha256.as_ref(),
            Some(&pair[0].sha256),
            "each names its parent"
        );
    }
    assert_dense(&done);
    let kinds: Vec<ReceiptKind> = done.receipts.iter().map(|r| r.kind).collect();
    assert_eq!(kinds[0], ReceiptKind::Admission);
    assert_eq!(*kinds.last().unwrap(), ReceiptKind::Artifact);
    assert!(done.promotable);

    let again = harness.engine.start_job(rounds(3)).await.unwrap();
    let again = harness.ended(&again.id).await;
    assert_eq!(
        again.artifact, done.artifact,
        "the same data and policy give the same artifact, bit for bit"
    );
    assert_eq!(harness.engine.status().await.unwrap().jobs.running, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_stopping_rule_stops_the_job_and_says_why() {
    let harness = Harness::new().await;
    harness.log_outcomes(150).await;
    let target = harness
        .engine
        .start_job(Stopping {
            target: Some(0.01),
            ..rounds(50)
        })
        .await
        .unwrap();
    let target = harness.ended(&target.id).await;
    assert_eq!(
        (target.status, target.rounds_completed),
        (JobStatus::Completed, 1)
    );
    assert_eq!(target.stop_reason.as_deref(), Some("target_reached"));

    let flat = harness
        .engine
        .start_job(Stopping {
            min_improvement: Some(10.0),
            ..rounds(50)
        })
        .await
        .unwrap();
    let flat = harness.ended(&flat.id).await;
    assert_eq!(
        (flat.status, flat.rounds_completed),
        (JobStatus::Completed, 2)
    );
    assert_eq!(flat.stop_reason.as_deref(), Some("min_improvement"));

    let budget = harness
        .engine
        .start_job(Stopping {
            wall_clock_s: 1,
            ..rounds(10_000)
        })
        .await
        .unwrap();
    let budget = harness.ended(&budget.id).await;
    assert_eq!(
        budget.status,
        JobStatus::BudgetExhausted,
        "{:?}",
        budget.stop_reason
    );
    assert_eq!(budget.stop_reason.as_deref(), Some("wall_clock_budget"));
    assert!(budget.resumable && budget.rounds_completed > 0);

    for bad in [
        rounds(0),
        Stopping {
            wall_clock_s: 0,
            ..rounds(1)
        },
        Stopping {
            target: Some(1.5),
            ..rounds(1)
        },
    ] {
        assert!(matches!(
            harness.engine.start_job(bad).await,
            Err(EngineError::Invalid(_))
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_turn_pauses_training_and_cancel_stops_it_within_a_second() {
    let harness = Harness::new().await;
    harness.log_outcomes(150).await;
    let mut events = harness.engine.events().subscribe();
    let lease = harness.engine.start_turn();
    let job = harness.engine.start_job(rounds(1000)).await.unwrap();
    // The job pauses while the turn is live.
    job_paused(&harness, &job.id, true).await;
    let before = harness.engine.job(&job.id).await.unwrap().rounds_completed;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        harness.engine.job(&job.id).await.unwrap().rounds_completed,
        before,
        "no round while paused"
    );

    harness.engine.finish_turn(&lease).unwrap();
    // Training goes on once the turn ends.
    a_round_completes(&mut events).await;
    let asked = std::time::Instant::now();
    let cancelled = harness.engine.cancel_job(&job.id).await.unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "cancel took {:?}",
        asked.elapsed()
    );
    assert_eq!(cancelled.status, JobStatus::Cancelled);
    assert!(
        cancelled.rounds_completed > 0
            && cancelled.checkpoints.len() == cancelled.rounds_completed as usize,
        "checkpoints are kept"
    );
    assert!(cancelled
        .receipts
        .iter()
        .any(|r| r.kind == ReceiptKind::Cancel));
    assert_dense(&cancelled);
}

/// Waits, at most 10 s, until the job's `paused` is `paused`.
async fn job_paused(harness: &Harness, id: &str, paused: bool) -> JobView {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let job = harness.engine.job(id).await.unwrap();
            if job.paused == paused {
                return job;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the job's paused did not become {paused}"))
}

/// Waits, at most 10 s, for a round of the job to complete.
async fn a_round_completes(events: &mut broadcast::Receiver<EngineEvent>) {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(EngineEvent::JobProgress {
                metrics: Some(_), ..
            }) = events.recv().await
            {
                break;
            }
        }
    })
    .await
    .expect("a round completes");
}

/// Issue 27: on battery (jobs off on battery by default) a job waits at its first mini-batch
/// and trains once AC returns; before the machine sleeps it pauses, and only then is logind's
/// inhibitor let go; two hours asleep are not two hours of its 10-minute budget, so after the
/// wake it trains on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_battery_and_the_machines_sleep_pause_training_and_the_sleep_is_no_training_time() {
    let fakes = fake_system::FakeSystem::start(true, 95.0).await;
    let suspend_clock = Arc::new(lull::power::ManualSuspendClock::default());
    let harness = Harness::on_host(fakes.host_sources(suspend_clock.clone())).await;
    harness.log_outcomes(150).await;
    tokio::time::timeout(Duration::from_secs(10), async {
        while harness
            .engine
            .status()
            .await
            .unwrap()
            .power
            .training_held
            .is_none()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the engine reads the battery");
    let mut events = harness.engine.events().subscribe();
    let job = harness.engine.start_job(rounds(1000)).await.unwrap();
    job_paused(&harness, &job.id, true).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        harness.engine.job(&job.id).await.unwrap().rounds_completed,
        0
    );
    let held = harness.engine.status().await.unwrap().power;
    assert_eq!(
        held.training_held.as_deref(),
        Some("paused: on battery (95 %); training resumes on AC (power.jobs_on_battery = false)")
    );
    assert_eq!(
        held.learning_held, None,
        "95 % is above the learning threshold"
    );

    fakes.set_on_battery(false).await;
    a_round_completes(&mut events).await;
    fakes.inhibitors_until(1, 1).await;
    fakes.prepare_for_sleep(true).await;
    fakes.inhibitors_until(1, 0).await;
    let asleep = harness.engine.job(&job.id).await.unwrap();
    assert!(
        asleep.paused,
        "the job paused before the machine was let sleep"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        harness.engine.job(&job.id).await.unwrap().rounds_completed,
        asleep.rounds_completed,
        "no round while the machine sleeps"
    );

    suspend_clock.sleep_for(Duration::from_secs(2 * 3600));
    fakes.prepare_for_sleep(false).await;
    job_paused(&harness, &job.id, false).await;
    while events.try_recv().is_ok() {}
    a_round_completes(&mut events).await;
    let awake = harness.engine.job(&job.id).await.unwrap();
    assert_eq!(
        awake.status,
        JobStatus::Running,
        "the sleep did not spend the 600 s budget"
    );
    assert!(awake.rounds_completed > asleep.rounds_completed);
    harness.engine.cancel_job(&job.id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_interrupts_a_running_job_which_resumes_only_when_asked_from_its_last_round() {
    let harness = Harness::new().await;
    harness.log_outcomes(150).await;
    let job = harness.engine.start_job(rounds(6)).await.unwrap();
    // Held by a live turn after its first round, then the engine stops under it.
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if harness.engine.job(&job.id).await.unwrap().rounds_completed >= 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    let _lease = harness.engine.start_turn();
    let mut harness = harness.restart().await;

    let adopted = harness.engine.job(&job.id).await.unwrap();
    assert_eq!(adopted.status, JobStatus::Interrupted);
    // Announced while the engine opened, to a listener that came first (the tray's notes).
    let announced = std::iter::from_fn(|| harness.heard.try_recv().ok()).find(|event| {
        matches!(event, EngineEvent::JobChanged { job_id, status: JobStatus::Interrupted } if *job_id == job.id)
    });
    assert!(announced.is_some(), "the adoption was announced");
    assert_eq!(
        adopted.stop_reason.as_deref(),
        Some("adopted_after_restart")
    );
    let refusal = adopted
        .receipts
        .iter()
        .rev()
        .find(|r| r.kind == ReceiptKind::Refusal)
        .expect("a refusal receipt");
    assert_eq!(refusal.payload["reason"], "adopted_after_restart");
    let rounds_then = adopted.rounds_completed;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        harness.engine.job(&job.id).await.unwrap().rounds_completed,
        rounds_then,
        "not retrained without Resume"
    );
    assert!(adopted.resumable);

    let last_sha = adopted.checkpoints.last().unwrap().sha256.clone();
    let resumed = harness.engine.resume_job(&job.id).await.unwrap();
    assert_eq!(
        resumed.status,
        JobStatus::Running,
        "the answer to resume says it runs"
    );
    let done = harness.ended(&job.id).await;
    assert_eq!(
        (done.status, done.rounds_completed),
        (JobStatus::Completed, 6)
    );
    let next = &done.checkpoints[rounds_then as usize];
    assert_eq!(
        next.round,
        rounds_then + 1,
        "it continued from the right round"
    );
    assert_eq!(
        next.parent_sha256.as_ref(),
        Some(&last_sha),
        "with the right parent"
    );
    assert!(done.receipts.iter().any(|r| r.kind == ReceiptKind::Resume));
    assert_dense(&done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_refuses_a_tampered_or_missing_checkpoint_and_a_changed_dataset() {
    let harness = Harness::new().await;
    harness.log_outcomes(150).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let job = harness
            .engine
            .start_job(Stopping {
                wall_clock_s: 1,
                ..rounds(10_000)
            })
            .await
            .unwrap();
        let job = harness.ended(&job.id).await;
        assert_eq!(job.status, JobStatus::BudgetExhausted);
        assert!(job.rounds_completed >= 2, "{}", job.rounds_completed);
        ids.push(job.id);
    }
    let (tampered, missing, changed) = (ids[0].clone(), ids[1].clone(), ids[2].clone());
    let (t, m) = (tampered.clone(), missing.clone());
    harness
        .store
        .call(move |c| {
            c.execute("UPDATE job_checkpoints SET state = CAST(state || x'00' AS BLOB) WHERE job_id = ?1 AND round = 1", [&t])?;
            c.execute("DELETE FROM job_checkpoints WHERE job_id = ?1 AND round = 2", [&m])?;
            Ok(())
        })
        .await
        .unwrap();
    let refused = |result: Result<JobView, EngineError>| match result {
        Err(EngineError::Refused { code, .. }) => code,
        other => panic!("resume was not refused: {other:?}"),
    };
    assert_eq!(
        refused(harness.engine.resume_job(&tampered).await),
        ErrorCode::CheckpointChainBroken
    );
    assert_eq!(
        refused(harness.engine.resume_job(&missing).await),
        ErrorCode::CheckpointMissing
    );
    harness
        .store
        .call(|c| {
            c.execute("UPDATE routing_outcomes SET reward = -reward WHERE rowid = (SELECT MIN(rowid) FROM routing_outcomes)", [])?;
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(
        refused(harness.engine.resume_job(&changed).await),
        ErrorCode::DatasetChanged
    );
    let after = harness.engine.job(&tampered).await.unwrap();
    assert_eq!(
        after.status,
        JobStatus::BudgetExhausted,
        "a refused resume changes nothing but the log"
    );
    assert_eq!(after.receipts.last().unwrap().kind, ReceiptKind::Refusal);
    assert_dense(&after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promote_makes_the_trained_head_live_once() {
    let harness = Harness::new().await;
    harness.log_outcomes(150).await;
    let job = harness.engine.start_job(rounds(2)).await.unwrap();
    let done = harness.ended(&job.id).await;
    let promoted = harness.engine.promote_job(&done.id).await.unwrap();
    assert!(promoted.promoted_at.is_some() && !promoted.promotable);
    assert_eq!(promoted.receipts.last().unwrap().kind, ReceiptKind::Promote);
    let refused = harness.engine.promote_job(&done.id).await.unwrap_err();
    assert!(
        matches!(
            refused,
            EngineError::Refused {
                code: ErrorCode::JobNotPromotable,
                ..
            }
        ),
        "{refused}"
    );
    // Routing goes on with the promoted head.
    harness.log_outcomes(3).await;
}
