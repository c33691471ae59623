//! The live head as a training job reads it: its configuration and a copy of its state, so a
//! job trains a head of the same shape and measures the live one on the same held-out split.

use super::head::HeadConfig;
use super::service::RoutingService;
use super::snapshot::HeadSnapshot;

/// A copy of the live head.
#[derive(Debug, Clone)]
pub struct LiveHead {
    /// The configuration heads are made with (`[routing]`).
    pub config: HeadConfig,
    /// Embedding dimension of the embedder in use.
    pub dim: usize,
    /// The live head's weights, baseline and update count.
    pub snapshot: HeadSnapshot,
}

impl RoutingService {
    /// A copy of the live head, taken under the read lock (arithmetic only, no I/O).
    pub async fn live_head(&self) -> LiveHead {
        let active = self.inner.active.read().await;
        let snapshot = active.head.snapshot();
        LiveHead {
            config: self.inner.head_config.clone(),
            dim: active.embedder.dim(),
            snapshot,
        }
    }
}
