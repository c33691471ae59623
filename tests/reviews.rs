//! The GPU gate and the review queue on a paused tokio clock (DESIGN §2.1).
//!
//! The engine runs with its production scheduling code; only its seams are replaced: a
//! [`ManualProbe`] stands for the managed server's readings and [`ScriptedLlm`] decodes for a
//! set virtual time, records every call and notices when a call is dropped (preempted).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use lull::config::Config;
use lull::engine::{ReviewSubmission, Seams};
use lull::events::EngineEvent;
use lull::gate;
use lull::learning::ActivityState;
use lull::llm::{
    ChatEndpoint, ChatMessage, ChatReply, ChatRequest, LlmClient, LlmError, Phase, StreamPace,
};
use lull::reviews::{queue, Decision, ReviewStatus};
use lull::server::{
    ManualProbe, ModelReading, ModelStatus, ServerMode, ServerReading, ServerState,
};
use lull::settings::SettingsPatch;
use lull::store::Store;
use lull::{Engine, Paths};

const MANAGED_URL: &str = "http://127.0.0.1:8080/v1";
const GOOD_ANSWER: &str = r#"{"candidates":[{"skill":"git-bisect","kind":"create","rationale":"it found the bug",
    "evidence":[0],"priority":0.7,"confidence":0.6,"related":[]}]}"#;

/// One chat call as the scripted model saw it.
#[derive(Debug, Clone)]
struct Call {
    model: String,
    base_url: String,
    transcript: String,
    started: Instant,
    dropped: Arc<AtomicBool>,
}

/// Gap between two streamed tokens of the scripted model.
const TOKEN_STEP: Duration = Duration::from_millis(50);

/// A model that decodes for `decode` of virtual time and answers from a script.
///
/// It streams a token every [`TOKEN_STEP`] into the caller's pace, and none while `contended`
/// is set: a server whose batch carries another client's prompt.
struct ScriptedLlm {
    decode: Duration,
    /// Answers in order; `Err` is an endpoint error (a 500) after the decode time.
    replies: Mutex<VecDeque<Result<String, String>>>,
    calls: Mutex<Vec<Call>>,
    contended: AtomicBool,
}

impl ScriptedLlm {
    fn new(decode: Duration) -> Arc<ScriptedLlm> {
        Arc::new(ScriptedLlm {
            decode,
            replies: Mutex::default(),
            calls: Mutex::default(),
            contended: AtomicBool::new(false),
        })
    }

    fn contend(&self, contended: bool) {
        self.contended.store(contended, Ordering::SeqCst);
    }

    fn script(&self, reply: &str) {
        self.replies
            .lock()
            .unwrap()
            .push_back(Ok(reply.to_string()));
    }

    fn script_error(&self, message: &str) {
        self.replies
            .lock()
            .unwrap()
            .push_back(Err(message.to_string()));
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

struct DropFlag(Arc<AtomicBool>, bool);

impl Drop for DropFlag {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

impl LlmClient for ScriptedLlm {
    fn chat<'a>(
        &'a self,
        endpoint: &'a ChatEndpoint,
        request: ChatRequest,
        pace: Option<&'a StreamPace>,
    ) -> BoxFuture<'a, Result<ChatReply, LlmError>> {
        let dropped = Arc::new(AtomicBool::new(false));
        self.calls.lock().unwrap().push(Call {
            model: endpoint.model.clone(),
            base_url: endpoint.base_url.clone(),
            transcript: request.messages[1].content.clone(),
            started: Instant::now(),
            dropped: dropped.clone(),
        });
        Box::pin(async move {
            let mut flag = DropFlag(dropped, false);
            let end = Instant::now() + self.decode;
            while Instant::now() < end {
                tokio::time::sleep_until((Instant::now() + TOKEN_STEP).min(end)).await;
                if let (Some(pace), false) = (pace, self.contended.load(Ordering::SeqCst)) {
                    pace.advance(Phase::Answer, 1);
                }
            }
            flag.1 = true;
            let reply = self.replies.lock().unwrap().pop_front();
            let text = match reply {
                Some(Ok(text)) => text,
                Some(Err(message)) => {
                    return Err(LlmError::Status {
                        url: endpoint.base_url.clone(),
                        status: 500,
                        message,
                    })
                }
                None => GOOD_ANSWER.to_string(),
            };
            Ok(ChatReply {
                text,
                prompt_tokens: Some(100),
                completion_tokens: Some(40),
            })
        })
    }
}

fn reading(models: &[(&str, ModelStatus, usize)]) -> ServerReading {
    let models: Vec<ModelReading> = models
        .iter()
        .map(|&(id, status, busy_slots)| ModelReading {
            id: id.to_string(),
            status,
            busy_slots,
        })
        .collect();
    let idle = models
        .iter()
        .filter(|m| m.status == ModelStatus::Loaded)
        .all(|m| m.busy_slots == 0);
    ServerReading {
        state: ServerState::Ready,
        base_url: Some(MANAGED_URL.to_string()),
        models,
        idle,
        reason: None,
        mode: Some(ServerMode::Router),
        api_key: None,
    }
}

fn idle_server() -> ServerReading {
    reading(&[("m", ModelStatus::Loaded, 0)])
}

/// One slot busy: another client's, or a running review's own.
fn one_busy_slot() -> ServerReading {
    reading(&[("m", ModelStatus::Loaded, 1)])
}

struct Sim {
    engine: Engine,
    probe: Arc<ManualProbe>,
    /// Announces a new reading, as the state-file watcher does in production.
    server_changes: watch::Sender<ServerReading>,
    llm: Arc<ScriptedLlm>,
    events: broadcast::Receiver<EngineEvent>,
    _dir: tempfile::TempDir,
}

/// An engine that has been up for a settle window already (most tests are about later moments
/// of its day; `the_first_lull_begins_a_settle_window_after_start` is about its first seconds).
async fn sim_with(config: Config, server: ServerReading, decode: Duration) -> Sim {
    let settle = Duration::from_secs(config.scheduler.settle_s);
    let sim = fresh_sim_with(config, server, decode).await;
    tokio::time::advance(settle).await;
    sim
}

/// An engine that has just started.
async fn fresh_sim_with(mut config: Config, server: ServerReading, decode: Duration) -> Sim {
    let dir = tempfile::tempdir().unwrap();
    // The probe is a seam here; the state file is set anyway so nothing reads the real one.
    config.server.state_file = dir.path().join("server.json");
    // These tests count the review's own requests: no drafts of its candidates.
    config.learning.max_drafts_per_run = 0;
    let paths = Paths {
        data_dir: dir.path().to_path_buf(),
        config_file: dir.path().join("config.toml"),
    };
    let server_changes = watch::channel(server.clone()).0;
    let probe = Arc::new(ManualProbe::new(server));
    let llm = ScriptedLlm::new(decode);
    let seams = Seams {
        server: probe.clone(),
        server_changes: Some(server_changes.subscribe()),
        llm: llm.clone(),
        store: Some(Store::open_in_memory().unwrap()),
        embedders: Arc::new(lull::routing::BuiltInEmbedderOnly),
        clock: None,
        events: Default::default(),
        host: None,
    };
    let engine = Engine::open_with(config, paths, seams).await.unwrap();
    let events = engine.events().subscribe();
    Sim {
        engine,
        probe,
        server_changes,
        llm,
        events,
        _dir: dir,
    }
}

async fn sim() -> Sim {
    sim_with(Config::default(), idle_server(), Duration::from_secs(20)).await
}

fn submission(session: &str, text: &str) -> ReviewSubmission {
    ReviewSubmission {
        session_key: session.to_string(),
        messages: vec![ChatMessage {
            role: "user".into(),
            content: text.to_string(),
        }],
        focus: None,
        snapshot_at: None,
        runtime: None,
    }
}

impl Sim {
    async fn submit(&self, review: ReviewSubmission) -> (String, Decision) {
        self.engine.submit_review(review).await.unwrap()
    }

