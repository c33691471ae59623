//! Drafts as stored: every SQL statement about `drafts` and `draft_dismissals`.
//!
//! A draft's status is a state machine whose moves are written once, in
//! [`DraftStatus::can_become`], and made only by [`set_status`], which refuses a move the machine
//! does not allow and one from a state the draft has left. At most one undecided draft per skill
//! (the schema's unique index).

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::evaluation::Verdict;
use crate::safety::{Risk, SafetyReport};
use crate::store::{decode_json, encode_json, parse_enum, StoreError};

/// Whether a draft makes a new skill or changes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DraftKind {
    /// A new skill.
    Create,
    /// A change to the skill of that name.
    Update,
}

impl DraftKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DraftKind::Create => "create",
            DraftKind::Update => "update",
        }
    }
}

/// Where a draft is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DraftStatus {
    /// Its evaluation is queued or running.
    Evaluating,
    /// A `critical` finding stopped it before evaluation; it waits for a person.
    Blocked,
    /// It waits for a person's *Approve* or *Reject*.
    ReviewPending,
    /// A person approved it and its SKILL.md was written.
    Approved,
    /// A person rejected it.
    Rejected,
}

impl DraftStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DraftStatus::Evaluating => "evaluating",
            DraftStatus::Blocked => "blocked",
            DraftStatus::ReviewPending => "review_pending",
            DraftStatus::Approved => "approved",
            DraftStatus::Rejected => "rejected",
        }
    }

    /// Not yet decided by a person.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            DraftStatus::Evaluating | DraftStatus::Blocked | DraftStatus::ReviewPending
        )
    }

    /// Whether the machine allows `self → next`: evaluation ends in `review_pending`; an edit
    /// moves a draft between `blocked` (a critical finding) and the others; a person decides a
    /// draft that waits for them, and may reject one still being evaluated.
    pub fn can_become(self, next: DraftStatus) -> bool {
        use DraftStatus::*;
        matches!(
            (self, next),
            (Evaluating, ReviewPending)
                | (Evaluating, Blocked)
                | (Evaluating, Rejected)
                | (Blocked, Evaluating)
                | (Blocked, ReviewPending)
                | (Blocked, Approved)
                | (Blocked, Rejected)
                | (ReviewPending, Blocked)
                | (ReviewPending, Approved)
                | (ReviewPending, Rejected)
        )
    }
}

/// How far a draft's evaluation got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EvaluationStatus {
    /// Queued or running.
    Pending,
    /// The judge answered.
    Done,
    /// It failed `learning.max_retries` times; the draft reaches the person anyway.
    Failed,
    /// Not run: a critical finding blocked the draft.
    Skipped,
}

/// A draft's evaluation: the source conversation replayed with and without it, and a judge's
/// verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Evaluation {
    /// How far it got.
    pub status: EvaluationStatus,
    /// The judge's verdict.
    pub verdict: Option<Verdict>,
    /// The judge's score of the answer with the draft, 0–10.
    pub score_with: Option<u8>,
    /// …and without it.
    pub score_without: Option<u8>,
    /// The judge's reason.
    pub reason: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// Prompt tokens of its three requests, when reported.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens of its three requests, when reported.
    pub completion_tokens: Option<u64>,
    /// The judge read a text a person has edited since.
    #[serde(default)]
    pub stale: bool,
}

impl Evaluation {
    /// An evaluation of `status` with nothing measured yet.
    pub fn of(status: EvaluationStatus) -> Evaluation {
        Evaluation {
            status,
            verdict: None,
            score_with: None,
            score_without: None,
            reason: None,
            error: None,
            prompt_tokens: None,
            completion_tokens: None,
            stale: false,
        }
    }
}

/// A finding as stored with its draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct StoredFinding {
    /// The rule's id.
    pub rule: String,
    /// What kind of harm.
    pub category: String,
    /// How bad.
    pub risk: Risk,
    /// The file it is in.
    pub file: String,
    /// 1-based line; 0 for the whole file.
    pub line: usize,
    /// The offending text, shortened.
    pub excerpt: String,
    /// What it does and what to do about it.
    pub message: String,
}

