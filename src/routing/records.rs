//! The routing tables of `migrations/0003_routing.sql` (with the head identity of 0006, the
//! replaced heads of 0008 and the head source of 0009): saved heads, the heads a promotion or a
//! restore replaced, the route log and the outcome log. Every statement that touches them is
//! here.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::head::{CandidateFeatures, ForwardPass, Outcome, RankedSkill, SkillStats};
use crate::store::StoreError;

/// A saved head as the status view lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SavedHead {
    /// Its embedding dimension (one saved head per dimension).
    pub dim: usize,
    /// The embedder in use when it was last saved.
    pub embedder: String,
    /// Its update count when last saved.
    pub update_count: u64,
    /// When it was last saved (unix ms).
    pub updated_at: i64,
}

/// One ranking, as logged.
pub(crate) struct RouteRecord<'a> {
    pub id: &'a str,
    pub created_at: i64,
    pub query: &'a str,
    pub embedder: &'a str,
    pub query_embedding: &'a [f32],
    pub head_updates: u64,
    pub warmed_up: bool,
    pub top_k: usize,
    pub ranked: &'a [RankedSkill],
    pub passes: &'a [ForwardPass],
}

/// One outcome, as logged.
pub(crate) struct OutcomeRecord {
    pub route_id: String,
    pub outcome: Outcome,
    pub rank: usize,
    pub pass: ForwardPass,
    pub created_at: i64,
}

/// What the log knows of a route id that is no longer in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoggedRoute {
    /// Never routed.
    Unknown,
    /// Routed, no outcome yet.
    Open,
    /// Routed and decided.
    Decided,
}

/// A saved head as it is loaded: its bytes, the embedder that saved it, its identity and
/// where it came from.
pub(crate) struct StoredHead {
    pub snapshot: Vec<u8>,
    pub embedder: String,
    /// The row's `head_id`: the head's identity (see [`HeadClaim`]).
    pub id: i64,
    /// `online` or `job:<id>` (see [`super::HeadSource`]).
    pub source: String,
}

/// The saved head of dimension `dim`.
pub(crate) fn load_head(
    connection: &Connection,
    dim: usize,
) -> Result<Option<StoredHead>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT snapshot, embedder, head_id, source FROM routing_heads WHERE dim = ?1",
            params![dim as i64],
            |row| {
                Ok(StoredHead {
                    snapshot: row.get(0)?,
                    embedder: row.get(1)?,
                    id: row.get(2)?,
                    source: row.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Which stored head a live head may overwrite.
///
/// A head's identity is the `head_id` of its row: the instant it was first saved (or, for a
/// fresh head, chosen when it was started), kept by every later save of the same head. A head
/// loaded from a row has that row's identity. A fresh head may overwrite only the row it
/// replaces (an unusable saved head), or insert one where there is none; once it saved, only
/// its own row. A promoted (or restored) head is a new identity that may overwrite what the
/// head it replaces could. So a corrupt saved head cannot block a fresh one, a promoted head is
/// saved however its update count compares with the old one's (a count only has to grow
/// within one identity), and a head that another one has since replaced (a promoted head, a
/// second engine) is never overwritten by a stale one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadClaim {
    /// This head's identity.
    pub id: i64,
    /// The identity the stored row must have for this head to overwrite it: its own once loaded
    /// or saved, the unusable head's it replaces, `None` when there was no saved head.
    pub overwrites: Option<i64>,
}

impl HeadClaim {
    /// The claim of a head loaded from the row with identity `id`.
    pub fn loaded(id: i64) -> HeadClaim {
        HeadClaim {
            id,
            overwrites: Some(id),
        }
    }

    /// The claim of a fresh head started at `now`, replacing the row `replaces` if any. Its
    /// identity is newer than the row it replaces, so the two are never confused.
    pub fn fresh(now: i64, replaces: Option<i64>) -> HeadClaim {
        HeadClaim {
            id: replaces.map_or(now, |old| now.max(old + 1)),
            overwrites: replaces,
        }
    }

    /// The claim of a head that replaces the live head of claim `live` at `now` (a promotion or
    /// a restore): a new identity, newer than the live one's, that may overwrite what the live
    /// head may. The live head's own later saves are then refused, so it cannot overwrite its
    /// successor.
    pub fn succeeding(live: &HeadClaim, now: i64) -> HeadClaim {
        HeadClaim {
            id: now.max(live.id + 1),
            overwrites: live.overwrites,
        }
    }
}

/// A head as it is saved in `routing_heads`.
pub(crate) struct HeadRecord<'a> {
    pub dim: usize,
    /// The embedder in use.
    pub embedder: &'a str,
    /// [`super::HeadSnapshot::to_bytes`].
    pub snapshot: &'a [u8],
    pub update_count: u64,
    /// `online` or `job:<id>`.
    pub source: &'a str,
}

/// What became of one save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadSave {
    /// The snapshot is stored.
    Saved,
    /// A later save of the same head landed first (two saves raced to the writer thread); the
    /// older one is dropped.
    Superseded,
    /// The stored head is another one; it was left alone. The reason (which head is stored)
    /// is for the status view.
    Refused(String),
}

