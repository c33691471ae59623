//! One routing head shared by every agent session.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::head::{ForwardPass, Outcome, Ranking, RoutingError, RoutingHead, SkillStats};
use super::snapshot::{HeadSnapshot, SnapshotError};

/// The head behind a read-write lock: rankings run side by side, each update is applied whole
/// under the write lock, so concurrent sessions never lose one another's updates, and a
/// snapshot sees weights, baseline and count from one instant.
///
/// Put it in an `Arc` and hand a clone to every session.
#[derive(Debug)]
pub struct SharedRoutingHead {
    head: RwLock<RoutingHead>,
}

/// What became of one outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutcomeApplied {
    /// Updates learned from, including this one.
    pub update_count: u64,
    /// This update completed a `persist_interval`: the caller should save a
    /// [`SharedRoutingHead::snapshot`] now. Exactly one caller sees it per interval, because it
    /// is decided under the same lock as the update.
    pub persist_due: bool,
}

/// The head's state for status views (DESIGN §1: "head status, update count").
#[derive(Debug, Clone, PartialEq)]
pub struct HeadStatus {
    /// Embedding dimension.
    pub dim: usize,
    /// Skills being ranked.
    pub skill_count: usize,
    /// Outcomes learned from.
    pub update_count: u64,
    /// Whether the learned score is blended in yet.
    pub warmed_up: bool,
    /// REINFORCE baseline: the recent reward level, −1 (all failures) to 1 (all successes).
    pub baseline: f32,
}

impl SharedRoutingHead {
    /// Shares `head`.
    pub fn new(head: RoutingHead) -> Self {
        SharedRoutingHead {
            head: RwLock::new(head),
        }
    }

    /// See [`RoutingHead::rank`]; runs concurrently with other rankings.
    pub fn rank(&self, query: &[f32], top_k: usize) -> Result<Ranking, RoutingError> {
        self.read().rank(query, top_k)
    }

    /// See [`RoutingHead::apply_outcome`]; also says whether a save is due.
    pub fn apply_outcome(
        &self,
        pass: &ForwardPass,
        outcome: Outcome,
    ) -> Result<OutcomeApplied, RoutingError> {
        let mut head = self.write();
        let update_count = head.apply_outcome(pass, outcome)?;
        let interval = head.config().persist_interval;
        Ok(OutcomeApplied {
            update_count,
            persist_due: interval > 0 && update_count % interval == 0,
        })
    }

    /// See [`RoutingHead::upsert_skill`].
    pub fn upsert_skill(&self, name: &str, embedding: &[f32]) -> Result<(), RoutingError> {
        self.write().upsert_skill(name, embedding)
    }

    /// See [`RoutingHead::remove_skill`].
    pub fn remove_skill(&self, name: &str) -> bool {
        self.write().remove_skill(name)
    }

    /// See [`RoutingHead::set_skill_stats`].
    pub fn set_skill_stats(&self, name: &str, stats: SkillStats) -> bool {
        self.write().set_skill_stats(name, stats)
    }

    /// Weights, baseline and update count, all taken under one lock.
    pub fn snapshot(&self) -> HeadSnapshot {
        self.read().snapshot()
    }

    /// See [`RoutingHead::restore`] (a reload or a promoted head).
    pub fn restore(&self, snapshot: &HeadSnapshot) -> Result<(), SnapshotError> {
        self.write().restore(snapshot)
    }

    /// A new head with this one's skills (their embeddings and stats) and configuration, and
    /// the snapshot's weights, baseline and update count: what a promotion swaps in. This head
    /// is left as it is, so it can go on serving (and be kept) until the new one is live.
    pub fn with_weights_of(&self, snapshot: &HeadSnapshot) -> Result<Self, SnapshotError> {
        let mut head = self.read().clone();
        head.restore(snapshot)?;
        Ok(SharedRoutingHead::new(head))
    }

    /// The head's state for status views.
    pub fn status(&self) -> HeadStatus {
        let head = self.read();
        HeadStatus {
            dim: head.dim(),
            skill_count: head.skill_count(),
            update_count: head.update_count(),
            warmed_up: head.is_warmed_up(),
            baseline: head.baseline(),
        }
    }

    /// A read guard. A panic while another thread held the lock leaves at worst one partly
    /// applied update (finite weights; skill blocks re-synchronised at the next periodic
    /// refresh), so routing carries on rather than failing every later request.
    fn read(&self) -> RwLockReadGuard<'_, RoutingHead> {
        self.head.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// A write guard; see [`SharedRoutingHead::read`] about poisoning.
    fn write(&self) -> RwLockWriteGuard<'_, RoutingHead> {
        self.head.write().unwrap_or_else(PoisonError::into_inner)
    }
}