/// A safety report as stored with its draft, bound to the text's sha256 and the rules' version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredReport {
    /// The worst risk.
    pub max_risk: Risk,
    /// Worst first.
    pub findings: Vec<StoredFinding>,
    /// sha256 of the checked text.
    pub sha256: String,
    /// The rules' version.
    pub rules_version: String,
}

impl StoredReport {
    /// The stored form of `report`.
    pub fn from_report(report: &SafetyReport) -> StoredReport {
        decode_json("safety report", &encode_json(report)).expect("a report reads back")
    }
}

/// A person's dismissal of a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dismissal {
    /// The finding's rule.
    pub rule: String,
    /// The finding's excerpt.
    pub excerpt: String,
    /// Why the person dismissed it.
    pub reason: String,
    /// When (unix ms).
    pub dismissed_at: i64,
}

/// A stored draft with what its candidate said.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// Its id.
    pub id: String,
    /// The candidate it was written for.
    pub candidate_id: String,
    /// The review that proposed the candidate.
    pub review_id: String,
    /// The skill's name (its folder).
    pub skill: String,
    /// Create or update.
    pub kind: DraftKind,
    /// Where it is.
    pub status: DraftStatus,
    /// The text *Approve* writes.
    pub skill_md: String,
    /// As the model wrote it.
    pub synthesized_md: String,
    /// The skill file's sha256 when the draft was made; `None`: there was none.
    pub base_sha256: Option<String>,
    /// The skill file's text then.
    pub base_md: Option<String>,
    /// The safety check of `skill_md`.
    pub safety: StoredReport,
    /// Its evaluation.
    pub evaluation: Evaluation,
    /// When a person last edited it.
    pub edited_at: Option<i64>,
    /// Why a person rejected it.
    pub reject_reason: Option<String>,
    /// The candidate's rationale.
    pub rationale: String,
    /// The candidate's priority.
    pub priority: f64,
    /// The candidate's confidence.
    pub confidence: f64,
    /// Indexes of the source messages the candidate cited.
    pub evidence: Vec<u32>,
    /// When it was made (unix ms).
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// When a person decided it.
    pub decided_at: Option<i64>,
}

/// A draft to store, as synthesis made it.
#[derive(Debug, Clone)]
pub struct NewDraft<'a> {
    /// The candidate.
    pub candidate_id: &'a str,
    /// The skill.
    pub skill: &'a str,
    /// Create or update.
    pub kind: DraftKind,
    /// The SKILL.md text.
    pub skill_md: &'a str,
    /// The skill file on disk when it was made.
    pub base: Option<(&'a str, &'a str)>,
    /// Its safety check.
    pub safety: &'a SafetyReport,
    /// Its first status (`evaluating`, or `blocked` by a critical finding).
    pub status: DraftStatus,
    /// Synthesis usage: prompt and completion tokens, duration.
    pub usage: (Option<u64>, Option<u64>, u64),
}

const COLUMNS: &str = "d.id, d.candidate_id, c.review_id, d.skill, d.kind, d.status, d.skill_md, \
    d.synthesized_md, d.base_sha256, d.base_md, d.safety, d.evaluation, d.edited_at, d.reject_reason, \
    c.rationale, c.priority, c.confidence, c.evidence, d.created_at, d.updated_at, d.decided_at";

