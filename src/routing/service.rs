//! [`RoutingService`]: the routing head put to work — ranking requests and learning from their
//! outcomes, each logged in SQLite, and the status view.
//!
//! The service's jobs live beside it: [`super::active`] is the head of one embedder (its skills
//! embedded, its saves), [`super::switching`] picks the embedder and follows the skills
//! directory, [`super::promotion`] makes a trained head live and puts the previous one back,
//! [`super::status`] holds the answers' types.
//!
//! Lock discipline: `Inner::active` is a read-write lock around the current [`Active`], and no
//! one holds it across HTTP. A route clones the current head and embeds its query without it;
//! an outcome holds the read lock through SQLite only (so the head cannot be replaced between
//! reservation and update); replacing the head (a new embedder, a promotion, a restore) embeds
//! every skill first if it must and takes the write lock only to save the old head, load or
//! build the new one and swap it in.
//!
//! An outcome trains only the head that ranked its route: each head has an epoch, a route
//! remembers the epoch that ranked it, and an outcome for a route of an older epoch is logged
//! (with the features and embeddings it was ranked with, a valid training example for a job)
//! and counted in its skill's track record, but trains no head. Its forward pass was computed
//! by weights that are no longer live.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, RwLock};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::active::{embed_skills, lock, Active};
use super::embedder::{Embedder, HashedEmbedder};
use super::embedder_source::EmbedderSource;
use super::head::{ForwardPass, HeadConfig, Outcome, RoutingError, SkillStats};
use super::records::{self, LoggedRoute, OutcomeRecord, RouteRecord};
use super::route_cache::{CachedRoute, Lookup, RouteCache, RouteCacheLimits};
use super::snapshot::HeadSnapshot;
use super::status::{EmbedderKind, EmbedderStatus, RouteAnswer, RoutingStatus};
use super::switching::sync_skills_forever;
use crate::config::Config;
use crate::engine::EngineError;
use crate::server::ServerProbe;
use crate::skills::{SkillSet, SkillsIndex};
use crate::store::{now_ms, Store};

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

/// Ranks skills for requests and learns from their outcomes; cheap to clone, every clone is
/// the same service.
///
/// It owns the [`SkillsIndex`] of the skills directory (skills added, edited or removed reach
/// the head within about a second), the embedder (what its [`EmbedderSource`] offers — the
/// managed server's `/v1/embeddings` in production — else [`HashedEmbedder`]), the
/// [`super::SharedRoutingHead`] of that embedder's dimension, and the forward passes of recent
/// routes. Every route and outcome is logged in SQLite before it is answered; the head is saved
/// every `persist_interval` updates and at [`RoutingService::shutdown`], and loaded at start.
///
/// When the embedder changes dimension (the server appears, goes away, or changes model) the
/// current head is saved, the skills are re-embedded and the saved head of the new dimension is
/// loaded, or a fresh one started; heads of other dimensions stay stored. A trained head goes
/// live through [`RoutingService::promote`], and back through
/// [`RoutingService::restore_previous`]. Outcomes for routes ranked by a replaced head are
/// logged but train no head.
#[derive(Clone)]
pub struct RoutingService {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) store: Store,
    pub(super) head_config: HeadConfig,
    pub(super) server: Arc<dyn ServerProbe>,
    pub(super) embedders: Arc<dyn EmbedderSource>,
    pub(super) index: Arc<SkillsIndex>,
    /// The embedder and head in use; see the module doc for who holds it, and how long.
    pub(super) active: RwLock<Arc<Active>>,
    /// Serialises the jobs that embed skills (following the directory, changing embedder), which
    /// may wait on HTTP. Routes and outcomes never take it.
    pub(super) embedding: tokio::sync::Mutex<()>,
    pub(super) routes: Mutex<RouteCache>,
    /// Every skill's track record, from the outcome log; applied to skills as they appear.
    pub(super) stats: Mutex<HashMap<String, SkillStats>>,
    recent_rewards: Mutex<VecDeque<f32>>,
    /// When the server was last asked whether it embeds.
    pub(super) last_embedder_check: Mutex<Instant>,
    pub(super) recheck_running: AtomicBool,
    shutdown: watch::Sender<bool>,
    sync_task: Mutex<Option<JoinHandle<()>>>,
}

