//! Candidates: what a review proposes to learn, and where each is on its way to a draft.
//!
//! A candidate's life is a small state machine, and [`CandidateStatus::can_become`] is the one
//! place its transitions are written: `open → drafting → drafted | superseded | failed`, and
//! `open → superseded` when a draft for its skill already waits for a person. Every change goes
//! through [`transition`], which refuses a move the machine does not allow and a move from a
//! state the candidate is no longer in (someone else moved it first). Every SQL statement about
//! candidates lives here.

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::store::{decode_json, encode_json, parse_enum, StoreError};

/// A candidate as a review proposes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CandidateProposal {
    /// The skill's name (lowercase-hyphen).
    pub skill: String,
    /// `create` or `update`.
    pub kind: String,
    /// Why it is worth learning.
    pub rationale: String,
    /// Indexes of the messages that show it.
    pub evidence: Vec<u32>,
    /// 0..1, higher first.
    pub priority: f64,
    /// 0..1.
    pub confidence: f64,
    /// Names of related skills.
    pub related: Vec<String>,
}

/// Where a candidate is in its life (DESIGN §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CandidateStatus {
    /// Proposed by a review; no draft yet.
    Open,
    /// Its draft is being written (queued, running or backing off after an error).
    Drafting,
    /// Its draft exists.
    Drafted,
    /// Another draft covers the same skill.
    Superseded,
    /// Drafting failed `learning.max_retries` times.
    Failed,
}

impl CandidateStatus {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CandidateStatus::Open => "open",
            CandidateStatus::Drafting => "drafting",
            CandidateStatus::Drafted => "drafted",
            CandidateStatus::Superseded => "superseded",
            CandidateStatus::Failed => "failed",
        }
    }

    /// Whether the machine allows `self → next`.
    pub fn can_become(self, next: CandidateStatus) -> bool {
        use CandidateStatus::*;
        matches!(
            (self, next),
            (Open, Drafting)
                | (Open, Superseded)
                | (Drafting, Drafted)
                | (Drafting, Superseded)
                | (Drafting, Failed)
        )
    }
}

/// A stored candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Candidate {
    /// Its id.
    pub id: String,
    /// The review it came from.
    pub review_id: String,
    /// Where it is.
    pub status: CandidateStatus,
    /// When it was stored (unix ms).
    pub created_at: i64,
    /// When its status last changed (unix ms).
    pub updated_at: i64,
    /// Synthesis runs that failed.
    pub failures: u32,
    /// The last failure, or why it was superseded.
    pub last_error: Option<String>,
    /// Its draft (drafted), or the draft that covers its skill (superseded).
    pub draft_id: Option<String>,
    /// What was proposed.
    #[serde(flatten)]
    pub proposal: CandidateProposal,
}

const COLUMNS: &str =
    "id, review_id, status, created_at, updated_at, failures, last_error, draft_id, \
                       skill, kind, rationale, evidence, priority, confidence, related";

fn from_row(row: &Row<'_>) -> Result<Candidate, StoreError> {
    Ok(Candidate {
        id: row.get(0)?,
        review_id: row.get(1)?,
        status: parse_enum("candidate status", &row.get::<_, String>(2)?)?,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
        failures: row.get(5)?,
        last_error: row.get(6)?,
        draft_id: row.get(7)?,
        proposal: CandidateProposal {
            skill: row.get(8)?,
            kind: row.get(9)?,
            rationale: row.get(10)?,
            evidence: decode_json("candidate evidence", &row.get::<_, String>(11)?)?,
            priority: row.get(12)?,
            confidence: row.get(13)?,
            related: decode_json("candidate related skills", &row.get::<_, String>(14)?)?,
        },
    })
}

fn load(
    connection: &Connection,
    clause: &str,
    values: impl rusqlite::Params,
) -> Result<Vec<Candidate>, StoreError> {
    let mut statement =
        connection.prepare_cached(&format!("SELECT {COLUMNS} FROM candidates {clause}"))?;
    let mut rows = statement.query(values)?;
    let mut candidates = Vec::new();
    while let Some(row) = rows.next()? {
        candidates.push(from_row(row)?);
    }
    Ok(candidates)
}

/// Stores a finished review's proposals as `open` candidates (inside the transaction that
/// marks the review done). Keyed by (review, skill, kind), so a replay adds no twins; returns
/// how many were new.
pub fn insert_proposals(
    connection: &Connection,
    review_id: &str,
    proposals: &[CandidateProposal],
    now_ms: i64,
) -> Result<usize, StoreError> {
    let mut stored = 0;
    for proposal in proposals {
        stored += connection.execute(
            "INSERT OR IGNORE INTO candidates
                 (id, review_id, skill, kind, rationale, evidence, priority, confidence, related, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
            params![
                uuid::Uuid::new_v4().to_string(),
                review_id,
                proposal.skill,
                proposal.kind,
                proposal.rationale,
                encode_json(&proposal.evidence),
                proposal.priority,
                proposal.confidence,
                encode_json(&proposal.related),
                now_ms
            ],
        )?;
    }
    Ok(stored)
}

/// Candidates, newest first, optionally of one status.
pub fn list(
    connection: &Connection,
    status: Option<CandidateStatus>,
) -> Result<Vec<Candidate>, StoreError> {
    load(
        connection,
        "WHERE ?1 IS NULL OR status = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 500",
        [status.map(CandidateStatus::as_str)],
    )
}

/// One candidate.
pub fn get(connection: &Connection, id: &str) -> Result<Option<Candidate>, StoreError> {
    Ok(load(connection, "WHERE id = ?1", [id])?.into_iter().next())
}

/// The open candidates a draft run takes, in the order of DESIGN §2.2: highest priority, then
/// highest confidence, then newest.
pub fn next_open(connection: &Connection, limit: usize) -> Result<Vec<Candidate>, StoreError> {
    load(
        connection,
        "WHERE status = 'open' ORDER BY priority DESC, confidence DESC, created_at DESC, rowid DESC LIMIT ?1",
        [limit as i64],
    )
}

/// A candidate of `skill` other than `except` that is drafting already, if any.
pub fn drafting_for_skill(
    connection: &Connection,
    skill: &str,
    except: &str,
) -> Result<Option<String>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT id FROM candidates WHERE skill = ?1 AND status = 'drafting' AND id != ?2",
            params![skill, except],
            |row| row.get(0),
        )
        .optional()?)
}

