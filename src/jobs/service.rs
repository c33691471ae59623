//! What a person does with training jobs (DESIGN §2.4): start one, watch it, cancel it, resume
//! it after an interruption, promote its head. [`JobService`] admits jobs and answers about
//! them; [`super::runner`] trains them on a low-priority thread.
//!
//! Invariants: a job's identity is fixed at admission; a job found running or queued under an
//! older engine start is `interrupted` with an `adopted_after_restart` refusal receipt and is
//! never retrained without an explicit *Resume*; *Resume* verifies the whole checkpoint chain
//! and the dataset first; nothing goes live without *Promote*.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use ts_rs::TS;

use super::records::{
    self, Change, Checkpoint, JobKind, JobRow, JobStatus, Receipt, ReceiptKind, RoundMetrics,
    Stopping,
};
use super::runner::{self, LastRound, Progress, RunControl};
use super::training::{self, Dataset};
use crate::engine::EngineError;
use crate::error_code::ErrorCode;
use crate::events::{EngineEvent, EventBus};
use crate::gate::{EngineClock, IdleGate};
use crate::routing::{HeadSnapshot, RoutingService};
use crate::skills::sha256_hex;
use crate::store::{Store, StoreError};

/// Rounds a job may ask for at most.
pub const MAX_ROUNDS: u32 = 10_000;
/// The longest wall-clock budget of one run (a day).
pub const MAX_WALL_CLOCK_S: u64 = 24 * 3600;
/// How long `cancel`, `resume` and `shutdown` wait for a runner to record its job's end and let
/// go of it.
const RUNNER_EXIT_WAIT: Duration = Duration::from_secs(2);
/// How often the machine's sleep looks whether running jobs have paused.
const SLEEP_PAUSE_POLL: Duration = Duration::from_millis(50);

/// What a person sees of a job (`GET /v1/jobs/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JobView {
    /// Its id.
    pub id: String,
    /// What it trains.
    pub kind: JobKind,
    /// Where it is.
    pub status: JobStatus,
    /// When it stops.
    pub stopping: Stopping,
    /// Committed rounds.
    pub rounds_completed: u32,
    /// One entry per committed round.
    pub metrics: Vec<RoundMetrics>,
    /// Where the running round is.
    pub progress: Option<Progress>,
    /// A live turn holds training.
    pub paused: bool,
    /// Why it stopped.
    pub stop_reason: Option<String>,
    /// What failed.
    pub error: Option<String>,
    /// The data it trains on.
    pub dataset: DatasetView,
    /// Its artifact, once it has one.
    pub artifact: Option<ArtifactView>,
    /// When a person promoted it.
    pub promoted_at: Option<i64>,
    /// *Resume* would be accepted (the chain is checked then).
    pub resumable: bool,
    /// *Promote* would be accepted.
    pub promotable: bool,
    /// *Cancel* would be accepted.
    pub cancellable: bool,
    /// Admission (unix ms).
    pub created_at: i64,
    /// First start.
    pub started_at: Option<i64>,
    /// Last change.
    pub updated_at: i64,
    /// End.
    pub finished_at: Option<i64>,
    /// Its receipts (one job only; empty in lists).
    pub receipts: Vec<Receipt>,
    /// Its checkpoints (one job only; empty in lists).
    pub checkpoints: Vec<Checkpoint>,
}

/// A job's dataset as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DatasetView {
    /// sha256 of the examples.
    pub digest: String,
    /// Examples.
    pub examples: u64,
    /// Of which held out.
    pub heldout: u64,
}

/// A job's artifact as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ArtifactView {
    /// sha256 over the job's identity and its ordered checkpoint chain.
    pub digest: String,
}

/// Starts, follows and decides training jobs; cheap to clone.
#[derive(Clone)]
pub struct JobService {
    pub(super) inner: Arc<JobsInner>,
}

pub(super) struct JobsInner {
    pub store: Store,
    pub events: EventBus,
    pub clock: EngineClock,
    pub gate: Arc<IdleGate>,
    pub routing: RoutingService,
    pub generation: i64,
    pub runtime: tokio::runtime::Handle,
    pub runs: Mutex<HashMap<String, Arc<RunControl>>>,
    /// The engine is stopping: runners leave their jobs as they are (`running`, adopted as
    /// interrupted by the next start), as a crash would.
    pub halted: AtomicBool,
}

