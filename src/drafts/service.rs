//! What a person does with drafts (DESIGN §2.2): read one (its SKILL.md, a diff against the
//! file as it is now, its findings and evaluation), dismiss a finding, edit, reject, approve;
//! list the skills and roll one back.
//!
//! Invariants: nothing here runs without a person's request; *Approve* is refused while an
//! undismissed `high` or `critical` finding stands, when the file changed on disk since the
//! draft was made, and when a skill Lull did not write would be overwritten by a draft that was
//! not proposed as its update; every write goes through [`crate::skills::writer`] (atomic, no
//! path escapes) and is recorded in [`provenance`] in the transaction that decides the draft.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::provenance::{self, Action, Write};
use super::records::{self, Dismissal, Draft, DraftKind, DraftStatus, Evaluation, StoredReport};
use crate::engine::EngineError;
use crate::error_code::ErrorCode;
use crate::events::{EngineEvent, EventBus};
use crate::gate::EngineClock;
use crate::learning::work::{self, WorkKindName};
use crate::safety::{self, Risk};
use crate::skills::{
    parse_skill_md, read_skill_file, remove_skill_file, sha256_hex, unified_diff, write_skill_file,
    Expected, SkillFile, SkillsIndex, WriteError, MAX_SKILL_MD_BYTES,
};
use crate::store::Store;

/// The longest reason a person may give (characters).
pub const MAX_REASON_CHARS: usize = 2_000;

/// What is on disk under a draft's skill name now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Nothing.
    New,
    /// The file Lull last wrote there.
    Lull,
    /// Another file: the person's, another tool's, or Lull's edited by hand.
    Foreign,
}

/// A finding as a person sees it, with its dismissal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct FindingView {
    /// Its position in the report (what *Dismiss* names).
    pub index: usize,
    /// The finding.
    #[serde(flatten)]
    pub finding: records::StoredFinding,
    /// The person's dismissal, if any.
    pub dismissed: Option<DismissalView>,
}

/// A dismissal as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DismissalView {
    /// Why.
    pub reason: String,
    /// When (unix ms).
    pub at: i64,
}

/// A draft's safety report as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SafetyView {
    /// The worst risk.
    pub max_risk: Risk,
    /// sha256 of the checked text.
    pub sha256: String,
    /// The rules' version.
    pub rules_version: String,
    /// Worst first.
    pub findings: Vec<FindingView>,
}

/// The candidate behind a draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CandidateSummary {
    /// Why it is worth learning.
    pub rationale: String,
    /// 0..1.
    pub priority: f64,
    /// 0..1.
    pub confidence: f64,
}

/// A draft as the API and the window show it (`GET /v1/drafts/{id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DraftView {
    /// Its id.
    pub id: String,
    /// Its candidate.
    pub candidate_id: String,
    /// The review behind the candidate.
    pub review_id: String,
    /// The skill (its folder name).
    pub skill: String,
    /// Create or update.
    pub kind: DraftKind,
    /// Where it is.
    pub status: DraftStatus,
    /// The front matter's description.
    pub description: String,
    /// The text *Approve* writes.
    pub skill_md: String,
    /// When a person last edited it.
    pub edited_at: Option<i64>,
    /// A unified diff from the file on disk now (or nothing) to `skill_md`.
    pub diff: String,
    /// The file changed on disk since the draft was made (or was last edited).
    pub base_changed: bool,
    /// What is on disk under its name now.
    pub origin: Origin,
    /// Its safety check.
    pub safety: SafetyView,
    /// Whether *Approve* would go ahead now.
    pub approvable: bool,
    /// Why *Approve* is refused, in words for a person.
    pub blocked_reason: Option<String>,
    /// Its evaluation.
    pub evaluation: Evaluation,
    /// The candidate behind it.
    pub candidate: CandidateSummary,
    /// Why a person rejected it.
    pub reject_reason: Option<String>,
    /// When it was made (unix ms).
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// When a person decided it.
    pub decided_at: Option<i64>,
}

/// Who wrote a skill on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum SkillOrigin {
    /// The file is the one Lull last wrote.
    Lull,
    /// Anything else: the person's, another tool's, or Lull's edited by hand.
    Foreign,
}

/// A skill in the skills directory (`GET /v1/skills`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SkillEntry {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Who wrote it.
    pub origin: SkillOrigin,
    /// The version Lull recorded, when it is Lull's.
    pub version: Option<u32>,
}

