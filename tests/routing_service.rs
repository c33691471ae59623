//! The routing service (issue 5, DESIGN §2.3): skills from the live skills directory, the
//! embedder choice (the managed server's `/v1/embeddings`, else the built-in one), route and
//! outcome with their 404 / 409 cases, the head saved every `persist_interval` updates and
//! reloaded, a dimension change that keeps the old head, and no lost update across 8
//! concurrent sessions. Issue 11: saves guarded by the head's identity and reported only when
//! they happened; no route waits while a slow embedder re-embeds the skills; the built-in-only
//! seam asks no server. Issue 14: promoting a trained head (whatever its update count) and
//! restoring the one it replaced, each kept in `routing_head_versions`, surviving a restart;
//! an outcome for a route ranked by a replaced head is logged but trains no head.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use lull::config::Config;
use lull::routing::{
    BuiltInEmbedderOnly, EmbedError, Embedder, EmbedderKind, EmbedderSource, HashedEmbedder,
    HeadConfig, HeadSnapshot, HeadSource, Outcome, RoutingHead, RoutingService, RoutingStatus,
    ServerEmbedderSource, BUILT_IN_ONLY_REASON, EMBEDDER_RECHECK_INTERVAL, ROUTE_TTL,
};
use lull::server::{HttpProbe, ManualProbe, ProbeConfig, ServerProbe, ServerReading, ServerState};
use lull::skills::SkillsIndex;
use lull::store::Store;
use lull::EngineError;
use lull_stand_in::{Endpoint, ModelStatus, StandIn, StandInConfig};
use tempfile::TempDir;

/// What "shows up within 2 s" allows.
const LIVE_DEADLINE: Duration = Duration::from_secs(2);

/// A data directory with a database, and the configuration routing starts with.
struct Harness {
    data: TempDir,
    store: Store,
    config: Config,
}

impl Harness {
    fn new() -> Harness {
        let data = tempfile::tempdir().unwrap();
        let store = Store::open(&data.path().join("lull.db")).unwrap();
        Harness::with_store(data, store)
    }

    fn in_memory() -> Harness {
        Harness::with_store(
            tempfile::tempdir().unwrap(),
            Store::open_in_memory().unwrap(),
        )
    }

    fn with_store(data: TempDir, store: Store) -> Harness {
        let mut config = Config::default();
        config.routing.persist_interval = 10;
        // Never the developer's own supervisor state file.
        config.server.state_file = data.path().join("no-supervisor/server.json");
        let harness = Harness {
            data,
            store,
            config,
        };
        harness.skill(
            "deploy",
            "Deploy a web service to the staging or production cluster.",
        );
        harness.skill("haiku", "Write a short poem about nature, in three lines.");
        harness
    }

    fn skills_dir(&self) -> std::path::PathBuf {
        self.config.skills_dir(self.data.path())
    }

    fn skill(&self, name: &str, description: &str) {
        let folder = self.skills_dir().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nSteps.\n"),
        )
        .unwrap();
    }

    /// Routing with the production embedder source, over `server`.
    async fn start(&self, server: Arc<dyn ServerProbe>) -> RoutingService {
        self.start_with(server, Arc::new(ServerEmbedderSource))
            .await
    }

    async fn start_with(
        &self,
        server: Arc<dyn ServerProbe>,
        embedders: Arc<dyn EmbedderSource>,
    ) -> RoutingService {
        let skills = SkillsIndex::open(&self.config.skills_dir(self.data.path()))
            .await
            .unwrap();
        RoutingService::start(self.store.clone(), &self.config, skills, server, embedders)
            .await
            .unwrap()
    }

    async fn start_offline(&self) -> RoutingService {
        self.start(absent()).await
    }

    async fn count(&self, sql: &'static str) -> i64 {
        self.store
            .call(move |c| Ok(c.query_row(sql, [], |row| row.get(0))?))
            .await
            .unwrap()
    }
}

fn absent() -> Arc<dyn ServerProbe> {
    Arc::new(ManualProbe::new(ServerReading::not_ready(
        ServerState::Absent,
        None,
        "no state file: the managed server is not running",
    )))
}

/// A stand-in server announced by a state file, read through the real HTTP probe.
async fn stand_in(config: StandInConfig, data: &Path) -> (StandIn, Arc<dyn ServerProbe>) {
    let server = StandIn::start(config).await.unwrap();
    let state_file = data.join("runtime").join("server.json");
    server
        .write_state_file(&state_file, std::process::id())
        .unwrap();
    let probe = HttpProbe::new(&state_file, ProbeConfig::default()).unwrap();
    (server, Arc::new(probe))
}

/// Routes `query` and reports `outcome` for its top skill, `times` times.
async fn learn(service: &RoutingService, query: &str, outcome: Outcome, times: usize) {
    for _ in 0..times {
        let answer = service.route(query, None).await.unwrap();
        service
            .outcome(&answer.route_id, &answer.ranked[0].skill, outcome)
            .await
            .unwrap();
    }
}

