//! Jobs as stored: every SQL statement about `jobs`, `job_checkpoints` and `job_receipts`.
//!
//! Invariants, enforced here: a job's identity (kind, stopping policy, dataset and
//! configuration digests) is written once, at admission; only lifecycle columns move after. A
//! status changes only along [`JobStatus::can_become`]. Receipts are append-only and densely
//! numbered per job (`seq` = the previous `seq` + 1, inside the writing transaction), each with
//! the sha256 of its kind and payload. A round's checkpoint, its receipts and the job's round
//! count are written in one transaction, so a round counts only once it is committed.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::skills::sha256_hex;
use crate::store::{decode_json, encode_json, parse_enum, StoreError};

/// What a job trains (DESIGN §4): only the routing head so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum JobKind {
    /// A new routing head, trained on the outcomes the agent reported.
    RoutingHead,
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Admitted; its runner has not started a round yet.
    Queued,
    /// Training.
    Running,
    /// Stopped by its policy (rounds, target, too little improvement); its artifact exists.
    Completed,
    /// An error ended it.
    Failed,
    /// A person cancelled it; its checkpoints are kept.
    Cancelled,
    /// The engine stopped under it, or it ran past its wall clock's grace: resumable.
    Interrupted,
    /// It reached its wall-clock budget at the end of a round: resumable.
    BudgetExhausted,
}

impl JobStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Interrupted => "interrupted",
            JobStatus::BudgetExhausted => "budget_exhausted",
        }
    }

    /// Whether the machine allows `self → next`: a job runs, then ends one way or another;
    /// an interrupted or budget-exhausted one may run again on an explicit resume.
    pub fn can_become(self, next: JobStatus) -> bool {
        use JobStatus::*;
        matches!(
            (self, next),
            (Queued, Running)
                | (Queued, Cancelled)
                | (Queued, Interrupted)
                | (Queued, Failed)
                | (Running, Completed)
                | (Running, Failed)
                | (Running, Cancelled)
                | (Running, Interrupted)
                | (Running, BudgetExhausted)
                | (Interrupted, Running)
                | (BudgetExhausted, Running)
        )
    }

    /// A job that may run again on *Resume*.
    pub fn is_resumable(self) -> bool {
        matches!(self, JobStatus::Interrupted | JobStatus::BudgetExhausted)
    }
}

/// When a job stops (DESIGN §2.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct Stopping {
    /// Rounds at most.
    pub max_rounds: u32,
    /// Stop once the held-out accuracy reaches this (0..1).
    #[serde(default)]
    pub target: Option<f64>,
    /// Stop once a round lowers the held-out loss by less than this.
    #[serde(default)]
    pub min_improvement: Option<f64>,
    /// The wall-clock budget of one run, in seconds.
    pub wall_clock_s: u64,
}

/// One committed round's metrics: the trained head's, and the live head's on the same held-out
/// split, so a person can tell whether promoting it would help.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct RoundMetrics {
    /// The round, from 1.
    pub round: u32,
    /// Mean loss over the round's training examples.
    pub train_loss: f64,
    /// The trained head's held-out loss.
    pub heldout_loss: f64,
    /// The trained head's held-out accuracy, 0..1.
    pub heldout_accuracy: f64,
    /// The live head's held-out loss.
    pub live_heldout_loss: f64,
    /// The live head's held-out accuracy, 0..1.
    pub live_heldout_accuracy: f64,
    /// The trained head's held-out ROC AUC; `None` when every held-out outcome is the same.
    #[serde(default)]
    pub heldout_auc: Option<f64>,
    /// The live head's, likewise.
    #[serde(default)]
    pub live_heldout_auc: Option<f64>,
    /// Examples trained on in the round.
    pub examples_trained: u64,
    /// How long the round took.
    pub elapsed_ms: u64,
}

