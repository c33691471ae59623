//! The commands and the event follower against a real engine serving its API in this process
//! (`lull::api::serve` on a free loopback port, `api.json` and the token in a temp folder), so
//! each command is checked against the route it calls, not against a copy of its shape.

use std::path::Path;
use std::time::Duration;

use lull::{Config, Engine, Paths};
use serde_json::{json, Value};
use tauri::test::{mock_app, MockRuntime};
use tauri::{App, Manager as _};
use tokio::sync::{mpsc, oneshot};

use crate::error::CommandError;
use crate::events::{self, HostState, Listener};
use crate::link::EngineLink;
use crate::{drafts, jobs, reviews, settings, status};

/// How long a test waits for something the engine does at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// An engine and its API, serving `paths.data_dir` until [`Served::stop`].
struct Served {
    engine: Engine,
    stop: oneshot::Sender<()>,
    api: tokio::task::JoinHandle<anyhow::Result<()>>,
}

fn paths_in(dir: &Path) -> Paths {
    Paths {
        data_dir: dir.join("data"),
        config_file: dir.join("config.toml"),
    }
}

impl Served {
    async fn start(dir: &Path) -> Served {
        let paths = paths_in(dir);
        let mut config = Config::default();
        config.server.state_file = dir.join("no-server.json");
        config.api.listen = "127.0.0.1:0".into();
        let engine = Engine::open(config, paths.clone()).await.unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let api = tokio::spawn(lull::api::serve(engine.clone(), async {
            let _ = stopped.await;
        }));
        let api_json = paths.api_json();
        tokio::time::timeout(PATIENCE, async {
            while !api_json.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the API writes api.json");
        Served { engine, stop, api }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.api.await.unwrap().unwrap();
        self.engine.shutdown().await;
    }
}

fn app_for(dir: &Path) -> App<MockRuntime> {
    let app = mock_app();
    app.manage(EngineLink::new(paths_in(dir)));
    app
}

fn code(answer: Result<Value, CommandError>) -> String {
    answer
        .expect_err("the engine refuses")
        .code
        .as_str()
        .to_owned()
}

#[tokio::test]
async fn each_command_answers_what_its_route_answers() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path()).await;
    let app = app_for(dir.path());
    let engine = || app.state::<EngineLink>();

    let status = status::commands::engine_status(engine()).await.unwrap();
    assert_eq!(status["queue"], json!({"queued": 0, "running": 0}));
    assert!(status["server"]["state"].is_string(), "{status}");

