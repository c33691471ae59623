//! What the routing service answers: a route, a promotion or restore of the head, and the
//! routing section of the status view.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use ts_rs::TS;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderKind {
    /// The managed server's `/v1/embeddings` (what the engine's
    /// [`super::EmbedderSource`] offers).
    Server,
    /// The built-in hashed n-gram embedder.
    Hashed,
}

/// The embedder in use, for the status view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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
    /// Where the head came from at start, at the last embedder change, promotion or restore:
    /// a saved head, a fresh one and why, a promoted or a restored one.
    pub head_origin: String,
    /// What trained the live head first: `online` or `job:<id>`; kept across restarts.
    #[ts(type = "string")]
    pub head_source: HeadSource,
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

/// What trained a head first: online learning from outcomes, or a training job whose head was
/// promoted. A promoted head goes on learning online and keeps its source, so the person can
/// tell a job's head from the one that grew by itself. On the wire and in SQLite: `online`,
/// `job:<id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadSource {
    /// Learned online since it started fresh.
    Online,
    /// Trained by the job with this id, then promoted.
    Job(String),
}

impl HeadSource {
    /// Reads `online` or `job:<id>` (a non-empty id); `None` for anything else.
    pub fn parse(label: &str) -> Option<HeadSource> {
        if label == "online" {
            return Some(HeadSource::Online);
        }
        match label.strip_prefix("job:") {
            Some(id) if !id.is_empty() => Some(HeadSource::Job(id.to_owned())),
            _ => None,
        }
    }
}

impl std::fmt::Display for HeadSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeadSource::Online => f.write_str("online"),
            HeadSource::Job(id) => write!(f, "job:{id}"),
        }
    }
}

impl Serialize for HeadSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for HeadSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let label = String::deserialize(deserializer)?;
        HeadSource::parse(&label).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{label}` is not a head source (`online` or `job:<id>`)"
            ))
        })
    }
}

/// What a promotion (or a restore, which promotes a replaced head back) made live, and what it
/// replaced: enough for a job's `promote` receipt and for the way back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromotedHead {
    /// The embedding dimension of both heads.
    pub dim: usize,
    /// Where the live head now came from.
    pub source: HeadSource,
    /// The live head's update count (the snapshot's, lower than the old head's or not).
    pub update_count: u64,
    /// The head it replaced, kept in `routing_head_versions`.
    pub replaced: ReplacedHead,
}

/// A head a promotion or a restore replaced, as `routing_head_versions` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplacedHead {
    /// Its `routing_head_versions` row.
    pub version_id: i64,
    /// Where it came from.
    pub source: HeadSource,
    /// Its update count when it was replaced, unsaved updates included.
    pub update_count: u64,
}
