//! Where a job trains: one thread per running job, at the lowest scheduling priority the OS
//! offers, because training is CPU work on the person's laptop, beside the managed server.
//!
//! Between mini-batches the runner checks, in order: a cancel (stop at once, `cancelled`); the
//! wall clock's grace (stop at once, `interrupted`, `wall_clock_exceeded`); a hold of the gate's
//! (a live turn, the machine going to sleep, or its battery under `[power]`: wait, and say
//! "paused"). The budget is time awake: a night the laptop slept is not training time. After
//! each round it measures the trained head and the live
//! one on the held-out split and commits the checkpoint with its receipts before the round
//! counts; then it applies the stopping policy. A round that starts after the budget's deadline
//! does not start: the job is `budget_exhausted` (resumable).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::json;
use ts_rs::TS;

use super::records::{self, Change, CommittedRound, JobRow, JobStatus, ReceiptKind, RoundMetrics};
use super::service::{artifact_digest, JobsInner};
use super::training::{self, Control, Dataset, RoundOutcome, Split, TRAINING_RULE};
use crate::events::EngineEvent;
use crate::routing::{HeadSnapshot, LiveHead, RoutingHead};
use crate::store::StoreError;

/// How long past its deadline a round may run before it is stopped mid-round.
pub const WALL_CLOCK_GRACE: Duration = Duration::from_secs(30);
/// How often a paused runner looks again.
const PAUSE_POLL: Duration = Duration::from_millis(100);
/// Progress events at most this often within a round.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Where a running round is, for the progress bar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Progress {
    /// The round being trained, from 1.
    pub round: u32,
    /// Mini-batches done in it.
    pub batch: usize,
    /// Mini-batches in a round.
    pub batches: usize,
    /// Time this run has trained.
    pub elapsed_ms: u64,
    /// The estimate of what is left, from the pace so far.
    pub remaining_ms: Option<u64>,
}

/// What the service and the runner of one job share.
#[derive(Debug, Default)]
pub struct RunControl {
    /// A person asked to stop.
    pub cancel: AtomicBool,
    /// The gate holds training (a live turn, sleep, battery).
    pub paused: AtomicBool,
    progress: Mutex<Option<Progress>>,
}

