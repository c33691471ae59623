//! Skill routing (DESIGN §2.3): rank the known skills for a request, and learn from outcomes
//! which skill really helps.
//!
//! A request and every skill are embedded (by an [`Embedder`]: the managed server's
//! `/v1/embeddings`, or the built-in [`HashedEmbedder`]). Skills are ranked by cosine
//! similarity, re-ranked by a small learned [`RoutingHead`] once it has seen enough outcomes,
//! and each reported outcome is a REINFORCE step on the forward pass that ranked the chosen
//! skill.
//!
//! - [`Embedder`], [`HashedEmbedder`]: text → vector, with a deterministic offline fallback.
//! - [`RoutingHead`], [`HeadConfig`]: the MLP re-ranker over a table of skills. Its first layer
//!   is split so ranking N skills costs one matrix-vector product for the query plus a few
//!   passes over `hidden_size` floats per skill.
//! - [`Ranking`], [`RankedSkill`], [`ForwardPass`], [`Outcome`]: what a ranking returns, what
//!   the engine keeps per `route_id`, and what it hands back with the outcome.
//! - [`SharedRoutingHead`]: the one head every session shares, with lossless concurrent
//!   updates, a save signal every `persist_interval` updates, and one-lock snapshots.
//! - [`HeadSnapshot`]: weights, baseline and count as plain data and as checksummed bytes.
//! - [`reference`]: the same model and its REINFORCE step as plain per-candidate loops, the
//!   yardstick for tests and benchmarks.
//! - [`ServerEmbedder`]: the managed server's `/v1/embeddings` (a loaded model only, never
//!   waking one).
//! - [`EmbedderSource`]: the seam through which the service gets an embedder besides the
//!   built-in one — [`ServerEmbedderSource`] in production, [`BuiltInEmbedderOnly`] in tests and
//!   the simulator, so that they never reach a real server.
//! - [`RoutingService`]: all of the above put to work for the engine. It follows the skills
//!   directory ([`crate::skills::SkillsIndex`]), picks the embedder and falls back to the
//!   built-in one, keeps forward passes per `route_id` ([`RouteAnswer`]), logs routes and
//!   outcomes and saves one head per embedding dimension in SQLite, makes a trained head live
//!   ([`RoutingService::promote`], answering [`PromotedHead`]) and puts the replaced one back,
//!   and reports [`RoutingStatus`] (with the live head's [`HeadSource`]). Its jobs are split:
//!   `service` (route, outcome, status), `active` (the head of one embedder: skills embedded,
//!   saves guarded by the head's identity, its successor), `switching` (embedder choice,
//!   following the skills directory), `promotion` (promote, restore), `status` (the answers'
//!   types). No lock of the service is held across HTTP: embeddings are made first, then
//!   swapped in.
//!
//! The head itself (`head`, `shared`, `snapshot`, `reference`) knows nothing of SQLite, HTTP,
//! route ids or the skills directory; only [`RoutingService`] (with `active` and `switching`)
//! and its SQL (`records`) do.
//!
//! ```
//! use lull::routing::{Embedder, HashedEmbedder, HeadConfig, Outcome, RoutingHead, SharedRoutingHead};
//!
//! let embedder = HashedEmbedder::default();
//! let mut head = RoutingHead::new(embedder.dim(), HeadConfig::default());
//! head.upsert_skill("deploy", &embedder.embed_text("deploy a service to staging")).unwrap();
//! head.upsert_skill("haiku", &embedder.embed_text("write a short poem")).unwrap();
//! let shared = SharedRoutingHead::new(head);
//!
//! let ranking = shared.rank(&embedder.embed_text("please deploy to staging"), 5).unwrap();
//! assert_eq!(ranking.ranked[0].skill, "deploy");
//!
//! // Later, the agent reports how the chosen skill did.
//! let pass = ranking.pass_for("deploy").unwrap();
//! let applied = shared.apply_outcome(pass, Outcome::Success).unwrap();
//! assert_eq!(applied.update_count, 1);
//! ```

#![deny(missing_docs)]

mod active;
mod embedder;
mod embedder_source;
mod head;
mod live;
mod promotion;
mod records;
pub mod reference;
mod route_cache;
mod server_embedder;
mod service;
mod shared;
mod snapshot;
mod status;
mod switching;

pub use embedder::{EmbedError, Embedder, HashedEmbedder, DEFAULT_HASHED_DIM};
pub use embedder_source::{
    BuiltInEmbedderOnly, EmbedderSource, ServerEmbedderSource, BUILT_IN_ONLY_REASON,
};
pub use head::{
    CandidateFeatures, ForwardPass, HeadConfig, Outcome, RankedSkill, Ranking, RoutingError,
    RoutingHead, SkillStats, LOG_USES_SCALE, REINFORCE_SCORE_FLOOR, SCALAR_FEATURE_COUNT,
};
pub use live::LiveHead;
pub use records::{blob_to_floats, floats_to_blob, SavedHead};
pub use route_cache::RouteCacheLimits;
pub use server_embedder::{
    ServerEmbedder, EMBED_BATCH_SIZE, EMBED_CONNECT_TIMEOUT, EMBED_REQUEST_TIMEOUT,
};
pub use service::{
    RoutingService, DEFAULT_TOP_K, EMBEDDER_RECHECK_INTERVAL, MAX_CACHED_PASSES, MAX_CACHED_ROUTES,
    MAX_TOP_K, RECENT_REWARDS, ROUTE_TTL,
};
pub use shared::{HeadStatus, OutcomeApplied, SharedRoutingHead};
pub use snapshot::{HeadSnapshot, SnapshotError, SNAPSHOT_FORMAT_VERSION};
pub use status::{
    EmbedderKind, EmbedderStatus, HeadSource, PromotedHead, ReplacedHead, RouteAnswer,
    RoutingStatus,
};