    async fn set_paused(&self, paused: bool) {
        self.engine
            .update_settings(SettingsPatch {
                paused: Some(paused),
                ..Default::default()
            })
            .await
            .unwrap();
    }

    /// Submits a review of `session` on an idle server and waits until it runs.
    async fn start_one(&mut self, session: &str) -> String {
        let (id, _) = self.submit(submission(session, "hello")).await;
        self.event(Duration::from_secs(5), |e| {
            matches!(e, EngineEvent::ReviewStarted { .. })
        })
        .await;
        id
    }

    /// The managed server changes, and the engine hears of it (as from the state-file watcher).
    fn server_becomes(&self, reading: ServerReading) {
        self.probe.set(reading.clone());
        self.server_changes.send_replace(reading);
    }

    async fn status_of(&self, id: &str) -> queue::Review {
        self.engine.review(id).await.expect("review exists")
    }

    /// Advances virtual time in small steps so every woken task runs in between.
    async fn advance(&self, by: Duration) {
        let step = Duration::from_millis(100);
        let mut left = by;
        while left > Duration::ZERO {
            let now = step.min(left);
            tokio::time::advance(now).await;
            tokio::task::yield_now().await;
            left -= now;
        }
    }

    /// Waits (in virtual time) for the first event matching `wanted`.
    async fn event(
        &mut self,
        within: Duration,
        wanted: impl Fn(&EngineEvent) -> bool,
    ) -> EngineEvent {
        let deadline = Instant::now() + within;
        loop {
            let received = tokio::time::timeout_at(deadline, self.events.recv()).await;
            match received {
                Ok(Ok(event)) if wanted(&event) => return event,
                Ok(Ok(_)) => continue,
                Ok(Err(err)) => panic!("event stream: {err}"),
                Err(_) => panic!("no matching event within {within:?}"),
            }
        }
    }
}

fn completed(event: &EngineEvent) -> bool {
    matches!(event, EngineEvent::ReviewCompleted { .. })
}

fn failed_for_good(event: &EngineEvent) -> bool {
    matches!(
        event,
        EngineEvent::ReviewFailed {
            will_retry: false,
            ..
        }
    )
}

#[tokio::test(start_paused = true)]
async fn a_review_waits_while_a_turn_is_live_and_runs_after_the_settle_window() {
    let mut sim = sim().await;
    let lease = sim.engine.start_turn();
    let (id, decision) = sim.submit(submission("s1", "hello")).await;
    assert_eq!(decision, Decision::Deferred);

    sim.advance(Duration::from_secs(120)).await;
    assert!(
        sim.llm.calls().is_empty(),
        "nothing may run during a live turn"
    );
    let status = sim.engine.status().await.unwrap();
    assert_eq!(status.learning.state, ActivityState::Waiting);
    assert!(status.learning.reason.unwrap().contains("live turn"));
    let event = sim
        .event(Duration::ZERO, |e| matches!(e, EngineEvent::LearningActivity { activity } if activity.state == ActivityState::Waiting))
        .await;
    assert!(
        matches!(event, EngineEvent::LearningActivity { activity } if activity.reason.as_deref().is_some_and(|r| r.contains("live turn")))
    );

    sim.engine.finish_turn(&lease).unwrap();
    let finished = Instant::now();
    sim.advance(Duration::from_secs(14)).await;
    assert!(
        sim.llm.calls().is_empty(),
        "nothing may run inside the 15 s settle window"
    );

    sim.event(Duration::from_secs(60), completed).await;
    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 1);
    assert!(calls[0].started - finished >= Duration::from_secs(15));
    assert_eq!(calls[0].model, "m", "runs on the first loaded model");
    assert_eq!(calls[0].base_url, MANAGED_URL);
    let review = sim.status_of(&id).await;
    assert_eq!(review.status, ReviewStatus::Done);
    assert_eq!(review.prompt_tokens, Some(100));
    assert_eq!(sim.engine.candidates(None).await.unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_busy_slot_holds_dispatch_until_it_frees_and_settles() {
    let mut sim = sim_with(Config::default(), one_busy_slot(), Duration::from_secs(5)).await;
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(300)).await;
    assert!(
        sim.llm.calls().is_empty(),
        "nothing may run while a slot is busy"
    );
    assert!(sim
        .engine
        .status()
        .await
        .unwrap()
        .learning
        .reason
        .unwrap()
        .contains("busy"));

    sim.probe.set(idle_server());
    let freed = Instant::now();
    sim.event(Duration::from_secs(60), completed).await;
    let waited = sim.llm.calls()[0].started - freed;
    assert!(
        waited <= Duration::from_secs(15) + lull::gate::SERVER_RECHECK,
        "started {waited:?} after the slot freed"
    );
}

#[tokio::test(start_paused = true)]
async fn another_clients_busy_slot_starts_the_settle_window_like_a_turn() {
    let mut sim = sim_with(Config::default(), one_busy_slot(), Duration::from_secs(5)).await;
    let seen_busy = Instant::now();
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(1)).await;
    sim.probe.set(idle_server());
    sim.advance(Duration::from_secs(13)).await;
    assert!(
        sim.llm.calls().is_empty(),
        "the settle window runs from the busy sighting"
    );
    let reason = sim.engine.status().await.unwrap().learning.reason.unwrap();
    assert!(reason.contains("another client"), "{reason}");
    sim.event(Duration::from_secs(30), completed).await;
    let waited = sim.llm.calls()[0].started - seen_busy;
    assert!(
        waited >= Duration::from_secs(15)
            && waited <= Duration::from_secs(15) + lull::gate::SERVER_RECHECK,
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_probe_is_not_asked_while_nothing_waits() {
    let sim = sim().await;
    let before = sim.probe.reads();
    sim.advance(Duration::from_secs(3600)).await;
    assert_eq!(
        sim.probe.reads(),
        before,
        "an empty queue must not poll the server"
    );
}

#[tokio::test(start_paused = true)]
async fn a_newer_snapshot_coalesces_and_keeps_the_original_enqueue_time() {
    let sim = sim().await;
    let lease = sim.engine.start_turn();
    let mut first = submission("s1", "first version");
    first.snapshot_at = Some(1_000);
    let (id, decision) = sim.submit(first).await;
    assert_eq!(decision, Decision::Deferred);
    let enqueued_at = sim.status_of(&id).await.enqueued_at;

    sim.advance(Duration::from_secs(100)).await;
    let mut newer = submission("s1", "second version");
    newer.snapshot_at = Some(2_000);
    let (same, decision) = sim.submit(newer).await;
    assert_eq!(
        (same.as_str(), decision),
        (id.as_str(), Decision::Coalesced)
    );

    let mut older = submission("s1", "stale version");
    older.snapshot_at = Some(1_500);
    assert_eq!(sim.submit(older).await.1, Decision::Coalesced);
    assert_eq!(
        sim.status_of(&id).await.enqueued_at,
        enqueued_at,
        "the slot keeps its original enqueue time"
    );
    assert_eq!(
        sim.engine
            .reviews(Some(ReviewStatus::Queued))
            .await
            .unwrap()
            .len(),
        1
    );

    sim.engine.finish_turn(&lease).unwrap();
    sim.advance(Duration::from_secs(60)).await;
    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].transcript.contains("second version"),
        "the newest snapshot wins"
    );
}

