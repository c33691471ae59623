//! The API's bodies that are not an engine type as it is: the lists (`{"drafts": […]}`), the
//! small answers of a few fields, and the requests the CLI and the window send. Typed, so that
//! the CLI reads and writes the very shapes the API does, and the window's TypeScript types are
//! generated from them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::drafts::candidates::Candidate;
use crate::drafts::service::{DraftView, SkillEntry};
use crate::jobs::records::{JobKind, Stopping};
use crate::jobs::service::JobView;
use crate::reviews::{Decision, Review};

/// `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Health {
    /// Always `ok`: an engine that answers is up.
    pub status: String,
    /// Lull's version.
    pub version: String,
}

/// `POST /v1/turns/start`: the lease the agent hands back when the turn ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct TurnLease {
    /// Names the turn in `POST /v1/turns/finish`.
    pub lease_id: String,
}

/// `POST /v1/reviews`: the queue slot the submission went to, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewAccepted {
    /// The review that holds the session's queue slot.
    pub review_id: String,
    /// Deferred, dispatched or coalesced.
    pub decision: Decision,
}

/// `GET /v1/reviews`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ReviewList {
    /// Newest first.
    pub reviews: Vec<Review>,
}

/// `GET /v1/candidates`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct CandidateList {
    /// What reviews proposed to learn.
    pub candidates: Vec<Candidate>,
}

/// `GET /v1/drafts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct DraftList {
    /// Waiting ones first.
    pub drafts: Vec<DraftView>,
}

/// `GET /v1/skills`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct SkillList {
    /// The skills folder's valid skills.
    pub skills: Vec<SkillEntry>,
}

/// `GET /v1/jobs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct JobList {
    /// Every training run, without receipts and checkpoints.
    pub jobs: Vec<JobView>,
}

/// `POST /v1/jobs`: what to train, and when to stop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct JobRequest {
    /// Only `routing-head` so far.
    pub kind: JobKind,
    /// Fixed at admission.
    pub stopping: Stopping,
}

/// `POST /v1/drafts/{id}/reject` and `…/findings/{n}/dismiss`: the person's reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct ReasonRequest {
    /// In the person's words; kept with the draft.
    pub reason: String,
}

/// `POST /v1/drafts/{id}/edit`: the person's text in place of the draft's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct EditRequest {
    /// The whole new SKILL.md; it is checked again.
    pub skill_md: String,
}