/// The kinds of receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptKind {
    /// The job was admitted with its identity.
    Admission,
    /// A round trained.
    Training,
    /// A round's held-out metrics.
    Evaluation,
    /// The finished job's artifact.
    Artifact,
    /// A person cancelled it.
    Cancel,
    /// A person resumed it.
    Resume,
    /// Something was refused (a restart adopting it, a resume on a broken chain).
    Refusal,
    /// A person promoted its head.
    Promote,
}

/// One receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Receipt {
    /// 1, 2, … with no gap.
    pub seq: u32,
    /// What it records.
    pub kind: ReceiptKind,
    /// When (unix ms).
    pub at: i64,
    /// sha256 of the kind and the payload's JSON text.
    pub digest: String,
    /// What it says.
    #[ts(type = "Record<string, unknown>")]
    pub payload: Value,
}

/// One committed round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Checkpoint {
    /// Its round, from 1.
    pub round: u32,
    /// sha256 of the state.
    pub sha256: String,
    /// The previous round's sha256.
    pub parent_sha256: Option<String>,
    /// When (unix ms).
    pub created_at: i64,
    /// The round's metrics (in the job's `metrics`).
    #[serde(skip)]
    pub metrics: RoundMetrics,
    /// The trained head's snapshot bytes.
    #[serde(skip)]
    pub state: Vec<u8>,
}

/// A stored job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    /// Its id.
    pub id: String,
    /// What it trains.
    pub kind: JobKind,
    /// Where it is.
    pub status: JobStatus,
    /// When it stops.
    pub stopping: Stopping,
    /// sha256 of the head configuration and the split rule.
    pub config_digest: String,
    /// sha256 of the examples.
    pub dataset_digest: String,
    /// The last outcome rowid in the dataset.
    pub dataset_cutoff: i64,
    /// Embedding dimension.
    pub dim: usize,
    /// Examples in the dataset.
    pub examples: u64,
    /// Of which held out.
    pub heldout: u64,
    /// The engine start that last ran it.
    pub generation: Option<i64>,
    /// Committed rounds.
    pub rounds_completed: u32,
    /// Why it stopped.
    pub stop_reason: Option<String>,
    /// What failed.
    pub error: Option<String>,
    /// The artifact's digest.
    pub artifact_digest: Option<String>,
    /// When a person promoted it.
    pub promoted_at: Option<i64>,
    /// The wall clock's end for this run.
    pub deadline_at: Option<i64>,
    /// Admission time.
    pub created_at: i64,
    /// First start.
    pub started_at: Option<i64>,
    /// Last change.
    pub updated_at: i64,
    /// End.
    pub finished_at: Option<i64>,
}

const COLUMNS: &str = "id, kind, status, stopping, config_digest, dataset_digest, dataset_cutoff, dim, \
    examples, heldout, generation, rounds_completed, stop_reason, error, artifact_digest, promoted_at, \
    deadline_at, created_at, started_at, updated_at, finished_at";

fn from_row(row: &Row<'_>) -> Result<JobRow, StoreError> {
    Ok(JobRow {
        id: row.get(0)?,
        kind: parse_enum("job kind", &row.get::<_, String>(1)?)?,
        status: parse_enum("job status", &row.get::<_, String>(2)?)?,
        stopping: decode_json("job stopping policy", &row.get::<_, String>(3)?)?,
        config_digest: row.get(4)?,
        dataset_digest: row.get(5)?,
        dataset_cutoff: row.get(6)?,
        dim: row.get::<_, i64>(7)? as usize,
        examples: row.get(8)?,
        heldout: row.get(9)?,
        generation: row.get(10)?,
        rounds_completed: row.get(11)?,
        stop_reason: row.get(12)?,
        error: row.get(13)?,
        artifact_digest: row.get(14)?,
        promoted_at: row.get(15)?,
        deadline_at: row.get(16)?,
        created_at: row.get(17)?,
        started_at: row.get(18)?,
        updated_at: row.get(19)?,
        finished_at: row.get(20)?,
    })
}

