//! A trained head made live, and the way back (DESIGN §2.4: nothing goes live without
//! *Promote*).
//!
//! [`RoutingService::promote`] swaps the live head for one built from a job's snapshot;
//! [`RoutingService::restore_previous`] puts back the head replaced last. Both are one swap:
//! holding the embedding lock (so the skills directory is not being followed half-way) and the
//! head's write lock (so no outcome moves the live head), the successor is built from the live
//! head's skills ([`Active::successor`]), then one transaction keeps the live head in
//! `routing_head_versions` and saves the successor under a new identity
//! ([`Active::replace_in_store`]), and only then is it swapped in. Nothing is embedded: the
//! successor has the live head's dimension, so the skills' embeddings carry over.
//!
//! Invariants: a swap is all or nothing (if SQLite refuses or fails, the live head stays live
//! and nothing is written); the head kept is the live head as it was at the swap, unsaved
//! updates included; a route ranked before the swap trains no head, since the epoch moves on.

use tokio::sync::RwLockWriteGuard;

use super::active::Active;
use super::records;
use super::service::{Inner, RoutingService};
use super::snapshot::HeadSnapshot;
use super::status::{HeadSource, PromotedHead};
use crate::engine::EngineError;

/// What `routing_head_versions.replaced_by` says of a head a restore replaced.
const REPLACED_BY_RESTORE: &str = "restore";

impl RoutingService {
    /// Makes a trained head live: the *Promote* of a finished job, whose id `source` names
    /// (`job:<id>`). The new head has the snapshot's weights, baseline and update count (lower
    /// than the live head's or not) and the live head's skills with their embeddings and
    /// stats, so it ranks every skill at once; it is saved under a new identity in the same
    /// transaction that keeps the live head in `routing_head_versions` (the way back, see
    /// [`RoutingService::restore_previous`]). From then on it learns online like any head, and
    /// outcomes for routes the old head ranked are logged without training it.
    ///
    /// Errors: [`EngineError::Invalid`] for a source that is not `job:<id>` or a snapshot that
    /// does not describe a usable head; [`EngineError::Conflict`] when the live embedder's
    /// dimension is not the snapshot's (the head was trained for another embedder), or when the
    /// stored head is not the live one (nothing is written then).
    pub async fn promote(
        &self,
        snapshot: HeadSnapshot,
        source: &str,
    ) -> Result<PromotedHead, EngineError> {
        let source = match HeadSource::parse(source) {
            Some(source @ HeadSource::Job(_)) => source,
            _ => {
                return Err(EngineError::Invalid(format!(
                    "a promoted head's source must be job:<id>, the job that trained it; got \
                     {source:?}"
                )))
            }
        };
        let _embedding = self.inner.embedding.lock().await;
        let mut active = self.inner.active.write().await;
        let live_dim = active.embedder.dim();
        if snapshot.dim != live_dim {
            return Err(EngineError::Conflict(format!(
                "cannot promote the head of {source}: it was trained on {}-dimensional \
                 embeddings, and the live embedder {} gives {live_dim}; promote it while the \
                 embedder it was trained with is in use",
                snapshot.dim,
                active.embedder.name()
            )));
        }
        let replaced_by = source.to_string();
        let head_origin = format!(
            "promoted from {source} ({} updates), replacing the {} head ({} updates)",
            snapshot.update_count,
            active.source,
            active.head.status().update_count
        );
        self.inner
            .swap_in(&mut active, &snapshot, source, replaced_by, head_origin)
            .await
    }

    /// Puts back the head replaced last (by a promotion or a restore) among those of the live
    /// embedder's dimension: the way back from a promotion that routes worse. Same rules as
    /// [`RoutingService::promote`]: a new identity, the live head kept in
    /// `routing_head_versions` (as replaced by `restore`), routes ranked before it train no
    /// head. Restoring twice therefore brings the promoted head back: each restore undoes the
    /// replacement before it.
    ///
    /// Errors: [`EngineError::NotFound`] when no head of this dimension was ever replaced;
    /// [`EngineError::Conflict`] when the kept head cannot be read back, or the stored head is
    /// not the live one (nothing is written then).
    pub async fn restore_previous(&self) -> Result<PromotedHead, EngineError> {
        let _embedding = self.inner.embedding.lock().await;
        let mut active = self.inner.active.write().await;
        let dim = active.embedder.dim();
        let version = self
            .inner
            .store
            .call(move |connection| records::last_replaced_head(connection, dim))
            .await?
            .ok_or_else(|| {
                EngineError::NotFound(format!(
                    "no {dim}-dimensional routing head to restore: a promotion keeps the head it \
                     replaces, and none has replaced one yet"
                ))
            })?;
        let unreadable = |reason: String| {
            EngineError::Conflict(format!(
                "the routing head kept as version {} cannot be restored: {reason}",
                version.id
            ))
        };
        let snapshot = HeadSnapshot::from_bytes(&version.snapshot, dim)
            .map_err(|err| unreadable(err.to_string()))?;
        let source = HeadSource::parse(&version.source).ok_or_else(|| {
            unreadable(format!(
                "its source {:?} is not online or job:<id>",
                version.source
            ))
        })?;
        let head_origin = format!(
            "restored the {source} head ({} updates) that {} replaced",
            snapshot.update_count, version.replaced_by
        );
        self.inner
            .swap_in(
                &mut active,
                &snapshot,
                source,
                REPLACED_BY_RESTORE.to_owned(),
                head_origin,
            )
            .await
    }
}

impl Inner {
    /// Replaces the live head (behind `active`, write-locked) by one with `snapshot`'s weights:
    /// saved and the old one kept in one transaction, then swapped in.
    async fn swap_in(
        &self,
        active: &mut RwLockWriteGuard<'_, std::sync::Arc<Active>>,
        snapshot: &HeadSnapshot,
        source: HeadSource,
        replaced_by: String,
        head_origin: String,
    ) -> Result<PromotedHead, EngineError> {
        let next = active
            .successor(snapshot, source, head_origin)
            .map_err(|err| EngineError::Invalid(format!("cannot make this head live: {err}")))?;
        let replaced = active
            .replace_in_store(&self.store, &next, replaced_by)
            .await?;
        tracing::info!(
            dim = snapshot.dim,
            kept_as_version = replaced.version_id,
            "routing head replaced: {}",
            next.head_origin
        );
        let promoted = PromotedHead {
            dim: snapshot.dim,
            source: next.source.clone(),
            update_count: snapshot.update_count,
            replaced,
        };
        **active = std::sync::Arc::new(next);
        Ok(promoted)
    }
}
