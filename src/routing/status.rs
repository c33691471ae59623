//! What the routing service answers: a route, and the routing section of the status view.

use std::path::PathBuf;

use serde::Serialize;

use super::head::RankedSkill;
use super::records::SavedHead;
use crate::skills::SkippedSkill;

/// The answer to `POST /v1/route`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteAnswer {
    /// Names this ranking in `POST /v1/outcomes`.
    pub route_id: String,
    /// Best first: `{skill, score, cosine, rl}`.
    pub ranked: Vec<RankedSkill>,
}

/// Which embedder the service uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderKind {
    /// The managed server's `/v1/embeddings` (what the engine's
    /// [`super::EmbedderSource`] offers).
    Server,
    /// The built-in hashed n-gram embedder.
    Hashed,
}

/// The embedder in use, for the status view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedderStatus {
    /// Its name, e.g. `server:nomic-embed` or `hashed-ngrams-v1`.
    pub name: String,
    /// Server or built-in.
    pub kind: EmbedderKind,
    /// Its dimension.
    pub dim: usize,
    /// Why the managed server's embeddings are not used, when they are not.
    pub fallback_reason: Option<String>,
}

/// The routing section of the status view (DESIGN §1: head status, update count, recent reward
/// curve).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoutingStatus {
    /// The embedder in use.
    pub embedder: EmbedderStatus,
    /// The head's embedding dimension.
    pub dim: usize,
    /// Skills being ranked.
    pub skills: usize,
    /// The skills directory.
    pub skills_dir: PathBuf,
    /// Folders of the skills directory that are not valid skills, and why.
    pub skipped_skills: Vec<SkippedSkill>,
    /// Outcomes the head has learned from.
    pub updates: u64,
    /// Whether the learned score is blended in yet.
    pub warmed_up: bool,
    /// Updates needed before it is.
    pub warmup_updates: u64,
    /// Update count of the head at its last save that happened (0: not saved yet).
    pub persisted_updates: u64,
    /// Why the head's last save did not happen (another head is stored for its dimension),
    /// until a save does.
    pub save_problem: Option<String>,
    /// Where the head came from at start or at the last embedder change: a saved head, or a
    /// fresh one and why.
    pub head_origin: String,
    /// REINFORCE baseline: the moving average of rewards, −1..1.
    pub baseline: f32,
    /// The last [`super::RECENT_REWARDS`] rewards (+1 success, −1 failure), oldest first.
    pub recent_rewards: Vec<f32>,
    /// Share of successes among `recent_rewards`, when there are any.
    pub recent_success_rate: Option<f32>,
    /// Every saved head, one per dimension (older dimensions stay stored).
    pub saved_heads: Vec<SavedHead>,
    /// Routes waiting for (or holding) an outcome in memory.
    pub cached_routes: usize,
}
