//! The two kinds of learning work skill learning adds to the dispatcher's queue: writing a
//! candidate's draft ([`SynthesisWork`]) and judging it ([`EvaluationWork`]). Each builds its
//! requests ([`super::synthesis`], [`super::evaluation`]) and records its answer; when and
//! where they run is the [`crate::learning::Dispatcher`]'s.
//!
//! Invariants: a synthesized draft is checked by [`crate::safety`] before it is stored, and a
//! `critical` finding stores it `blocked`, with no evaluation queued; findings never reach a
//! model (neither request sees them); a draft is stored in the transaction that marks its
//! candidate `drafted` and its work done, so a crash leaves either both or neither.

use std::sync::Arc;

use rusqlite::Connection;
use tokio::time::Instant;

use super::candidates::{self, Candidate, CandidateStatus, Note};
use super::evaluation::{self, Judgement};
use super::records::{self, Draft, DraftKind, DraftStatus, Evaluation, EvaluationStatus, NewDraft};
use super::synthesis::{self, SynthesizedSkill};
use crate::events::{EngineEvent, EventBus};
use crate::gate::EngineClock;
use crate::learning::work::{self, AfterFailure, WorkKindName, WorkRow};
use crate::learning::{Due, RetryPolicy, WorkKind};
use crate::llm::{ChatEndpoint, ChatMessage, ChatReply, LlmClient, StreamPace};
use crate::reviews::queue;
use crate::safety::{self, Risk};
use crate::skills::{parse_skill_md, read_skill_file, Skill, SkillFile, SkillsIndex};
use crate::store::{Store, StoreError};

/// What both kinds share: the engine's parts they use.
#[derive(Clone)]
pub struct DraftWorkParts {
    /// The database.
    pub store: Store,
    /// Sends the requests.
    pub llm: Arc<dyn LlmClient>,
    /// The engine's clock of record.
    pub clock: EngineClock,
    /// Where transitions are announced.
    pub events: EventBus,
    /// The skills directory (for the skill a draft changes).
    pub skills: Arc<SkillsIndex>,
    /// How failed runs are retried.
    pub retry: RetryPolicy,
}

/// A claimed synthesis: the candidate, its source conversation, and the skill on disk.
pub struct Synthesis {
    work: WorkRow,
    candidate: Candidate,
    transcript: Vec<ChatMessage>,
    /// The skill file on disk under the candidate's name, parsed; an error when it cannot be
    /// read safely (a link, not UTF-8), which fails the run with that message.
    current: Result<Option<(SkillFile, Skill)>, String>,
}

/// Writes drafts for candidates.
pub struct SynthesisWork(pub DraftWorkParts);

/// A claimed evaluation: the draft and its source conversation.
pub struct Judging {
    work: WorkRow,
    draft: Draft,
    transcript: Vec<ChatMessage>,
}

/// Judges drafts.
pub struct EvaluationWork(pub DraftWorkParts);

/// The token counts of some replies, summed where reported.
fn tokens(replies: &[&ChatReply]) -> (Option<u64>, Option<u64>) {
    let sum = |pick: fn(&ChatReply) -> Option<u64>| {
        replies.iter().filter_map(|r| pick(r)).reduce(|a, b| a + b)
    };
    (sum(|r| r.prompt_tokens), sum(|r| r.completion_tokens))
}

/// Loads a review's transcript (the candidate's source).
fn transcript(connection: &Connection, review_id: &str) -> Result<Vec<ChatMessage>, StoreError> {
    Ok(queue::get(connection, review_id)?
        .map(|review| review.messages)
        .unwrap_or_default())
}

fn read_current(skills: &SkillsIndex, name: &str) -> Result<Option<(SkillFile, Skill)>, String> {
    let Some(file) = read_skill_file(skills.dir(), name).map_err(|err| err.to_string())? else {
        return Ok(None);
    };
    let skill = parse_skill_md(&file.text, name).map_err(|err| {
        format!("the skill {name} on disk is not a valid SKILL.md ({err}); fix it, and the draft is retried")
    })?;
    Ok(Some((file, skill)))
}

impl SynthesisWork {
    fn emit_candidate(
        &self,
        candidate: &Candidate,
        status: CandidateStatus,
        reason: Option<String>,
    ) {
        self.0.events.emit(EngineEvent::CandidateChanged {
            candidate_id: candidate.id.clone(),
            skill: candidate.proposal.skill.clone(),
            status,
            reason,
        });
    }
}

