//! The routing service's embedder choice and its following of the skills directory: falling
//! back to the built-in embedder when the server's fails, switching to the server's when it
//! appears, and embedding skills as they are added or edited.
//!
//! Every job here that embeds holds `Inner::embedding` (so two of them never interleave), and
//! embeds before it takes the head's lock: a route or an outcome never waits for HTTP.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use tokio::sync::{watch, MutexGuard};
use tokio::time::Instant;

use super::active::{embed_skills, lock, Active, ActiveError};
use super::embedder::Embedder;
use super::service::{hashed, Inner, EMBEDDER_RECHECK_INTERVAL};
use super::status::EmbedderKind;
use crate::engine::EngineError;
use crate::skills::SkillSet;

impl Inner {
    /// The current embedder failed: switch to the built-in one (no-op if already on it).
    pub(super) async fn fall_back(&self, reason: String) -> Result<(), EngineError> {
        let embedding = self.embedding.lock().await;
        self.fall_back_holding(&embedding, reason).await
    }

    async fn fall_back_holding(
        &self,
        embedding: &MutexGuard<'_, ()>,
        reason: String,
    ) -> Result<(), EngineError> {
        if self.current().await.kind == EmbedderKind::Hashed {
            return Ok(());
        }
        tracing::warn!("routing falls back to the built-in embedder: {reason}");
        *lock(&self.last_embedder_check) = Instant::now();
        self.replace_active(embedding, hashed(), EmbedderKind::Hashed, Some(reason))
            .await
            .map_err(EngineError::from)
    }

    /// Swaps in a head for `embedder`: embeds every skill first (no lock held), then, under
    /// the write lock, saves the old head, loads the new one and swaps it in. On failure (the
    /// new embedder cannot embed the skills) the old one stays.
    async fn replace_active(
        &self,
        _embedding: &MutexGuard<'_, ()>,
        embedder: Arc<dyn Embedder>,
        kind: EmbedderKind,
        fallback_reason: Option<String>,
    ) -> Result<(), ActiveError> {
        let skills = self.index.current();
        let all: Vec<_> = skills.skills.values().collect();
        let embedded = embed_skills(&*embedder, &all)
            .await
            .map_err(ActiveError::Embed)?;

        let mut active = self.active.write().await;
        if active.unsaved() {
            if let Err(err) = active.persist(&self.store).await {
                tracing::warn!("cannot save the routing head before replacing it: {err}");
            }
        }
        let stats = lock(&self.stats).clone();
        let epoch = active.epoch + 1;
        let next = Active::set_up(
            &self.store,
            &self.head_config,
            &stats,
            embedder,
            kind,
            fallback_reason,
            embedded,
            epoch,
        )
        .await?;
        tracing::info!(
            embedder = %next.embedder.name(),
            dim = next.embedder.dim(),
            "routing embedder changed: {}",
            next.head_origin
        );
        *active = Arc::new(next);
        Ok(())
    }

    /// On the built-in embedder, asks (in the background, at most every
    /// [`EMBEDDER_RECHECK_INTERVAL`]) whether the managed server now embeds, and switches if so.
    pub(super) fn maybe_recheck_embedder(self: &Arc<Self>) {
        {
            let mut last = lock(&self.last_embedder_check);
            if last.elapsed() < EMBEDDER_RECHECK_INTERVAL {
                return;
            }
            *last = Instant::now();
        }
        if self.recheck_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let inner = self.clone();
        tokio::spawn(async move {
            inner.recheck_embedder().await;
            inner.recheck_running.store(false, Ordering::SeqCst);
        });
    }

    async fn recheck_embedder(&self) {
        if self.current().await.kind == EmbedderKind::Server {
            return;
        }
        let reading = self.server.read().await;
        let embedder = match self.embedders.connect(&reading).await {
            Ok(embedder) => embedder,
            Err(reason) => {
                *lock(&self.current().await.fallback_reason) = Some(reason);
                return;
            }
        };
        let embedding = self.embedding.lock().await;
        if self.current().await.kind == EmbedderKind::Server {
            return;
        }
        if let Err(reason) = self
            .replace_active(&embedding, embedder, EmbedderKind::Server, None)
            .await
        {
            tracing::info!("routing stays on the built-in embedder: {reason}");
            *lock(&self.current().await.fallback_reason) = Some(reason.to_string());
        }
    }

    /// Brings the head's skills in line with the skills directory as it is now: embeds new and
    /// changed skills (without the head's lock), removes gone ones. An embedder failure falls
    /// back to the built-in embedder, which re-embeds all. A head that already follows the
    /// directory costs a comparison and no embedding.
    pub(super) async fn sync_skills(&self) {
        let embedding = self.embedding.lock().await;
        // Holding `embedding`, nobody replaces the head until this is done.
        let active = self.current().await;
        let set = self.index.current();
        let diff = active.diff(&set);
        active.remove(&diff.gone);
        let failure = match embed_skills(&*active.embedder, &diff.changed).await {
            Ok(embedded) => {
                let stats_of =
                    |name: &str| lock(&self.stats).get(name).copied().unwrap_or_default();
                active
                    .apply(embedded, &stats_of)
                    .err()
                    .map(|err| err.to_string())
            }
            Err(reason) => Some(reason),
        };
        if let Some(reason) = failure {
            if let Err(err) = self.fall_back_holding(&embedding, reason).await {
                tracing::warn!("routing cannot follow the skills directory: {err}");
            }
        }
    }
}

/// Follows the skills index until the service is shut down or dropped.
pub(super) async fn sync_skills_forever(
    inner: Weak<Inner>,
    mut skills: watch::Receiver<Arc<SkillSet>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            changed = skills.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        skills.borrow_and_update();
        let Some(inner) = inner.upgrade() else {
            return;
        };
        inner.sync_skills().await;
    }
}