/// What a rollback did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct RolledBack {
    /// The skill as it is now, when a text was put back (`None` also when the text put back
    /// is not a valid skill the index lists).
    pub skill: Option<SkillEntry>,
    /// True when Lull's write had created the skill, which is gone again.
    pub removed: bool,
}

/// The person's side of skill learning; cheap to clone.
#[derive(Clone)]
pub struct DraftService {
    store: Store,
    events: EventBus,
    clock: EngineClock,
    skills: Arc<SkillsIndex>,
}

impl DraftService {
    /// The service over the engine's store and skills index.
    pub fn new(
        store: Store,
        events: EventBus,
        clock: EngineClock,
        skills: Arc<SkillsIndex>,
    ) -> DraftService {
        DraftService {
            store,
            events,
            clock,
            skills,
        }
    }

    fn dir(&self) -> PathBuf {
        self.skills.dir().to_path_buf()
    }

    /// Drafts, waiting ones first, optionally of one status.
    pub async fn list(&self, status: Option<DraftStatus>) -> Result<Vec<DraftView>, EngineError> {
        let rows = self
            .store
            .call(move |c| {
                records::list(c, status)?
                    .into_iter()
                    .map(|draft| {
                        let dismissals = records::dismissals(c, &draft.id)?;
                        let latest = provenance::latest(c, &draft.skill)?;
                        Ok((draft, dismissals, latest.and_then(|v| v.sha256)))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .await?;
        let dir = self.dir();
        off_runtime(move || {
            rows.into_iter()
                .map(|(draft, dismissals, lull_sha)| view(&dir, draft, &dismissals, lull_sha))
                .collect()
        })
        .await
    }

    /// One draft.
    pub async fn get(&self, id: &str) -> Result<DraftView, EngineError> {
        let (draft, dismissals, lull_sha) = self.load(id).await?;
        let dir = self.dir();
        off_runtime(move || view(&dir, draft, &dismissals, lull_sha)).await
    }

    async fn load(&self, id: &str) -> Result<(Draft, Vec<Dismissal>, Option<String>), EngineError> {
        let id_owned = id.to_string();
        let loaded = self
            .store
            .call(move |c| {
                let Some(draft) = records::get(c, &id_owned)? else {
                    return Ok(None);
                };
                let dismissals = records::dismissals(c, &id_owned)?;
                let latest = provenance::latest(c, &draft.skill)?;
                Ok(Some((draft, dismissals, latest.and_then(|v| v.sha256))))
            })
            .await?;
        loaded.ok_or_else(|| EngineError::NotFound(format!("no draft with id {id}")))
    }

    /// Writes the draft's SKILL.md into the skills directory and marks it approved, when nothing
    /// stands against it (see [`DraftView::blocked_reason`]).
    pub async fn approve(&self, id: &str) -> Result<DraftView, EngineError> {
        let (draft, dismissals, lull_sha) = self.load(id).await?;
        let dir = self.dir();
        let shown = {
            let (dir, draft) = (dir.clone(), draft.clone());
            off_runtime(move || view(&dir, draft, &dismissals, lull_sha)).await?
        };
        if let Some(reason) = shown.blocked_reason {
            return Err(EngineError::ApprovalRefused(reason));
        }
        let expected = match &draft.base_sha256 {
            Some(sha) => Expected::Sha256(sha.clone()),
            None => Expected::Absent,
        };
        let (skill, text) = (draft.skill.clone(), draft.skill_md.clone());
        let written =
            tokio::task::spawn_blocking(move || write_skill_file(&dir, &skill, &text, &expected))
                .await
                .map_err(|err| EngineError::Startup(format!("the skill writer panicked: {err}")))?
                .map_err(refusal)?;
        self.record_approval(&draft, written).await?;
        self.get(id).await
    }

    /// Marks `draft` approved with the provenance of the SKILL.md its approval wrote (sha256
    /// `written`), in one transaction; then the index sees the file and both are announced.
    async fn record_approval(&self, draft: &Draft, written: String) -> Result<(), EngineError> {
        let now = self.clock.now_ms();
        let recorded = draft.clone();
        let (moved, version) = self
            .store
            .call(move |c| {
                let transaction = c.transaction()?;
                let moved = records::set_status(
                    &transaction,
                    &recorded.id,
                    recorded.status,
                    DraftStatus::Approved,
                    None,
                    now,
                )?;
                let write = Write {
                    skill: &recorded.skill,
                    action: Action::Approve,
                    draft_id: Some(&recorded.id),
                    sha256: Some(&written),
                    previous: recorded
                        .base_md
                        .as_deref()
                        .zip(recorded.base_sha256.as_deref()),
                };
                let version = provenance::record(&transaction, &write, now)?;
                transaction.commit()?;
                Ok((moved, version))
            })
            .await?;
        if !moved {
            // Someone decided it between the read and the write: the file holds this text now
            // and the provenance says so; the status is theirs.
            tracing::warn!(draft = %draft.id, "draft changed status while it was approved");
        }
        self.rescan().await?;
        self.events.emit(EngineEvent::SkillWritten {
            skill: draft.skill.clone(),
            version,
        });
        self.announce(&draft.id, &draft.skill, DraftStatus::Approved);
        Ok(())
    }

    /// Finishes the approvals a crash cut off between the file's rename and its record (found
    /// by `tests/crash.rs`). Such an approval leaves an undecided draft whose exact text is its
    /// skill's SKILL.md, a file that is neither the one the draft was made against nor a
    /// version Lull recorded. Only an approval writes a draft's text there, once every check of
    /// *Approve* passed, so the person's click is finished as it would have been; left alone,
    /// the skill would pass for one Lull did not write and the draft could never be approved.
    /// Runs at start, before anyone can decide a draft; returns the drafts it approved.
    pub async fn finish_interrupted_approvals(&self) -> Result<Vec<String>, EngineError> {
        let undecided = self
            .store
            .call(|c| {
                let mut undecided = Vec::new();
                for status in [DraftStatus::ReviewPending, DraftStatus::Blocked] {
                    for draft in records::list(c, Some(status))? {
                        let latest = provenance::latest(c, &draft.skill)?.and_then(|v| v.sha256);
                        undecided.push((draft, latest));
                    }
                }
                Ok(undecided)
            })
            .await?;
        let dir = self.dir();
        let interrupted = off_runtime(move || {
            undecided
                .into_iter()
                .filter_map(|(draft, latest)| {
                    let on_disk = read_skill_file(&dir, &draft.skill).ok().flatten()?;
                    let written = on_disk.sha256;
                    let by_this_draft = written == sha256_hex(draft.skill_md.as_bytes())
                        && Some(&written) != draft.base_sha256.as_ref()
                        && Some(&written) != latest.as_ref();
                    by_this_draft.then_some((draft, written))
                })
                .collect::<Vec<_>>()
        })
        .await?;
        let mut approved = Vec::new();
        for (draft, written) in interrupted {
            tracing::warn!(draft = %draft.id, skill = %draft.skill, "finishing an approval the last stop interrupted");
            self.record_approval(&draft, written).await?;
            approved.push(draft.id);
        }
        Ok(approved)
    }

    /// Rejects a draft that waits for a person (or is still being evaluated); the disk is not
    /// touched.
    pub async fn reject(&self, id: &str, reason: &str) -> Result<DraftView, EngineError> {
        let reason = checked_reason(reason)?;
        let (draft, _, _) = self.load(id).await?;
        if !draft.status.can_become(DraftStatus::Rejected) {
            return Err(EngineError::Conflict(format!(
                "draft {id} is {}; only a draft that is not yet decided can be rejected",
                draft.status.as_str()
            )));
        }
        let now = self.clock.now_ms();
        let (draft_id, status) = (draft.id.clone(), draft.status);
        let moved = self
            .store
            .call(move |c| {
                let transaction = c.transaction()?;
                let moved = records::set_status(
                    &transaction,
                    &draft_id,
                    status,
                    DraftStatus::Rejected,
                    Some(&reason),
                    now,
                )?;
                work::cancel(
                    &transaction,
                    WorkKindName::Evaluate,
                    &draft_id,
                    "the draft was rejected",
                    now,
                )?;
                transaction.commit()?;
                Ok(moved)
            })
            .await?;
        if !moved {
            return Err(EngineError::Conflict(format!(
                "draft {id} changed meanwhile; look again"
            )));
        }
        self.announce(&draft.id, &draft.skill, DraftStatus::Rejected);
        self.get(id).await
    }

    /// Replaces a draft's text with a person's edit: it must still be a valid SKILL.md of the
    /// same name, it is checked again, and it is made against the file as it is now (the
    /// person saw that file's diff), so it re-bases the draft. A `critical` finding in the edit
    /// blocks the draft; an edit that clears it lets the evaluation run.
    pub async fn edit(&self, id: &str, skill_md: &str) -> Result<DraftView, EngineError> {
        if skill_md.len() as u64 > MAX_SKILL_MD_BYTES {
            return Err(EngineError::Invalid(format!(
                "the edited SKILL.md is {} bytes; at most {MAX_SKILL_MD_BYTES} are allowed",
                skill_md.len()
            )));
        }
        let (draft, _, _) = self.load(id).await?;
        if !draft.status.is_open() {
            return Err(EngineError::Conflict(format!(
                "draft {id} is {}; a decided draft cannot be edited",
                draft.status.as_str()
            )));
        }
        parse_skill_md(skill_md, &draft.skill).map_err(|err| {
            EngineError::Invalid(format!(
                "the edit is not a valid SKILL.md for {}: {err}",
                draft.skill
            ))
        })?;
        let report = safety::check_text("SKILL.md", skill_md);
        let dir = self.dir();
        let skill = draft.skill.clone();
        let base = off_runtime(move || read_skill_file(&dir, &skill))
            .await?
            .map_err(refusal)?;
        let critical = report.max_risk == Risk::Critical;
        let next = match (draft.status, critical) {
            (DraftStatus::Blocked, false)
                if draft.evaluation.status == records::EvaluationStatus::Skipped =>
            {
                DraftStatus::Evaluating
            }
            (DraftStatus::Blocked, false) => DraftStatus::ReviewPending,
            (DraftStatus::Evaluating | DraftStatus::ReviewPending, true) => DraftStatus::Blocked,
            (status, _) => status,
        };
        let now = self.clock.now_ms();
        let (draft_id, from, text) = (draft.id.clone(), draft.status, skill_md.to_string());
        let evaluated_before = draft.evaluation.status == records::EvaluationStatus::Done;
        self.store
            .call(move |c| {
                let transaction = c.transaction()?;
                records::set_text(
                    &transaction,
                    &draft_id,
                    &text,
                    &report,
                    base.as_ref().map(|f| (f.sha256.as_str(), f.text.as_str())),
                    now,
                )?;
                if next != from {
                    records::set_status(&transaction, &draft_id, from, next, None, now)?;
                }
                if next != DraftStatus::Evaluating && evaluated_before {
                    records::mark_evaluation_stale(&transaction, &draft_id, now)?;
                }
                match next {
                    DraftStatus::Evaluating => {
                        records::set_evaluation(
                            &transaction,
                            &draft_id,
                            &Evaluation::of(records::EvaluationStatus::Pending),
                            now,
                        )?;
                        work::enqueue(&transaction, WorkKindName::Evaluate, &draft_id, now)?;
                    }
                    DraftStatus::Blocked => {
                        work::cancel(
                            &transaction,
                            WorkKindName::Evaluate,
                            &draft_id,
                            "a critical finding blocks the draft",
                            now,
                        )?;
                    }
                    _ => {}
                }
                transaction.commit()?;
                Ok(())
            })
            .await?;
        self.announce(&draft.id, &draft.skill, next);
        self.get(id).await
    }

    /// Dismisses finding `index` of a draft's current report, with the person's reason.
    pub async fn dismiss(
        &self,
        id: &str,
        index: usize,
        reason: &str,
    ) -> Result<DraftView, EngineError> {
        let reason = checked_reason(reason)?;
        let (draft, _, _) = self.load(id).await?;
        if !draft.status.is_open() {
            return Err(EngineError::Conflict(format!(
                "draft {id} is {}; its findings can no longer be dismissed",
                draft.status.as_str()
            )));
        }
        let Some(finding) = draft.safety.findings.get(index).cloned() else {
            return Err(EngineError::NotFound(format!(
                "draft {id} has no finding {index}; it has {}",
                draft.safety.findings.len()
            )));
        };
        let now = self.clock.now_ms();
        let draft_id = draft.id.clone();
        self.store
            .call(move |c| records::dismiss(c, &draft_id, &finding, &reason, now))
            .await?;
        self.announce(&draft.id, &draft.skill, draft.status);
        self.get(id).await
    }

    /// The skills in the skills directory, with what Lull wrote.
    pub async fn skills(&self) -> Result<Vec<SkillEntry>, EngineError> {
        let versions = self.store.call(|c| provenance::all_latest(c)).await?;
        let set = self.skills.current();
        off_runtime(move || {
            set.skills
                .values()
                .map(|skill| {
                    let on_disk = std::fs::read(&skill.path)
                        .ok()
                        .map(|bytes| crate::skills::sha256_hex(&bytes));
                    let lull = versions.iter().find(|v| {
                        v.skill == skill.name && v.sha256.is_some() && v.sha256 == on_disk
                    });
                    SkillEntry {
                        name: skill.name.clone(),
                        description: skill.description.clone(),
                        origin: if lull.is_some() {
                            SkillOrigin::Lull
                        } else {
                            SkillOrigin::Foreign
                        },
                        version: lull.map(|v| v.version),
                    }
                })
                .collect()
        })
        .await
    }

    /// Puts back the text a skill had before Lull's last write of it (removing the skill when
    /// that write created it). Refused when the file changed on disk since Lull wrote it.
    pub async fn rollback(&self, name: &str) -> Result<RolledBack, EngineError> {
        let name_owned = name.to_string();
        let latest = self
            .store
            .call(move |c| provenance::latest(c, &name_owned))
            .await?
            .ok_or_else(|| {
                EngineError::NotFound(format!(
                    "Lull never wrote a skill named {name}; nothing to roll back"
                ))
            })?;
        let Some(written) = latest.sha256.clone() else {
            return Err(EngineError::Conflict(format!(
                "Lull's last change to {name} removed it; there is nothing of Lull's on disk to roll back"
            )));
        };
        let dir = self.dir();
        let (skill, previous) = (name.to_string(), latest.previous_md.clone());
        let (restored, replaced) = off_runtime(move || {
            let replaced = read_skill_file(&dir, &skill)?;
            let restored = match &previous {
                Some(text) => Some(write_skill_file(
                    &dir,
                    &skill,
                    text,
                    &Expected::Sha256(written),
                )?),
                None => {
                    remove_skill_file(&dir, &skill, &written)?;
                    None
                }
            };
            Ok::<_, WriteError>((restored, replaced))
        })
        .await?
        .map_err(refusal)?;
        let now = self.clock.now_ms();
        let skill = name.to_string();
        let removed = restored.is_none();
        let version = self
            .store
            .call(move |c| {
                let write = Write {
                    skill: &skill,
                    action: Action::Rollback,
                    draft_id: None,
                    sha256: restored.as_deref(),
                    previous: replaced
                        .as_ref()
                        .map(|f| (f.text.as_str(), f.sha256.as_str())),
                };
                provenance::record(c, &write, now)
            })
            .await?;
        self.rescan().await?;
        self.events.emit(EngineEvent::SkillWritten {
            skill: name.to_string(),
            version,
        });
        let skill = self
            .skills()
            .await?
            .into_iter()
            .find(|entry| entry.name == name);
        Ok(RolledBack { skill, removed })
    }

    /// Rescans the skills directory now, so routing sees a write without waiting for the
    /// watcher.
    async fn rescan(&self) -> Result<(), EngineError> {
        let skills = self.skills.clone();
        off_runtime(move || {
            skills.rescan();
        })
        .await
    }

    fn announce(&self, draft_id: &str, skill: &str, status: DraftStatus) {
        self.events.emit(EngineEvent::DraftChanged {
            draft_id: draft_id.to_string(),
            skill: skill.to_string(),
            status,
        });
    }
}

/// A draft with what is on disk now: the diff, whether the base changed, and whether and why
/// *Approve* is refused.
fn view(
    dir: &std::path::Path,
    draft: Draft,
    dismissals: &[Dismissal],
    lull_sha: Option<String>,
) -> DraftView {
    let on_disk: Result<Option<SkillFile>, WriteError> = read_skill_file(dir, &draft.skill);
    let (current, unreadable) = match on_disk {
        Ok(current) => (current, None),
        Err(err) => (None, Some(err.to_string())),
    };
    // Only a draft that waits for a person can go stale; a decided one compares with its own
    // write, or with a file it left alone.
    let base_changed = draft.status.is_open()
        && unreadable.is_none()
        && current.as_ref().map(|f| &f.sha256) != draft.base_sha256.as_ref();
    let origin = match &current {
        None => Origin::New,
        Some(file) if Some(&file.sha256) == lull_sha.as_ref() => Origin::Lull,
        Some(_) => Origin::Foreign,
    };
    let findings: Vec<FindingView> = draft
        .safety
        .findings
        .iter()
        .enumerate()
        .map(|(index, finding)| FindingView {
            index,
            finding: finding.clone(),
            dismissed: dismissals
                .iter()
                .find(|d| d.rule == finding.rule && d.excerpt == finding.excerpt)
                .map(|d| DismissalView {
                    reason: d.reason.clone(),
                    at: d.dismissed_at,
                }),
        })
        .collect();
    let standing = findings
        .iter()
        .filter(|f| f.dismissed.is_none() && f.finding.risk >= Risk::High)
        .count();
    let blocked_reason = blocked_reason(&draft, standing, base_changed, origin, unreadable);
    let description = parse_skill_md(&draft.skill_md, &draft.skill)
        .map(|skill| skill.description)
        .unwrap_or_default();
    let diff = unified_diff(
        &draft.skill,
        current.as_ref().map(|f| f.text.as_str()),
        &draft.skill_md,
    );
    let StoredReport {
        max_risk,
        sha256,
        rules_version,
        ..
    } = draft.safety;
    DraftView {
        id: draft.id,
        candidate_id: draft.candidate_id,
        review_id: draft.review_id,
        skill: draft.skill,
        kind: draft.kind,
        status: draft.status,
        description,
        skill_md: draft.skill_md,
        edited_at: draft.edited_at,
        diff,
        base_changed,
        origin,
        safety: SafetyView {
            max_risk,
            sha256,
            rules_version,
            findings,
        },
        approvable: blocked_reason.is_none(),
        blocked_reason,
        evaluation: draft.evaluation,
        candidate: CandidateSummary {
            rationale: draft.rationale,
            priority: draft.priority,
            confidence: draft.confidence,
        },
        reject_reason: draft.reject_reason,
        created_at: draft.created_at,
        updated_at: draft.updated_at,
        decided_at: draft.decided_at,
    }
}

fn blocked_reason(
    draft: &Draft,
    standing: usize,
    base_changed: bool,
    origin: Origin,
    unreadable: Option<String>,
) -> Option<String> {
    match draft.status {
        DraftStatus::Approved | DraftStatus::Rejected => {
            return Some(format!("the draft is {} already", draft.status.as_str()))
        }
        DraftStatus::Evaluating => {
            return Some(
                "the draft is still being evaluated; it can be approved when its evaluation ends"
                    .into(),
            )
        }
        DraftStatus::Blocked | DraftStatus::ReviewPending => {}
    }
    if let Some(problem) = unreadable {
        return Some(problem);
    }
    if standing > 0 {
        return Some(format!(
            "{standing} high or critical safety finding{} not dismissed: dismiss each with a reason, edit the draft, or reject it",
            if standing == 1 { " is" } else { "s are" }
        ));
    }
    if origin == Origin::Foreign && draft.kind == DraftKind::Create {
        return Some(format!(
            "a skill named {} exists that Lull did not write, and this draft was proposed as a new skill: only a draft proposed as its update may change it",
            draft.skill
        ));
    }
    if base_changed {
        return Some(format!(
            "{}/SKILL.md changed on disk since the draft was made: read the fresh diff, then edit the draft (an edit is made against the file as it is now) or reject it",
            draft.skill
        ));
    }
    None
}

/// Runs file-system work off the async runtime.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, EngineError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| EngineError::Startup(format!("skill file work panicked: {err}")))
}

/// A writer's refusal, as the person reads it.
fn refusal(err: WriteError) -> EngineError {
    match err {
        WriteError::Io { .. } => EngineError::Startup(err.to_string()),
        WriteError::Full { .. } => EngineError::Refused {
            code: ErrorCode::StorageFull,
            message: err.to_string(),
        },
        WriteError::Changed { .. } => EngineError::ApprovalRefused(err.to_string()),
        _ => EngineError::Invalid(err.to_string()),
    }
}

fn checked_reason(reason: &str) -> Result<String, EngineError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(EngineError::Invalid(
            "a reason is required: say why, in a few words".into(),
        ));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(EngineError::Invalid(format!(
            "the reason is longer than {MAX_REASON_CHARS} characters"
        )));
    }
    Ok(reason.to_string())
}
