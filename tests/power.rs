//! Issue 27 end to end: the engine follows a fake UPower and a fake logind on a private
//! `dbus-daemon` this test starts (the engine reaches them as it reaches the system bus), with the
//! stand-in llama-server as the managed server. A review queued on battery runs only once AC
//! returns; before the machine sleeps a running review goes back to the queue and only then is
//! the delay inhibitor let go; after the wake (a suspend of two hours, on a suspend clock the
//! test moves) the inhibitor is taken again, and the review, aged out by the sleep, still waits
//! out the settle window before it runs to its end.

#[path = "common/fake_system.rs"]
mod fake_system;
#[path = "common/managed.rs"]
mod managed;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fake_system::FakeSystem;
use lull::config::Config;
use lull::engine::{ReviewSubmission, Seams};
use lull::events::{EngineEvent, EventBus};
use lull::learning::ActivityState;
use lull::llm::ChatMessage;
use lull::power::{ManualSuspendClock, PowerSource};
use lull::reviews::ReviewStatus;
use lull::Engine;
use lull_stand_in::{StandIn, StandInConfig};
use managed::{managed_stand_in, next_event, paths_in};

const MODEL: &str = "tiny";
const WAIT: Duration = Duration::from_secs(30);

fn config_for(state_file: &Path) -> Config {
    let mut config = Config::default();
    config.server.state_file = state_file.to_path_buf();
    config.scheduler.settle_s = 1;
    config.scheduler.settle_after_preemption_s = 1;
    config
}