impl WorkKind for SynthesisWork {
    type Item = Synthesis;
    type Answer = (SynthesizedSkill, (Option<u64>, Option<u64>, u64));

    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError> {
        work::due(connection, WorkKindName::Synthesize, now_ms)
    }

    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        work::next_retry_at(connection, WorkKindName::Synthesize, now_ms)
    }

    async fn claim(&self, id: &str) -> Option<Synthesis> {
        let (work, (candidate, transcript)) = claim_work(
            &self.0,
            WorkKindName::Synthesize,
            id,
            "the candidate is no longer drafting",
            |c, work| match candidates::get(c, &work.subject_id)? {
                Some(candidate) if candidate.status == CandidateStatus::Drafting => {
                    let transcript = transcript(c, &candidate.review_id)?;
                    Ok(Some((candidate, transcript)))
                }
                _ => Ok(None),
            },
        )
        .await?;
        let current = read_current(&self.0.skills, &candidate.proposal.skill);
        Some(Synthesis {
            work,
            candidate,
            transcript,
            current,
        })
    }

    fn doing(&self, item: &Synthesis) -> String {
        format!("drafting the skill {}", item.candidate.proposal.skill)
    }

    async fn execute(
        &self,
        item: &Synthesis,
        endpoint: &ChatEndpoint,
        pace: Option<&StreamPace>,
    ) -> Result<Self::Answer, String> {
        let started = Instant::now();
        let current = item.current.clone()?;
        let current_skill = current.as_ref().map(|(_, skill)| skill);
        let request =
            synthesis::synthesis_request(&item.candidate.proposal, &item.transcript, current_skill);
        let reply = self
            .0
            .llm
            .chat(endpoint, request, pace)
            .await
            .map_err(|err| err.to_string())?;
        let skill =
            synthesis::parse_synthesis(&reply.text, &item.candidate.proposal, current_skill)?;
        let duration = started.elapsed().as_millis() as u64;
        Ok((
            skill,
            (reply.prompt_tokens, reply.completion_tokens, duration),
        ))
    }

    async fn finish(&self, item: &Synthesis, result: Result<Self::Answer, String>) {
        let now = self.0.clock.now_ms();
        let candidate = item.candidate.clone();
        let work_id = item.work.id.clone();
        match result {
            Ok((skill, usage)) => {
                let report = safety::check_text("SKILL.md", &skill.skill_md);
                let status = if report.max_risk == Risk::Critical {
                    DraftStatus::Blocked
                } else {
                    DraftStatus::Evaluating
                };
                let base = item.current.clone().ok().flatten().map(|(file, _)| file);
                let stored_candidate = candidate.clone();
                let stored = self
                    .0
                    .store
                    .call(move |c| {
                        let transaction = c.transaction()?;
                        let id = &stored_candidate.id;
                        let skill_name = &stored_candidate.proposal.skill;
                        if let Some(covering) = records::open_for_skill(&transaction, skill_name)? {
                            let note = Note {
                                draft_id: Some(&covering),
                                reason: Some("a draft of this skill already waits for a person"),
                            };
                            candidates::transition(
                                &transaction,
                                id,
                                CandidateStatus::Drafting,
                                CandidateStatus::Superseded,
                                note,
                                now,
                            )?;
                            work::complete(&transaction, &work_id, now)?;
                            transaction.commit()?;
                            return Ok(None);
                        }
                        let draft = NewDraft {
                            candidate_id: id,
                            skill: skill_name,
                            kind: if base.is_some() {
                                DraftKind::Update
                            } else {
                                DraftKind::Create
                            },
                            skill_md: &skill.skill_md,
                            base: base.as_ref().map(|f| (f.sha256.as_str(), f.text.as_str())),
                            safety: &report,
                            status,
                            usage,
                        };
                        let draft_id = records::insert(&transaction, &draft, now)?;
                        let note = Note {
                            draft_id: Some(&draft_id),
                            reason: None,
                        };
                        candidates::transition(
                            &transaction,
                            id,
                            CandidateStatus::Drafting,
                            CandidateStatus::Drafted,
                            note,
                            now,
                        )?;
                        work::complete(&transaction, &work_id, now)?;
                        if status == DraftStatus::Evaluating {
                            work::enqueue(&transaction, WorkKindName::Evaluate, &draft_id, now)?;
                        }
                        transaction.commit()?;
                        Ok(Some(draft_id))
                    })
                    .await;
                match stored {
                    Ok(Some(draft_id)) => {
                        self.emit_candidate(&candidate, CandidateStatus::Drafted, None);
                        self.0.events.emit(EngineEvent::DraftChanged {
                            draft_id,
                            skill: candidate.proposal.skill.clone(),
                            status,
                        });
                    }
                    Ok(None) => self.emit_candidate(
                        &candidate,
                        CandidateStatus::Superseded,
                        Some("a draft of this skill already waits for a person".into()),
                    ),
                    Err(err) => {
                        tracing::error!(candidate = %candidate.id, error = %err, "cannot store a draft")
                    }
                }
            }
            Err(error) => {
                tracing::warn!(candidate = %candidate.id, %error, "a draft's synthesis failed");
                let (retry, message) = (self.0.retry, error.clone());
                let id = candidate.id.clone();
                let after = self
                    .0
                    .store
                    .call(move |c| {
                        let transaction = c.transaction()?;
                        candidates::record_failure(&transaction, &id, &message, now)?;
                        let after =
                            work::record_failure(&transaction, &work_id, &message, &retry, now)?;
                        if after == AfterFailure::Failed {
                            let note = Note {
                                draft_id: None,
                                reason: Some(&message),
                            };
                            candidates::transition(
                                &transaction,
                                &id,
                                CandidateStatus::Drafting,
                                CandidateStatus::Failed,
                                note,
                                now,
                            )?;
                        }
                        transaction.commit()?;
                        Ok(after)
                    })
                    .await;
                match after {
                    Ok(AfterFailure::Failed) => {
                        self.emit_candidate(&candidate, CandidateStatus::Failed, Some(error))
                    }
                    Ok(AfterFailure::Retry) => {}
                    Err(err) => {
                        tracing::error!(candidate = %candidate.id, error = %err, "cannot record a failed synthesis")
                    }
                }
            }
        }
    }

    async fn requeue(&self, item: &Synthesis, reason: String) {
        requeue(&self.0, &item.work.id, reason).await;
    }
}