/// A job to admit.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    /// Its id.
    pub id: &'a str,
    /// When it stops.
    pub stopping: &'a Stopping,
    /// sha256 of the configuration.
    pub config_digest: &'a str,
    /// sha256 of the dataset.
    pub dataset_digest: &'a str,
    /// The last outcome rowid in it.
    pub dataset_cutoff: i64,
    /// Embedding dimension.
    pub dim: usize,
    /// Examples.
    pub examples: u64,
    /// Held out.
    pub heldout: u64,
}

/// Admits a job, `queued`, with its admission receipt.
pub fn insert(
    connection: &mut Connection,
    job: &NewJob<'_>,
    now_ms: i64,
) -> Result<(), StoreError> {
    let transaction = connection.transaction()?;
    transaction.execute(
        "INSERT INTO jobs (id, kind, status, stopping, config_digest, dataset_digest, dataset_cutoff, dim,
             examples, heldout, created_at, updated_at)
         VALUES (?1, 'routing-head', 'queued', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        params![
            job.id,
            encode_json(job.stopping),
            job.config_digest,
            job.dataset_digest,
            job.dataset_cutoff,
            job.dim as i64,
            job.examples,
            job.heldout,
            now_ms
        ],
    )?;
    let payload = serde_json::json!({
        "kind": "routing-head",
        "stopping": job.stopping,
        "config_digest": job.config_digest,
        "dataset_digest": job.dataset_digest,
        "dataset_cutoff": job.dataset_cutoff,
        "examples": job.examples,
        "heldout": job.heldout,
    });
    append_receipt(
        &transaction,
        job.id,
        ReceiptKind::Admission,
        &payload,
        now_ms,
    )?;
    transaction.commit()?;
    Ok(())
}

/// The digest of a receipt: sha256 of its kind, a newline, and its payload's JSON text (keys
/// sorted; reals as serde_json writes them, read back exactly with `float_roundtrip`, so a
/// reader recomputes the same digest from the stored payload).
pub fn receipt_digest(kind: ReceiptKind, payload: &Value) -> String {
    sha256_hex(format!("{}\n{}", encode_json(&kind), encode_json(payload)).as_bytes())
}

/// Appends a receipt, numbered right after the job's last one; returns its number.
pub fn append_receipt(
    connection: &Connection,
    job_id: &str,
    kind: ReceiptKind,
    payload: &Value,
    now_ms: i64,
) -> Result<u32, StoreError> {
    Ok(connection.query_row(
        "INSERT INTO job_receipts (job_id, seq, kind, payload, digest, created_at)
         VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_receipts WHERE job_id = ?1), ?2, ?3, ?4, ?5)
         RETURNING seq",
        params![
            job_id,
            parse_kind_spelling(kind),
            encode_json(payload),
            receipt_digest(kind, payload),
            now_ms
        ],
        |row| row.get(0),
    )?)
}

fn parse_kind_spelling(kind: ReceiptKind) -> String {
    encode_json(&kind).trim_matches('"').to_string()
}

/// One job.
pub fn get(connection: &Connection, id: &str) -> Result<Option<JobRow>, StoreError> {
    let mut statement =
        connection.prepare_cached(&format!("SELECT {COLUMNS} FROM jobs WHERE id = ?1"))?;
    let mut rows = statement.query([id])?;
    match rows.next()? {
        Some(row) => Ok(Some(from_row(row)?)),
        None => Ok(None),
    }
}

/// Jobs, newest first.
pub fn list(connection: &Connection) -> Result<Vec<JobRow>, StoreError> {
    let mut statement = connection.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM jobs ORDER BY created_at DESC, rowid DESC LIMIT 200"
    ))?;
    let mut rows = statement.query([])?;
    let mut jobs = Vec::new();
    while let Some(row) = rows.next()? {
        jobs.push(from_row(row)?);
    }
    Ok(jobs)
}