async fn status(service: &RoutingService) -> RoutingStatus {
    service.status().await.unwrap()
}

fn saved_updates(status: &RoutingStatus, dim: usize) -> Option<u64> {
    status
        .saved_heads
        .iter()
        .find(|head| head.dim == dim)
        .map(|head| head.update_count)
}

/// Polls `route` until `check` holds on the ranked skill names, for at most [`LIVE_DEADLINE`].
async fn wait_for_ranking(
    service: &RoutingService,
    query: &str,
    what: &str,
    check: impl Fn(&[String]) -> bool,
) {
    let start = Instant::now();
    loop {
        let answer = service.route(query, Some(10)).await.unwrap();
        let names: Vec<String> = answer.ranked.into_iter().map(|r| r.skill).collect();
        if check(&names) {
            return;
        }
        assert!(
            start.elapsed() < LIVE_DEADLINE,
            "{what} not seen by routing within {LIVE_DEADLINE:?}: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn routes_the_skills_of_the_directory_and_follows_its_changes() {
    let harness = Harness::new();
    let service = harness.start_offline().await;

    let answer = service
        .route("please deploy my service to staging", None)
        .await
        .unwrap();
    assert_eq!(answer.ranked.len(), 2);
    assert_eq!(answer.ranked[0].skill, "deploy");
    assert!(answer.ranked[0].cosine > answer.ranked[1].cosine);
    // Before warm-up the score is the cosine.
    assert_eq!(answer.ranked[0].score, answer.ranked[0].cosine);
    let json = serde_json::to_value(&answer).unwrap();
    let keys: Vec<&str> = json["ranked"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["cosine", "rl", "score", "skill"]);
    assert!(json["route_id"].is_string());

    harness.skill(
        "git-bisect",
        "Find the commit that broke a test with git bisect.",
    );
    wait_for_ranking(
        &service,
        "which commit broke the test? git bisect",
        "an added skill",
        |names| names.first().map(String::as_str) == Some("git-bisect"),
    )
    .await;

    harness.skill("haiku", "Deploy poems to the staging cluster of poetry.");
    wait_for_ranking(&service, "deploy poems", "an edited skill", |names| {
        names.first().map(String::as_str) == Some("haiku")
    })
    .await;

    std::fs::remove_dir_all(harness.skills_dir().join("haiku")).unwrap();
    wait_for_ranking(&service, "deploy poems", "a removed skill", |names| {
        !names.iter().any(|name| name == "haiku")
    })
    .await;

    std::fs::create_dir_all(harness.skills_dir().join("broken")).unwrap();
    std::fs::write(
        harness.skills_dir().join("broken/SKILL.md"),
        "---\nname: other\n---\n",
    )
    .unwrap();
    let start = Instant::now();
    while status(&service).await.skipped_skills.is_empty() {
        assert!(
            start.elapsed() < LIVE_DEADLINE,
            "the malformed skill is reported"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let status = status(&service).await;
    assert_eq!(status.skills, 2);
    assert_eq!(status.skipped_skills[0].folder, "broken");
    assert!(status.skipped_skills[0].reason.contains("does not match"));
    assert!(harness.count("SELECT COUNT(*) FROM routing_routes").await >= 4);
}

#[tokio::test]
async fn outcomes_for_unknown_decided_or_unranked_routes_are_refused() {
    let harness = Harness::new();
    let service = harness.start_offline().await;

    let err = service
        .outcome("no-such-route", "deploy", Outcome::Success)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::NotFound(message) if message.contains("no route no-such-route")),
        "{err:?}"
    );

    let answer = service.route("deploy to staging", Some(1)).await.unwrap();
    assert_eq!(answer.ranked.len(), 1);
    let err = service
        .outcome(&answer.route_id, "haiku", Outcome::Success)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::Invalid(message) if message.contains("was not ranked")),
        "{err:?}"
    );

    service
        .outcome(&answer.route_id, "deploy", Outcome::Success)
        .await
        .unwrap();
    let err = service
        .outcome(&answer.route_id, "deploy", Outcome::Failure)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::Conflict(message) if message.contains("already has an outcome")),
        "{err:?}"
    );
    assert_eq!(status(&service).await.updates, 1);
    assert_eq!(
        harness
            .count(
                "SELECT COUNT(*) FROM routing_outcomes WHERE outcome = 'success' AND reward = 1.0"
            )
            .await,
        1
    );

    for (query, top_k) in [("  ", None), ("deploy", Some(0)), ("deploy", Some(1000))] {
        let err = service.route(query, top_k).await.unwrap_err();
        assert!(
            matches!(err, EngineError::Invalid(_)),
            "{query:?} {top_k:?}: {err:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_expired_route_is_not_found_and_a_decided_one_stays_a_conflict() {
    let harness = Harness::in_memory();
    let service = harness.start_offline().await;
    let open = service.route("deploy to staging", None).await.unwrap();
    let decided = service.route("deploy to production", None).await.unwrap();
    service
        .outcome(&decided.route_id, "deploy", Outcome::Success)
        .await
        .unwrap();

    tokio::time::advance(ROUTE_TTL + Duration::from_secs(1)).await;

    let err = service
        .outcome(&open.route_id, "deploy", Outcome::Success)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::NotFound(message) if message.contains("expired")),
        "{err:?}"
    );
    let err = service
        .outcome(&decided.route_id, "deploy", Outcome::Success)
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Conflict(_)), "{err:?}");
}