/// Marks queued work of `kind` running and loads its subject with `load`; work whose subject no
/// longer waits for it (`load` finds none) is cancelled for `gone`. `None` when there is nothing
/// to run (an error is logged).
async fn claim_work<T: Send + 'static>(
    parts: &DraftWorkParts,
    kind: WorkKindName,
    id: &str,
    gone: &'static str,
    load: impl FnOnce(&Connection, &WorkRow) -> Result<Option<T>, StoreError> + Send + 'static,
) -> Option<(WorkRow, T)> {
    let now = parts.clock.now_ms();
    let id_owned = id.to_string();
    let claimed = parts
        .store
        .call(move |c| {
            let Some(work) = work::start(c, &id_owned, now)? else {
                return Ok(None);
            };
            match load(c, &work)? {
                Some(subject) => Ok(Some((work, subject))),
                None => {
                    work::cancel(c, kind, &work.subject_id, gone, now)?;
                    Ok(None)
                }
            }
        })
        .await;
    claimed.unwrap_or_else(|err| {
        tracing::error!(work = %id, kind = kind.as_str(), error = %err, "cannot start learning work");
        None
    })
}

async fn requeue(parts: &DraftWorkParts, work_id: &str, reason: String) {
    let now = parts.clock.now_ms();
    let id = work_id.to_string();
    if let Err(err) = parts
        .store
        .call(move |c| work::requeue(c, &id, &reason, now))
        .await
    {
        tracing::error!(work = %work_id, error = %err, "cannot requeue preempted learning work");
    }
}

impl WorkKind for EvaluationWork {
    type Item = Judging;
    type Answer = (Judgement, (Option<u64>, Option<u64>));

    fn due(&self, connection: &Connection, now_ms: i64) -> Result<Vec<Due>, StoreError> {
        work::due(connection, WorkKindName::Evaluate, now_ms)
    }

    fn next_retry_at(
        &self,
        connection: &Connection,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        work::next_retry_at(connection, WorkKindName::Evaluate, now_ms)
    }

