//! [`RoutingService`]: the routing head put to work — skills from the skills directory,
//! embeddings from the managed server or the built-in embedder, routes and outcomes logged in
//! SQLite, and the head saved every `persist_interval` updates.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{watch, RwLock};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::embedder::{Embedder, HashedEmbedder};
use super::head::{ForwardPass, HeadConfig, Outcome, RankedSkill, RoutingHead, SkillStats};
use super::records::{self, LoggedRoute, OutcomeRecord, RouteRecord, SavedHead};
use super::route_cache::{CachedRoute, Lookup, RouteCache, RouteCacheLimits};
use super::server_embedder::ServerEmbedder;
use super::shared::SharedRoutingHead;
use super::snapshot::HeadSnapshot;
use crate::config::Config;
use crate::engine::EngineError;
use crate::server::ServerProbe;
use crate::skills::{Skill, SkillSet, SkillsIndex, SkippedSkill};
use crate::store::{now_ms, Store, StoreError};

/// Skills returned when a request names no `top_k`.
pub const DEFAULT_TOP_K: usize = 5;
/// Largest `top_k` taken: every ranked skill's forward pass is kept until the outcome.
pub const MAX_TOP_K: usize = 100;
/// How long after ranking an outcome is taken: an agent reports it when its turn ends.
pub const ROUTE_TTL: Duration = Duration::from_secs(30 * 60);
/// Routes remembered at most.
pub const MAX_CACHED_ROUTES: usize = 4096;
/// Forward passes kept at most (about 16 MB at 384 dimensions).
pub const MAX_CACHED_PASSES: usize = 8192;
/// How often, at most, a service on the built-in embedder asks whether the managed server now
/// embeds. Only when someone routes or asks the status: nothing polls while nobody asks.
pub const EMBEDDER_RECHECK_INTERVAL: Duration = Duration::from_secs(60);
/// Outcomes the status view's reward curve shows.
pub const RECENT_REWARDS: usize = 100;

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
    /// The managed server's `/v1/embeddings`.
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
    /// Update count of the head as last saved.
    pub persisted_updates: u64,
    /// Where the head came from at start or at the last embedder change: a saved head, or a
    /// fresh one and why.
    pub head_origin: String,
    /// REINFORCE baseline: the moving average of rewards, −1..1.
    pub baseline: f32,
    /// The last [`RECENT_REWARDS`] rewards (+1 success, −1 failure), oldest first.
    pub recent_rewards: Vec<f32>,
    /// Share of successes among `recent_rewards`, when there are any.
    pub recent_success_rate: Option<f32>,
    /// Every saved head, one per dimension (older dimensions stay stored).
    pub saved_heads: Vec<SavedHead>,
    /// Routes waiting for (or holding) an outcome in memory.
    pub cached_routes: usize,
}

/// Ranks skills for requests and learns from their outcomes; cheap to clone, every clone is
/// the same service.
///
/// It owns the [`SkillsIndex`] of the skills directory (skills added, edited or removed reach
/// the head within about a second), the embedder (the managed server's `/v1/embeddings` when it
/// answers, else [`HashedEmbedder`]), the [`SharedRoutingHead`] of that embedder's dimension,
/// and the forward passes of recent routes. Every route and outcome is logged in SQLite before
/// it is answered; the head is saved every `persist_interval` updates and at
/// [`RoutingService::shutdown`], and loaded at start.
///
/// When the embedder changes dimension (the server appears, goes away, or changes model) the
/// current head is saved, the skills are re-embedded and the saved head of the new dimension is
/// loaded, or a fresh one started; heads of other dimensions stay stored. Outcomes for routes
/// ranked by the replaced head are refused as not found.
#[derive(Clone)]
pub struct RoutingService {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    head_config: HeadConfig,
    server: Arc<dyn ServerProbe>,
    index: SkillsIndex,
    /// The embedder and head; the write lock is held while they are replaced.
    active: RwLock<Active>,
    routes: Mutex<RouteCache>,
    /// Every skill's track record, from the outcome log; applied to skills as they appear.
    stats: Mutex<HashMap<String, SkillStats>>,
    recent_rewards: Mutex<VecDeque<f32>>,
    /// When the server was last asked whether it embeds.
    last_embedder_check: Mutex<Instant>,
    recheck_running: AtomicBool,
    shutdown: watch::Sender<bool>,
    sync_task: Mutex<Option<JoinHandle<()>>>,
}