#[tokio::test]
async fn the_head_is_saved_every_persist_interval_and_reloaded_with_its_stats() {
    let harness = Harness::new();
    let service = harness.start_offline().await;
    let fresh = status(&service).await;
    assert_eq!(fresh.embedder.kind, EmbedderKind::Hashed);
    assert!(
        fresh.head_origin.contains("fresh head"),
        "{}",
        fresh.head_origin
    );
    assert_eq!(saved_updates(&fresh, 384), None);

    learn(&service, "deploy to staging", Outcome::Success, 9).await;
    assert_eq!(saved_updates(&status(&service).await, 384), None);
    learn(&service, "deploy to staging", Outcome::Success, 1).await;
    assert_eq!(saved_updates(&status(&service).await, 384), Some(10));
    learn(&service, "deploy to staging", Outcome::Success, 15).await;
    let before = status(&service).await;
    assert_eq!(before.updates, 25);
    assert_eq!(before.persisted_updates, 20);
    assert_eq!(saved_updates(&before, 384), Some(20));
    assert_eq!(before.recent_rewards.len(), 25);

    // A crash (no shutdown) loses only the updates since the last save.
    drop(service);
    let service = harness.start_offline().await;
    let reloaded = status(&service).await;
    assert_eq!(reloaded.updates, 20);
    assert!(
        reloaded
            .head_origin
            .contains("saved head loaded (20 updates"),
        "{}",
        reloaded.head_origin
    );
    // Skill stats and the reward curve come back from the outcome log, all 25 outcomes.
    assert_eq!(reloaded.recent_rewards, vec![1.0; 25]);
    service.route("deploy to staging", None).await.unwrap();
    let candidates: String = harness
        .store
        .call(|c| {
            Ok(c.query_row(
                "SELECT candidates FROM routing_routes ORDER BY rowid DESC LIMIT 1",
                [],
                |row| row.get(0),
            )?)
        })
        .await
        .unwrap();
    let candidates: serde_json::Value = serde_json::from_str(&candidates).unwrap();
    let deploy = &candidates[0];
    assert_eq!(deploy["skill"], "deploy");
    assert!((deploy["success_rate"].as_f64().unwrap() - 26.0 / 27.0).abs() < 1e-6);
    assert!((deploy["log_uses"].as_f64().unwrap() - 26f64.ln()).abs() < 1e-5);

    // Shutdown saves what was learned since the last save.
    learn(&service, "deploy to staging", Outcome::Failure, 3).await;
    service.shutdown().await.unwrap();
    assert_eq!(saved_updates(&status(&service).await, 384), Some(23));
}

