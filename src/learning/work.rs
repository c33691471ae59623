//! The `learning_work` table: the queue rows of learning work other than reviews (a review's
//! row is its `reviews` row). Every SQL statement about it lives here.
//!
//! Invariants, enforced here and by the schema: at most one open (`queued` or `running`) item
//! per kind and subject; an item keeps its enqueue time through requeues; a failed run waits
//! out the back-off before it is due again, and the `max_failures`-th one ends it `failed`.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::{Due, RetryPolicy};
use crate::store::StoreError;

/// The kinds of work this table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkKindName {
    /// Writing a draft SKILL.md for a candidate (subject: the candidate).
    Synthesize,
    /// Judging whether a draft would have helped (subject: the draft).
    Evaluate,
}

impl WorkKindName {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkKindName::Synthesize => "synthesize",
            WorkKindName::Evaluate => "evaluate",
        }
    }
}

/// Where a piece of work ended after a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Queued again, due after the back-off.
    Retry,
    /// Failed for good.
    Failed,
}

/// A claimed piece of work.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRow {
    /// Its id.
    pub id: String,
    /// What it works on.
    pub subject_id: String,
    /// Runs started, this one included.
    pub attempts: u32,
    /// Runs that ended in an error.
    pub failures: u32,
}

/// Queues work of `kind` on `subject_id`; `None` if such work is already open.
pub fn enqueue(
    connection: &Connection,
    kind: WorkKindName,
    subject_id: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    let inserted = connection.execute(
        "INSERT INTO learning_work (id, kind, subject_id, status, enqueued_at, updated_at)
         VALUES (?1, ?2, ?3, 'queued', ?4, ?4) ON CONFLICT DO NOTHING",
        params![id, kind.as_str(), subject_id, now_ms],
    )?;
    Ok((inserted == 1).then_some(id))
}