fn from_row(row: &Row<'_>) -> Result<Draft, StoreError> {
    Ok(Draft {
        id: row.get(0)?,
        candidate_id: row.get(1)?,
        review_id: row.get(2)?,
        skill: row.get(3)?,
        kind: parse_enum("draft kind", &row.get::<_, String>(4)?)?,
        status: parse_enum("draft status", &row.get::<_, String>(5)?)?,
        skill_md: row.get(6)?,
        synthesized_md: row.get(7)?,
        base_sha256: row.get(8)?,
        base_md: row.get(9)?,
        safety: decode_json("draft safety report", &row.get::<_, String>(10)?)?,
        evaluation: decode_json("draft evaluation", &row.get::<_, String>(11)?)?,
        edited_at: row.get(12)?,
        reject_reason: row.get(13)?,
        rationale: row.get(14)?,
        priority: row.get(15)?,
        confidence: row.get(16)?,
        evidence: decode_json("candidate evidence", &row.get::<_, String>(17)?)?,
        created_at: row.get(18)?,
        updated_at: row.get(19)?,
        decided_at: row.get(20)?,
    })
}

fn load(
    connection: &Connection,
    clause: &str,
    values: impl rusqlite::Params,
) -> Result<Vec<Draft>, StoreError> {
    let mut statement = connection.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM drafts d JOIN candidates c ON c.id = d.candidate_id {clause}"
    ))?;
    let mut rows = statement.query(values)?;
    let mut drafts = Vec::new();
    while let Some(row) = rows.next()? {
        drafts.push(from_row(row)?);
    }
    Ok(drafts)
}

/// Stores a new draft; returns its id. Fails on the unique index when the skill already has an
/// undecided draft (the caller checks first, inside the same transaction).
pub fn insert(
    connection: &Connection,
    draft: &NewDraft<'_>,
    now_ms: i64,
) -> Result<String, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    let evaluation = Evaluation::of(if draft.status == DraftStatus::Blocked {
        EvaluationStatus::Skipped
    } else {
        EvaluationStatus::Pending
    });
    connection.execute(
        "INSERT INTO drafts (id, candidate_id, skill, kind, status, skill_md, synthesized_md, base_sha256,
             base_md, safety, evaluation, prompt_tokens, completion_tokens, duration_ms, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14)",
        params![
            id,
            draft.candidate_id,
            draft.skill,
            draft.kind.as_str(),
            draft.status.as_str(),
            draft.skill_md,
            draft.base.map(|(sha, _)| sha),
            draft.base.map(|(_, text)| text),
            encode_json(draft.safety),
            encode_json(&evaluation),
            draft.usage.0,
            draft.usage.1,
            draft.usage.2,
            now_ms
        ],
    )?;
    Ok(id)
}

/// One draft.
pub fn get(connection: &Connection, id: &str) -> Result<Option<Draft>, StoreError> {
    Ok(load(connection, "WHERE d.id = ?1", [id])?
        .into_iter()
        .next())
}

/// Drafts, optionally of one status: those waiting for a person first, then newest first.
pub fn list(
    connection: &Connection,
    status: Option<DraftStatus>,
) -> Result<Vec<Draft>, StoreError> {
    load(
        connection,
        "WHERE ?1 IS NULL OR d.status = ?1
         ORDER BY CASE d.status WHEN 'review_pending' THEN 0 WHEN 'blocked' THEN 0 WHEN 'evaluating' THEN 1 ELSE 2 END,
             d.created_at DESC, d.rowid DESC
         LIMIT 500",
        [status.map(DraftStatus::as_str)],
    )
}

/// The undecided draft of `skill`, if any.
pub fn open_for_skill(connection: &Connection, skill: &str) -> Result<Option<String>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT id FROM drafts WHERE skill = ?1 AND status IN ('evaluating', 'blocked', 'review_pending')",
            [skill],
            |row| row.get(0),
        )
        .optional()?)
}