/// Saves a 384-dimensional head whose bytes do not decode (a truncated snapshot), claiming
/// `update_count` updates.
async fn store_unusable_head(harness: &Harness, update_count: i64) {
    harness
        .store
        .call(move |c| {
            c.execute(
                "INSERT INTO routing_heads (dim, embedder, snapshot, update_count, head_id, created_at, updated_at)
                 VALUES (384, 'hashed-ngrams-v1', x'4c554c4c48454144deadbeef', ?1, 5, 5, 5)",
                [update_count],
            )?;
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn a_corrupt_saved_head_starts_a_fresh_one_with_the_reason() {
    let harness = Harness::new();
    store_unusable_head(&harness, 7).await;
    let service = harness.start_offline().await;
    let status = status(&service).await;
    assert_eq!(status.updates, 0);
    assert!(
        status.head_origin.contains("the saved one was unusable")
            && status.head_origin.contains("truncated"),
        "{}",
        status.head_origin
    );
    learn(&service, "deploy", Outcome::Success, 10).await;
    assert_eq!(
        saved_updates(&service.status().await.unwrap(), 384),
        Some(10)
    );
}

/// Issue 11 item 5: a corrupt saved head whose update count is far above `persist_interval`
/// used to block every save of the fresh head that replaced it, while the status said saved.
#[tokio::test]
async fn a_fresh_head_replaces_an_unusable_one_saved_with_a_count_above_persist_interval() {
    let harness = Harness::new();
    store_unusable_head(&harness, 1000).await;
    let service = harness.start_offline().await;
    assert!(status(&service)
        .await
        .head_origin
        .contains("the saved one was unusable"));

    learn(&service, "deploy to staging", Outcome::Success, 10).await;
    let saved = status(&service).await;
    assert_eq!(
        saved_updates(&saved, 384),
        Some(10),
        "the fresh head replaced it"
    );
    assert_eq!(saved.persisted_updates, 10);
    assert_eq!(saved.save_problem, None);
    learn(&service, "deploy to staging", Outcome::Success, 10).await;
    assert_eq!(saved_updates(&status(&service).await, 384), Some(20));

    drop(service);
    let reloaded = status(&harness.start_offline().await).await;
    assert_eq!(reloaded.updates, 20);
    assert!(
        reloaded
            .head_origin
            .contains("saved head loaded (20 updates"),
        "{}",
        reloaded.head_origin
    );
}

/// Issue 11 item 5: a save that does not happen is not reported as one. Two heads of one
/// dimension (two engines on one database, or a head promoted over a live one): the one
/// stored first is never overwritten by the other, which says why it is not saved.
#[tokio::test]
async fn a_save_that_does_not_happen_is_reported_and_leaves_the_other_head_alone() {
    let harness = Harness::new();
    let first = harness.start_offline().await;
    let second = harness.start_offline().await;

    learn(&first, "deploy to staging", Outcome::Success, 10).await;
    assert_eq!(status(&first).await.persisted_updates, 10);

    learn(&second, "a poem please", Outcome::Failure, 20).await;
    let refused = status(&second).await;
    assert_eq!(refused.updates, 20);
    assert_eq!(refused.persisted_updates, 0, "nothing of it was saved");
    let problem = refused.save_problem.clone().expect("the status says why");
    assert!(
        problem.contains("another one") && problem.contains("10 updates"),
        "{problem}"
    );
    assert_eq!(
        saved_updates(&refused, 384),
        Some(10),
        "the first head stays stored"
    );
    second.shutdown().await.unwrap();
    assert_eq!(saved_updates(&status(&second).await, 384), Some(10));

    // The stored head's own saves go on.
    learn(&first, "deploy to staging", Outcome::Success, 10).await;
    let stored = status(&first).await;
    assert_eq!(saved_updates(&stored, 384), Some(20));
    assert_eq!(stored.persisted_updates, 20);
    assert_eq!(stored.save_problem, None);
}

/// Offers no embedder until one is set.
#[derive(Default)]
struct Offer {
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
}

impl EmbedderSource for Offer {
    fn connect<'a>(
        &'a self,
        _reading: &'a ServerReading,
    ) -> BoxFuture<'a, Result<Arc<dyn Embedder>, String>> {
        let offered = self.embedder.lock().unwrap().clone();
        Box::pin(async move { offered.ok_or_else(|| "nothing offered yet".to_owned()) })
    }
}

/// A built-in embedder of another dimension that, while `held`, stops before embedding more
/// than one text (the skills, not a query) until released: a server re-embedding slowly.
struct SlowEmbedder {
    inner: HashedEmbedder,
    held: AtomicBool,
    started: tokio::sync::Notify,
    release: tokio::sync::Notify,
}

impl Embedder for SlowEmbedder {
    fn name(&self) -> &str {
        "slow"
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            if texts.len() > 1 && self.held.load(Ordering::SeqCst) {
                self.started.notify_one();
                self.release.notified().await;
            }
            self.inner.embed(texts).await
        })
    }
}

