//! Which skills Lull wrote: every SKILL.md an approval wrote or a rollback restored, with its
//! sha256 and the text it replaced (DESIGN §2.2, *Provenance*). Every SQL statement about
//! `skill_versions` lives here.
//!
//! A skill on disk is Lull's when its file's sha256 is the one Lull last recorded for it;
//! anything else (a skill the person wrote, or Lull's skill edited by hand since) is foreign,
//! and Lull overwrites it only for a draft that names it.

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use crate::store::StoreError;

/// What wrote a version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A person approved a draft.
    Approve,
    /// A person rolled the skill back to the text before.
    Rollback,
}

impl Action {
    fn as_str(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Rollback => "rollback",
        }
    }
}

/// One recorded write of a skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillVersion {
    /// The skill.
    pub skill: String,
    /// 1, 2, … per skill.
    pub version: u32,
    /// Approve or rollback.
    pub action: String,
    /// The approved draft.
    pub draft_id: Option<String>,
    /// sha256 of the file written; `None` when the write removed it.
    pub sha256: Option<String>,
    /// The text it replaced; `None` when there was none.
    #[serde(skip)]
    pub previous_md: Option<String>,
    /// sha256 of the text it replaced.
    pub previous_sha256: Option<String>,
    /// When (unix ms).
    pub written_at: i64,
}

/// A write to record.
#[derive(Debug, Clone)]
pub struct Write<'a> {
    /// The skill.
    pub skill: &'a str,
    /// What wrote it.
    pub action: Action,
    /// The approved draft.
    pub draft_id: Option<&'a str>,
    /// sha256 of what is on disk now; `None`: removed.
    pub sha256: Option<&'a str>,
    /// The text before, and its sha256.
    pub previous: Option<(&'a str, &'a str)>,
}

/// Records a write; returns its version number.
pub fn record(connection: &Connection, write: &Write<'_>, now_ms: i64) -> Result<u32, StoreError> {
    Ok(connection.query_row(
        "INSERT INTO skill_versions (skill, version, action, draft_id, sha256, previous_md, previous_sha256, written_at)
         VALUES (?1, (SELECT COALESCE(MAX(version), 0) + 1 FROM skill_versions WHERE skill = ?1), ?2, ?3, ?4, ?5, ?6, ?7)
         RETURNING version",
        params![
            write.skill,
            write.action.as_str(),
            write.draft_id,
            write.sha256,
            write.previous.map(|(text, _)| text),
            write.previous.map(|(_, sha)| sha),
            now_ms
        ],
        |row| row.get(0),
    )?)
}

/// The last recorded write of `skill`.
pub fn latest(connection: &Connection, skill: &str) -> Result<Option<SkillVersion>, StoreError> {
    Ok(connection
        .query_row(
            "SELECT skill, version, action, draft_id, sha256, previous_md, previous_sha256, written_at
             FROM skill_versions WHERE skill = ?1 ORDER BY version DESC LIMIT 1",
            [skill],
            |row| {
                Ok(SkillVersion {
                    skill: row.get(0)?,
                    version: row.get(1)?,
                    action: row.get(2)?,
                    draft_id: row.get(3)?,
                    sha256: row.get(4)?,
                    previous_md: row.get(5)?,
                    previous_sha256: row.get(6)?,
                    written_at: row.get(7)?,
                })
            },
        )
        .optional()?)
}

/// The last recorded write of every skill Lull ever wrote.
pub fn all_latest(connection: &Connection) -> Result<Vec<SkillVersion>, StoreError> {
    let mut statement = connection.prepare_cached(
        "SELECT skill, MAX(version) FROM skill_versions GROUP BY skill ORDER BY skill",
    )?;
    let names: Vec<String> = statement
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut versions = Vec::with_capacity(names.len());
    for name in names {
        versions.extend(latest(connection, &name)?);
    }
    Ok(versions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[tokio::test]
    async fn versions_count_up_per_skill_and_the_latest_is_found() {
        let store = Store::open_in_memory().unwrap();
        store
            .call(|c| {
                let first = Write {
                    skill: "a",
                    action: Action::Approve,
                    draft_id: None,
                    sha256: Some("s1"),
                    previous: None,
                };
                assert_eq!(record(c, &first, 1)?, 1);
                let second = Write {
                    sha256: Some("s2"),
                    previous: Some(("old text", "s1")),
                    ..first.clone()
                };
                assert_eq!(record(c, &second, 2)?, 2);
                assert_eq!(
                    record(
                        c,
                        &Write {
                            skill: "b",
                            ..first
                        },
                        3
                    )?,
                    1
                );
                let latest = latest(c, "a")?.unwrap();
                assert_eq!(
                    (
                        latest.version,
                        latest.sha256.as_deref(),
                        latest.previous_md.as_deref()
                    ),
                    (2, Some("s2"), Some("old text"))
                );
                assert_eq!(all_latest(c)?.len(), 2);
                Ok(())
            })
            .await
            .unwrap();
    }
}
