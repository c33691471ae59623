//! The durable review queue: every SQL statement about reviews and their candidates.
//!
//! Invariants, enforced here and by the schema: at most one `queued` review per session; the
//! newest snapshot of a session wins; a slot keeps its original enqueue time through coalescing
//! and requeues; a requeued older snapshot never replaces a newer queued one; a review's
//! candidates are written in the same transaction that marks it `done`, at most once, together
//! with how far that review read its session's conversation (`review_progress`); a review that
//! reaches an end (`done`, `failed`, `dropped`, `superseded`) no longer keeps the agent's key
//! for its endpoint.

use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::drafts::candidates::{self, CandidateProposal};
pub use crate::learning::RetryPolicy;
use crate::llm::{ChatEndpoint, ChatMessage};
use crate::store::{decode_json, encode_json, parse_enum, StoreError};

/// Where a review is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Waiting for its turn (or for a lull).
    Queued,
    /// On an LLM now.
    Running,
    /// Finished; its candidates are stored.
    Done,
    /// Gave up after repeated errors; `last_error` says why.
    Failed,
    /// Removed without running (by a person, or because reviews are disabled).
    Dropped,
    /// Replaced by a newer snapshot of the same session.
    Superseded,
}

impl ReviewStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Queued => "queued",
            ReviewStatus::Running => "running",
            ReviewStatus::Done => "done",
            ReviewStatus::Failed => "failed",
            ReviewStatus::Dropped => "dropped",
            ReviewStatus::Superseded => "superseded",
        }
    }
}

/// A review as stored, transcript included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Review {
    /// Its id.
    pub id: String,
    /// The agent's session it came from.
    pub session_key: String,
    /// Where it is.
    pub status: ReviewStatus,
    /// When its queue slot was first taken (unix ms).
    pub enqueued_at: i64,
    /// Runs started, preempted ones included.
    pub attempts: u32,
    /// Runs that ended in an error.
    pub failures: u32,
    /// The last error or preemption, for the person.
    pub last_error: Option<String>,
    /// The transcript snapshot's time (unix ms).
    pub snapshot_at: i64,
    /// An explicit focus from the agent; set means "run now".
    pub focus: Option<String>,
    /// Asked to run now (a `focus`, or *run now*): it skips the lull, not the server.
    pub urgent: bool,
    /// After an endpoint's error, not retried before this time (unix ms; 0 means no wait).
    pub not_before: i64,
    /// The agent's runtime, when it sent one.
    #[serde(skip)]
    pub runtime: Option<ChatEndpoint>,
    /// The transcript.
    #[serde(skip)]
    pub messages: Vec<ChatMessage>,
    /// Token usage and time of the run that finished it.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens of that run.
    pub completion_tokens: Option<u64>,
    /// Its duration in milliseconds.
    pub duration_ms: Option<u64>,
}

/// A new review from an agent.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReview {
    /// The agent's session.
    pub session_key: String,
    /// The transcript.
    pub messages: Vec<ChatMessage>,
    /// An explicit focus ("run now").
    pub focus: Option<String>,
    /// The snapshot's time; defaults to now.
    pub snapshot_at: i64,
    /// Where to run it, if the agent says.
    pub runtime: Option<ChatEndpoint>,
}

/// What enqueueing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enqueued {
    /// The queue slot's review id (an existing one when coalesced).
    pub review_id: String,
    /// True when the session already had a queued review.
    pub coalesced: bool,
}

/// A finished run's measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunUsage {
    /// Prompt tokens, if reported.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens, if reported.
    pub completion_tokens: Option<u64>,
    /// Wall time of the run.
    pub duration_ms: u64,
}

const REVIEW_COLUMNS: &str =
    "id, session_key, status, enqueued_at, attempts, failures, last_error, snapshot_at, \
     focus, runtime, messages, prompt_tokens, completion_tokens, duration_ms, urgent, not_before";

/// Forgets the agent's key for a review's endpoint once the review has ended.
const ERASE_API_KEY: &str = "runtime = json_remove(runtime, '$.api_key')";

fn review_from_row(row: &Row<'_>) -> rusqlite::Result<(Review, String, Option<String>)> {
    Ok((
        Review {
            id: row.get(0)?,
            session_key: row.get(1)?,
            status: ReviewStatus::Queued,
            enqueued_at: row.get(3)?,
            attempts: row.get(4)?,
            failures: row.get(5)?,
            last_error: row.get(6)?,
            snapshot_at: row.get(7)?,
            focus: row.get(8)?,
            urgent: row.get(14)?,
            not_before: row.get(15)?,
            runtime: None,
            messages: Vec::new(),
            prompt_tokens: row.get(11)?,
            completion_tokens: row.get(12)?,
            duration_ms: row.get(13)?,
        },
        row.get::<_, String>(2)?,
        row.get::<_, Option<String>>(9)?,
    ))
}