/// Jobs running now.
pub fn running_count(connection: &Connection) -> Result<u64, StoreError> {
    Ok(connection.query_row(
        "SELECT COUNT(*) FROM jobs WHERE status = 'running'",
        [],
        |row| row.get(0),
    )?)
}

/// A job's receipts, in order.
pub fn receipts(connection: &Connection, job_id: &str) -> Result<Vec<Receipt>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT seq, kind, created_at, digest, payload FROM job_receipts WHERE job_id = ?1 ORDER BY seq",
    )?;
    let mut rows = statement.query([job_id])?;
    let mut receipts = Vec::new();
    while let Some(row) = rows.next()? {
        receipts.push(Receipt {
            seq: row.get(0)?,
            kind: parse_enum("receipt kind", &row.get::<_, String>(1)?)?,
            at: row.get(2)?,
            digest: row.get(3)?,
            payload: decode_json("receipt payload", &row.get::<_, String>(4)?)?,
        });
    }
    Ok(receipts)
}

/// A job's checkpoints, in round order (with their state when `with_state`).
pub fn checkpoints(
    connection: &Connection,
    job_id: &str,
    with_state: bool,
) -> Result<Vec<Checkpoint>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT round, sha256, parent_sha256, created_at, metrics, CASE WHEN ?2 THEN state ELSE x'' END
         FROM job_checkpoints WHERE job_id = ?1 ORDER BY round",
    )?;
    let mut rows = statement.query(params![job_id, with_state])?;
    let mut checkpoints = Vec::new();
    while let Some(row) = rows.next()? {
        checkpoints.push(Checkpoint {
            round: row.get(0)?,
            sha256: row.get(1)?,
            parent_sha256: row.get(2)?,
            created_at: row.get(3)?,
            metrics: decode_json("checkpoint metrics", &row.get::<_, String>(4)?)?,
            state: row.get(5)?,
        });
    }
    Ok(checkpoints)
}

/// A round to commit.
#[derive(Debug, Clone)]
pub struct CommittedRound<'a> {
    /// The job.
    pub job_id: &'a str,
    /// Its number, from 1.
    pub round: u32,
    /// The trained head's snapshot bytes.
    pub state: &'a [u8],
    /// The previous round's sha256.
    pub parent_sha256: Option<&'a str>,
    /// The round's metrics.
    pub metrics: &'a RoundMetrics,
}

/// Commits a round: its checkpoint, its training and evaluation receipts, and the job's round
/// count, in one transaction. Returns the state's sha256.
pub fn commit_round(
    connection: &mut Connection,
    round: &CommittedRound<'_>,
    now_ms: i64,
) -> Result<String, StoreError> {
    let sha = sha256_hex(round.state);
    let transaction = connection.transaction()?;
    transaction.execute(
        "INSERT INTO job_checkpoints (job_id, round, state, sha256, parent_sha256, metrics, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![round.job_id, round.round, round.state, sha, round.parent_sha256, encode_json(round.metrics), now_ms],
    )?;
    let training = serde_json::json!({
        "round": round.round,
        "checkpoint_sha256": sha,
        "parent_sha256": round.parent_sha256,
        "examples_trained": round.metrics.examples_trained,
        "train_loss": round.metrics.train_loss,
    });
    append_receipt(
        &transaction,
        round.job_id,
        ReceiptKind::Training,
        &training,
        now_ms,
    )?;
    append_receipt(
        &transaction,
        round.job_id,
        ReceiptKind::Evaluation,
        &serde_json::to_value(round.metrics).expect("metrics serialise"),
        now_ms,
    )?;
    transaction.execute(
        "UPDATE jobs SET rounds_completed = ?2, updated_at = ?3 WHERE id = ?1",
        params![round.job_id, round.round, now_ms],
    )?;
    transaction.commit()?;
    Ok(sha)
}