#[tokio::test]
async fn an_older_requeue_never_replaces_a_newer_queued_snapshot() {
    let store = Store::open_in_memory().unwrap();
    store
        .call(|c| {
            let review = |text: &str, snapshot_at| queue::NewReview {
                session_key: "s1".into(),
                messages: vec![ChatMessage {
                    role: "user".into(),
                    content: text.into(),
                }],
                focus: None,
                snapshot_at,
                runtime: None,
            };
            let old = queue::enqueue(c, &review("old", 1_000), 10)?;
            queue::start(c, &old.review_id, 20)?.expect("claimed");
            let newer = queue::enqueue(c, &review("new", 2_000), 30)?;
            assert!(!newer.coalesced, "a running review does not hold the slot");
            let status = queue::requeue(c, &old.review_id, "preempted", 40)?;
            assert_eq!(status, ReviewStatus::Superseded);
            let due = queue::dispatchable(c, 40)?;
            assert_eq!(due.len(), 1, "only the newer one is queued");
            let queued = queue::get(c, &due[0].id)?.expect("it exists");
            assert_eq!(queued.id, newer.review_id);
            assert_eq!(queued.messages[0].content, "new");
            assert_eq!(
                queued.enqueued_at, 10,
                "the slot inherits the older enqueue time"
            );
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_aged_out_review_runs_although_the_server_stays_busy() {
    let mut sim = sim_with(Config::default(), one_busy_slot(), Duration::from_secs(5)).await;
    let submitted = Instant::now();
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(1790)).await;
    assert!(sim.llm.calls().is_empty());
    sim.event(Duration::from_secs(60), completed).await;
    let started = sim.llm.calls()[0].started;
    assert!(started - submitted >= Duration::from_secs(1800));
    assert!(started - submitted <= Duration::from_secs(1800) + lull::gate::SERVER_RECHECK);
}

#[tokio::test(start_paused = true)]
async fn oldest_review_goes_first() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(5)).await;
    sim.set_paused(true).await;
    let (first, _) = sim.submit(submission("a", "first")).await;
    sim.advance(Duration::from_secs(1)).await;
    sim.submit(submission("b", "second")).await;
    sim.set_paused(false).await;
    let event = sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(
        event,
        EngineEvent::ReviewCompleted {
            review_id: first,
            candidates: 1
        }
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_start_preempts_and_the_review_completes_later() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(60)).await;
    let id = sim.start_one("s1").await;
    sim.advance(Duration::from_secs(10)).await;

    let lease = sim.engine.start_turn();
    let event = sim
        .event(Duration::from_millis(500), |e| {
            matches!(e, EngineEvent::ReviewPreempted { .. })
        })
        .await;
    assert!(
        matches!(event, EngineEvent::ReviewPreempted { ref reason, .. } if reason.contains("live turn"))
    );
    assert!(
        sim.llm.calls()[0].dropped.load(Ordering::SeqCst),
        "the request was dropped"
    );
    let review = sim.status_of(&id).await;
    assert_eq!((review.status, review.attempts), (ReviewStatus::Queued, 1));

    sim.engine.finish_turn(&lease).unwrap();
    sim.event(Duration::from_secs(180), completed).await;
    let review = sim.status_of(&id).await;
    assert_eq!((review.status, review.attempts), (ReviewStatus::Done, 2));
    assert_eq!(sim.engine.candidates(None).await.unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn after_a_preemption_the_settle_window_is_longer_until_work_completes() {
    let mut sim = sim().await;
    sim.start_one("s1").await;
    let lease = sim.engine.start_turn();
    sim.event(Duration::from_millis(500), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;
    sim.engine.finish_turn(&lease).unwrap();
    let finished = Instant::now();

    sim.advance(Duration::from_secs(59)).await;
    assert_eq!(
        sim.llm.calls().len(),
        1,
        "no second run inside the longer window"
    );
    let reason = sim.engine.status().await.unwrap().learning.reason.unwrap();
    assert!(reason.contains("preempted"), "{reason}");
    sim.event(Duration::from_secs(60), completed).await;
    let calls = sim.llm.calls();
    assert!(calls[1].started - finished >= Duration::from_secs(60));

    // Completed work brings back the plain 15 s window.
    let lease = sim.engine.start_turn();
    sim.submit(submission("s2", "hello")).await;
    sim.engine.finish_turn(&lease).unwrap();
    let finished = Instant::now();
    sim.event(Duration::from_secs(60), completed).await;
    let started = sim.llm.calls()[2].started - finished;
    assert!(
        (Duration::from_secs(15)..Duration::from_secs(16)).contains(&started),
        "{started:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_foreign_busy_slot_preempts() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(60)).await;
    let id = sim.start_one("s1").await;
    // Our own request occupies one slot; that alone must not preempt.
    sim.probe.set(one_busy_slot());
    sim.advance(Duration::from_secs(5)).await;
    assert_eq!(sim.status_of(&id).await.status, ReviewStatus::Running);

    sim.probe.set(reading(&[("m", ModelStatus::Loaded, 2)]));
    sim.llm.contend(true);
    let event = sim
        .event(lull::llm::pace::STALL_FLOOR * 2, |e| {
            matches!(e, EngineEvent::ReviewPreempted { .. })
        })
        .await;
    assert!(
        matches!(event, EngineEvent::ReviewPreempted { ref reason, .. } if reason.contains("another client"))
    );
    assert_eq!(sim.status_of(&id).await.status, ReviewStatus::Queued);
}

#[tokio::test(start_paused = true)]
async fn a_running_review_reads_the_server_only_when_its_stream_stalls() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(60)).await;
    let id = sim.start_one("s1").await;
    sim.probe.set(one_busy_slot());
    let reads_at_start = sim.probe.reads();
    sim.advance(Duration::from_secs(20)).await;
    assert_eq!(
        sim.probe.reads(),
        reads_at_start,
        "a stream that keeps its pace costs no request"
    );

    // Our own stream slows with nobody else on the server: a few confirming reads, each
    // further apart, and the review goes on.
    sim.llm.contend(true);
    sim.advance(Duration::from_secs(20)).await;
    let stalled_reads = sim.probe.reads() - reads_at_start;
    assert!(
        (3..=7).contains(&stalled_reads),
        "{stalled_reads} reads over 20 s of a stall"
    );
    assert_eq!(sim.status_of(&id).await.status, ReviewStatus::Running);
    sim.llm.contend(false);
    sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(sim.status_of(&id).await.attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn focus_never_mode_and_foreign_runtimes_run_at_once() {
    let mut sim = sim().await;
    let _lease = sim.engine.start_turn();

    let mut focused = submission("s1", "focused");
    focused.focus = Some("the deploy steps".into());
    assert_eq!(sim.submit(focused).await.1, Decision::Dispatched);
    sim.event(Duration::from_secs(30), completed).await;

    let mut elsewhere = submission("s2", "cloud");
    elsewhere.runtime = Some(ChatEndpoint {
        base_url: "https://api.example.com/v1".into(),
        api_key: Some("k".into()),
        model: "big".into(),
    });
    assert_eq!(sim.submit(elsewhere).await.1, Decision::Dispatched);
    sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(sim.llm.calls()[1].base_url, "https://api.example.com/v1");

    sim.engine
        .update_settings(SettingsPatch {
            defer_mode: Some(lull::config::DeferMode::Never),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        sim.submit(submission("s3", "never")).await.1,
        Decision::Dispatched
    );
    sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(sim.llm.calls().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_runtime_naming_the_managed_server_is_deferred() {
    let sim = sim().await;
    let _lease = sim.engine.start_turn();
    let mut managed = submission("s1", "local");
    managed.runtime = Some(ChatEndpoint {
        base_url: "http://LOCALHOST:8080/v1".into(),
        api_key: None,
        model: "m".into(),
    });
    // localhost is not 127.0.0.1 textually: any doubt reads "not managed" and runs now.
    assert_eq!(sim.submit(managed.clone()).await.1, Decision::Dispatched);
    managed.session_key = "s2".into();
    managed.runtime.as_mut().unwrap().base_url = "http://127.0.0.1:8080/v1".into();
    assert_eq!(sim.submit(managed).await.1, Decision::Deferred);
}

#[tokio::test(start_paused = true)]
async fn pause_holds_everything_and_resume_releases_it() {
    let mut sim = sim().await;
    sim.set_paused(true).await;
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(3600)).await;
    assert!(sim.llm.calls().is_empty(), "pause holds even aged-out work");
    assert_eq!(
        sim.engine.status().await.unwrap().learning.state,
        ActivityState::Paused
    );

    sim.set_paused(false).await;
    sim.event(Duration::from_secs(60), completed).await;
}

#[tokio::test(start_paused = true)]
async fn disabled_reviews_are_dropped_at_dispatch_with_the_reason() {
    let mut sim = sim().await;
    let lease = sim.engine.start_turn();
    let (id, decision) = sim.submit(submission("s1", "hello")).await;
    assert_eq!(
        decision,
        Decision::Deferred,
        "the enabled check happens at dispatch, not at enqueue"
    );
    sim.engine
        .update_settings(SettingsPatch {
            reviews_enabled: Some(false),
            ..Default::default()
        })
        .await
        .unwrap();
    let event = sim
        .event(Duration::from_secs(5), |e| {
            matches!(e, EngineEvent::ReviewDropped { .. })
        })
        .await;
    assert!(
        matches!(event, EngineEvent::ReviewDropped { ref reason, .. } if reason.contains("disabled"))
    );
    let review = sim.status_of(&id).await;
    assert_eq!(review.status, ReviewStatus::Dropped);
    assert!(review.last_error.unwrap().contains("reviews are disabled"));
    sim.engine.finish_turn(&lease).unwrap();
    sim.advance(Duration::from_secs(60)).await;
    assert!(sim.llm.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_lapsed_lease_stops_holding_the_gpu() {
    let mut sim = sim().await;
    let submitted = Instant::now();
    let _forgotten = sim.engine.start_turn();
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(599)).await;
    assert!(sim.llm.calls().is_empty());
    sim.event(Duration::from_secs(120), completed).await;
    let started = sim.llm.calls()[0].started - submitted;
    assert!(
        started >= Duration::from_secs(600 + 15),
        "lease 600 s, then the settle window: {started:?}"
    );
    assert_eq!(sim.engine.status().await.unwrap().live_turns, 0);
}

#[tokio::test(start_paused = true)]
async fn broken_model_output_is_retried_then_failed_and_the_next_review_still_runs() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(2)).await;
    for broken in [
        "{\"candidates\": [",
        "Sure! Here you go.",
        "{\"candidates\":[{\"skill\":\"Bad Name\"}]}",
    ] {
        sim.llm.script(broken);
    }
    let (bad, _) = sim.submit(submission("s1", "hello")).await;
    let event = sim.event(Duration::from_secs(60), failed_for_good).await;
    assert!(
        matches!(event, EngineEvent::ReviewFailed { ref error, .. } if error.contains("expected JSON"))
    );
    let review = sim.status_of(&bad).await;
    assert_eq!(
        (review.status, review.failures, review.attempts),
        (ReviewStatus::Failed, 3, 3)
    );
    assert!(review.last_error.is_some());

    let (good, _) = sim.submit(submission("s2", "next")).await;
    let event = sim.event(Duration::from_secs(60), completed).await;
    assert_eq!(
        event,
        EngineEvent::ReviewCompleted {
            review_id: good,
            candidates: 1
        }
    );
}

#[tokio::test(start_paused = true)]
async fn learning_never_wakes_an_unloaded_model_until_it_ages_out() {
    let mut config = Config::default();
    config.reviews.base_url = Some(MANAGED_URL.into());
    config.reviews.model = Some("big".into());
    let server = reading(&[
        ("small", ModelStatus::Loaded, 0),
        ("big", ModelStatus::Sleeping, 0),
    ]);
    let mut sim = sim_with(config, server, Duration::from_secs(2)).await;
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(600)).await;
    assert!(sim.llm.calls().is_empty());
    let reason = sim.engine.status().await.unwrap().learning.reason.unwrap();
    assert!(
        reason.contains("`big`") && reason.contains("sleeping"),
        "{reason}"
    );
    sim.event(Duration::from_secs(1300), completed).await;
    assert_eq!(
        sim.llm.calls()[0].model,
        "big",
        "only an aged-out item may cause a load"
    );
}

/// A conversation of `n` messages, the same at every length: a longer one extends a shorter.
fn conversation(session: &str, n: usize) -> ReviewSubmission {
    ReviewSubmission {
        messages: (0..n)
            .map(|i| ChatMessage {
                role: if i % 2 == 0 { "user" } else { "assistant" }.into(),
                content: format!("line {i} of the talk"),
            })
            .collect(),
        ..submission(session, "")
    }
}

fn shows(call: &Call, message: usize) -> bool {
    call.transcript
        .contains(&format!("\"line {message} of the talk\""))
}

#[tokio::test(start_paused = true)]
async fn a_longer_snapshot_is_reviewed_from_where_the_last_review_stopped() {
    let mut sim = sim().await;
    sim.submit(conversation("s1", 6)).await;
    sim.event(Duration::from_secs(60), completed).await;
    // Evidence must cite what the review was shown: message 0 no longer is.
    sim.llm.script(&GOOD_ANSWER.replace("[0]", "[0, 9]"));
    sim.llm.script(&GOOD_ANSWER.replace("[0]", "[9]"));
    sim.submit(conversation("s1", 14)).await;
    let failed = sim
        .event(Duration::from_secs(60), |e| {
            matches!(e, EngineEvent::ReviewFailed { .. })
        })
        .await;
    assert!(
        matches!(failed, EngineEvent::ReviewFailed { ref error, .. } if error.contains("evidence names message 0")),
        "{failed:?}"
    );
    sim.event(Duration::from_secs(60), completed).await;

    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 3);
    assert!((0..6).all(|i| shows(&calls[0], i)));
    let context = 6 - lull::reviews::prompt::CONTEXT_MESSAGES;
    assert!(
        (0..context).all(|i| !shows(&calls[1], i)),
        "{}",
        calls[1].transcript
    );
    assert!(
        (context..14).all(|i| shows(&calls[1], i)),
        "{}",
        calls[1].transcript
    );
    assert!(calls[1]
        .transcript
        .contains("Messages 0 to 5 of this conversation were reviewed before"));
}

#[tokio::test(start_paused = true)]
async fn a_rewritten_history_or_a_focus_is_reviewed_whole() {
    let mut sim = sim().await;
    sim.submit(conversation("s1", 6)).await;
    sim.event(Duration::from_secs(60), completed).await;

    // The agent compacted its context: the first message is not what was reviewed.
    let mut rewritten = conversation("s1", 10);
    rewritten.messages[0].content = "a summary of the talk so far".into();
    sim.submit(rewritten).await;
    sim.event(Duration::from_secs(60), completed).await;
    assert!(sim.llm.calls()[1]
        .transcript
        .contains("a summary of the talk so far"));

    let mut focused = conversation("s2", 6);
    sim.submit(conversation("s2", 4)).await;
    sim.event(Duration::from_secs(60), completed).await;
    focused.focus = Some("the deploy steps".into());
    sim.submit(focused).await;
    sim.event(Duration::from_secs(60), completed).await;
    let calls = sim.llm.calls();
    assert!(
        (0..6).all(|i| shows(&calls[3], i)),
        "{}",
        calls[3].transcript
    );
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_with_nothing_new_completes_without_the_model() {
    let mut sim = sim().await;
    sim.submit(conversation("s1", 6)).await;
    sim.event(Duration::from_secs(60), completed).await;
    let (id, _) = sim.submit(conversation("s1", 6)).await;
    sim.event(Duration::from_secs(60), completed).await;
    assert_eq!(sim.llm.calls().len(), 1);
    assert_eq!(sim.status_of(&id).await.status, ReviewStatus::Done);
}

fn absent_server() -> ServerReading {
    ServerReading::not_ready(
        ServerState::Absent,
        None,
        "no state file at ~/.hermes/runtimes/llamacpp/server.json",
    )
}

/// Each way the managed server can be unable to take work, and how it comes back.
fn unavailable_servers() -> Vec<(&'static str, ServerReading)> {
    let mut starting = ServerReading::not_ready(
        ServerState::Starting,
        Some(MANAGED_URL.into()),
        "the server is loading its model (/health is 503)",
    );
    starting.mode = Some(ServerMode::Router);
    vec![
        ("absent", absent_server()),
        (
            "stale",
            ServerReading::not_ready(
                ServerState::Stale,
                Some(MANAGED_URL.into()),
                "the state file names pid 4242, which is not running",
            ),
        ),
        ("starting", starting),
        (
            "no loaded model",
            reading(&[("m", ModelStatus::Unloaded, 0)]),
        ),
    ]
}

fn focused(session: &str) -> ReviewSubmission {
    let mut review = submission(session, "deploy the site");
    review.focus = Some("the deploy steps".into());
    review
}

/// Issue 11, item 1: a review asked for now (a `focus`, or defer mode `never`) never fails for
/// want of a server; it waits, says why, and runs once a model is loaded.
#[tokio::test(start_paused = true)]
async fn a_review_asked_for_now_waits_for_a_missing_server_and_runs_when_a_model_loads() {
    for (case, unavailable) in unavailable_servers() {
        for never in [false, true] {
            let mut config = Config::default();
            if never {
                config.scheduler.defer = lull::config::DeferMode::Never;
            }
            let mut sim = sim_with(config, unavailable.clone(), Duration::from_secs(20)).await;
            let review = if never {
                submission("s1", "hello")
            } else {
                focused("s1")
            };
            let (id, decision) = sim.submit(review).await;
            assert_eq!(decision, Decision::Dispatched, "{case}");

            sim.advance(Duration::from_secs(10 * 60)).await;
            let waiting = sim.status_of(&id).await;
            assert_eq!(
                (waiting.status, waiting.attempts, waiting.failures),
                (ReviewStatus::Queued, 0, 0),
                "{case}, never={never}: it waits, it does not fail"
            );
            assert!(sim.llm.calls().is_empty(), "{case}");
            let status = sim.engine.status().await.unwrap();
            assert_eq!(status.learning.state, ActivityState::Waiting, "{case}");
            let reason = status.learning.reason.unwrap();
            assert!(
                reason.contains("managed server") || reason.contains("never loads a model"),
                "{case}: {reason}"
            );

            let appeared = Instant::now();
            sim.server_becomes(idle_server());
            sim.event(Duration::from_secs(30), |e| {
                matches!(e, EngineEvent::ReviewStarted { .. })
            })
            .await;
            assert!(
                Instant::now() - appeared <= gate::SERVER_RECHECK,
                "{case}: it starts as soon as the server can take it"
            );
            sim.event(Duration::from_secs(30), completed).await;
            let done = sim.status_of(&id).await;
            assert_eq!(
                (done.status, done.attempts, done.failures),
                (ReviewStatus::Done, 1, 0),
                "{case}, never={never}"
            );
        }
    }
}

/// Issue 11, item 1: an endpoint's errors are retried after 5 s, then 10 s, and only
/// `max_retries` real attempts end in `failed`; no tight loop.
#[tokio::test(start_paused = true)]
async fn an_endpoint_error_is_retried_after_a_growing_backoff_then_failed() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(2)).await;
    for _ in 0..3 {
        sim.llm.script_error("the server crashed");
    }
    let (id, _) = sim.submit(focused("s1")).await;
    let event = sim.event(Duration::from_secs(120), failed_for_good).await;
    assert!(
        matches!(event, EngineEvent::ReviewFailed { ref error, .. } if error.contains("500")),
        "{event:?}"
    );
    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 3, "exactly max_retries attempts");
    let gaps: Vec<Duration> = calls
        .windows(2)
        .map(|pair| pair[1].started - pair[0].started)
        .collect();
    // Each gap is the 2 s decode plus the back-off: 5 s, then 10 s.
    assert!(
        gaps[0] >= Duration::from_secs(7) && gaps[0] < Duration::from_secs(8),
        "{gaps:?}"
    );
    assert!(
        gaps[1] >= Duration::from_secs(12) && gaps[1] < Duration::from_secs(13),
        "{gaps:?}"
    );
    let review = sim.status_of(&id).await;
    assert_eq!(
        (review.status, review.attempts, review.failures),
        (ReviewStatus::Failed, 3, 3)
    );
}

/// Issue 11, item 1: the back-off shows in the Overview, and a person's *run now* skips it.
#[tokio::test(start_paused = true)]
async fn a_review_backing_off_says_so_and_run_now_skips_the_wait() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(2)).await;
    sim.llm.script_error("the server crashed");
    let (id, _) = sim.submit(submission("s1", "hello")).await;
    sim.event(Duration::from_secs(30), |e| {
        matches!(
            e,
            EngineEvent::ReviewFailed {
                will_retry: true,
                ..
            }
        )
    })
    .await;
    let status = sim.engine.status().await.unwrap();
    assert_eq!(status.learning.state, ActivityState::Waiting);
    assert!(
        status
            .learning
            .reason
            .as_deref()
            .unwrap()
            .contains("retrying after an error"),
        "{:?}",
        status.learning
    );
    let failed_at = Instant::now();
    sim.engine.run_review_now(&id).await.unwrap();
    sim.event(Duration::from_secs(30), completed).await;
    assert!(
        sim.llm.calls()[1].started - failed_at < Duration::from_secs(1),
        "run now does not wait out the back-off"
    );
}