impl JobService {
    /// The service of this engine start (`generation`); call [`JobService::adopt_orphans`]
    /// once before anything else. Must run inside a tokio runtime.
    pub fn new(
        store: Store,
        events: EventBus,
        gate: Arc<IdleGate>,
        routing: RoutingService,
        generation: i64,
    ) -> JobService {
        JobService {
            inner: Arc::new(JobsInner {
                store,
                events,
                clock: gate.clock(),
                gate,
                routing,
                generation,
                runtime: tokio::runtime::Handle::current(),
                runs: Mutex::default(),
                halted: AtomicBool::new(false),
            }),
        }
    }

    /// Waits (at most `within`) until every running job has paused at a mini-batch, the gate
    /// holding training while the machine sleeps: the checkpoint of a round cut by the sleep
    /// stays the last one committed, and the round goes on after the wake.
    pub async fn paused_for_sleep(&self, within: Duration) {
        let controls: Vec<Arc<RunControl>> = self
            .inner
            .runs
            .lock()
            .expect("runs lock")
            .values()
            .cloned()
            .collect();
        let all_paused = async {
            while !controls
                .iter()
                .all(|control| control.paused.load(Ordering::SeqCst))
            {
                tokio::time::sleep(SLEEP_PAUSE_POLL).await;
            }
        };
        if tokio::time::timeout(within, all_paused).await.is_err() {
            tracing::warn!("a training job did not pause before the machine slept");
        }
    }

    /// Marks the jobs an earlier engine start left running or queued `interrupted`, each with
    /// an `adopted_after_restart` refusal receipt; they train again only on *Resume*.
    pub async fn adopt_orphans(&self) -> Result<usize, EngineError> {
        let generation = self.inner.generation;
        let now = self.inner.clock.now_ms();
        let adopted = self
            .inner
            .store
            .call(move |c| {
                let orphans = records::orphaned(c, generation)?;
                let transaction = c.transaction()?;
                for job in &orphans {
                    let change = Change {
                        stop_reason: Some("adopted_after_restart"),
                        ..Change::default()
                    };
                    records::set_status(&transaction, &job.id, job.status, JobStatus::Interrupted, &change, now)?;
                    let payload = json!({
                        "reason": "adopted_after_restart",
                        "message": "the engine stopped while this job ran; it is not retrained until a person resumes it",
                        "previous_generation": job.generation,
                        "generation": generation,
                        "rounds_completed": job.rounds_completed,
                    });
                    records::append_receipt(&transaction, &job.id, ReceiptKind::Refusal, &payload, now)?;
                }
                transaction.commit()?;
                Ok(orphans.into_iter().map(|job| job.id).collect::<Vec<_>>())
            })
            .await?;
        for id in &adopted {
            self.inner.announce(id, JobStatus::Interrupted);
        }
        if !adopted.is_empty() {
            tracing::warn!(
                count = adopted.len(),
                "training jobs interrupted by the last stop; resume them to continue"
            );
        }
        Ok(adopted.len())
    }

    /// Admits a routing-head job over the outcomes logged so far and starts it.
    pub async fn start(&self, stopping: Stopping) -> Result<JobView, EngineError> {
        validate(&stopping)?;
        let live = self.inner.routing.live_head().await;
        let dim = live.dim;
        let dataset = self
            .inner
            .store
            .call(move |c| Dataset::load(c, dim, None))
            .await?;
        let split = training::Split::of(&dataset);
        if split.train.is_empty() || split.heldout.is_empty() {
            return Err(EngineError::Refused {
                code: ErrorCode::NoData,
                message: format!(
                    "there are {} logged outcomes of this embedder ({} held out): a job needs some to train on and some to measure on; report more outcomes (POST /v1/outcomes) first",
                    dataset.examples.len(),
                    split.heldout.len()
                ),
            });
        }
        let id = uuid::Uuid::new_v4().to_string();
        let config_digest = config_digest(&live.config);
        let now = self.inner.clock.now_ms();
        let (job_id, digest, cutoff, examples, heldout) = (
            id.clone(),
            dataset.digest.clone(),
            dataset.cutoff,
            dataset.examples.len() as u64,
            split.heldout.len() as u64,
        );
        let stored_stopping = stopping.clone();
        self.inner
            .store
            .call(move |c| {
                let job = records::NewJob {
                    id: &job_id,
                    stopping: &stored_stopping,
                    config_digest: &config_digest,
                    dataset_digest: &digest,
                    dataset_cutoff: cutoff,
                    dim,
                    examples,
                    heldout,
                };
                records::insert(c, &job, now)
            })
            .await?;
        self.inner.announce(&id, JobStatus::Queued);
        runner::spawn(
            self.inner.clone(),
            id.clone(),
            JobStatus::Queued,
            None,
            live,
        );
        self.get(&id).await
    }