/// Issue 11 item 5: the embedder recheck re-embedded every skill under the write lock, and
/// every route and outcome waited meanwhile.
#[tokio::test(start_paused = true)]
async fn routes_and_outcomes_answer_while_a_slow_embedder_re_embeds_the_skills() {
    const ANSWER_WITHIN: Duration = Duration::from_secs(1);
    let harness = Harness::in_memory();
    let offer = Arc::new(Offer::default());
    let service = harness.start_with(absent(), offer.clone()).await;
    assert_eq!(status(&service).await.embedder.kind, EmbedderKind::Hashed);

    let slow = Arc::new(SlowEmbedder {
        inner: HashedEmbedder::new(32),
        held: AtomicBool::new(true),
        started: tokio::sync::Notify::new(),
        release: tokio::sync::Notify::new(),
    });
    *offer.embedder.lock().unwrap() = Some(slow.clone());
    tokio::time::advance(EMBEDDER_RECHECK_INTERVAL + Duration::from_secs(1)).await;
    status(&service).await; // the recheck starts in the background
    slow.started.notified().await;

    let answer = tokio::time::timeout(ANSWER_WITHIN, service.route("deploy to staging", None))
        .await
        .expect("a route answers while the skills are re-embedded")
        .unwrap();
    assert_eq!(answer.ranked[0].skill, "deploy");
    tokio::time::timeout(
        ANSWER_WITHIN,
        service.outcome(&answer.route_id, "deploy", Outcome::Success),
    )
    .await
    .expect("an outcome is taken while the skills are re-embedded")
    .unwrap();
    let during = tokio::time::timeout(ANSWER_WITHIN, service.status())
        .await
        .expect("the status answers meanwhile")
        .unwrap();
    assert_eq!(during.embedder.kind, EmbedderKind::Hashed);
    assert_eq!(during.updates, 1);
    let ranked_by_the_old_head = service.route("a poem please", None).await.unwrap();

    // Released, the new embedder's head is swapped in; the old head was saved first.
    slow.held.store(false, Ordering::SeqCst);
    slow.release.notify_one();
    let mut switched = status(&service).await;
    for _ in 0..100 {
        if switched.embedder.name == "slow" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        switched = status(&service).await;
    }
    assert_eq!(switched.embedder.name, "slow");
    assert_eq!(switched.embedder.kind, EmbedderKind::Server);
    assert_eq!(switched.dim, 32);
    assert_eq!(switched.skills, 2);
    assert_eq!(saved_updates(&switched, 384), Some(1));
    let answer = service.route("deploy to staging", None).await.unwrap();
    assert_eq!(answer.ranked[0].skill, "deploy");

    // Decided after the switch, the old head's route is logged and trains neither head.
    service
        .outcome(&ranked_by_the_old_head.route_id, "haiku", Outcome::Success)
        .await
        .unwrap();
    let after = status(&service).await;
    assert_eq!(after.updates, 0);
    assert_eq!(saved_updates(&after, 384), Some(1));
    assert_eq!(
        harness.count("SELECT COUNT(*) FROM routing_outcomes").await,
        2
    );
}

/// Issue 11 item 8: with the built-in-only seam (what the engine's tests pass), a server that
/// is ready and embeds is never asked for embeddings.
#[tokio::test]
async fn the_built_in_only_seam_never_asks_the_server_for_embeddings() {
    let harness = Harness::new();
    let (server, probe) = stand_in(StandInConfig::single("tiny"), harness.data.path()).await;
    let service = harness
        .start_with(probe, Arc::new(BuiltInEmbedderOnly))
        .await;
    service.route("deploy to staging", None).await.unwrap();
    let status = status(&service).await;
    assert_eq!(status.embedder.kind, EmbedderKind::Hashed);
    assert_eq!(
        status.embedder.fallback_reason.as_deref(),
        Some(BUILT_IN_ONLY_REASON)
    );
    assert_eq!(server.requests(Endpoint::Embeddings), 0);
}

#[tokio::test]
async fn the_server_embedder_is_used_when_the_server_embeds() {
    let harness = Harness::new();
    let (server, probe) = stand_in(
        StandInConfig::single("tiny").with_api_key("sesame"),
        harness.data.path(),
    )
    .await;
    let service = harness.start(probe).await;
    let started = status(&service).await;
    assert_eq!(started.embedder.kind, EmbedderKind::Server);
    assert_eq!(started.embedder.name, "server:tiny");
    assert_eq!(started.embedder.dim, 64);
    assert_eq!(started.dim, 64);
    assert_eq!(started.skills, 2);
    assert_eq!(started.embedder.fallback_reason, None);

    let before = server.requests(Endpoint::Embeddings);
    let answer = service.route("deploy to staging", None).await.unwrap();
    assert_eq!(answer.ranked.len(), 2);
    assert_eq!(server.requests(Endpoint::Embeddings), before + 1);
    service
        .outcome(&answer.route_id, &answer.ranked[0].skill, Outcome::Success)
        .await
        .unwrap();

    // The server goes away: routing carries on with the built-in embedder.
    server.stop().await;
    let answer = service.route("deploy to staging", None).await.unwrap();
    assert_eq!(answer.ranked[0].skill, "deploy");
    let after = status(&service).await;
    assert_eq!(after.embedder.kind, EmbedderKind::Hashed);
    assert_eq!(after.dim, 384);
    assert!(after.embedder.fallback_reason.is_some());
    // The server's head was saved before the switch.
    assert_eq!(saved_updates(&after, 64), Some(1));
}

#[tokio::test]
async fn the_built_in_embedder_is_used_when_the_server_does_not_embed() {
    let harness = Harness::new();
    let offline = harness.start_offline().await;
    let status_offline = status(&offline).await;
    assert_eq!(status_offline.embedder.kind, EmbedderKind::Hashed);
    assert_eq!(status_offline.embedder.name, "hashed-ngrams-v1");
    assert!(status_offline
        .embedder
        .fallback_reason
        .unwrap()
        .contains("absent"));
    offline.shutdown().await.unwrap();
    drop(offline);

    let (_server, probe) = stand_in(
        StandInConfig::single("chat-only").without_embeddings(),
        harness.data.path(),
    )
    .await;
    let service = harness.start(probe).await;
    let status = status(&service).await;
    assert_eq!(status.embedder.kind, EmbedderKind::Hashed);
    assert_eq!(status.dim, 384);
    let reason = status.embedder.fallback_reason.unwrap();
    assert!(
        reason.contains("501") && reason.contains("embeddings"),
        "{reason}"
    );
}