fn load_reviews(
    connection: &Connection,
    where_clause: &str,
    params: impl rusqlite::Params,
    with_transcript: bool,
) -> Result<Vec<Review>, StoreError> {
    let sql = format!("SELECT {REVIEW_COLUMNS} FROM reviews {where_clause}");
    let mut statement = connection.prepare_cached(&sql)?;
    let mut rows = statement.query(params)?;
    let mut reviews = Vec::new();
    while let Some(row) = rows.next()? {
        let (mut review, status, runtime) = review_from_row(row)?;
        review.status = parse_enum("review status", &status)?;
        review.runtime = runtime
            .as_deref()
            .map(|text| decode_json("review runtime", text))
            .transpose()?;
        if with_transcript {
            review.messages = decode_json("review transcript", &row.get::<_, String>(10)?)?;
        }
        reviews.push(review);
    }
    Ok(reviews)
}

/// Puts `review` in its session's queue slot: a new slot, or the newer snapshot in the existing one.
pub fn enqueue(
    connection: &mut Connection,
    review: &NewReview,
    now_ms: i64,
) -> Result<Enqueued, StoreError> {
    let transaction = connection.transaction()?;
    let existing: Option<(String, i64)> = transaction
        .query_row(
            "SELECT id, snapshot_at FROM reviews WHERE session_key = ?1 AND status = 'queued'",
            [&review.session_key],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    let enqueued = match existing {
        Some((id, queued_snapshot)) => {
            if review.snapshot_at >= queued_snapshot {
                transaction.execute(
                    "UPDATE reviews SET messages = ?2, focus = ?3, snapshot_at = ?4, runtime = ?5, updated_at = ?6,
                         urgent = urgent OR ?3 IS NOT NULL
                     WHERE id = ?1",
                    params![
                        id,
                        encode_json(&review.messages),
                        review.focus,
                        review.snapshot_at,
                        review.runtime.as_ref().map(encode_json),
                        now_ms
                    ],
                )?;
            }
            Enqueued {
                review_id: id,
                coalesced: true,
            }
        }
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            transaction.execute(
                "INSERT INTO reviews (id, session_key, status, messages, focus, snapshot_at, runtime, enqueued_at, updated_at, urgent)
                 VALUES (?1, ?2, 'queued', ?3, ?4, ?5, ?6, ?7, ?7, ?4 IS NOT NULL)",
                params![
                    id,
                    review.session_key,
                    encode_json(&review.messages),
                    review.focus,
                    review.snapshot_at,
                    review.runtime.as_ref().map(encode_json),
                    now_ms
                ],
            )?;
            Enqueued {
                review_id: id,
                coalesced: false,
            }
        }
    };
    transaction.commit()?;
    Ok(enqueued)
}

/// Queued reviews that may run at `now_ms` (no back-off pending), in dispatch order: those
/// asked to run now first, then the longest waiting. Without transcripts; [`start`] loads it.
pub fn dispatchable(connection: &Connection, now_ms: i64) -> Result<Vec<Review>, StoreError> {
    load_reviews(
        connection,
        "WHERE status = 'queued' AND not_before <= ?1 ORDER BY urgent DESC, enqueued_at, rowid LIMIT 64",
        [now_ms],
        false,
    )
}

/// When the next queued review's back-off ends, if one is pending after `now_ms`.
pub fn next_retry_at(connection: &Connection, now_ms: i64) -> Result<Option<i64>, StoreError> {
    Ok(connection.query_row(
        "SELECT MIN(not_before) FROM reviews WHERE status = 'queued' AND not_before > ?1",
        [now_ms],
        |row| row.get(0),
    )?)
}

/// Marks a queued review as asked to run now (skipping the lull and any back-off); false if it
/// is not queued.
pub fn mark_urgent(connection: &Connection, id: &str, now_ms: i64) -> Result<bool, StoreError> {
    let changed = connection.execute(
        "UPDATE reviews SET urgent = 1, not_before = 0, updated_at = ?2 WHERE id = ?1 AND status = 'queued'",
        params![id, now_ms],
    )?;
    Ok(changed == 1)
}