/// What a status change records beside the status.
#[derive(Debug, Clone, Default)]
pub struct Change<'a> {
    /// Why it stopped.
    pub stop_reason: Option<&'a str>,
    /// What failed.
    pub error: Option<&'a str>,
    /// The engine start that runs it now (when it starts running).
    pub generation: Option<i64>,
    /// The wall clock's end for this run (when it starts running).
    pub deadline_at: Option<i64>,
    /// Its artifact (when it completes).
    pub artifact_digest: Option<&'a str>,
}

/// Moves a job `from → to`; false when it was no longer in `from`. A move the machine does
/// not allow is refused, never written.
pub fn set_status(
    connection: &Connection,
    id: &str,
    from: JobStatus,
    to: JobStatus,
    change: &Change<'_>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    if !from.can_become(to) {
        return Err(StoreError::Corrupt {
            what: "job transition".into(),
            message: format!(
                "{} → {} is not a move a job makes",
                from.as_str(),
                to.as_str()
            ),
        });
    }
    let running = to == JobStatus::Running;
    let ended = !matches!(to, JobStatus::Running | JobStatus::Queued);
    let moved = connection.execute(
        "UPDATE jobs SET status = ?3, updated_at = ?4,
             stop_reason = CASE WHEN ?9 THEN NULL ELSE COALESCE(?5, stop_reason) END,
             error = COALESCE(?6, error),
             generation = COALESCE(?7, generation),
             deadline_at = COALESCE(?8, deadline_at),
             started_at = CASE WHEN ?9 THEN COALESCE(started_at, ?4) ELSE started_at END,
             finished_at = CASE WHEN ?10 THEN ?4 ELSE NULL END,
             artifact_digest = COALESCE(?11, artifact_digest)
         WHERE id = ?1 AND status = ?2",
        params![
            id,
            from.as_str(),
            to.as_str(),
            now_ms,
            change.stop_reason,
            change.error,
            change.generation,
            change.deadline_at,
            running,
            ended,
            change.artifact_digest
        ],
    )?;
    Ok(moved == 1)
}

/// Marks a job promoted.
pub fn set_promoted(connection: &Connection, id: &str, now_ms: i64) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE jobs SET promoted_at = ?2, updated_at = ?2 WHERE id = ?1",
        params![id, now_ms],
    )?;
    Ok(())
}

/// Jobs left `running` or `queued` by an earlier engine start.
pub fn orphaned(connection: &Connection, generation: i64) -> Result<Vec<JobRow>, StoreError> {
    let mut statement = connection.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM jobs WHERE status IN ('running', 'queued') AND COALESCE(generation, 0) < ?1"
    ))?;
    let mut rows = statement.query([generation])?;
    let mut jobs = Vec::new();
    while let Some(row) = rows.next()? {
        jobs.push(from_row(row)?);
    }
    Ok(jobs)
}

/// The sha256 of the last committed checkpoint, if any.
pub fn last_checkpoint_sha(
    connection: &Connection,
    job_id: &str,
) -> Result<Option<String>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT sha256 FROM job_checkpoints WHERE job_id = ?1 ORDER BY round DESC LIMIT 1",
            [job_id],
            |row| row.get(0),
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::JobStatus::{self, *};

    #[test]
    fn ended_jobs_stay_ended_but_for_an_explicit_resume() {
        let all = [
            Queued,
            Running,
            Completed,
            Failed,
            Cancelled,
            Interrupted,
            BudgetExhausted,
        ];
        for from in [Completed, Failed, Cancelled] {
            assert!(all.iter().all(|&to| !from.can_become(to)), "{from:?} moved");
        }
        let resumable: Vec<JobStatus> = all.into_iter().filter(|s| s.is_resumable()).collect();
        assert_eq!(resumable, [Interrupted, BudgetExhausted]);
        assert!(resumable.iter().all(|s| s.can_become(Running)));
    }
}