    // Reviews: the route's `reviews` list, and the actions' empty answers.
    let submitted = engine()
        .post(
            "/v1/reviews",
            json!({"session_key": "s1", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await
        .unwrap();
    let review_id = submitted["review_id"].as_str().unwrap().to_owned();
    let listed = reviews::commands::list_reviews(engine(), None)
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], json!(review_id), "{listed}");
    let queued = reviews::commands::list_reviews(engine(), Some("queued".into()))
        .await
        .unwrap();
    assert_eq!(queued.as_array().unwrap().len(), 1);
    let refused = reviews::commands::list_reviews(engine(), Some("asleep".into())).await;
    assert_eq!(code(refused), "invalid_query");
    assert_eq!(
        reviews::commands::drop_review(engine(), review_id.clone())
            .await
            .unwrap(),
        Value::Null
    );
    let dropped = reviews::commands::list_reviews(engine(), Some("dropped".into()))
        .await
        .unwrap();
    assert_eq!(dropped[0]["id"], json!(review_id));
    let again = reviews::commands::run_review_now(engine(), review_id).await;
    assert_ne!(code(again), "engine_unavailable");

    // Drafts: an id is one path segment, so `../status` is a draft nobody has.
    let drafts = drafts::commands::list_drafts(engine(), None).await.unwrap();
    assert_eq!(drafts, json!([]));
    for id in ["../status", "..", "d 1", "%2e%2e"] {
        let answer = drafts::commands::get_draft(engine(), id.into()).await;
        assert_eq!(code(answer), "not_found", "{id}");
    }
    let approve = drafts::commands::approve_draft(engine(), "d1".into()).await;
    assert_eq!(code(approve), "not_found");
    let dismiss = drafts::commands::dismiss_finding(engine(), "d1".into(), 0, "ours".into()).await;
    assert_eq!(code(dismiss), "not_found");

    // Settings: the patch goes through as the UI sent it, and the API checks it.
    let changed = settings::commands::update_settings(engine(), json!({"paused": true}))
        .await
        .unwrap();
    assert_eq!(changed["paused"], json!(true));
    assert_eq!(
        settings::commands::get_settings(engine()).await.unwrap(),
        changed
    );
    let unknown = settings::commands::update_settings(engine(), json!({"sleepy": true})).await;
    assert_eq!(code(unknown), "invalid_body");

    // Jobs: a run needs logged outcomes, and the engine says so; unknown runs are not found.
    let stopping =
        json!({"max_rounds": 2, "target": null, "min_improvement": null, "wall_clock_s": 60});
    let start = jobs::commands::start_job(engine(), stopping).await;
    assert_eq!(code(start), "no_data");
    assert_eq!(
        jobs::commands::list_jobs(engine()).await.unwrap(),
        json!([])
    );
    assert_eq!(
        code(jobs::commands::get_job(engine(), "j1".into()).await),
        "not_found"
    );
    let cancel = jobs::commands::cancel_job(engine(), "j1".into()).await;
    assert_eq!(code(cancel), "not_found");
    let resume = jobs::commands::resume_job(engine(), "j1".into()).await;
    assert_eq!(code(resume), "not_found");
    let promote = jobs::commands::promote_job(engine(), "j1".into()).await;
    assert_eq!(code(promote), "not_found");

    served.stop().await;
}

#[tokio::test]
async fn a_missing_engine_is_unavailable_and_a_restarted_one_is_found_again() {
    let dir = tempfile::tempdir().unwrap();
    let app = app_for(dir.path());
    let engine = || app.state::<EngineLink>();

    let missing = status::commands::engine_status(engine()).await.unwrap_err();
    assert_eq!(missing.code, lull::error_code::ErrorCode::EngineUnavailable);
    assert!(
        missing.message.contains("no Lull engine is running"),
        "{missing:?}"
    );

    let served = Served::start(dir.path()).await;
    status::commands::engine_status(engine()).await.unwrap();
    served.stop().await;
    let stopped = status::commands::engine_status(engine()).await.unwrap_err();
    assert_eq!(stopped.code, lull::error_code::ErrorCode::EngineUnavailable);

    // A new engine on a new port: api.json changed, so the link connects anew.
    let served = Served::start(dir.path()).await;
    status::commands::engine_status(engine()).await.unwrap();
    served.stop().await;
}

/// What the follower told the window, in order.
#[derive(Debug)]
enum Heard {
    Event(Value),
    Host(HostState),
}

struct Recorder(mpsc::UnboundedSender<Heard>);

impl Listener for Recorder {
    fn engine_event(&self, event: Value) {
        let _ = self.0.send(Heard::Event(event));
    }

    fn host_changed(&self, state: &HostState) {
        let _ = self.0.send(Heard::Host(state.clone()));
    }
}

/// Waits for the first thing heard that `wanted` accepts, skipping the rest.
async fn hear(heard: &mut mpsc::UnboundedReceiver<Heard>, wanted: impl Fn(&Heard) -> bool) {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let next = heard.recv().await.expect("the follower runs");
            if wanted(&next) {
                return;
            }
        }
    })
    .await
    .expect("heard in time");
}

fn event_type(heard: &Heard, kind: &str) -> bool {
    matches!(heard, Heard::Event(event) if event["type"] == kind)
}

#[tokio::test]
async fn the_follower_forwards_events_and_reconnects_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path()).await;
    let link = EngineLink::new(paths_in(dir.path()));
    let (sender, mut heard) = mpsc::unbounded_channel();
    let follower = events::follow(link.clone(), None, Recorder(sender));

    hear(&mut heard, |h| matches!(h, Heard::Host(HostState::Running))).await;
    link.request(
        reqwest::Method::PATCH,
        "/v1/settings",
        Some(json!({"paused": true})),
    )
    .await
    .unwrap();
    hear(&mut heard, |h| event_type(h, "settings_changed")).await;

    served.stop().await;
    hear(&mut heard, |h| event_type(h, "engine_stopping")).await;
    hear(&mut heard, |h| {
        matches!(h, Heard::Host(HostState::Failed { message }) if message.contains("no Lull engine is running"))
    })
    .await;

    let served = Served::start(dir.path()).await;
    hear(&mut heard, |h| matches!(h, Heard::Host(HostState::Running))).await;
    // Events were missed while it was away: the UI is told to re-read.
    let next = heard.recv().await.unwrap();
    assert!(event_type(&next, "lagged"), "{next:?}");

    follower.abort();
    served.stop().await;
}