    /// Jobs, newest first (without receipts and checkpoints).
    pub async fn list(&self) -> Result<Vec<JobView>, EngineError> {
        let rows = self
            .inner
            .store
            .call(|c| {
                records::list(c)?
                    .into_iter()
                    .map(|job| {
                        let checkpoints = records::checkpoints(c, &job.id, false)?;
                        Ok((job, checkpoints))
                    })
                    .collect::<Result<Vec<_>, StoreError>>()
            })
            .await?;
        Ok(rows
            .into_iter()
            .map(|(job, checkpoints)| self.view(job, checkpoints, Vec::new(), false))
            .collect())
    }

    /// One job with its receipts and checkpoints.
    pub async fn get(&self, id: &str) -> Result<JobView, EngineError> {
        let id_owned = id.to_string();
        let loaded = self
            .inner
            .store
            .call(move |c| {
                let Some(job) = records::get(c, &id_owned)? else {
                    return Ok(None);
                };
                let checkpoints = records::checkpoints(c, &id_owned, false)?;
                let receipts = records::receipts(c, &id_owned)?;
                Ok(Some((job, checkpoints, receipts)))
            })
            .await?;
        let (job, checkpoints, receipts) =
            loaded.ok_or_else(|| EngineError::NotFound(format!("no job with id {id}")))?;
        Ok(self.view(job, checkpoints, receipts, true))
    }