struct Active {
    embedder: Arc<dyn Embedder>,
    kind: EmbedderKind,
    fallback_reason: Option<String>,
    head: Arc<SharedRoutingHead>,
    /// Bumped whenever the head is replaced; routes remember the epoch that ranked them.
    epoch: u64,
    head_origin: String,
    /// Update count of the last save of this head.
    persisted: AtomicU64,
    /// Each skill in the head and the text its embedding was made from.
    embedded: Mutex<HashMap<String, String>>,
}

impl RoutingService {
    /// Starts routing: creates and watches the skills directory (`config.skills_dir(data_dir)`),
    /// rebuilds skill stats and the reward curve from the outcome log, picks the embedder (the
    /// managed server's when it answers `/v1/embeddings`), loads the saved head of its dimension
    /// (a corrupt or mismatched one is logged and replaced by a fresh head) and embeds the
    /// skills. Must run inside a tokio runtime.
    pub async fn start(
        store: Store,
        config: &Config,
        data_dir: &Path,
        server: Arc<dyn ServerProbe>,
    ) -> Result<RoutingService, EngineError> {
        let head_config = head_config(config)?;
        let skills_dir = config.skills_dir(data_dir);
        let index = tokio::task::spawn_blocking(move || SkillsIndex::start(&skills_dir))
            .await
            .map_err(|err| EngineError::Startup(format!("skills index start panicked: {err}")))?
            .map_err(|err| EngineError::Startup(err.to_string()))?;
        let (stats, rewards) = store
            .call(|connection| {
                Ok((
                    records::skill_stats(connection)?,
                    records::recent_rewards(connection, RECENT_REWARDS)?,
                ))
            })
            .await?;

        let reading = server.read().await;
        let skills = index.current();
        let (active, fallback) = match ServerEmbedder::connect(&reading).await {
            Ok(embedder) => {
                let embedder: Arc<dyn Embedder> = Arc::new(embedder);
                match build_active(&store, &head_config, &stats, &skills, embedder, 0).await {
                    Ok(active) => (Some(active), None),
                    Err(ActiveError::Store(err)) => return Err(err.into()),
                    Err(ActiveError::Embed(reason)) => (None, Some(reason)),
                }
            }
            Err(reason) => (None, Some(reason)),
        };
        let active = match active {
            Some(mut active) => {
                active.kind = EmbedderKind::Server;
                active
            }
            None => {
                let reason = fallback.unwrap_or_default();
                tracing::info!("routing uses the built-in embedder: {reason}");
                let mut active =
                    build_active(&store, &head_config, &stats, &skills, hashed(), 0).await?;
                active.fallback_reason = Some(reason);
                active
            }
        };
        tracing::info!(
            embedder = %active.embedder.name(),
            dim = active.embedder.dim(),
            skills = active.head.status().skill_count,
            "routing ready: {}",
            active.head_origin
        );

        let inner = Arc::new(Inner {
            store,
            head_config,
            server,
            active: RwLock::new(active),
            routes: Mutex::new(RouteCache::new(RouteCacheLimits {
                ttl: ROUTE_TTL,
                max_routes: MAX_CACHED_ROUTES,
                max_passes: MAX_CACHED_PASSES,
            })),
            stats: Mutex::new(stats),
            recent_rewards: Mutex::new(rewards.into()),
            last_embedder_check: Mutex::new(Instant::now()),
            recheck_running: AtomicBool::new(false),
            shutdown: watch::channel(false).0,
            sync_task: Mutex::new(None),
            index,
        });
        let task = tokio::spawn(sync_skills_forever(
            Arc::downgrade(&inner),
            inner.index.subscribe(),
            inner.shutdown.subscribe(),
        ));
        *lock(&inner.sync_task) = Some(task);
        Ok(RoutingService { inner })
    }

