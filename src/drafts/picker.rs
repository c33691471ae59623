//! The draft worker's pick (DESIGN §2.2): which open candidates get a draft written now.
//!
//! Every `learning.interval_s`, and as soon as a review stores candidates, [`DraftPicker`]
//! takes the open candidates — highest priority, then confidence, then newest — and for each
//! either marks it `superseded` (its skill already has an undecided draft, or another of its
//! candidates is being drafted) or moves it to `drafting` and queues its synthesis as learning
//! work, which the dispatcher runs through the gate. The queue never holds more than
//! `max_drafts_per_run` syntheses: a pick tops it up to that. It never approves or publishes.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::{broadcast, watch};

use super::candidates::{self, CandidateStatus, Note};
use super::records;
use crate::events::{EngineEvent, EventBus};
use crate::gate::IdleGate;
use crate::learning::work::{self, WorkKindName};
use crate::store::{Store, StoreError};

/// Candidates looked at in one pick at most (superseded ones do not count against the cap, so
/// a pick looks past them).
const PICK_LOOKAHEAD: usize = 200;

/// What one pick did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pick {
    /// Candidates whose synthesis was queued.
    pub drafting: Vec<String>,
    /// Candidates marked superseded.
    pub superseded: Vec<String>,
}

/// Picks candidates for drafting; share it as `Arc<DraftPicker>`.
pub struct DraftPicker {
    store: Store,
    gate: Arc<IdleGate>,
    events: EventBus,
    max_per_run: usize,
    interval: Duration,
}

impl DraftPicker {
    /// A picker that queues at most `max_per_run` syntheses and looks again every `interval`.
    pub fn new(
        store: Store,
        gate: Arc<IdleGate>,
        events: EventBus,
        max_per_run: u32,
        interval: Duration,
    ) -> DraftPicker {
        DraftPicker {
            store,
            gate,
            events,
            max_per_run: max_per_run as usize,
            interval,
        }
    }

    /// Picks once, and wakes the dispatcher when it queued work.
    pub async fn pick(&self) -> Result<Pick, StoreError> {
        let now = self.gate.clock().now_ms();
        let cap = self.max_per_run;
        let (pick, changes) = self.store.call(move |c| pick_in(c, cap, now)).await?;
        for event in changes {
            self.events.emit(event);
        }
        if !pick.drafting.is_empty() {
            self.gate.notify_change();
        }
        Ok(pick)
    }

    /// Picks at every interval and whenever a review stores candidates, until `shutdown`.
    /// `events` is subscribed by the caller before the engine starts work, so no review's
    /// completion can go by unheard.
    pub async fn run(
        self: Arc<Self>,
        mut events: broadcast::Receiver<EngineEvent>,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let mut ticks = tokio::time::interval(self.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                event = events.recv() => match event {
                    Ok(EngineEvent::ReviewCompleted { candidates, .. }) if candidates > 0 => {}
                    // Missed events may have held new candidates: look.
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = shutdown.changed() => return,
            }
            if *shutdown.borrow() {
                return;
            }
            if let Err(err) = self.pick().await {
                tracing::error!(error = %err, "cannot pick candidates for drafting");
            }
        }
    }
}

fn pick_in(
    connection: &mut Connection,
    cap: usize,
    now_ms: i64,
) -> Result<(Pick, Vec<EngineEvent>), StoreError> {
    let transaction = connection.transaction()?;
    let mut room =
        cap.saturating_sub(work::open_count(&transaction, WorkKindName::Synthesize)? as usize);
    let mut pick = Pick::default();
    let mut changes = Vec::new();
    for candidate in candidates::next_open(&transaction, PICK_LOOKAHEAD)? {
        let skill = candidate.proposal.skill.clone();
        let covering_draft = records::open_for_skill(&transaction, &skill)?;
        let covered = covering_draft.is_some()
            || candidates::drafting_for_skill(&transaction, &skill, &candidate.id)?.is_some();
        if covered {
            let reason = match &covering_draft {
                Some(_) => "a draft of this skill already waits for a person",
                None => "another candidate of this skill is being drafted",
            };
            let note = Note {
                draft_id: covering_draft.as_deref(),
                reason: Some(reason),
            };
            candidates::transition(
                &transaction,
                &candidate.id,
                CandidateStatus::Open,
                CandidateStatus::Superseded,
                note,
                now_ms,
            )?;
            changes.push(EngineEvent::CandidateChanged {
                candidate_id: candidate.id.clone(),
                skill,
                status: CandidateStatus::Superseded,
                reason: Some(reason.into()),
            });
            pick.superseded.push(candidate.id);
            continue;
        }
        if room == 0 {
            continue;
        }
        candidates::transition(
            &transaction,
            &candidate.id,
            CandidateStatus::Open,
            CandidateStatus::Drafting,
            Note::default(),
            now_ms,
        )?;
        work::enqueue(
            &transaction,
            WorkKindName::Synthesize,
            &candidate.id,
            now_ms,
        )?;
        room -= 1;
        changes.push(EngineEvent::CandidateChanged {
            candidate_id: candidate.id.clone(),
            skill,
            status: CandidateStatus::Drafting,
            reason: None,
        });
        pick.drafting.push(candidate.id);
    }
    transaction.commit()?;
    Ok((pick, changes))
}