/// Saves the head of dimension `dim` if `claim` allows it (see [`HeadClaim`]), and updates the
/// claim when it did. Runs on the store's writer thread, so saves are judged one at a time.
pub(crate) fn save_head(
    connection: &Connection,
    claim: &Mutex<HeadClaim>,
    head: &HeadRecord<'_>,
    now: i64,
) -> Result<HeadSave, StoreError> {
    let mut claim = claim.lock().unwrap_or_else(PoisonError::into_inner);
    let dim = head.dim;
    let changed = connection.execute(
        "INSERT INTO routing_heads (dim, embedder, snapshot, update_count, head_id, created_at, updated_at, source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?8)
         ON CONFLICT (dim) DO UPDATE SET
             embedder = excluded.embedder,
             snapshot = excluded.snapshot,
             update_count = excluded.update_count,
             head_id = excluded.head_id,
             source = excluded.source,
             created_at = CASE WHEN routing_heads.head_id = excluded.head_id
                               THEN routing_heads.created_at ELSE excluded.created_at END,
             updated_at = excluded.updated_at
         WHERE routing_heads.head_id = ?7
           AND (routing_heads.head_id <> excluded.head_id
                OR routing_heads.update_count <= excluded.update_count)",
        params![
            dim as i64,
            head.embedder,
            head.snapshot,
            head.update_count as i64,
            claim.id,
            now,
            claim.overwrites,
            head.source,
        ],
    )?;
    if changed == 1 {
        claim.overwrites = Some(claim.id);
        return Ok(HeadSave::Saved);
    }
    let (stored_id, stored_embedder, stored_updates): (i64, String, i64) = connection.query_row(
        "SELECT head_id, embedder, update_count FROM routing_heads WHERE dim = ?1",
        params![dim as i64],
        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
    )?;
    if stored_id == claim.id {
        return Ok(HeadSave::Superseded);
    }
    Ok(HeadSave::Refused(format!(
        "the stored {dim}-dimensional head is another one ({stored_updates} updates, saved with \
         {stored_embedder}), which this head must not overwrite"
    )))
}

/// A live head as `routing_head_versions` keeps it once another replaced it.
pub(crate) struct VersionRecord<'a> {
    pub dim: usize,
    /// [`super::HeadSnapshot::to_bytes`] of the head when it was replaced.
    pub snapshot: &'a [u8],
    pub update_count: u64,
    /// Its identity while it was live.
    pub head_id: i64,
    /// Where it came from: `online` or `job:<id>`.
    pub source: &'a str,
    /// What replaced it: `job:<id>` or `restore`.
    pub replaced_by: &'a str,
}

/// What became of one replacement of the live head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadReplacement {
    /// The new head is saved and the old one kept, as this `routing_head_versions` row.
    Replaced {
        /// The row's id.
        version_id: i64,
    },
    /// The stored head is not the live one (see [`HeadSave::Refused`]); nothing was written.
    Refused(String),
}

/// Replaces the live head in one transaction: keeps `previous` in `routing_head_versions` and
/// saves `next` under `claim` (a new identity, [`HeadClaim::succeeding`]). Either both are
/// written or neither is, so a head is never lost, and never kept twice.
pub(crate) fn replace_head(
    connection: &mut Connection,
    previous: &VersionRecord<'_>,
    claim: &Mutex<HeadClaim>,
    next: &HeadRecord<'_>,
    now: i64,
) -> Result<HeadReplacement, StoreError> {
    let transaction = connection.transaction()?;
    transaction.execute(
        "INSERT INTO routing_head_versions (dim, snapshot, update_count, head_id, source,
             replaced_by, replaced_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            previous.dim as i64,
            previous.snapshot,
            previous.update_count as i64,
            previous.head_id,
            previous.source,
            previous.replaced_by,
            now,
        ],
    )?;
    let version_id = transaction.last_insert_rowid();
    match save_head(&transaction, claim, next, now)? {
        HeadSave::Saved => {
            transaction.commit()?;
            Ok(HeadReplacement::Replaced { version_id })
        }
        // Dropping the transaction rolls the version row back.
        HeadSave::Refused(reason) => Ok(HeadReplacement::Refused(reason)),
        // Identities are instants: another engine's head first saved in the same millisecond.
        HeadSave::Superseded => Ok(HeadReplacement::Refused(format!(
            "another {}-dimensional head was stored under the same identity meanwhile",
            next.dim
        ))),
    }
}

/// A head that a promotion or a restore replaced, as it is loaded to be put back.
pub(crate) struct StoredVersion {
    /// The `routing_head_versions` row's id.
    pub id: i64,
    pub snapshot: Vec<u8>,
    /// `online` or `job:<id>`.
    pub source: String,
    /// `job:<id>` or `restore`.
    pub replaced_by: String,
}