    /// Ranks the known skills for `query` and returns the best `top_k` (default
    /// [`DEFAULT_TOP_K`], at most [`MAX_TOP_K`]) under a new `route_id`, logged before it is
    /// returned. An outcome for one of the ranked skills is taken within [`ROUTE_TTL`].
    pub async fn route(
        &self,
        query: &str,
        top_k: Option<usize>,
    ) -> Result<RouteAnswer, EngineError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(EngineError::Invalid(
                "query must not be empty: send the request text to route".into(),
            ));
        }
        let top_k = top_k.unwrap_or(DEFAULT_TOP_K);
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(EngineError::Invalid(format!(
                "top_k must be between 1 and {MAX_TOP_K}, got {top_k}"
            )));
        }
        self.inner.maybe_recheck_embedder();

        let texts = [query.to_owned()];
        let mut attempts = 0;
        let (active, vector) = loop {
            attempts += 1;
            let active = self.inner.active.read().await;
            let failure = match active.embedder.embed(&texts).await {
                Ok(mut vectors) if vectors.len() == 1 => break (active, vectors.remove(0)),
                Ok(vectors) => format!(
                    "embedder {} answered {} vectors for one text",
                    active.embedder.name(),
                    vectors.len()
                ),
                Err(err) => err.to_string(),
            };
            let on_fallback = active.kind == EmbedderKind::Hashed;
            drop(active);
            if on_fallback || attempts > 1 {
                return Err(EngineError::Invalid(format!(
                    "cannot embed the query: {failure}"
                )));
            }
            self.inner.fall_back(failure).await?;
        };
        let ranking = active
            .head
            .rank(&vector, top_k)
            .map_err(|err| EngineError::Invalid(err.to_string()))?;
        let status = active.head.status();

        let route_id = uuid::Uuid::new_v4().to_string();
        let query_unit = unit(&vector);
        let record_query = query.to_owned();
        let embedder = active.embedder.name().to_owned();
        let ranked = ranking.ranked.clone();
        let passes = ranking.passes.clone();
        let id = route_id.clone();
        self.inner
            .store
            .call(move |connection| {
                records::insert_route(
                    connection,
                    &RouteRecord {
                        id: &id,
                        created_at: now_ms(),
                        query: &record_query,
                        embedder: &embedder,
                        query_embedding: &query_unit,
                        head_updates: status.update_count,
                        warmed_up: status.warmed_up,
                        top_k,
                        ranked: &ranked,
                        passes: &passes,
                    },
                )
            })
            .await?;
        if !ranking.passes.is_empty() {
            lock(&self.inner.routes).insert(
                route_id.clone(),
                CachedRoute {
                    epoch: active.epoch,
                    created: Instant::now(),
                    passes: ranking.passes,
                    decided: false,
                },
            );
        }
        Ok(RouteAnswer {
            route_id,
            ranked: ranking.ranked,
        })
    }

    /// Learns from how `skill`, chosen from route `route_id`, did: logs the outcome, applies a
    /// REINFORCE update on that route's cached forward pass, and saves the head when a
    /// `persist_interval` is complete.
    ///
    /// Errors: [`EngineError::NotFound`] for an unknown or expired route (or one ranked by a
    /// head replaced since), [`EngineError::Conflict`] for a route that already has an outcome,
    /// [`EngineError::Invalid`] for a skill the route did not rank.
    pub async fn outcome(
        &self,
        route_id: &str,
        skill: &str,
        outcome: Outcome,
    ) -> Result<(), EngineError> {
        // Held throughout, so the head cannot be replaced between reservation and update.
        let active = self.inner.active.read().await;
        let reserved = {
            let mut routes = lock(&self.inner.routes);
            match routes.lookup(route_id, Instant::now()) {
                Lookup::Missing => None,
                Lookup::Found(route) => Some(reserve(route, route_id, skill, &active)),
            }
        };
        let (pass, rank) = match reserved {
            None => return Err(self.inner.explain_missing_route(route_id).await),
            Some(reserved) => reserved?,
        };

        let record = OutcomeRecord {
            route_id: route_id.to_owned(),
            outcome,
            rank,
            pass: pass.clone(),
            created_at: now_ms(),
        };
        let logged = self
            .inner
            .store
            .call(move |connection| records::insert_outcome(connection, &record))
            .await;
        match logged {
            Ok(true) => lock(&self.inner.routes).release_passes(route_id),
            Ok(false) => return Err(already_decided(route_id)),
            Err(err) => {
                if let Lookup::Found(route) =
                    lock(&self.inner.routes).lookup(route_id, Instant::now())
                {
                    route.decided = false;
                }
                return Err(err.into());
            }
        }

        let applied = active
            .head
            .apply_outcome(&pass, outcome)
            .map_err(|err| EngineError::Invalid(err.to_string()))?;
        {
            let mut stats = lock(&self.inner.stats);
            let entry = stats.entry(pass.skill.clone()).or_default();
            entry.uses += 1;
            entry.successes += u64::from(outcome == Outcome::Success);
        }
        {
            let mut rewards = lock(&self.inner.recent_rewards);
            rewards.push_back(outcome.reward());
            while rewards.len() > RECENT_REWARDS {
                rewards.pop_front();
            }
        }
        if applied.persist_due {
            self.inner.persist(&active).await?;
        }
        Ok(())
    }

    /// The routing section of the status view. Also a moment to notice that the managed server
    /// now embeds (at most every [`EMBEDDER_RECHECK_INTERVAL`]).
    pub async fn status(&self) -> Result<RoutingStatus, EngineError> {
        self.inner.maybe_recheck_embedder();
        let saved_heads = self.inner.store.call(|c| records::saved_heads(c)).await?;
        let active = self.inner.active.read().await;
        let head = active.head.status();
        let skills = self.inner.index.current();
        let recent_rewards: Vec<f32> = lock(&self.inner.recent_rewards).iter().copied().collect();
        let recent_success_rate = (!recent_rewards.is_empty()).then(|| {
            recent_rewards
                .iter()
                .filter(|&&reward| reward > 0.0)
                .count() as f32
                / recent_rewards.len() as f32
        });
        Ok(RoutingStatus {
            embedder: EmbedderStatus {
                name: active.embedder.name().to_owned(),
                kind: active.kind,
                dim: active.embedder.dim(),
                fallback_reason: active.fallback_reason.clone(),
            },
            dim: head.dim,
            skills: head.skill_count,
            skills_dir: skills.dir.clone(),
            skipped_skills: skills.skipped.clone(),
            updates: head.update_count,
            warmed_up: head.warmed_up,
            warmup_updates: self.inner.head_config.warmup_updates,
            persisted_updates: active.persisted.load(Ordering::SeqCst),
            head_origin: active.head_origin.clone(),
            baseline: head.baseline,
            recent_rewards,
            recent_success_rate,
            saved_heads,
            cached_routes: lock(&self.inner.routes).len(),
        })
    }

    /// The skills directory as last scanned.
    pub fn skills(&self) -> Arc<SkillSet> {
        self.inner.index.current()
    }

    /// A receiver that sees every change of the skills directory (for events and views).
    pub fn subscribe_skills(&self) -> watch::Receiver<Arc<SkillSet>> {
        self.inner.index.subscribe()
    }

    /// Stops following the skills directory and saves the head if it learned since its last
    /// save. Routing keeps answering afterwards (with the skills it has), so calling this
    /// before the last request is harmless.
    pub async fn shutdown(&self) -> Result<(), EngineError> {
        self.inner.shutdown.send_replace(true);
        let task = lock(&self.inner.sync_task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
        let active = self.inner.active.read().await;
        if active.head.status().update_count != active.persisted.load(Ordering::SeqCst) {
            self.inner.persist(&active).await?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for RoutingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutingService")
            .field("skills_dir", &self.inner.index.dir())
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// Saves `active`'s head from one snapshot.
    async fn persist(&self, active: &Active) -> Result<(), EngineError> {
        let snapshot = active.head.snapshot();
        let update_count = snapshot.update_count;
        let dim = snapshot.dim;
        let bytes = snapshot.to_bytes();
        let embedder = active.embedder.name().to_owned();
        self.store
            .call(move |connection| {
                records::save_head(connection, dim, &embedder, &bytes, update_count, now_ms())
            })
            .await?;
        active.persisted.fetch_max(update_count, Ordering::SeqCst);
        tracing::debug!(dim, update_count, "routing head saved");
        Ok(())
    }

    /// NotFound or Conflict for a route id that is not in memory, from the log.
    async fn explain_missing_route(&self, route_id: &str) -> EngineError {
        let id = route_id.to_owned();
        match self
            .store
            .call(move |c| records::logged_route(c, &id))
            .await
        {
            Ok(LoggedRoute::Decided) => already_decided(route_id),
            Ok(LoggedRoute::Open) => EngineError::NotFound(format!(
                "route {route_id} has expired: outcomes are taken for {} minutes after routing \
                 and for the latest {MAX_CACHED_ROUTES} routes; route the request again",
                ROUTE_TTL.as_secs() / 60
            )),
            Ok(LoggedRoute::Unknown) => EngineError::NotFound(format!(
                "no route {route_id}: route ids come from POST /v1/route"
            )),
            Err(err) => err.into(),
        }
    }

    /// The current embedder failed: switch to the built-in one (no-op if already on it).
    async fn fall_back(&self, reason: String) -> Result<(), EngineError> {
        let mut active = self.active.write().await;
        if active.kind == EmbedderKind::Hashed {
            return Ok(());
        }
        tracing::warn!("routing falls back to the built-in embedder: {reason}");
        *lock(&self.last_embedder_check) = Instant::now();
        self.replace_active(&mut active, hashed(), EmbedderKind::Hashed, Some(reason))
            .await
            .map_err(EngineError::from)
    }

    /// Swaps in a head for `embedder`, saving the old head first; on failure (the new embedder
    /// cannot embed the skills) the old one stays.
    async fn replace_active(
        &self,
        active: &mut Active,
        embedder: Arc<dyn Embedder>,
        kind: EmbedderKind,
        fallback_reason: Option<String>,
    ) -> Result<(), ActiveError> {
        if active.head.status().update_count != active.persisted.load(Ordering::SeqCst) {
            if let Err(err) = self.persist(active).await {
                tracing::warn!("cannot save the routing head before replacing it: {err}");
            }
        }
        let stats = lock(&self.stats).clone();
        let skills = self.index.current();
        let epoch = active.epoch + 1;
        let mut next = build_active(
            &self.store,
            &self.head_config,
            &stats,
            &skills,
            embedder,
            epoch,
        )
        .await?;
        next.kind = kind;
        next.fallback_reason = fallback_reason;
        tracing::info!(
            embedder = %next.embedder.name(),
            dim = next.embedder.dim(),
            "routing embedder changed: {}",
            next.head_origin
        );
        *active = next;
        lock(&self.routes).release_before(epoch);
        Ok(())
    }

    /// On the built-in embedder, asks (in the background, at most every
    /// [`EMBEDDER_RECHECK_INTERVAL`]) whether the managed server now embeds, and switches if so.
    fn maybe_recheck_embedder(self: &Arc<Self>) {
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
        if self.active.read().await.kind == EmbedderKind::Server {
            return;
        }
        let reading = self.server.read().await;
        let embedder = match ServerEmbedder::connect(&reading).await {
            Ok(embedder) => embedder,
            Err(reason) => {
                self.active.write().await.fallback_reason = Some(reason);
                return;
            }
        };
        let mut active = self.active.write().await;
        if active.kind == EmbedderKind::Server {
            return;
        }
        if let Err(reason) = self
            .replace_active(&mut active, Arc::new(embedder), EmbedderKind::Server, None)
            .await
        {
            tracing::info!("routing stays on the built-in embedder: {reason}");
            active.fallback_reason = Some(reason.to_string());
        }
    }

    /// Brings the head's skills in line with `set`: embeds new and changed skills, removes
    /// gone ones. An embedder failure falls back to the built-in embedder, which re-embeds all.
    async fn sync_skills(&self, set: &SkillSet) {
        let stats_of = |name: &str| lock(&self.stats).get(name).copied().unwrap_or_default();
        let failure = {
            let active = self.active.read().await;
            sync_head_skills(&active, set, &stats_of).await.err()
        };
        if let Some(reason) = failure {
            if let Err(err) = self.fall_back(reason).await {
                tracing::warn!("routing cannot follow the skills directory: {err}");
            }
        }
    }
}

/// Follows the skills index until the service is shut down or dropped.
async fn sync_skills_forever(
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
        let set = skills.borrow_and_update().clone();
        let Some(inner) = inner.upgrade() else {
            return;
        };
        inner.sync_skills(&set).await;
    }
}

/// A head for `embedder` with every skill of `skills` embedded: the saved head of its
/// dimension if there is a usable one, else a fresh head (the reason is in `head_origin`).
async fn build_active(
    store: &Store,
    head_config: &HeadConfig,
    stats: &HashMap<String, SkillStats>,
    skills: &SkillSet,
    embedder: Arc<dyn Embedder>,
    epoch: u64,
) -> Result<Active, ActiveError> {
    let dim = embedder.dim();
    let saved = store
        .call(move |connection| records::load_head(connection, dim))
        .await?;
    let (head, head_origin, persisted) = match saved {
        None => (
            RoutingHead::new(dim, head_config.clone()),
            format!("fresh head: no saved head for {dim}-dimensional embeddings"),
            0,
        ),
        Some((bytes, saved_by)) => match HeadSnapshot::from_bytes(&bytes, dim)
            .and_then(|snapshot| RoutingHead::from_snapshot(head_config.clone(), &snapshot))
        {
            Ok(head) => {
                let updates = head.update_count();
                (
                    head,
                    format!("saved head loaded ({updates} updates, last saved with {saved_by})"),
                    updates,
                )
            }
            Err(err) => {
                tracing::warn!(
                    "the saved {dim}-dimensional routing head is unusable ({err}); starting a \
                     fresh one, which replaces it at the next save"
                );
                (
                    RoutingHead::new(dim, head_config.clone()),
                    format!("fresh head: the saved one was unusable ({err})"),
                    0,
                )
            }
        },
    };
    let active = Active {
        embedder,
        kind: EmbedderKind::Hashed,
        fallback_reason: None,
        head: Arc::new(SharedRoutingHead::new(head)),
        epoch,
        head_origin,
        persisted: AtomicU64::new(persisted),
        embedded: Mutex::new(HashMap::new()),
    };
    let stats_of = |name: &str| stats.get(name).copied().unwrap_or_default();
    sync_head_skills(&active, skills, &stats_of)
        .await
        .map_err(ActiveError::Embed)?;
    Ok(active)
}

/// Embeds new and changed skills into `active`'s head and removes gone ones. A skill new to
/// the head gets its track record from `stats_of`; a changed one keeps the head's.
async fn sync_head_skills(
    active: &Active,
    set: &SkillSet,
    stats_of: &(dyn Fn(&str) -> SkillStats + Sync),
) -> Result<(), String> {
    let (changed, gone): (Vec<&Skill>, Vec<String>) = {
        let embedded = lock(&active.embedded);
        let changed = set
            .skills
            .values()
            .filter(|skill| embedded.get(&skill.name) != Some(&embedding_text(skill)))
            .collect();
        let gone = embedded
            .keys()
            .filter(|name| !set.skills.contains_key(*name))
            .cloned()
            .collect();
        (changed, gone)
    };
    for name in gone {
        active.head.remove_skill(&name);
        lock(&active.embedded).remove(&name);
    }
    if changed.is_empty() {
        return Ok(());
    }
    let texts: Vec<String> = changed.iter().map(|skill| embedding_text(skill)).collect();
    let vectors = active
        .embedder
        .embed(&texts)
        .await
        .map_err(|err| format!("cannot embed the skills: {err}"))?;
    if vectors.len() != texts.len() {
        return Err(format!(
            "embedder {} answered {} vectors for {} skills",
            active.embedder.name(),
            vectors.len(),
            texts.len()
        ));
    }
    for ((skill, text), vector) in changed.into_iter().zip(texts).zip(vectors) {
        active
            .head
            .upsert_skill(&skill.name, &vector)
            .map_err(|err| err.to_string())?;
        let is_new = lock(&active.embedded)
            .insert(skill.name.clone(), text)
            .is_none();
        if is_new {
            active
                .head
                .set_skill_stats(&skill.name, stats_of(&skill.name));
        }
    }
    Ok(())
}

/// What a skill is embedded from: its name (hyphens read as spaces) and description.
fn embedding_text(skill: &Skill) -> String {
    format!("{}: {}", skill.name.replace('-', " "), skill.description)
}

/// Why a head for an embedder could not be set up.
#[derive(Debug)]
enum ActiveError {
    /// The saved head could not be read.
    Store(StoreError),
    /// The embedder could not embed the skills.
    Embed(String),
}

impl From<StoreError> for ActiveError {
    fn from(err: StoreError) -> Self {
        ActiveError::Store(err)
    }
}

impl From<ActiveError> for EngineError {
    fn from(err: ActiveError) -> Self {
        match err {
            ActiveError::Store(err) => EngineError::Store(err),
            ActiveError::Embed(reason) => EngineError::Invalid(reason),
        }
    }
}

impl std::fmt::Display for ActiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ActiveError::Store(err) => err.fmt(f),
            ActiveError::Embed(reason) => f.write_str(reason),
        }
    }
}