/// Issue 11, item 1: after a start (or a crash and a restart) the engine has seen nothing, and
/// the agent's turn may still be live: the first lull begins a settle window after the start.
#[tokio::test(start_paused = true)]
async fn the_first_lull_begins_a_settle_window_after_start() {
    let mut sim = fresh_sim_with(Config::default(), idle_server(), Duration::from_secs(5)).await;
    let started = Instant::now();
    sim.submit(submission("s1", "hello")).await;
    sim.advance(Duration::from_secs(14)).await;
    assert!(sim.llm.calls().is_empty(), "nothing runs in the first 15 s");
    let reason = sim.engine.status().await.unwrap().learning.reason.unwrap();
    assert!(reason.contains("after Lull started"), "{reason}");
    sim.event(Duration::from_secs(10), completed).await;
    assert!(sim.llm.calls()[0].started - started >= Duration::from_secs(15));

    // Work asked for now does not wait for the lull.
    let mut sim = fresh_sim_with(Config::default(), idle_server(), Duration::from_secs(5)).await;
    sim.submit(focused("s1")).await;
    sim.event(Duration::from_secs(1), |e| {
        matches!(e, EngineEvent::ReviewStarted { .. })
    })
    .await;
}

/// Issue 11, item 3: *run now* takes the gate's permit and skips the lull: it runs during a
/// live turn (a person asked), while the review the turn preempted stays queued.
#[tokio::test(start_paused = true)]
async fn run_now_skips_the_lull_and_holds_the_permit() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(20)).await;
    let deferred = sim.start_one("s1").await;
    let _lease = sim.engine.start_turn();
    sim.event(Duration::from_secs(1), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;
    let (asked, decision) = sim.submit(submission("s2", "the one I want")).await;
    assert_eq!(decision, Decision::Deferred);
    sim.engine.run_review_now(&asked).await.unwrap();
    let started = sim
        .event(Duration::from_secs(1), |e| {
            matches!(e, EngineEvent::ReviewStarted { .. })
        })
        .await;
    assert!(
        matches!(started, EngineEvent::ReviewStarted { ref review_id, .. } if *review_id == asked)
    );
    let status = sim.engine.status().await.unwrap();
    assert_eq!(
        status.learning.state,
        ActivityState::Running,
        "not idle while it runs"
    );
    assert!(status.learning.reason.unwrap().contains("s2"));
    sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(sim.status_of(&deferred).await.status, ReviewStatus::Queued);
    assert_eq!(sim.llm.calls().len(), 2);
}