/// The stand-in, answering every review with no candidates, `token_pace` a token.
async fn stand_in(dir: &Path, token_pace: Duration) -> (StandIn, std::path::PathBuf) {
    let (server, state_file) =
        managed_stand_in(dir, StandInConfig::single(MODEL).with_pace(token_pace)).await;
    server.set_responder(Arc::new(|_| Some(r#"{"candidates": []}"#.to_string())));
    (server, state_file)
}

/// The production engine but for the system bus, which is the fakes', and the suspend clock.
async fn engine_on(
    dir: &Path,
    state_file: &Path,
    fakes: &FakeSystem,
    suspend_clock: Arc<ManualSuspendClock>,
) -> Engine {
    let config = config_for(state_file);
    let mut seams = Seams::for_this_machine(&config, EventBus::default())
        .await
        .unwrap();
    seams.host = Some(fakes.host_sources(suspend_clock));
    Engine::open_with(config, paths_in(dir), seams)
        .await
        .unwrap()
}

fn submission(session: &str) -> ReviewSubmission {
    ReviewSubmission {
        session_key: session.into(),
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "back up the database before the migration, as we did last week".into(),
        }],
        focus: None,
        snapshot_at: None,
        runtime: None,
    }
}

/// Waits, at most `limit`, until `ready` holds of the engine's status.
async fn status_until(
    engine: &Engine,
    limit: Duration,
    ready: impl Fn(&lull::engine::Status) -> bool,
) -> lull::engine::Status {
    tokio::time::timeout(limit, async {
        loop {
            let status = engine.status().await.unwrap();
            if ready(&status) {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the engine's status came to the expected state in time")
}

async fn review_status(engine: &Engine, id: &str) -> ReviewStatus {
    let reviews = engine.reviews(None).await.unwrap();
    reviews.iter().find(|r| r.id == id).unwrap().status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_queued_on_battery_runs_only_after_ac_returns() {
    let dir = tempfile::tempdir().unwrap();
    let fakes = FakeSystem::start(true, 20.0).await;
    let (server, state_file) = stand_in(dir.path(), Duration::from_millis(1)).await;
    let engine = engine_on(dir.path(), &state_file, &fakes, Arc::default()).await;
    let mut events = engine.events().subscribe();

    let status = status_until(&engine, WAIT, |s| s.power.learning_held.is_some()).await;
    assert_eq!(status.power.power.source, PowerSource::Battery);
    assert_eq!(status.power.power.percent, Some(20.0));
    let (id, _) = engine.submit_review(submission("s1")).await.unwrap();
    // Past the settle window (1 s) with the server idle: only the battery holds the review.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let status = engine.status().await.unwrap();
    assert_eq!(status.learning.state, ActivityState::Paused, "{status:?}");
    assert_eq!(
        status.learning.reason.as_deref(),
        Some("paused: on battery (20 %); learning resumes on AC or above 50 %")
    );
    assert_eq!(review_status(&engine, &id).await, ReviewStatus::Queued);
    assert!(
        server.chat_requests().is_empty(),
        "no learning request on battery"
    );

    fakes.set_on_battery(false).await;
    next_event(
        &mut events,
        WAIT,
        |e| matches!(e, EngineEvent::ReviewCompleted { review_id, .. } if *review_id == id),
    )
    .await;
    let status = engine.status().await.unwrap();
    assert_eq!(status.power.power.source, PowerSource::Ac);
    assert_eq!(status.power.learning_held, None);
    assert_eq!(server.chat_requests().len(), 1);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_sleep_a_running_review_is_requeued_then_the_inhibitor_let_go_and_taken_again_on_wake(
) {
    let dir = tempfile::tempdir().unwrap();
    let fakes = FakeSystem::start(false, 90.0).await;
    // Slow enough that the review is still streaming when the machine goes to sleep.
    let (_server, state_file) = stand_in(dir.path(), Duration::from_millis(400)).await;
    let suspend_clock = Arc::new(ManualSuspendClock::default());
    let engine = engine_on(dir.path(), &state_file, &fakes, suspend_clock.clone()).await;
    let mut events = engine.events().subscribe();
    // The engine takes a delay inhibitor at start.
    fakes.inhibitors_until(1, 1).await;

    let (id, _) = engine.submit_review(submission("s1")).await.unwrap();
    next_event(
        &mut events,
        WAIT,
        |e| matches!(e, EngineEvent::ReviewStarted { review_id, .. } if *review_id == id),
    )
    .await;
    let before_sleep = engine.status().await.unwrap();
    fakes.prepare_for_sleep(true).await;
    let preempted = next_event(
        &mut events,
        WAIT,
        |e| matches!(e, EngineEvent::ReviewPreempted { review_id, .. } if *review_id == id),
    )
    .await;
    let EngineEvent::ReviewPreempted { reason, .. } = preempted else {
        unreachable!()
    };
    assert_eq!(reason, "preempted: the computer is going to sleep");
    // The inhibitor is let go once learning stopped.
    fakes.inhibitors_until(1, 0).await;
    assert_eq!(review_status(&engine, &id).await, ReviewStatus::Queued);
    let asleep = engine.status().await.unwrap();
    assert!(asleep.power.sleeping);
    assert_eq!(asleep.learning.state, ActivityState::Paused);
    assert_eq!(
        asleep.learning.reason.as_deref(),
        Some("paused: the computer is going to sleep")
    );

    // The test process does not sleep; the suspend clock says two hours passed.
    suspend_clock.sleep_for(Duration::from_secs(2 * 3600));
    fakes.prepare_for_sleep(false).await;
    // The inhibitor is taken again on wake.
    fakes.inhibitors_until(2, 1).await;
    // Two hours asleep aged the review past `max_age`, and still it waits out the settle window
    // the wake starts: the person just opened the lid.
    let awake = status_until(&engine, WAIT, |s| {
        s.learning.reason.as_deref() == Some("waiting: the settle window after the computer woke")
    })
    .await;
    assert!(!awake.power.sleeping);
    next_event(
        &mut events,
        Duration::from_secs(60),
        |e| matches!(e, EngineEvent::ReviewCompleted { review_id, .. } if *review_id == id),
    )
    .await;
    let review = engine
        .reviews(None)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap();
    assert_eq!(review.status, ReviewStatus::Done);
    assert!(before_sleep.power.learning_held.is_none());
    engine.shutdown().await;
}