    /// Lets go of the running jobs without deciding them: the next engine start finds them
    /// `running` and marks them interrupted. Waits a moment for their threads to notice.
    pub async fn shutdown(&self) {
        self.inner.halted.store(true, Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + RUNNER_EXIT_WAIT;
        while !self
            .inner
            .runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Jobs running now.
    pub async fn running(&self) -> Result<u64, EngineError> {
        Ok(self.inner.store.call(|c| records::running_count(c)).await?)
    }

    /// Stops a job at once (within a mini-batch), as `cancelled`, keeping its checkpoints.
    pub async fn cancel(&self, id: &str) -> Result<JobView, EngineError> {
        let job = self.get(id).await?;
        if !job.cancellable {
            return Err(EngineError::Conflict(format!(
                "job {id} is {}; only a queued, running, interrupted or budget-exhausted job can be cancelled",
                job.status.as_str()
            )));
        }
        let control = self.inner.control(id);
        match control {
            Some(control) => {
                control.cancel.store(true, Ordering::SeqCst);
                self.inner.run_exited(id).await;
            }
            None => {
                let now = self.inner.clock.now_ms();
                let (job_id, from) = (id.to_string(), job.status);
                self.inner
                    .store
                    .call(move |c| {
                        let transaction = c.transaction()?;
                        let change = Change {
                            stop_reason: Some("cancelled"),
                            ..Change::default()
                        };
                        if records::set_status(
                            &transaction,
                            &job_id,
                            from,
                            JobStatus::Cancelled,
                            &change,
                            now,
                        )? {
                            records::append_receipt(
                                &transaction,
                                &job_id,
                                ReceiptKind::Cancel,
                                &json!({ "rounds_completed": null, "while": from.as_str() }),
                                now,
                            )?;
                        }
                        transaction.commit()?;
                        Ok(())
                    })
                    .await?;
                self.inner.announce(id, JobStatus::Cancelled);
            }
        }
        self.get(id).await
    }

    /// Continues an interrupted or budget-exhausted job from its last committed round, after
    /// verifying every checkpoint (its state's sha256, its parent link, the round count) and
    /// the dataset. A refusal is recorded as a receipt and answered with its code.
    pub async fn resume(&self, id: &str) -> Result<JobView, EngineError> {
        let job = self.get(id).await?;
        if !job.status.is_resumable() {
            return Err(EngineError::Refused {
                code: ErrorCode::JobNotResumable,
                message: format!(
                    "job {id} is {}; only an interrupted or budget-exhausted job can be resumed",
                    job.status.as_str()
                ),
            });
        }
        // The runner records the job's end before it lets go of the job: a resume asked for in
        // between waits for it rather than refusing a job that reads as resumable.
        if !self.inner.run_exited(id).await {
            return Err(EngineError::Refused {
                code: ErrorCode::JobNotResumable,
                message: format!("job {id} is still stopping; try again in a moment"),
            });
        }
        let id_owned = id.to_string();
        let verified = self
            .inner
            .store
            .call(move |c| {
                let row = records::get(c, &id_owned)?.expect("the job exists");
                let checkpoints = records::checkpoints(c, &id_owned, true)?;
                let chain = verify_chain(&row, &checkpoints);
                let chain = match chain {
                    Ok(last) => {
                        let dataset = Dataset::load(c, row.dim, Some(row.dataset_cutoff))?;
                        if dataset.digest == row.dataset_digest {
                            Ok(last)
                        } else {
                            Err((ErrorCode::DatasetChanged, format!("the logged outcomes this job trains on changed since it was admitted (sha256 {} then, {} now); start a new job", short(&row.dataset_digest), short(&dataset.digest))))
                        }
                    }
                    Err(refusal) => Err(refusal),
                };
                Ok((row, chain))
            })
            .await?;
        let (row, chain) = verified;
        let last = match chain {
            Ok(last) => last,
            Err((code, message)) => {
                let now = self.inner.clock.now_ms();
                let (job_id, payload) = (
                    id.to_string(),
                    json!({ "reason": code.as_str(), "message": message }),
                );
                self.inner
                    .store
                    .call(move |c| {
                        records::append_receipt(c, &job_id, ReceiptKind::Refusal, &payload, now)
                    })
                    .await?;
                return Err(EngineError::Refused { code, message });
            }
        };
        let now = self.inner.clock.now_ms();
        let (job_id, rounds, from) = (id.to_string(), row.rounds_completed, row.status);
        let payload = json!({
            "from_round": rounds,
            "parent_sha256": last.as_ref().map(|last| last.sha256.clone()),
            "generation": self.inner.generation,
            "previous_status": from.as_str(),
        });
        let generation = self.inner.generation;
        // The resume receipt and the move to `running` in one transaction, before the runner
        // starts: an answer or a read right after says `running`, never the old status.
        let started = self
            .inner
            .store
            .call(move |c| {
                let transaction = c.transaction()?;
                let started = runner::start_running(&transaction, &job_id, from, generation, now)?;
                if started {
                    records::append_receipt(
                        &transaction,
                        &job_id,
                        ReceiptKind::Resume,
                        &payload,
                        now,
                    )?;
                }
                transaction.commit()?;
                Ok(started)
            })
            .await?;
        if !started {
            return Err(EngineError::Refused {
                code: ErrorCode::JobNotResumable,
                message: format!("job {id} changed meanwhile; look again"),
            });
        }
        self.inner.announce(id, JobStatus::Running);
        let live = self.inner.routing.live_head().await;
        runner::spawn(
            self.inner.clone(),
            id.to_string(),
            JobStatus::Running,
            last,
            live,
        );
        self.get(id).await
    }

    /// Makes the job's trained head the live one (DESIGN §2.4 *Promote*); the previous head is
    /// kept, and outcomes of routes the old head ranked do not train the new one.
    pub async fn promote(&self, id: &str) -> Result<JobView, EngineError> {
        let job = self.get(id).await?;
        if !job.promotable {
            return Err(EngineError::Refused {
                code: ErrorCode::JobNotPromotable,
                message: match (&job.artifact, job.promoted_at) {
                    (_, Some(_)) => format!("job {id} was promoted already"),
                    (None, _) => format!("job {id} is {} and has no artifact yet; only a finished job can be promoted", job.status.as_str()),
                    _ => format!("job {id} is {}; it cannot be promoted", job.status.as_str()),
                },
            });
        }
        let id_owned = id.to_string();
        let (state, dim) = self
            .inner
            .store
            .call(move |c| {
                let row = records::get(c, &id_owned)?.expect("the job exists");
                let last = records::checkpoints(c, &id_owned, true)?.pop();
                Ok((last.map(|checkpoint| checkpoint.state), row.dim))
            })
            .await?;
        let state = state.ok_or_else(|| EngineError::Refused {
            code: ErrorCode::CheckpointMissing,
            message: format!("job {id} has no committed round to promote"),
        })?;
        let snapshot =
            HeadSnapshot::from_bytes(&state, dim).map_err(|err| EngineError::Refused {
                code: ErrorCode::CheckpointChainBroken,
                message: format!("job {id}'s last checkpoint does not read as a head: {err}"),
            })?;
        let promoted = self
            .inner
            .routing
            .promote(snapshot, &format!("job:{id}"))
            .await?;
        let now = self.inner.clock.now_ms();
        let (job_id, payload) = (
            id.to_string(),
            json!({ "artifact_digest": job.artifact.as_ref().map(|a| a.digest.clone()), "promoted": promoted }),
        );
        self.inner
            .store
            .call(move |c| {
                let transaction = c.transaction()?;
                records::append_receipt(
                    &transaction,
                    &job_id,
                    ReceiptKind::Promote,
                    &payload,
                    now,
                )?;
                records::set_promoted(&transaction, &job_id, now)?;
                transaction.commit()?;
                Ok(())
            })
            .await?;
        self.inner.announce(id, job.status);
        self.get(id).await
    }

    fn view(
        &self,
        job: JobRow,
        checkpoints: Vec<Checkpoint>,
        receipts: Vec<Receipt>,
        full: bool,
    ) -> JobView {
        let control = self.inner.control(&job.id);
        let (progress, paused) = match &control {
            Some(control) => (control.progress(), control.paused.load(Ordering::SeqCst)),
            None => (None, false),
        };
        let metrics = checkpoints.iter().map(|c| c.metrics.clone()).collect();
        let artifact = job
            .artifact_digest
            .clone()
            .map(|digest| ArtifactView { digest });
        let cancellable = matches!(
            job.status,
            JobStatus::Queued
                | JobStatus::Running
                | JobStatus::Interrupted
                | JobStatus::BudgetExhausted
        );
        JobView {
            // A runner still letting go of an ended job does not hide it: `resume` waits for it.
            resumable: job.status.is_resumable(),
            promotable: artifact.is_some()
                && job.promoted_at.is_none()
                && matches!(
                    job.status,
                    JobStatus::Completed | JobStatus::BudgetExhausted
                ),
            cancellable,
            id: job.id,
            kind: job.kind,
            status: job.status,
            stopping: job.stopping,
            rounds_completed: job.rounds_completed,
            metrics,
            progress,
            paused,
            stop_reason: job.stop_reason,
            error: job.error,
            dataset: DatasetView {
                digest: job.dataset_digest,
                examples: job.examples,
                heldout: job.heldout,
            },
            artifact,
            promoted_at: job.promoted_at,
            created_at: job.created_at,
            started_at: job.started_at,
            updated_at: job.updated_at,
            finished_at: job.finished_at,
            receipts,
            checkpoints: if full { checkpoints } else { Vec::new() },
        }
    }
}

impl JobsInner {
    /// Waits up to [`RUNNER_EXIT_WAIT`] for job `id`'s runner to let go of it; false if it has not.
    async fn run_exited(&self, id: &str) -> bool {
        let deadline = tokio::time::Instant::now() + RUNNER_EXIT_WAIT;
        while self.control(id).is_some() {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        true
    }

    pub(super) fn control(&self, id: &str) -> Option<Arc<RunControl>> {
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(id)
            .cloned()
    }

    pub(super) fn announce(&self, id: &str, status: JobStatus) {
        self.events.emit(EngineEvent::JobChanged {
            job_id: id.to_string(),
            status,
        });
    }
}

/// Why a resume is refused: a code an agent may act on, and a message for the person.
type Refusal = (ErrorCode, String);

/// The last committed round and its sha256 when the chain holds, else a refusal code and a
/// message: every state re-digested, every parent link, the rounds 1…n with n the job's count.
fn verify_chain(job: &JobRow, checkpoints: &[Checkpoint]) -> Result<Option<LastRound>, Refusal> {
    let mut parent: Option<&str> = None;
    for (index, checkpoint) in checkpoints.iter().enumerate() {
        let expected_round = index as u32 + 1;
        if checkpoint.round != expected_round {
            return Err((
                ErrorCode::CheckpointMissing,
                format!(
                    "job {} has no checkpoint of round {expected_round} (the next one is round {})",
                    job.id, checkpoint.round
                ),
            ));
        }
        let digest = sha256_hex(&checkpoint.state);
        if digest != checkpoint.sha256 {
            return Err((ErrorCode::CheckpointChainBroken, format!("the checkpoint of round {} does not match its sha256 (recorded {}, now {}): it was altered; start a new job", checkpoint.round, short(&checkpoint.sha256), short(&digest))));
        }
        if checkpoint.parent_sha256.as_deref() != parent {
            return Err((ErrorCode::CheckpointChainBroken, format!("the checkpoint of round {} does not name round {}'s as its parent; start a new job", checkpoint.round, checkpoint.round.saturating_sub(1))));
        }
        parent = Some(&checkpoint.sha256);
    }
    if checkpoints.len() as u32 != job.rounds_completed {
        return Err((
            ErrorCode::CheckpointMissing,
            format!(
                "job {} committed {} rounds but {} checkpoints are stored; start a new job",
                job.id,
                job.rounds_completed,
                checkpoints.len()
            ),
        ));
    }
    Ok(checkpoints.last().map(|last| LastRound {
        state: last.state.clone(),
        sha256: last.sha256.clone(),
    }))
}

/// The artifact's digest: sha256 over the job's identity and its ordered checkpoint chain.
pub(super) fn artifact_digest(job: &JobRow, chain: &[String]) -> String {
    let mut text = format!(
        "routing-head\n{}\n{}\n{}\n",
        job.config_digest,
        job.dataset_digest,
        crate::store::encode_json(&job.stopping)
    );
    for sha in chain {
        text.push_str(sha);
        text.push('\n');
    }
    sha256_hex(text.as_bytes())
}

fn config_digest(config: &crate::routing::HeadConfig) -> String {
    sha256_hex(
        format!(
            "{config:?}\n{}\n{}",
            training::split_rule(),
            training::TRAINING_RULE.as_str()
        )
        .as_bytes(),
    )
}

fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}

fn validate(stopping: &Stopping) -> Result<(), EngineError> {
    let invalid = |message: String| Err(EngineError::Invalid(message));
    if stopping.max_rounds == 0 || stopping.max_rounds > MAX_ROUNDS {
        return invalid(format!(
            "stopping.max_rounds must be 1–{MAX_ROUNDS}, got {}",
            stopping.max_rounds
        ));
    }
    if stopping.wall_clock_s == 0 || stopping.wall_clock_s > MAX_WALL_CLOCK_S {
        return invalid(format!(
            "stopping.wall_clock_s must be 1–{MAX_WALL_CLOCK_S} (a day), got {}",
            stopping.wall_clock_s
        ));
    }
    if let Some(target) = stopping.target {
        if !(target > 0.0 && target <= 1.0) {
            return invalid(format!(
                "stopping.target is a held-out accuracy in (0, 1], got {target}"
            ));
        }
    }
    if let Some(min) = stopping.min_improvement {
        if !(min.is_finite() && min >= 0.0) {
            return invalid(format!(
                "stopping.min_improvement is a held-out loss decrease ≥ 0, got {min}"
            ));
        }
    }
    Ok(())
}