fn hashed() -> Arc<dyn Embedder> {
    Arc::new(HashedEmbedder::default())
}

/// Takes `route`'s outcome slot for `skill`: its forward pass and rank, or why not.
fn reserve(
    route: &mut CachedRoute,
    route_id: &str,
    skill: &str,
    active: &Active,
) -> Result<(ForwardPass, usize), EngineError> {
    if route.decided {
        return Err(already_decided(route_id));
    }
    if route.epoch != active.epoch {
        return Err(EngineError::NotFound(format!(
            "route {route_id} was ranked by a routing head that has since been replaced (the \
             embedder changed to {}); its outcome cannot be learned from: route the request again",
            active.embedder.name()
        )));
    }
    let Some(rank) = route.passes.iter().position(|pass| pass.skill == skill) else {
        let ranked: Vec<&str> = route
            .passes
            .iter()
            .map(|pass| pass.skill.as_str())
            .collect();
        return Err(EngineError::Invalid(format!(
            "skill {skill:?} was not ranked by route {route_id}; it ranked {}",
            ranked.join(", ")
        )));
    };
    route.decided = true;
    Ok((route.passes[rank].clone(), rank))
}

fn already_decided(route_id: &str) -> EngineError {
    EngineError::Conflict(format!(
        "route {route_id} already has an outcome: each route takes one; route again for a new request"
    ))
}

/// DESIGN §5's `[routing]` values as a head configuration, checked.
fn head_config(config: &Config) -> Result<HeadConfig, EngineError> {
    let routing = &config.routing;
    let invalid = |key: &str, rule: &str, value: String| {
        Err(EngineError::Startup(format!(
            "routing.{key} must be {rule}, got {value}; fix it in the config file"
        )))
    };
    if !(routing.learning_rate.is_finite() && routing.learning_rate > 0.0) {
        return invalid(
            "learning_rate",
            "a positive number",
            routing.learning_rate.to_string(),
        );
    }
    if !(0.0..=1.0).contains(&routing.rl_weight) {
        return invalid(
            "rl_weight",
            "between 0 and 1",
            routing.rl_weight.to_string(),
        );
    }
    Ok(HeadConfig {
        learning_rate: routing.learning_rate as f32,
        rl_weight: routing.rl_weight as f32,
        warmup_updates: routing.warmup_updates,
        persist_interval: routing.persist_interval,
        ..HeadConfig::default()
    })
}

fn unit(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 {
        return vector.to_vec();
    }
    vector.iter().map(|x| x / norm).collect()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