/// Queued work of `kind` whose back-off is over, urgent first, then the longest waiting.
pub fn due(
    connection: &Connection,
    kind: WorkKindName,
    now_ms: i64,
) -> Result<Vec<Due>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT id, enqueued_at, urgent FROM learning_work
         WHERE kind = ?1 AND status = 'queued' AND not_before <= ?2
         ORDER BY urgent DESC, enqueued_at, rowid",
    )?;
    let rows = statement.query_map(params![kind.as_str(), now_ms], |row| {
        Ok(Due {
            id: row.get(0)?,
            enqueued_at: row.get(1)?,
            urgent: row.get(2)?,
            runtime: None,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// When the next backed-off work of `kind` becomes due.
pub fn next_retry_at(
    connection: &Connection,
    kind: WorkKindName,
    now_ms: i64,
) -> Result<Option<i64>, StoreError> {
    Ok(connection.query_row(
        "SELECT MIN(not_before) FROM learning_work WHERE kind = ?1 AND status = 'queued' AND not_before > ?2",
        params![kind.as_str(), now_ms],
        |row| row.get(0),
    )?)
}

/// Claims queued work for running; `None` if it is no longer queued.
pub fn start(
    connection: &Connection,
    id: &str,
    now_ms: i64,
) -> Result<Option<WorkRow>, StoreError> {
    Ok(connection
        .query_row(
            "UPDATE learning_work SET status = 'running', attempts = attempts + 1, updated_at = ?2
             WHERE id = ?1 AND status = 'queued'
             RETURNING id, subject_id, attempts, failures",
            params![id, now_ms],
            |row| {
                Ok(WorkRow {
                    id: row.get(0)?,
                    subject_id: row.get(1)?,
                    attempts: row.get(2)?,
                    failures: row.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Puts running work back in the queue, keeping its enqueue time.
pub fn requeue(
    connection: &Connection,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE learning_work SET status = 'queued', last_error = ?2, updated_at = ?3
         WHERE id = ?1 AND status = 'running'",
        params![id, reason, now_ms],
    )?;
    Ok(())
}

/// Requeues all work a crash left `running`; returns how many.
pub fn recover_running(connection: &Connection, now_ms: i64) -> Result<usize, StoreError> {
    Ok(connection.execute(
        "UPDATE learning_work SET status = 'queued', last_error = 'interrupted: Lull stopped while it ran', updated_at = ?1
         WHERE status = 'running'",
        [now_ms],
    )?)
}

/// Records a failed run: queued again after the back-off, or `failed` at the policy's limit.
pub fn record_failure(
    connection: &Connection,
    id: &str,
    error: &str,
    retry: &RetryPolicy,
    now_ms: i64,
) -> Result<AfterFailure, StoreError> {
    let failures: u32 = connection.query_row(
        "UPDATE learning_work SET failures = failures + 1, last_error = ?2, updated_at = ?3
         WHERE id = ?1 RETURNING failures",
        params![id, error, now_ms],
        |row| row.get(0),
    )?;
    if failures >= retry.max_failures {
        connection.execute(
            "UPDATE learning_work SET status = 'failed', finished_at = ?2 WHERE id = ?1",
            params![id, now_ms],
        )?;
        return Ok(AfterFailure::Failed);
    }
    let not_before = now_ms.saturating_add(retry.backoff(failures).as_millis() as i64);
    connection.execute(
        "UPDATE learning_work SET status = 'queued', not_before = ?2 WHERE id = ?1",
        params![id, not_before],
    )?;
    Ok(AfterFailure::Retry)
}

/// Marks work `done` (call in the transaction that stores its answer).
pub fn complete(connection: &Connection, id: &str, now_ms: i64) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE learning_work SET status = 'done', last_error = NULL, updated_at = ?2, finished_at = ?2
         WHERE id = ?1",
        params![id, now_ms],
    )?;
    Ok(())
}

/// Ends the open work of `kind` on `subject_id` without running it (its subject was decided or
/// went away); a run in progress finds its subject gone when it finishes.
pub fn cancel(
    connection: &Connection,
    kind: WorkKindName,
    subject_id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE learning_work SET status = 'cancelled', last_error = ?3, updated_at = ?4, finished_at = ?4
         WHERE kind = ?1 AND subject_id = ?2 AND status IN ('queued', 'running')",
        params![kind.as_str(), subject_id, reason, now_ms],
    )?;
    Ok(())
}

/// Open (queued or running) work of `kind`.
pub fn open_count(connection: &Connection, kind: WorkKindName) -> Result<u64, StoreError> {
    Ok(connection.query_row(
        "SELECT COUNT(*) FROM learning_work WHERE kind = ?1 AND status IN ('queued', 'running')",
        [kind.as_str()],
        |row| row.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use std::time::Duration;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_failures: 2,
            first_backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn work_is_queued_once_per_subject_claimed_once_and_backs_off_until_it_fails() {
        let store = Store::open_in_memory().unwrap();
        store
            .call(|c| {
                let id = enqueue(c, WorkKindName::Synthesize, "cand-1", 1_000)?.unwrap();
                assert_eq!(enqueue(c, WorkKindName::Synthesize, "cand-1", 1_001)?, None);
                assert!(enqueue(c, WorkKindName::Evaluate, "cand-1", 1_001)?.is_some());
                let due_now = due(c, WorkKindName::Synthesize, 1_000)?;
                assert_eq!(due_now.len(), 1);
                let row = start(c, &id, 1_010)?.unwrap();
                assert_eq!((row.subject_id.as_str(), row.attempts), ("cand-1", 1));
                assert_eq!(start(c, &id, 1_011)?, None, "claimed twice");
                assert_eq!(
                    record_failure(c, &id, "boom", &policy(), 2_000)?,
                    AfterFailure::Retry
                );
                assert!(due(c, WorkKindName::Synthesize, 6_999)?.is_empty());
                assert_eq!(
                    next_retry_at(c, WorkKindName::Synthesize, 2_000)?,
                    Some(7_000)
                );
                let again = &due(c, WorkKindName::Synthesize, 7_000)?[0];
                assert_eq!(again.enqueued_at, 1_000, "the enqueue time is kept");
                start(c, &id, 7_000)?.unwrap();
                assert_eq!(
                    record_failure(c, &id, "boom", &policy(), 8_000)?,
                    AfterFailure::Failed
                );
                assert!(due(c, WorkKindName::Synthesize, 100_000)?.is_empty());
                assert!(
                    enqueue(c, WorkKindName::Synthesize, "cand-1", 9_000)?.is_some(),
                    "a failed item no longer blocks new work on its subject"
                );
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn running_work_found_at_start_and_preempted_work_are_queued_again() {
        let store = Store::open_in_memory().unwrap();
        store
            .call(|c| {
                let a = enqueue(c, WorkKindName::Evaluate, "d1", 1)?.unwrap();
                let b = enqueue(c, WorkKindName::Evaluate, "d2", 2)?.unwrap();
                start(c, &a, 3)?.unwrap();
                start(c, &b, 3)?.unwrap();
                requeue(c, &a, "a live turn started", 4)?;
                assert_eq!(recover_running(c, 5)?, 1);
                let ids: Vec<String> = due(c, WorkKindName::Evaluate, 5)?
                    .into_iter()
                    .map(|due| due.id)
                    .collect();
                assert_eq!(ids, vec![a.clone(), b.clone()]);
                cancel(c, WorkKindName::Evaluate, "d1", "the draft was rejected", 6)?;
                assert_eq!(open_count(c, WorkKindName::Evaluate)?, 1);
                Ok(())
            })
            .await
            .unwrap();
    }
}