impl RunControl {
    /// The latest progress.
    pub fn progress(&self) -> Option<Progress> {
        self.progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn set_progress(&self, progress: Progress) {
        *self
            .progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(progress);
    }
}

/// The last committed round a resumed run continues from.
#[derive(Debug, Clone)]
pub struct LastRound {
    /// The trained head's snapshot bytes.
    pub state: Vec<u8>,
    /// Their sha256, the next round's parent.
    pub sha256: String,
}

/// How a run ended.
enum End {
    Stopped(JobStatus, &'static str),
    Failed(String),
    /// The engine is stopping: the job is left as it is.
    Abandoned,
}

/// Starts the runner of job `id` (now `from`; `running` when the caller moved it already) on
/// its own low-priority thread; `last` is the last committed checkpoint when it resumes.
pub(super) fn spawn(
    inner: Arc<JobsInner>,
    id: String,
    from: JobStatus,
    last: Option<LastRound>,
    live: LiveHead,
) {
    let control = Arc::new(RunControl::default());
    inner
        .runs
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(id.clone(), control.clone());
    let spawned = std::thread::Builder::new()
        .name("lull-training".into())
        .spawn({
            let (inner, id) = (inner.clone(), id.clone());
            move || {
                lower_priority();
                let end = run(&inner, &id, from, last, &live, &control);
                finish(&inner, &id, end);
                inner
                    .runs
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .remove(&id);
                if !inner.halted.load(Ordering::SeqCst) {
                    inner.announce_current(&id);
                }
            }
        });
    if let Err(err) = spawned {
        inner
            .runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&id);
        finish(
            &inner,
            &id,
            Err(End::Failed(format!(
                "cannot start a training thread: {err}"
            ))),
        );
    }
}

/// The lowest scheduling priority for this thread (Linux: a thread's nice value is its own).
fn lower_priority() {
    #[cfg(unix)]
    // SAFETY: setpriority only reads its arguments; `who` 0 is the calling thread on Linux.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

fn call<R: Send + 'static>(
    inner: &JobsInner,
    work: impl FnOnce(&mut rusqlite::Connection) -> Result<R, StoreError> + Send + 'static,
) -> Result<R, End> {
    inner
        .runtime
        .block_on(inner.store.call(work))
        .map_err(|err| End::Failed(format!("the database failed: {err}")))
}

/// Moves a job `from` → `running` for this engine start, with its run's wall-clock deadline.
pub(super) fn start_running(
    connection: &rusqlite::Connection,
    job_id: &str,
    from: JobStatus,
    generation: i64,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let Some(job) = records::get(connection, job_id)? else {
        return Ok(false);
    };
    let change = Change {
        generation: Some(generation),
        deadline_at: Some(now_ms + (job.stopping.wall_clock_s as i64) * 1000),
        ..Change::default()
    };
    records::set_status(
        connection,
        job_id,
        from,
        JobStatus::Running,
        &change,
        now_ms,
    )
}

fn run(
    inner: &JobsInner,
    id: &str,
    from: JobStatus,
    last: Option<LastRound>,
    live: &LiveHead,
    control: &RunControl,
) -> Result<End, End> {
    let now = inner.clock.now_ms();
    let job_id = id.to_string();
    let generation = inner.generation;
    let job: JobRow = call(inner, move |c| {
        if from != JobStatus::Running {
            start_running(c, &job_id, from, generation, now)?;
        }
        Ok(records::get(c, &job_id)?.expect("a job exists before it runs"))
    })?;
    if from != JobStatus::Running {
        inner.announce(id, JobStatus::Running);
    }
    let (dim, cutoff) = (job.dim, job.dataset_cutoff);
    let dataset: Dataset = call(inner, move |c| Dataset::load(c, dim, Some(cutoff)))?;
    if dataset.digest != job.dataset_digest {
        return Err(End::Failed(
            "the logged outcomes this job trains on changed since it was admitted".into(),
        ));
    }
    let split = Split::of(&dataset);
    let mut head = match &last {
        Some(LastRound { state, .. }) => {
            let snapshot = HeadSnapshot::from_bytes(state, dim).map_err(|err| {
                End::Failed(format!(
                    "the last checkpoint does not read as a head: {err}"
                ))
            })?;
            RoutingHead::from_snapshot(live.config.clone(), &snapshot).map_err(|err| {
                End::Failed(format!("the last checkpoint does not fit the head: {err}"))
            })?
        }
        None => RoutingHead::new(dim, live.config.clone()),
    };
    let live_head = RoutingHead::from_snapshot(live.config.clone(), &live.snapshot)
        .map_err(|err| End::Failed(format!("the live head cannot be measured: {err}")))?;
    let live_metrics = training::evaluate(&live_head, dataset.select(&split.heldout))
        .map_err(|err| End::Failed(err.to_string()))?;
    let mut parent = last.map(|last| last.sha256);
    let mut previous_loss = call(inner, {
        let job_id = id.to_string();
        move |c| {
            Ok(records::checkpoints(c, &job_id, false)?
                .last()
                .map(|checkpoint| checkpoint.metrics.heldout_loss))
        }
    })?;
    let deadline = job.deadline_at.unwrap_or(i64::MAX);
    let grace_end = deadline.saturating_add(WALL_CLOCK_GRACE.as_millis() as i64);
    // The engine's clock counts the machine's sleep; the budget does not.
    let slept_before = inner.clock.slept();
    let awake_ms =
        || inner.clock.now_ms() - (inner.clock.slept() - slept_before).as_millis() as i64;
    let started = Instant::now();
    let rounds_before = job.rounds_completed;
    for round in job.rounds_completed + 1..=job.stopping.max_rounds {
        if inner.halted.load(Ordering::SeqCst) {
            return Ok(End::Abandoned);
        }
        if awake_ms() >= deadline {
            return Ok(End::Stopped(
                JobStatus::BudgetExhausted,
                "wall_clock_budget",
            ));
        }
        let round_started = Instant::now();
        let mut last_event = Instant::now() - PROGRESS_EVERY;
        let mut stopped_by = None;
        let outcome =
            training::train_round(&mut head, &dataset, &split, TRAINING_RULE, |progress| {
                if inner.halted.load(Ordering::SeqCst) {
                    stopped_by = Some(End::Abandoned);
                    return Control::Stop;
                }
                if control.cancel.load(Ordering::SeqCst) {
                    stopped_by = Some(End::Stopped(JobStatus::Cancelled, "cancelled"));
                    return Control::Stop;
                }
                if awake_ms() > grace_end {
                    stopped_by = Some(End::Stopped(JobStatus::Interrupted, "wall_clock_exceeded"));
                    return Control::Stop;
                }
                while inner.gate.training_hold().is_some()
                    && !control.cancel.load(Ordering::SeqCst)
                    && !inner.halted.load(Ordering::SeqCst)
                {
                    if !control.paused.swap(true, Ordering::SeqCst) {
                        inner.announce(id, JobStatus::Running);
                    }
                    std::thread::sleep(PAUSE_POLL);
                }
                if control.paused.swap(false, Ordering::SeqCst) {
                    inner.announce(id, JobStatus::Running);
                }
                let elapsed = started.elapsed();
                let done_rounds = (round - 1 - rounds_before) as f64
                    + progress.batch as f64 / progress.batches.max(1) as f64;
                let left_rounds = (job.stopping.max_rounds - round + 1) as f64
                    - progress.batch as f64 / progress.batches.max(1) as f64;
                let remaining_ms = (done_rounds > 0.0)
                    .then(|| (elapsed.as_millis() as f64 / done_rounds * left_rounds) as u64);
                let shown = Progress {
                    round,
                    batch: progress.batch,
                    batches: progress.batches,
                    elapsed_ms: elapsed.as_millis() as u64,
                    remaining_ms,
                };
                control.set_progress(shown.clone());
                if last_event.elapsed() >= PROGRESS_EVERY {
                    last_event = Instant::now();
                    inner.events.emit(EngineEvent::JobProgress {
                        job_id: id.to_string(),
                        progress: shown,
                        metrics: None,
                    });
                }
                Control::Continue
            })
            .map_err(|err| End::Failed(err.to_string()))?;
        let (train_loss, examples_trained) = match outcome {
            RoundOutcome::Completed {
                train_loss,
                examples_trained,
            } => (train_loss, examples_trained),
            RoundOutcome::Stopped => {
                return Ok(stopped_by.unwrap_or(End::Stopped(JobStatus::Cancelled, "cancelled")))
            }
        };
        let heldout = training::evaluate(&head, dataset.select(&split.heldout))
            .map_err(|err| End::Failed(err.to_string()))?;
        let metrics = RoundMetrics {
            round,
            train_loss,
            heldout_loss: heldout.loss,
            heldout_accuracy: heldout.accuracy,
            live_heldout_loss: live_metrics.loss,
            live_heldout_accuracy: live_metrics.accuracy,
            heldout_auc: heldout.auc,
            live_heldout_auc: live_metrics.auc,
            examples_trained: examples_trained as u64,
            elapsed_ms: round_started.elapsed().as_millis() as u64,
        };
        let state = head.snapshot().to_bytes();
        let (job_id, committed_metrics, parent_sha) =
            (id.to_string(), metrics.clone(), parent.clone());
        let now = inner.clock.now_ms();
        let sha = call(inner, move |c| {
            let round = CommittedRound {
                job_id: &job_id,
                round,
                state: &state,
                parent_sha256: parent_sha.as_deref(),
                metrics: &committed_metrics,
            };
            records::commit_round(c, &round, now)
        })?;
        parent = Some(sha);
        inner.events.emit(EngineEvent::JobProgress {
            job_id: id.to_string(),
            progress: control.progress().unwrap_or(Progress {
                round,
                batch: 0,
                batches: 0,
                elapsed_ms: started.elapsed().as_millis() as u64,
                remaining_ms: None,
            }),
            metrics: Some(metrics),
        });
        if let Some(target) = job.stopping.target {
            if heldout.accuracy >= target {
                return Ok(End::Stopped(JobStatus::Completed, "target_reached"));
            }
        }
        if let (Some(min), Some(before)) = (job.stopping.min_improvement, previous_loss) {
            if before - heldout.loss < min {
                return Ok(End::Stopped(JobStatus::Completed, "min_improvement"));
            }
        }
        previous_loss = Some(heldout.loss);
    }
    Ok(End::Stopped(JobStatus::Completed, "max_rounds"))
}

/// Records how the run ended: the status, its receipt, and for a finished job its artifact.
fn finish(inner: &JobsInner, id: &str, end: Result<End, End>) {
    let (status, reason, error) = match end {
        Ok(End::Abandoned) | Err(End::Abandoned) => return,
        Ok(End::Stopped(status, reason)) | Err(End::Stopped(status, reason)) => {
            (status, Some(reason), None)
        }
        Ok(End::Failed(error)) | Err(End::Failed(error)) => (JobStatus::Failed, None, Some(error)),
    };
    let now = inner.clock.now_ms();
    let job_id = id.to_string();
    let recorded = inner.runtime.block_on(inner.store.call(move |c| {
        let Some(job) = records::get(c, &job_id)? else {
            return Ok(None);
        };
        let transaction = c.transaction()?;
        let error = error.as_deref();
        let chain: Vec<String> = records::checkpoints(&transaction, &job_id, false)?
            .into_iter()
            .map(|checkpoint| checkpoint.sha256)
            .collect();
        let artifact = (matches!(status, JobStatus::Completed | JobStatus::BudgetExhausted) && !chain.is_empty())
            .then(|| artifact_digest(&job, &chain));
        let change = Change {
            stop_reason: reason,
            error,
            artifact_digest: artifact.as_deref(),
            ..Change::default()
        };
        let from = job.status;
        if from == status || !records::set_status(&transaction, &job_id, from, status, &change, now)? {
            return Ok(None);
        }
        match status {
            JobStatus::Cancelled => {
                records::append_receipt(&transaction, &job_id, ReceiptKind::Cancel, &json!({ "rounds_completed": job.rounds_completed }), now)?;
            }
            JobStatus::Interrupted | JobStatus::Failed => {
                records::append_receipt(&transaction, &job_id, ReceiptKind::Refusal, &json!({ "reason": reason.unwrap_or("failed"), "error": error, "rounds_completed": job.rounds_completed }), now)?;
            }
            _ => {}
        }
        if let Some(digest) = &artifact {
            let payload = json!({
                "digest": digest,
                "rounds": chain.len(),
                "checkpoints": chain,
                "stop_reason": reason,
            });
            records::append_receipt(&transaction, &job_id, ReceiptKind::Artifact, &payload, now)?;
        }
        transaction.commit()?;
        Ok(Some(status))
    }));
    match recorded {
        Ok(Some(status)) => inner.announce(id, status),
        Ok(None) => {}
        Err(err) => {
            tracing::error!(job = %id, error = %err, "cannot record how a training job ended")
        }
    }
}

impl JobsInner {
    /// Announces the job's stored status (after its runner let go of it).
    fn announce_current(&self, id: &str) {
        let job_id = id.to_string();
        if let Ok(Some(job)) = self
            .runtime
            .block_on(self.store.call(move |c| records::get(c, &job_id)))
        {
            self.announce(id, job.status);
        }
    }
}