    async fn claim(&self, id: &str) -> Option<Judging> {
        let (work, (draft, transcript)) = claim_work(
            &self.0,
            WorkKindName::Evaluate,
            id,
            "the draft is no longer being evaluated",
            |c, work| match records::get(c, &work.subject_id)? {
                Some(draft) if draft.status == DraftStatus::Evaluating => {
                    let transcript = transcript(c, &draft.review_id)?;
                    Ok(Some((draft, transcript)))
                }
                _ => Ok(None),
            },
        )
        .await?;
        Some(Judging {
            work,
            draft,
            transcript,
        })
    }

    fn doing(&self, item: &Judging) -> String {
        format!("evaluating the draft of {}", item.draft.skill)
    }

    async fn execute(
        &self,
        item: &Judging,
        endpoint: &ChatEndpoint,
        pace: Option<&StreamPace>,
    ) -> Result<Self::Answer, String> {
        let evidence = &item.draft.evidence;
        let task = evaluation::replayed_task(&item.transcript, evidence)?;
        let chat = |request| async move {
            self.0
                .llm
                .chat(endpoint, request, pace)
                .await
                .map_err(|err| err.to_string())
        };
        let without = chat(evaluation::replay_request(
            &item.transcript,
            evidence,
            None,
        )?)
        .await?;
        let with = chat(evaluation::replay_request(
            &item.transcript,
            evidence,
            Some(&item.draft.skill_md),
        )?)
        .await?;
        let judged = chat(evaluation::judge_request(
            &task,
            &without.text,
            &with.text,
            &item.draft.skill_md,
        ))
        .await?;
        let judgement = evaluation::parse_judgement(&judged.text)?;
        Ok((judgement, tokens(&[&without, &with, &judged])))
    }

    async fn finish(&self, item: &Judging, result: Result<Self::Answer, String>) {
        let now = self.0.clock.now_ms();
        let (draft_id, work_id, retry) =
            (item.draft.id.clone(), item.work.id.clone(), self.0.retry);
        let outcome = self
            .0
            .store
            .call(move |c| {
                let transaction = c.transaction()?;
                let (evaluation, ended) = match result {
                    Ok((judgement, (prompt_tokens, completion_tokens))) => {
                        work::complete(&transaction, &work_id, now)?;
                        let evaluation = Evaluation {
                            status: EvaluationStatus::Done,
                            verdict: Some(judgement.verdict),
                            score_with: Some(judgement.score_with),
                            score_without: Some(judgement.score_without),
                            reason: Some(judgement.reason),
                            error: None,
                            prompt_tokens,
                            completion_tokens,
                            stale: false,
                        };
                        (evaluation, true)
                    }
                    Err(error) => {
                        let after =
                            work::record_failure(&transaction, &work_id, &error, &retry, now)?;
                        let status = match after {
                            AfterFailure::Failed => EvaluationStatus::Failed,
                            AfterFailure::Retry => EvaluationStatus::Pending,
                        };
                        let evaluation = Evaluation {
                            error: Some(error),
                            ..Evaluation::of(status)
                        };
                        (evaluation, after == AfterFailure::Failed)
                    }
                };
                // The draft may have moved meanwhile (rejected, or blocked by an edit): the
                // evaluation is kept, its status is the person's.
                let current = records::get(&transaction, &draft_id)?;
                let still_evaluating = current.is_some_and(|d| d.status == DraftStatus::Evaluating);
                if still_evaluating {
                    records::set_evaluation(&transaction, &draft_id, &evaluation, now)?;
                }
                let moved = ended
                    && still_evaluating
                    && records::set_status(
                        &transaction,
                        &draft_id,
                        DraftStatus::Evaluating,
                        DraftStatus::ReviewPending,
                        None,
                        now,
                    )?;
                transaction.commit()?;
                Ok(moved)
            })
            .await;
        match outcome {
            Ok(true) => self.0.events.emit(EngineEvent::DraftChanged {
                draft_id: item.draft.id.clone(),
                skill: item.draft.skill.clone(),
                status: DraftStatus::ReviewPending,
            }),
            Ok(false) => {}
            Err(err) => {
                tracing::error!(draft = %item.draft.id, error = %err, "cannot record a draft's evaluation")
            }
        }
    }

    async fn requeue(&self, item: &Judging, reason: String) {
        requeue(&self.0, &item.work.id, reason).await;
    }
}