/// Issue 11, item 3: deferred work running on an idle server yields to work asked for now
/// (requeued, not lost), the two never run side by side, and it reruns afterwards.
#[tokio::test(start_paused = true)]
async fn deferred_work_yields_to_run_now_and_reruns_after_it() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(20)).await;
    let deferred = sim.start_one("s1").await;
    sim.advance(Duration::from_secs(5)).await;
    let (asked, _) = sim.submit(focused("s2")).await;
    let preempted = sim
        .event(Duration::from_secs(1), |e| {
            matches!(e, EngineEvent::ReviewPreempted { .. })
        })
        .await;
    assert!(
        matches!(preempted, EngineEvent::ReviewPreempted { ref reason, ref review_id } if reason.contains("asked to run now") && *review_id == deferred),
        "{preempted:?}"
    );
    sim.event(Duration::from_secs(30), completed).await;
    assert_eq!(sim.status_of(&asked).await.status, ReviewStatus::Done);
    sim.event(Duration::from_secs(60), completed).await;
    assert_eq!(sim.status_of(&deferred).await.status, ReviewStatus::Done);
    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 3);
    assert!(calls[0].dropped.load(Ordering::SeqCst));
    assert!(
        calls[1].started >= calls[0].started,
        "s2 after s1 was dropped"
    );
    assert!(
        calls[2].started >= calls[1].started + sim.llm.decode,
        "s1 again only after s2 ended"
    );
}