/// What a transition records beside the new status.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note<'a> {
    /// The draft it produced or that covers its skill.
    pub draft_id: Option<&'a str>,
    /// Why (a failure, a supersession).
    pub reason: Option<&'a str>,
}

/// Moves a candidate `from → to`; false when it was no longer in `from`. A move the state
/// machine does not allow is a programming error, refused as [`StoreError::Corrupt`] rather
/// than written.
pub fn transition(
    connection: &Connection,
    id: &str,
    from: CandidateStatus,
    to: CandidateStatus,
    note: Note<'_>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    if !from.can_become(to) {
        return Err(StoreError::Corrupt {
            what: "candidate transition".into(),
            message: format!(
                "{} → {} is not a move a candidate makes",
                from.as_str(),
                to.as_str()
            ),
        });
    }
    let moved = connection.execute(
        "UPDATE candidates SET status = ?3, updated_at = ?4,
             draft_id = COALESCE(?5, draft_id), last_error = COALESCE(?6, last_error)
         WHERE id = ?1 AND status = ?2",
        params![
            id,
            from.as_str(),
            to.as_str(),
            now_ms,
            note.draft_id,
            note.reason
        ],
    )?;
    Ok(moved == 1)
}

/// Records a failed synthesis run of a drafting candidate.
pub fn record_failure(
    connection: &Connection,
    id: &str,
    error: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    connection.execute(
        "UPDATE candidates SET failures = failures + 1, last_error = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, error, now_ms],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use CandidateStatus::*;

    #[test]
    fn the_state_machine_allows_only_the_documented_moves() {
        let all = [Open, Drafting, Drafted, Superseded, Failed];
        let allowed: Vec<(CandidateStatus, CandidateStatus)> = all
            .iter()
            .flat_map(|&from| all.iter().map(move |&to| (from, to)))
            .filter(|&(from, to)| from.can_become(to))
            .collect();
        assert_eq!(
            allowed,
            vec![
                (Open, Drafting),
                (Open, Superseded),
                (Drafting, Drafted),
                (Drafting, Superseded),
                (Drafting, Failed)
            ]
        );
    }

    fn proposal(skill: &str, priority: f64, confidence: f64) -> CandidateProposal {
        CandidateProposal {
            skill: skill.into(),
            kind: "create".into(),
            rationale: "seen twice".into(),
            evidence: vec![1],
            priority,
            confidence,
            related: vec![],
        }
    }

    fn seed(c: &Connection) -> Result<(), StoreError> {
        c.execute(
            "INSERT INTO reviews (id, session_key, status, messages, snapshot_at, enqueued_at, updated_at)
             VALUES ('r1', 's', 'done', '[]', 0, 0, 0)",
            [],
        )?;
        Ok(())
    }

    #[tokio::test]
    async fn open_candidates_come_by_priority_then_confidence_then_newest() {
        let store = Store::open_in_memory().unwrap();
        store
            .call(|c| {
                seed(c)?;
                insert_proposals(c, "r1", &[proposal("low", 0.2, 0.9)], 1)?;
                insert_proposals(c, "r1", &[proposal("sure", 0.8, 0.9)], 2)?;
                insert_proposals(c, "r1", &[proposal("old", 0.8, 0.5)], 3)?;
                insert_proposals(c, "r1", &[proposal("new", 0.8, 0.5)], 4)?;
                assert_eq!(
                    insert_proposals(c, "r1", &[proposal("new", 0.8, 0.5)], 5)?,
                    0,
                    "a replayed review adds no twin"
                );
                let order: Vec<String> = next_open(c, 10)?
                    .into_iter()
                    .map(|candidate| candidate.proposal.skill)
                    .collect();
                assert_eq!(order, ["sure", "new", "old", "low"]);
                assert_eq!(next_open(c, 2)?.len(), 2);
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_transition_happens_once_and_an_illegal_one_is_refused() {
        let store = Store::open_in_memory().unwrap();
        store
            .call(|c| {
                seed(c)?;
                insert_proposals(c, "r1", &[proposal("a", 0.5, 0.5)], 1)?;
                let id = next_open(c, 1)?[0].id.clone();
                assert!(transition(c, &id, Open, Drafting, Note::default(), 2)?);
                assert!(!transition(c, &id, Open, Drafting, Note::default(), 3)?);
                let note = Note {
                    draft_id: Some("d1"),
                    reason: None,
                };
                assert!(transition(c, &id, Drafting, Drafted, note, 4)?);
                let stored = get(c, &id)?.unwrap();
                assert_eq!(
                    (stored.status, stored.draft_id.as_deref()),
                    (Drafted, Some("d1"))
                );
                assert!(transition(c, &id, Drafted, Open, Note::default(), 5).is_err());
                Ok(())
            })
            .await
            .unwrap();
    }
}