/// The head replaced last among those of dimension `dim`.
pub(crate) fn last_replaced_head(
    connection: &Connection,
    dim: usize,
) -> Result<Option<StoredVersion>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT id, snapshot, source, replaced_by FROM routing_head_versions
             WHERE dim = ?1 ORDER BY id DESC LIMIT 1",
            params![dim as i64],
            |row| {
                Ok(StoredVersion {
                    id: row.get(0)?,
                    snapshot: row.get(1)?,
                    source: row.get(2)?,
                    replaced_by: row.get(3)?,
                })
            },
        )
        .optional()?)
}

/// Every saved head, by dimension.
pub(crate) fn saved_heads(connection: &Connection) -> Result<Vec<SavedHead>, StoreError> {
    let mut statement = connection.prepare(
        "SELECT dim, embedder, update_count, updated_at FROM routing_heads ORDER BY dim",
    )?;
    let heads = statement
        .query_map([], |row| {
            Ok(SavedHead {
                dim: row.get::<_, i64>(0)? as usize,
                embedder: row.get(1)?,
                update_count: row.get::<_, i64>(2)? as u64,
                updated_at: row.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(heads)
}

/// Logs a ranking.
pub(crate) fn insert_route(
    connection: &Connection,
    route: &RouteRecord<'_>,
) -> Result<(), StoreError> {
    let candidates: Vec<serde_json::Value> = route
        .ranked
        .iter()
        .zip(route.passes)
        .map(|(ranked, pass)| {
            serde_json::json!({
                "skill": ranked.skill,
                "score": ranked.score,
                "cosine": ranked.cosine,
                "rl": ranked.rl,
                "success_rate": pass.features.success_rate,
                "log_uses": pass.features.log_uses,
            })
        })
        .collect();
    connection.execute(
        "INSERT INTO routing_routes (id, created_at, query, embedder, dim, query_embedding,
             head_updates, warmed_up, top_k, candidates)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            route.id,
            route.created_at,
            route.query,
            route.embedder,
            route.query_embedding.len() as i64,
            floats_to_blob(route.query_embedding),
            route.head_updates as i64,
            route.warmed_up,
            route.top_k as i64,
            serde_json::Value::Array(candidates).to_string(),
        ],
    )?;
    Ok(())
}

/// Logs an outcome; `false` when the route already has one.
pub(crate) fn insert_outcome(
    connection: &Connection,
    record: &OutcomeRecord,
) -> Result<bool, StoreError> {
    let CandidateFeatures {
        cosine,
        success_rate,
        log_uses,
    } = record.pass.features;
    let inserted = connection.execute(
        "INSERT INTO routing_outcomes (route_id, skill, outcome, reward, rank, skill_embedding,
             cosine, success_rate, log_uses, rl, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (route_id) DO NOTHING",
        params![
            record.route_id,
            record.pass.skill,
            record.outcome.as_str(),
            record.outcome.reward(),
            record.rank as i64,
            floats_to_blob(&record.pass.skill_embedding),
            cosine,
            success_rate,
            log_uses,
            record.pass.rl,
            record.created_at,
        ],
    )?;
    Ok(inserted == 1)
}

/// Whether `route_id` was ever routed, and decided.
pub(crate) fn logged_route(
    connection: &Connection,
    route_id: &str,
) -> Result<LoggedRoute, StoreError> {
    let found: Option<bool> = connection
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM routing_outcomes WHERE route_id = ?1)
             FROM routing_routes WHERE id = ?1",
            params![route_id],
            |row| row.get(0),
        )
        .optional()?;
    Ok(match found {
        None => LoggedRoute::Unknown,
        Some(false) => LoggedRoute::Open,
        Some(true) => LoggedRoute::Decided,
    })
}

/// Every skill's track record, rebuilt from the outcome log.
pub(crate) fn skill_stats(
    connection: &Connection,
) -> Result<HashMap<String, SkillStats>, StoreError> {
    let mut statement = connection.prepare(
        "SELECT skill, COUNT(*), SUM(outcome = 'success') FROM routing_outcomes GROUP BY skill",
    )?;
    let stats = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                SkillStats {
                    uses: row.get::<_, i64>(1)? as u64,
                    successes: row.get::<_, i64>(2)? as u64,
                },
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(stats)
}

/// The rewards of the last `count` outcomes, oldest first.
pub(crate) fn recent_rewards(
    connection: &Connection,
    count: usize,
) -> Result<Vec<f32>, StoreError> {
    let mut statement =
        connection.prepare("SELECT reward FROM routing_outcomes ORDER BY rowid DESC LIMIT ?1")?;
    let mut rewards: Vec<f32> = statement
        .query_map(params![count as i64], |row| row.get::<_, f64>(0))?
        .map(|reward| reward.map(|reward| reward as f32))
        .collect::<Result<_, _>>()?;
    rewards.reverse();
    Ok(rewards)
}

/// `f32`s as little-endian bytes, the layout of every embedding column.
pub fn floats_to_blob(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|value| value.to_le_bytes())
        .collect()
}

/// The inverse of [`floats_to_blob`]; `None` if the length is not a multiple of four.
pub fn blob_to_floats(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
            .collect(),
    )
}