/// One review by id, transcript included.
pub fn get(connection: &Connection, id: &str) -> Result<Option<Review>, StoreError> {
    Ok(load_reviews(connection, "WHERE id = ?1", [id], true)?.pop())
}

/// Reviews, newest first, optionally of one status.
pub fn list(
    connection: &Connection,
    status: Option<ReviewStatus>,
) -> Result<Vec<Review>, StoreError> {
    match status {
        Some(status) => load_reviews(
            connection,
            "WHERE status = ?1 ORDER BY enqueued_at DESC LIMIT 500",
            [status.as_str()],
            false,
        ),
        None => load_reviews(connection, "ORDER BY enqueued_at DESC LIMIT 500", [], false),
    }
}

/// Claims a queued review for running; `None` if it is no longer queued (someone else took it).
pub fn start(
    connection: &mut Connection,
    id: &str,
    now_ms: i64,
) -> Result<Option<Review>, StoreError> {
    let claimed = connection.execute(
        "UPDATE reviews SET status = 'running', attempts = attempts + 1, updated_at = ?2
         WHERE id = ?1 AND status = 'queued'",
        params![id, now_ms],
    )?;
    if claimed == 0 {
        return Ok(None);
    }
    get(connection, id)
}

/// Puts a running review back in its session's slot, keeping its enqueue time.
///
/// If the session queued a newer snapshot meanwhile, that one keeps the slot (with the older,
/// earlier enqueue time) and this one becomes `superseded`. Returns the status it ended in.
pub fn requeue(
    connection: &mut Connection,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<ReviewStatus, StoreError> {
    let transaction = connection.transaction()?;
    let status = requeue_in(&transaction, id, reason, now_ms)?;
    transaction.commit()?;
    Ok(status)
}

fn requeue_in(
    transaction: &Transaction<'_>,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<ReviewStatus, StoreError> {
    let (session_key, snapshot_at, enqueued_at): (String, i64, i64) = transaction.query_row(
        "SELECT session_key, snapshot_at, enqueued_at FROM reviews WHERE id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    let newer: Option<(String, i64)> = transaction
        .query_row(
            "SELECT id, snapshot_at FROM reviews WHERE session_key = ?1 AND status = 'queued' AND id != ?2",
            params![session_key, id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    match newer {
        Some((newer_id, newer_snapshot)) if newer_snapshot >= snapshot_at => {
            transaction.execute(
                "UPDATE reviews SET enqueued_at = MIN(enqueued_at, ?2), updated_at = ?3 WHERE id = ?1",
                params![newer_id, enqueued_at, now_ms],
            )?;
            transaction.execute(
                &format!("UPDATE reviews SET status = 'superseded', last_error = ?2, updated_at = ?3, {ERASE_API_KEY} WHERE id = ?1"),
                params![id, format!("{reason}; a newer snapshot of the session took its place"), now_ms],
            )?;
            Ok(ReviewStatus::Superseded)
        }
        Some((older_id, _)) => {
            transaction.execute(
                &format!("UPDATE reviews SET status = 'superseded', last_error = 'a newer snapshot was requeued', updated_at = ?2,
                     {ERASE_API_KEY}
                 WHERE id = ?1"),
                params![older_id, now_ms],
            )?;
            mark_queued(transaction, id, reason, now_ms)
        }
        None => mark_queued(transaction, id, reason, now_ms),
    }
}

fn mark_queued(
    transaction: &Transaction<'_>,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<ReviewStatus, StoreError> {
    transaction.execute(
        "UPDATE reviews SET status = 'queued', last_error = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, reason, now_ms],
    )?;
    Ok(ReviewStatus::Queued)
}

/// Requeues every review left `running` by a crash or a kill; returns their ids.
pub fn recover_running(
    connection: &mut Connection,
    now_ms: i64,
) -> Result<Vec<String>, StoreError> {
    let transaction = connection.transaction()?;
    let ids: Vec<String> = {
        let mut statement = transaction
            .prepare("SELECT id FROM reviews WHERE status = 'running' ORDER BY enqueued_at")?;
        let ids = statement
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        ids
    };
    for id in &ids {
        requeue_in(
            &transaction,
            id,
            "interrupted: Lull stopped while it ran",
            now_ms,
        )?;
    }
    transaction.commit()?;
    Ok(ids)
}

/// Records a failed run: back to the queue after the policy's back-off, or `failed` once
/// `retry.max_failures` is reached.
pub fn record_failure(
    connection: &mut Connection,
    id: &str,
    error: &str,
    retry: &RetryPolicy,
    now_ms: i64,
) -> Result<ReviewStatus, StoreError> {
    let transaction = connection.transaction()?;
    let failures: u32 = transaction.query_row(
        "UPDATE reviews SET failures = failures + 1, last_error = ?2, updated_at = ?3 WHERE id = ?1 RETURNING failures",
        params![id, error, now_ms],
        |row| row.get(0),
    )?;
    let status = if failures >= retry.max_failures {
        transaction.execute(
            &format!("UPDATE reviews SET status = 'failed', finished_at = ?2, {ERASE_API_KEY} WHERE id = ?1"),
            params![id, now_ms],
        )?;
        ReviewStatus::Failed
    } else {
        let not_before = now_ms.saturating_add(retry.backoff(failures).as_millis() as i64);
        transaction.execute(
            "UPDATE reviews SET not_before = ?2 WHERE id = ?1",
            params![id, not_before],
        )?;
        requeue_in(&transaction, id, error, now_ms)?
    };
    transaction.commit()?;
    Ok(status)
}

/// A digest of a transcript prefix: equal digests mean the same messages in the same order.
pub fn transcript_digest(messages: &[ChatMessage]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for message in messages {
        // Length-prefixed, so no two different transcripts run together into the same bytes.
        for part in [&message.role, &message.content] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
    }
    format!("{:x}", hasher.finalize())
}

/// How many leading messages of `messages` an earlier review of `session_key` has read: zero
/// unless the stored progress is exactly a prefix of this transcript.
pub fn reviewed_prefix(
    connection: &Connection,
    session_key: &str,
    messages: &[ChatMessage],
) -> Result<usize, StoreError> {
    let stored: Option<(usize, String)> = connection
        .query_row(
            "SELECT reviewed_messages, digest FROM review_progress WHERE session_key = ?1",
            [session_key],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    Ok(match stored {
        Some((reviewed, digest))
            if reviewed <= messages.len() && transcript_digest(&messages[..reviewed]) == digest =>
        {
            reviewed
        }
        _ => 0,
    })
}

/// Marks a running review `done`, stores its candidates and records that its session is
/// reviewed up to its snapshot, in one transaction.
///
/// Candidates are keyed by (review, skill, kind), so a replay after a crash adds no twins.
pub fn complete(
    connection: &mut Connection,
    review: &Review,
    proposals: &[CandidateProposal],
    usage: RunUsage,
    now_ms: i64,
) -> Result<usize, StoreError> {
    let id = review.id.as_str();
    let transaction = connection.transaction()?;
    let stored = candidates::insert_proposals(&transaction, id, proposals, now_ms)?;
    transaction.execute(
        &format!("UPDATE reviews SET status = 'done', last_error = NULL, prompt_tokens = ?2, completion_tokens = ?3,
             duration_ms = ?4, finished_at = ?5, updated_at = ?5, {ERASE_API_KEY}
         WHERE id = ?1"),
        params![id, usage.prompt_tokens, usage.completion_tokens, usage.duration_ms, now_ms],
    )?;
    transaction.execute(
        "INSERT INTO review_progress (session_key, reviewed_messages, digest, snapshot_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (session_key) DO UPDATE SET reviewed_messages = excluded.reviewed_messages,
             digest = excluded.digest, snapshot_at = excluded.snapshot_at, updated_at = excluded.updated_at
         WHERE excluded.snapshot_at >= review_progress.snapshot_at",
        params![
            review.session_key,
            review.messages.len(),
            transcript_digest(&review.messages),
            review.snapshot_at,
            now_ms
        ],
    )?;
    transaction.commit()?;
    Ok(stored)
}

/// Drops a queued review with a recorded reason; false if it was not queued.
pub fn drop_queued(
    connection: &Connection,
    id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let changed = connection.execute(
        &format!("UPDATE reviews SET status = 'dropped', last_error = ?2, updated_at = ?3, finished_at = ?3,
             {ERASE_API_KEY}
         WHERE id = ?1 AND status = 'queued'"),
        params![id, reason, now_ms],
    )?;
    Ok(changed == 1)
}

/// `(queued, running)` counts for the status.
pub fn counts(connection: &Connection) -> Result<(u64, u64), StoreError> {
    Ok(connection.query_row(
        "SELECT COUNT(*) FILTER (WHERE status = 'queued'), COUNT(*) FILTER (WHERE status = 'running') FROM reviews",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?)
}