#[tokio::test]
async fn router_mode_embeds_with_a_loaded_model_and_never_wakes_one() {
    let harness = Harness::new();
    let (server, probe) = stand_in(
        StandInConfig::router([
            ("sleepy", ModelStatus::Sleeping),
            ("embedder", ModelStatus::Loaded),
        ]),
        harness.data.path(),
    )
    .await;
    let service = harness.start(probe).await;
    assert_eq!(status(&service).await.embedder.name, "server:embedder");
    service.route("deploy to staging", None).await.unwrap();
    assert!(server.loads().is_empty(), "{:?}", server.loads());
    assert!(server
        .request_log()
        .iter()
        .filter(|request| request.endpoint == Endpoint::Embeddings)
        .all(|request| request.query.as_deref() == Some("autoload=false")));

    // Its model unloaded since: the request is refused rather than loading it, and routing
    // falls back.
    server.set_model_status("embedder", ModelStatus::Unloaded);
    service.route("deploy to staging", None).await.unwrap();
    assert!(server.loads().is_empty(), "{:?}", server.loads());
    assert_eq!(status(&service).await.embedder.kind, EmbedderKind::Hashed);
}

#[tokio::test]
async fn a_dimension_change_starts_a_fresh_head_and_keeps_the_old_one() {
    let harness = Harness::new();
    let hashed = harness.start_offline().await;
    learn(&hashed, "deploy to staging", Outcome::Success, 12).await;
    hashed.shutdown().await.unwrap();
    drop(hashed);

    let (server, probe) = stand_in(StandInConfig::single("tiny"), harness.data.path()).await;
    let served = harness.start(probe).await;
    let status_served = status(&served).await;
    assert_eq!(status_served.dim, 64);
    assert_eq!(status_served.updates, 0);
    assert!(
        status_served
            .head_origin
            .contains("no saved head for 64-dimensional"),
        "{}",
        status_served.head_origin
    );
    assert_eq!(saved_updates(&status_served, 384), Some(12));
    learn(&served, "deploy to staging", Outcome::Failure, 5).await;
    served.shutdown().await.unwrap();
    drop(served);
    server.stop().await;

    let back = harness.start_offline().await;
    let status_back = status(&back).await;
    assert_eq!(status_back.dim, 384);
    assert_eq!(status_back.updates, 12);
    assert_eq!(saved_updates(&status_back, 64), Some(5));
    assert_eq!(saved_updates(&status_back, 384), Some(12));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_sessions_lose_no_update() {
    const SESSIONS: usize = 8;
    const OUTCOMES: usize = 1000;
    let harness = Harness::new();
    harness.skill("git-bisect", "Find the commit that broke a test.");
    harness.skill("sql-tuning", "Make a slow SQL query fast.");
    let service = harness.start_offline().await;

    let sessions: Vec<_> = (0..SESSIONS)
        .map(|session| {
            let service = service.clone();
            tokio::spawn(async move {
                let queries = [
                    "deploy to staging",
                    "a poem please",
                    "slow query",
                    "broken test",
                ];
                for turn in 0..OUTCOMES {
                    let query = queries[(session + turn) % queries.len()];
                    let answer = service.route(query, Some(3)).await.unwrap();
                    let chosen = &answer.ranked[turn % answer.ranked.len()].skill;
                    let outcome = if turn % 3 == 0 {
                        Outcome::Failure
                    } else {
                        Outcome::Success
                    };
                    service
                        .outcome(&answer.route_id, chosen, outcome)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for session in sessions {
        session.await.unwrap();
    }

    let total = (SESSIONS * OUTCOMES) as u64;
    let status = status(&service).await;
    assert_eq!(status.updates, total);
    assert!(status.warmed_up);
    assert_eq!(saved_updates(&status, 384), Some(total));
    assert_eq!(
        harness.count("SELECT COUNT(*) FROM routing_outcomes").await,
        total as i64
    );
    assert_eq!(
        harness.count("SELECT COUNT(*) FROM routing_routes").await,
        total as i64
    );
}

/// A head as a training job would hand it over: other weights than the live head's (another
/// seed), and `update_count` updates.
fn trained_head(update_count: u64) -> HeadSnapshot {
    let mut snapshot = RoutingHead::new(
        384,
        HeadConfig {
            seed: 14,
            ..HeadConfig::default()
        },
    )
    .snapshot();
    snapshot.update_count = update_count;
    snapshot.baseline = 0.25;
    snapshot
}

/// A row of `routing_head_versions`, decoded.
#[derive(Debug)]
struct KeptHead {
    dim: i64,
    snapshot: HeadSnapshot,
    update_count: i64,
    head_id: i64,
    source: String,
    replaced_by: String,
}

async fn kept_heads(harness: &Harness) -> Vec<KeptHead> {
    harness
        .store
        .call(|c| {
            let mut statement = c.prepare(
                "SELECT dim, snapshot, update_count, head_id, source, replaced_by
                 FROM routing_head_versions ORDER BY id",
            )?;
            let rows = statement
                .query_map([], |row| {
                    let bytes: Vec<u8> = row.get(1)?;
                    Ok(KeptHead {
                        dim: row.get(0)?,
                        snapshot: HeadSnapshot::from_bytes(&bytes, 384).unwrap(),
                        update_count: row.get(2)?,
                        head_id: row.get(3)?,
                        source: row.get(4)?,
                        replaced_by: row.get(5)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
        .await
        .unwrap()
}

async fn stored_head_id(harness: &Harness) -> i64 {
    harness
        .count("SELECT head_id FROM routing_heads WHERE dim = 384")
        .await
}

/// Issue 14: the save guard kept `update_count` monotonic per dimension, so a promoted head with
/// fewer updates than the live one would never have been saved.
#[tokio::test]
async fn a_promoted_head_with_fewer_updates_is_live_saved_and_survives_a_restart() {
    let harness = Harness::new();
    let service = harness.start_offline().await;
    learn(&service, "deploy to staging", Outcome::Success, 25).await;
    let previous = service.head_snapshot().await;
    assert_eq!(previous.update_count, 25);
    let previous_id = stored_head_id(&harness).await;

    let trained = trained_head(3);
    let promoted = service.promote(trained.clone(), "job:j1").await.unwrap();
    assert_eq!(promoted.dim, 384);
    assert_eq!(promoted.source, HeadSource::Job("j1".into()));
    assert_eq!(promoted.update_count, 3);
    assert_eq!(promoted.replaced.source, HeadSource::Online);
    assert_eq!(
        promoted.replaced.update_count, 25,
        "unsaved updates included"
    );

    assert_eq!(service.head_snapshot().await, trained);
    let live = status(&service).await;
    assert_eq!(live.updates, 3);
    assert_eq!(live.skills, 2, "the live skills are re-attached");
    assert_eq!(live.persisted_updates, 3);
    assert_eq!(live.save_problem, None);
    assert_eq!(saved_updates(&live, 384), Some(3));
    assert_eq!(live.head_source, HeadSource::Job("j1".into()));
    assert!(
        live.head_origin
            .contains("promoted from job:j1 (3 updates), replacing the online head (25 updates)"),
        "{}",
        live.head_origin
    );
    let json = serde_json::to_value(&live).unwrap();
    assert_eq!(json["head_source"], "job:j1");
    assert!(
        stored_head_id(&harness).await > previous_id,
        "a new identity"
    );

    let kept = kept_heads(&harness).await;
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].dim, 384);
    assert_eq!(kept[0].snapshot, previous);
    assert_eq!(kept[0].update_count, 25);
    assert_eq!(kept[0].head_id, previous_id);
    assert_eq!(kept[0].source, "online");
    assert_eq!(kept[0].replaced_by, "job:j1");

    // A restart loads the promoted head, weights and count.
    drop(service);
    let service = harness.start_offline().await;
    let reloaded = status(&service).await;
    assert_eq!(reloaded.updates, 3);
    assert_eq!(reloaded.head_source, HeadSource::Job("j1".into()));
    assert_eq!(service.head_snapshot().await, trained);

    // It learns online, and its saves go on (its count only has to grow within its identity).
    learn(&service, "deploy to staging", Outcome::Success, 7).await;
    let saved = status(&service).await;
    assert_eq!(saved_updates(&saved, 384), Some(10));
    assert_eq!(saved.persisted_updates, 10);
    assert_eq!(saved.save_problem, None);
    assert_eq!(saved.head_source, HeadSource::Job("j1".into()));
}

#[tokio::test]
async fn an_outcome_for_a_route_ranked_before_the_promotion_trains_no_head() {
    let harness = Harness::new();
    let service = harness.start_offline().await;
    let before = service.route("deploy to staging", None).await.unwrap();
    let trained = trained_head(3);
    service.promote(trained.clone(), "job:j1").await.unwrap();

    // Logged (a training example for the next job) and counted in the skill's track record,
    // but the new head's weights stay the promoted ones.
    service
        .outcome(&before.route_id, "deploy", Outcome::Success)
        .await
        .unwrap();
    assert_eq!(service.head_snapshot().await, trained);
    let after_stale = status(&service).await;
    assert_eq!(after_stale.updates, 3);
    assert_eq!(after_stale.recent_rewards, vec![1.0]);
    assert_eq!(
        harness
            .count("SELECT COUNT(*) FROM routing_outcomes WHERE skill = 'deploy'")
            .await,
        1
    );
    let err = service
        .outcome(&before.route_id, "deploy", Outcome::Failure)
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Conflict(_)), "{err:?}");

    // A route ranked after the promotion trains it.
    let after = service.route("deploy to staging", None).await.unwrap();
    let candidates: String = harness
        .store
        .call(|c| {
            Ok(c.query_row(
                "SELECT candidates FROM routing_routes ORDER BY rowid DESC LIMIT 1",
                [],
                |row| row.get(0),
            )?)
        })
        .await
        .unwrap();
    let candidates: serde_json::Value = serde_json::from_str(&candidates).unwrap();
    assert_eq!(candidates[0]["skill"], "deploy");
    assert!(
        (candidates[0]["success_rate"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-6,
        "the stale outcome is in the new head's track record: {candidates}"
    );
    service
        .outcome(&after.route_id, "deploy", Outcome::Success)
        .await
        .unwrap();
    let trained_further = service.head_snapshot().await;
    assert_eq!(trained_further.update_count, 4);
    assert_ne!(trained_further.first_layer, trained.first_layer);
    assert_ne!(trained_further.output, trained.output);
}

#[tokio::test]
async fn restore_previous_brings_the_replaced_head_back_and_keeps_the_promoted_one() {
    let harness = Harness::new();
    let service = harness.start_offline().await;
    let err = service.restore_previous().await.unwrap_err();
    assert!(
        matches!(&err, EngineError::NotFound(message) if message.contains("no 384-dimensional routing head to restore")),
        "{err:?}"
    );

    learn(&service, "deploy to staging", Outcome::Success, 12).await;
    let online = service.head_snapshot().await;
    service.promote(trained_head(3), "job:j2").await.unwrap();
    learn(&service, "a poem please", Outcome::Failure, 2).await;
    let promoted = service.head_snapshot().await;
    assert_eq!(promoted.update_count, 5);
    let before_restore = service.route("deploy to staging", None).await.unwrap();

    let restored = service.restore_previous().await.unwrap();
    assert_eq!(restored.source, HeadSource::Online);
    assert_eq!(restored.update_count, 12);
    assert_eq!(restored.replaced.source, HeadSource::Job("j2".into()));
    assert_eq!(restored.replaced.update_count, 5);
    assert_eq!(
        service.head_snapshot().await,
        online,
        "two unsaved updates included"
    );
    let live = status(&service).await;
    assert_eq!(live.head_source, HeadSource::Online);
    assert_eq!(saved_updates(&live, 384), Some(12));
    assert!(
        live.head_origin
            .contains("restored the online head (12 updates) that job:j2 replaced"),
        "{}",
        live.head_origin
    );
    service
        .outcome(&before_restore.route_id, "deploy", Outcome::Success)
        .await
        .unwrap();
    assert_eq!(service.head_snapshot().await, online);

    let kept = kept_heads(&harness).await;
    assert_eq!(kept.len(), 2);
    assert_eq!(kept[1].snapshot, promoted);
    assert_eq!(kept[1].source, "job:j2");
    assert_eq!(kept[1].replaced_by, "restore");

    drop(service);
    let service = harness.start_offline().await;
    assert_eq!(status(&service).await.updates, 12);
    assert_eq!(service.head_snapshot().await, online);

    // Restoring again undoes the restore: the job's head is back, as it was replaced.
    let again = service.restore_previous().await.unwrap();
    assert_eq!(again.source, HeadSource::Job("j2".into()));
    assert_eq!(service.head_snapshot().await, promoted);
    assert_eq!(kept_heads(&harness).await.len(), 3);
}

#[tokio::test]
async fn a_head_for_another_dimension_or_source_is_not_promoted() {
    let harness = Harness::new();
    let service = harness.start_offline().await;
    learn(&service, "deploy to staging", Outcome::Success, 4).await;
    let live = service.head_snapshot().await;

    let other_dim = RoutingHead::new(32, HeadConfig::default()).snapshot();
    let err = service.promote(other_dim, "job:j3").await.unwrap_err();
    assert!(
        matches!(&err, EngineError::Conflict(message)
            if message.contains("32-dimensional") && message.contains("gives 384")),
        "{err:?}"
    );
    for source in ["online", "job:", "j3"] {
        let err = service.promote(trained_head(3), source).await.unwrap_err();
        assert!(
            matches!(&err, EngineError::Invalid(message) if message.contains("job:<id>")),
            "{source}: {err:?}"
        );
    }
    let mut inconsistent = trained_head(3);
    inconsistent.output.pop();
    let err = service.promote(inconsistent, "job:j3").await.unwrap_err();
    assert!(matches!(err, EngineError::Invalid(_)), "{err:?}");

    assert_eq!(service.head_snapshot().await, live);
    assert_eq!(status(&service).await.head_source, HeadSource::Online);
    assert!(kept_heads(&harness).await.is_empty());
}