/// Moves a draft `from → to`; false when it was no longer in `from`. A move the machine does
/// not allow is refused, never written. `reason` is the rejection's.
pub fn set_status(
    connection: &Connection,
    id: &str,
    from: DraftStatus,
    to: DraftStatus,
    reason: Option<&str>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    if !from.can_become(to) {
        return Err(StoreError::Corrupt {
            what: "draft transition".into(),
            message: format!(
                "{} → {} is not a move a draft makes",
                from.as_str(),
                to.as_str()
            ),
        });
    }
    let decided = matches!(to, DraftStatus::Approved | DraftStatus::Rejected);
    let moved = connection.execute(
        "UPDATE drafts SET status = ?3, updated_at = ?4,
             reject_reason = COALESCE(?5, reject_reason),
             decided_at = CASE WHEN ?6 THEN ?4 ELSE decided_at END
         WHERE id = ?1 AND status = ?2",
        params![id, from.as_str(), to.as_str(), now_ms, reason, decided],
    )?;
    Ok(moved == 1)
}

/// Stores a draft's evaluation.
pub fn set_evaluation(
    connection: &Connection,
    id: &str,
    evaluation: &Evaluation,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE drafts SET evaluation = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, encode_json(evaluation), now_ms],
    )?;
    Ok(())
}

/// Marks a draft's evaluation as one of the text before a person's edit.
pub fn mark_evaluation_stale(
    connection: &Connection,
    id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE drafts SET evaluation = json_set(evaluation, '$.stale', json('true')), updated_at = ?2 WHERE id = ?1",
        params![id, now_ms],
    )?;
    Ok(())
}

/// Stores a person's edit with its new safety report, re-based on the skill file as it is now
/// (`base`: its sha256 and text; `None`: there is none): the draft becomes an update of that
/// file, or a create when there is none.
pub fn set_text(
    connection: &Connection,
    id: &str,
    skill_md: &str,
    safety: &SafetyReport,
    base: Option<(&str, &str)>,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE drafts SET skill_md = ?2, safety = ?3, base_sha256 = ?4, base_md = ?5, edited_at = ?6, updated_at = ?6,
             kind = CASE WHEN ?4 IS NULL THEN 'create' ELSE 'update' END
         WHERE id = ?1",
        params![id, skill_md, encode_json(safety), base.map(|(sha, _)| sha), base.map(|(_, text)| text), now_ms],
    )?;
    Ok(())
}

/// A draft's dismissals.
pub fn dismissals(connection: &Connection, draft_id: &str) -> Result<Vec<Dismissal>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT rule, excerpt, reason, dismissed_at FROM draft_dismissals WHERE draft_id = ?1 ORDER BY dismissed_at",
    )?;
    let rows = statement.query_map([draft_id], |row| {
        Ok(Dismissal {
            rule: row.get(0)?,
            excerpt: row.get(1)?,
            reason: row.get(2)?,
            dismissed_at: row.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Records a dismissal (a second one of the same finding replaces the reason).
pub fn dismiss(
    connection: &Connection,
    draft_id: &str,
    finding: &StoredFinding,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "INSERT INTO draft_dismissals (draft_id, rule, excerpt, reason, dismissed_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (draft_id, rule, excerpt) DO UPDATE SET reason = excluded.reason, dismissed_at = excluded.dismissed_at",
        params![draft_id, finding.rule, finding.excerpt, reason, now_ms],
    )?;
    Ok(())
}

/// Drafts waiting for a person: (`review_pending`, `blocked`).
pub fn waiting_counts(connection: &Connection) -> Result<(u64, u64), StoreError> {
    Ok(connection.query_row(
        "SELECT COUNT(*) FILTER (WHERE status = 'review_pending'), COUNT(*) FILTER (WHERE status = 'blocked') FROM drafts",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?)
}

#[cfg(test)]
mod tests {
    use super::DraftStatus::{self, *};

    #[test]
    fn decided_drafts_never_move_again() {
        let all = [Evaluating, Blocked, ReviewPending, Approved, Rejected];
        for from in [Approved, Rejected] {
            assert!(all.iter().all(|&to| !from.can_become(to)), "{from:?} moved");
        }
        assert!(!Evaluating.can_become(Approved), "approved unevaluated");
        let open: Vec<DraftStatus> = all.into_iter().filter(|s| s.is_open()).collect();
        assert_eq!(open, [Evaluating, Blocked, ReviewPending]);
    }
}