/// Issue 11, item 3: work that runs to the end (aged out, or itself asked for now) is not
/// preempted by run now; the asked review waits for the permit and the Overview says so.
#[tokio::test(start_paused = true)]
async fn run_now_waits_for_work_that_runs_to_the_end_and_says_so() {
    let mut sim = sim_with(Config::default(), idle_server(), Duration::from_secs(20)).await;
    sim.submit(focused("s1")).await;
    sim.event(Duration::from_secs(1), |e| {
        matches!(e, EngineEvent::ReviewStarted { .. })
    })
    .await;
    let _lease = sim.engine.start_turn();
    let (second, _) = sim.submit(submission("s2", "next")).await;
    sim.engine.run_review_now(&second).await.unwrap();
    sim.advance(Duration::from_secs(1)).await;
    let status = sim.engine.status().await.unwrap();
    assert_eq!(status.learning.state, ActivityState::Running);
    assert!(
        status
            .learning
            .reason
            .as_deref()
            .unwrap()
            .contains("starts when it ends"),
        "{:?}",
        status.learning
    );
    assert_eq!(sim.status_of(&second).await.status, ReviewStatus::Queued);
    sim.event(Duration::from_secs(30), completed).await;
    sim.event(Duration::from_secs(30), completed).await;
    let calls = sim.llm.calls();
    assert_eq!(calls.len(), 2);
    assert!(
        calls[1].started >= calls[0].started + sim.llm.decode,
        "one at a time"
    );
}

