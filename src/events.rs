//! Typed engine events, broadcast in-process.
//!
//! Every state change the person might want to see becomes one [`EngineEvent`]. The API streams
//! them as server-sent events (`GET /v1/events`) and the desktop shell turns some into tray
//! updates and notifications. Slow listeners lose old events rather than slow the engine down:
//! an event is a hint to refresh, and the current state is always one status request away.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use ts_rs::TS;

use crate::drafts::candidates::CandidateStatus;
use crate::drafts::records::DraftStatus;
use crate::jobs::records::{JobStatus, RoundMetrics};
use crate::jobs::runner::Progress;
use crate::learning::Activity;
use crate::reviews::Decision;
use crate::server::ServerReading;
use crate::settings::Settings;

/// Events kept for a listener that falls behind before it starts missing some.
const EVENT_BACKLOG: usize = 256;

/// Something that happened in the engine, serialised as `{"type":"snake_case_name",…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EngineEvent {
    /// The engine finished starting.
    EngineStarted {
        /// Lull's version.
        version: String,
        /// This start's generation number.
        generation: i64,
    },
    /// The engine is stopping.
    EngineStopping,
    /// The person (or an agent) changed the run-time settings.
    SettingsChanged {
        /// The settings now in force.
        settings: Settings,
    },
    /// The managed server's reading changed (state, models or busy slots).
    ServerChanged {
        /// The new reading.
        server: ServerReading,
    },
    /// What learning is doing changed (idle, paused, waiting and why, running).
    LearningActivity {
        /// The new activity.
        activity: Activity,
    },
    /// An agent reported a live turn.
    TurnStarted {
        /// The turn's lease.
        lease_id: String,
    },
    /// A live turn ended.
    TurnFinished {
        /// The turn's lease.
        lease_id: String,
    },
    /// A review was submitted.
    ReviewQueued {
        /// The queue slot's review.
        review_id: String,
        /// The agent's session.
        session_key: String,
        /// Deferred, dispatched or coalesced.
        decision: Decision,
    },
    /// A review started running.
    ReviewStarted {
        /// The review.
        review_id: String,
        /// Which run this is, preempted ones included.
        attempt: u32,
    },
    /// A running review yielded to the person and went back to the queue.
    ReviewPreempted {
        /// The review.
        review_id: String,
        /// Why.
        reason: String,
    },
    /// A review finished and stored its candidates.
    ReviewCompleted {
        /// The review.
        review_id: String,
        /// New candidates stored.
        candidates: usize,
    },
    /// A review run failed.
    ReviewFailed {
        /// The review.
        review_id: String,
        /// What went wrong.
        error: String,
        /// False when the review is now terminally `failed`.
        will_retry: bool,
    },
    /// A queued review was dropped without running.
    ReviewDropped {
        /// The review.
        review_id: String,
        /// Why.
        reason: String,
    },
    /// A candidate moved (drafting, drafted, superseded, failed).
    CandidateChanged {
        /// The candidate.
        candidate_id: String,
        /// Its skill.
        skill: String,
        /// Where it is now.
        status: CandidateStatus,
        /// Why, for a failure or a supersession.
        reason: Option<String>,
    },
    /// A draft was made or moved (evaluating, blocked, review pending, approved, rejected), or a
    /// person edited it or dismissed one of its findings.
    DraftChanged {
        /// The draft.
        draft_id: String,
        /// Its skill.
        skill: String,
        /// Where it is now.
        status: DraftStatus,
    },
    /// Lull wrote a skill into the skills directory (an approval or a rollback).
    SkillWritten {
        /// The skill.
        skill: String,
        /// Its recorded version.
        version: u32,
    },
    /// A training job was admitted or moved (running, paused or not, completed, failed,
    /// cancelled, interrupted, budget exhausted, promoted).
    JobChanged {
        /// The job.
        job_id: String,
        /// Where it is now.
        status: JobStatus,
    },
    /// A training job advanced: within a round (at most every 250 ms), and at each committed
    /// round with its metrics.
    JobProgress {
        /// The job.
        job_id: String,
        /// Where the round is.
        #[serde(flatten)]
        progress: Progress,
        /// The committed round's metrics, at the end of a round.
        metrics: Option<RoundMetrics>,
    },
}

/// The engine's event broadcaster; clone it freely.
#[derive(Clone)]
pub struct EventBus {
    sender: broadcast::Sender<EngineEvent>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus {
            sender: broadcast::channel(EVENT_BACKLOG).0,
        }
    }
}

impl EventBus {
    /// Sends `event` to every current listener; with no listener it is simply dropped.
    pub fn emit(&self, event: EngineEvent) {
        tracing::debug!(?event, "engine event");
        let _ = self.sender.send(event);
    }

    /// A new listener that sees events emitted from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.sender.subscribe()
    }
}