impl RoutingService {
    /// Starts routing over the skills of `index`,
    /// rebuilds skill stats and the reward curve from the outcome log, picks the embedder (the
    /// one `embedders` offers for the managed server's reading, else the built-in one), loads
    /// the saved head of its dimension (a corrupt or mismatched one is logged and replaced by a
    /// fresh head) and embeds the skills. Must run inside a tokio runtime.
    pub async fn start(
        store: Store,
        config: &Config,
        index: Arc<SkillsIndex>,
        server: Arc<dyn ServerProbe>,
        embedders: Arc<dyn EmbedderSource>,
    ) -> Result<RoutingService, EngineError> {
        let head_config = head_config(config)?;
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
        let all: Vec<_> = skills.skills.values().collect();
        let offered = match embedders.connect(&reading).await {
            Ok(embedder) => match embed_skills(&*embedder, &all).await {
                Ok(embedded) => Ok((embedder, embedded)),
                Err(reason) => Err(reason),
            },
            Err(reason) => Err(reason),
        };
        let (embedder, kind, fallback, embedded) = match offered {
            Ok((embedder, embedded)) => (embedder, EmbedderKind::Server, None, embedded),
            Err(reason) => {
                tracing::info!("routing uses the built-in embedder: {reason}");
                let embedder = hashed();
                let embedded = embed_skills(&*embedder, &all)
                    .await
                    .map_err(EngineError::Invalid)?;
                (embedder, EmbedderKind::Hashed, Some(reason), embedded)
            }
        };
        let active = Active::set_up(
            &store,
            &head_config,
            &stats,
            embedder,
            kind,
            fallback,
            embedded,
            0,
        )
        .await?;
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
            embedders,
            active: RwLock::new(Arc::new(active)),
            embedding: tokio::sync::Mutex::new(()),
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

    /// Waits until the head follows the skills directory as the index last read it: a skill
    /// written a moment ago (an approval, a rollback) is routed from the next route on, not
    /// once the follower task catches up. Waits for an embedder switch in progress.
    pub async fn catch_up_with_skills(&self) {
        self.inner.sync_skills().await;
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
            // A clone of the current head: the query is embedded (maybe over HTTP) without
            // the lock. Should the head be replaced meanwhile, this route's outcome trains no
            // head, as for any route ranked before a replacement.
            let active = self.inner.current().await;
            let failure = match active.embedder.embed(&texts).await {
                Ok(mut vectors) if vectors.len() == 1 => break (active, vectors.remove(0)),
                Ok(vectors) => format!(
                    "embedder {} answered {} vectors for one text",
                    active.embedder.name(),
                    vectors.len()
                ),
                Err(err) => err.to_string(),
            };
            if active.kind == EmbedderKind::Hashed || attempts > 1 {
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
    /// A route ranked by a head replaced since (an embedder change, a promotion, a restore)
    /// has its outcome logged and counted in the skill's track record, and trains no head: the
    /// live head learns only from forward passes of its own weights. The agent did nothing
    /// wrong, so this is not an error; the log line says so.
    ///
    /// Errors: [`EngineError::NotFound`] for an unknown or expired route,
    /// [`EngineError::Conflict`] for a route that already has an outcome,
    /// [`EngineError::Invalid`] for a skill the route did not rank.
    pub async fn outcome(
        &self,
        route_id: &str,
        skill: &str,
        outcome: Outcome,
    ) -> Result<(), EngineError> {
        // Held throughout (SQLite only, never HTTP), so the head cannot be replaced between
        // reservation and update.
        let active = self.inner.active.read().await;
        let reserved = {
            let mut routes = lock(&self.inner.routes);
            match routes.lookup(route_id, Instant::now()) {
                Lookup::Missing => None,
                Lookup::Found(route) => Some(reserve(route, route_id, skill, &active)),
            }
        };
        let Reserved {
            pass,
            rank,
            ranked_by_live_head,
        } = match reserved {
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

        let skill_stats = {
            let mut stats = lock(&self.inner.stats);
            let entry = stats.entry(pass.skill.clone()).or_default();
            entry.uses += 1;
            entry.successes += u64::from(outcome == Outcome::Success);
            *entry
        };
        {
            let mut rewards = lock(&self.inner.recent_rewards);
            rewards.push_back(outcome.reward());
            while rewards.len() > RECENT_REWARDS {
                rewards.pop_front();
            }
        }
        if !ranked_by_live_head {
            // The track record is the outcome log's; the head's copy follows it.
            active.head.set_skill_stats(&pass.skill, skill_stats);
            tracing::info!(
                route_id,
                "outcome logged without training: its route was ranked by a routing head \
                 replaced since ({})",
                active.head_origin
            );
            return Ok(());
        }
        let applied = match active.head.apply_outcome(&pass, outcome) {
            Ok(applied) => applied,
            // The agent's report is fine, and logged; only the head refused to learn from it,
            // so its copy of the track record follows the log here.
            Err(err @ RoutingError::NonFiniteUpdate { .. }) => {
                active.head.set_skill_stats(&pass.skill, skill_stats);
                tracing::warn!(route_id, "outcome logged without training: {err}");
                return Ok(());
            }
            Err(err) => return Err(EngineError::Invalid(err.to_string())),
        };
        if applied.persist_due {
            active.persist(&self.inner.store).await?;
        }
        Ok(())
    }

    /// The routing section of the status view. Also a moment to notice that the managed server
    /// now embeds (at most every [`EMBEDDER_RECHECK_INTERVAL`]).
    pub async fn status(&self) -> Result<RoutingStatus, EngineError> {
        self.inner.maybe_recheck_embedder();
        let saved_heads = self.inner.store.call(|c| records::saved_heads(c)).await?;
        let active = self.inner.current().await;
        let head = active.head.status();
        let fallback_reason = lock(&active.fallback_reason).clone();
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
                fallback_reason,
            },
            dim: head.dim,
            skills: head.skill_count,
            skills_dir: skills.dir.clone(),
            skipped_skills: skills.skipped.clone(),
            updates: head.update_count,
            warmed_up: head.warmed_up,
            warmup_updates: self.inner.head_config.warmup_updates,
            persisted_updates: active.persisted(),
            save_problem: active.save_problem(),
            head_origin: active.head_origin.clone(),
            head_source: active.source.clone(),
            baseline: head.baseline,
            recent_rewards,
            recent_success_rate,
            saved_heads,
            cached_routes: lock(&self.inner.routes).len(),
        })
    }

    /// The live head's weights, baseline and update count, taken under one lock: what a
    /// training job measures its head against, and what a promotion would keep.
    pub async fn head_snapshot(&self) -> HeadSnapshot {
        self.inner.current().await.head.snapshot()
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
        if active.unsaved() {
            active.persist(&self.inner.store).await?;
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
    /// The current embedder and head, without keeping the lock.
    pub(super) async fn current(&self) -> Arc<Active> {
        self.active.read().await.clone()
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
}

pub(super) fn hashed() -> Arc<dyn Embedder> {
    Arc::new(HashedEmbedder::default())
}

/// A route's outcome slot, taken for one skill.
struct Reserved {
    /// The skill's forward pass when the route was ranked.
    pass: ForwardPass,
    /// Its place in the ranking, 0-based.
    rank: usize,
    /// Whether the live head ranked the route (only then may the outcome train it).
    ranked_by_live_head: bool,
}

/// Takes `route`'s outcome slot for `skill`, or says why not.
fn reserve(
    route: &mut CachedRoute,
    route_id: &str,
    skill: &str,
    active: &Active,
) -> Result<Reserved, EngineError> {
    if route.decided {
        return Err(already_decided(route_id));
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
    Ok(Reserved {
        pass: route.passes[rank].clone(),
        rank,
        ranked_by_live_head: route.epoch == active.epoch,
    })
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