/// Issue 11, item 10: a completion replayed for the same review adds no twin candidates.
#[tokio::test]
async fn completing_the_same_review_twice_stores_its_candidates_once() {
    let store = Store::open_in_memory().unwrap();
    store
        .call(|c| {
            let new = queue::NewReview {
                session_key: "s1".into(),
                messages: vec![ChatMessage {
                    role: "user".into(),
                    content: "bisect it".into(),
                }],
                focus: None,
                snapshot_at: 1,
                runtime: None,
            };
            let id = queue::enqueue(c, &new, 10)?.review_id;
            let review = queue::start(c, &id, 20)?.expect("claimed");
            let proposals: Vec<lull::drafts::candidates::CandidateProposal> =
                serde_json::from_str::<serde_json::Value>(GOOD_ANSWER).unwrap()["candidates"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|value| serde_json::from_value(value.clone()).unwrap())
                    .collect();
            let usage = queue::RunUsage::default();
            assert_eq!(queue::complete(c, &review, &proposals, usage, 30)?, 1);
            assert_eq!(
                queue::complete(c, &review, &proposals, usage, 40)?,
                0,
                "the replay stores nothing new"
            );
            assert_eq!(lull::drafts::candidates::list(c, None)?.len(), 1);
            Ok(())
        })
        .await
        .unwrap();
}

/// Issue 11, item 12: the agent's key for a review's endpoint is forgotten once the review ends
/// (done, failed or dropped), and kept while it may still run.
#[tokio::test]
async fn a_reviews_api_key_is_erased_when_it_ends() {
    let store = Store::open_in_memory().unwrap();
    store
        .call(|c| {
            let runtime = Some(ChatEndpoint {
                base_url: "https://api.example.com/v1".into(),
                api_key: Some("sk-very-secret".into()),
                model: "big".into(),
            });
            let new = |session: &str| queue::NewReview {
                session_key: session.into(),
                messages: vec![ChatMessage {
                    role: "user".into(),
                    content: "hi".into(),
                }],
                focus: None,
                snapshot_at: 1,
                runtime: runtime.clone(),
            };
            let stored_key = |c: &rusqlite::Connection, id: &str| -> Option<String> {
                let review = queue::get(c, id).unwrap().unwrap();
                review.runtime.and_then(|runtime| runtime.api_key)
            };
            let retry = queue::RetryPolicy {
                max_failures: 1,
                first_backoff: Duration::from_secs(5),
                max_backoff: Duration::from_secs(300),
            };
            let done = queue::enqueue(c, &new("done"), 10)?.review_id;
            let failed = queue::enqueue(c, &new("failed"), 10)?.review_id;
            let dropped = queue::enqueue(c, &new("dropped"), 10)?.review_id;
            assert_eq!(stored_key(c, &done).as_deref(), Some("sk-very-secret"));
            let review = queue::start(c, &done, 20)?.unwrap();
            queue::complete(c, &review, &[], queue::RunUsage::default(), 30)?;
            queue::start(c, &failed, 20)?.unwrap();
            queue::record_failure(c, &failed, "500", &retry, 30)?;
            queue::drop_queued(c, &dropped, "by request", 30)?;
            for id in [&done, &failed, &dropped] {
                assert_eq!(stored_key(c, id), None, "{id}");
                let raw: String =
                    c.query_row("SELECT runtime FROM reviews WHERE id = ?1", [id], |row| {
                        row.get(0)
                    })?;
                assert!(!raw.contains("sk-very-secret"), "{raw}");
                assert!(
                    raw.contains("api.example.com"),
                    "the endpoint itself is kept"
                );
            }
            Ok(())
        })
        .await
        .unwrap();
}
