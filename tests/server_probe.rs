//! The HTTP probe against the stand-in llama-server: readings in both modes, never waking a
//! model, and every fault answering `unreachable` with its reason within the timeout.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lull::server::{
    HttpProbe, ModelReading, ModelStatus, ProbeConfig, ServerMode, ServerReading, ServerState,
};
use lull_stand_in::{Endpoint, Fault, ModelStatus as StandInStatus, StandIn, StandInConfig};

const REQUEST_TIMEOUT: Duration = Duration::from_millis(400);

struct Fixture {
    _dir: tempfile::TempDir,
    state_file: PathBuf,
    probe: HttpProbe,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    let config = ProbeConfig {
        request_timeout: REQUEST_TIMEOUT,
        connect_timeout: Duration::from_millis(200),
        cache_ttl: Duration::ZERO,
    };
    let probe = HttpProbe::new(&state_file, config).unwrap();
    Fixture {
        _dir: dir,
        state_file,
        probe,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn model(id: &str, status: ModelStatus, busy_slots: usize) -> ModelReading {
    ModelReading {
        id: id.to_owned(),
        status,
        busy_slots,
    }
}

async fn probe_with(fixture: &Fixture, server: &StandIn) -> ServerReading {
    server
        .write_state_file(&fixture.state_file, std::process::id())
        .unwrap();
    fixture.probe.probe().await
}

#[tokio::test]
async fn a_known_single_model_server_costs_two_requests_a_probe() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny")).await.unwrap();
    probe_with(&fixture, &server).await;
    server.reset_counters();

    let reading = fixture.probe.probe().await;
    assert_eq!(reading.models, vec![model("tiny", ModelStatus::Loaded, 0)]);
    assert_eq!(server.requests(Endpoint::Health), 0);
    assert_eq!(server.requests(Endpoint::Models), 0);
    assert_eq!(server.requests(Endpoint::Slots), 1);
    assert_eq!(server.total_requests(), 2, "/props and /slots");

    // While it loads, /props says so: the reading is `starting`, and the next one asks all.
    server.set_ready(false);
    assert_eq!(fixture.probe.probe().await.state, ServerState::Starting);
    server.set_ready(true);
    server.reset_counters();
    assert_eq!(fixture.probe.probe().await.state, ServerState::Ready);
    assert_eq!(server.requests(Endpoint::Health), 1);

    // Another live process behind the same URL (a new pid) is asked everything again.
    server
        .write_state_file(&fixture.state_file, std::os::unix::process::parent_id())
        .unwrap();
    server.reset_counters();
    assert_eq!(fixture.probe.probe().await.state, ServerState::Ready);
    assert_eq!(
        (
            server.requests(Endpoint::Health),
            server.requests(Endpoint::Models)
        ),
        (1, 1)
    );
}

#[tokio::test]
async fn single_mode_ready_idle_then_busy() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny").with_api_key("k"))
        .await
        .unwrap();
    let reading = probe_with(&fixture, &server).await;
    assert_eq!(reading.state, ServerState::Ready, "{:?}", reading.reason);
    assert_eq!(reading.mode, Some(ServerMode::Single));
    assert_eq!(
        reading.base_url.as_deref(),
        Some(server.base_url().as_str())
    );
    assert_eq!(reading.models, vec![model("tiny", ModelStatus::Loaded, 0)]);
    assert!(reading.idle);
    assert_eq!(reading.reason, None);
    assert_eq!(reading.api_key.as_ref().map(|k| k.expose()), Some("k"));

    server.set_busy("tiny", 1, true);
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.models, vec![model("tiny", ModelStatus::Loaded, 1)]);
    assert!(!reading.idle);
    assert!(reading.reason.unwrap().contains("tiny (1 busy)"));
}

#[tokio::test]
async fn a_loading_server_reads_starting() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny").loading())
        .await
        .unwrap();
    let reading = probe_with(&fixture, &server).await;
    assert_eq!(reading.state, ServerState::Starting);
    assert!(!reading.idle);
    let reason = reading.reason.unwrap();
    assert!(
        reason.contains("503") && reason.contains("Loading model"),
        "{reason}"
    );
}

#[tokio::test]
async fn router_mode_reads_statuses_and_never_wakes_a_model() {
    let fixture = fixture();
    let server = StandIn::start(
        StandInConfig::router([
            ("hot", StandInStatus::Loaded),
            ("nap", StandInStatus::Sleeping),
            ("cold", StandInStatus::Unloaded),
            ("warm", StandInStatus::Loading),
            ("fetch", StandInStatus::Downloading),
            ("also-hot", StandInStatus::Loaded),
        ])
        .with_api_key("k"),
    )
    .await
    .unwrap();
    server.set_busy("also-hot", 0, true);
    let reading = probe_with(&fixture, &server).await;
    for _ in 0..5 {
        assert_eq!(fixture.probe.probe().await, reading);
    }
    assert_eq!(reading.state, ServerState::Ready, "{:?}", reading.reason);
    assert_eq!(reading.mode, Some(ServerMode::Router));
    assert_eq!(
        reading.models,
        vec![
            model("hot", ModelStatus::Loaded, 0),
            model("nap", ModelStatus::Sleeping, 0),
            model("cold", ModelStatus::Unloaded, 0),
            model("warm", ModelStatus::Loading, 0),
            model("fetch", ModelStatus::Downloading, 0),
            model("also-hot", ModelStatus::Loaded, 1),
        ]
    );
    assert!(!reading.idle);

    assert!(
        server.loads().is_empty(),
        "the probe caused a load: {:?}",
        server.loads()
    );
    assert_eq!(server.model_status("nap"), Some(StandInStatus::Sleeping));
    assert_eq!(server.model_status("cold"), Some(StandInStatus::Unloaded));
    let slot_queries: Vec<String> = server
        .request_log()
        .into_iter()
        .filter(|request| request.endpoint == Endpoint::Slots)
        .map(|request| request.query.unwrap_or_default())
        .collect();
    assert_eq!(slot_queries.len(), 6 * 2, "two loaded models, six probes");
    for query in &slot_queries {
        assert!(
            query == "model=hot&autoload=false" || query == "model=also-hot&autoload=false",
            "{query}"
        );
    }

    server.set_busy("also-hot", 0, false);
    let reading = fixture.probe.probe().await;
    assert!(reading.idle, "idle: no processing slot on any loaded model");
}

#[tokio::test]
async fn router_with_nothing_loaded_is_ready_and_idle_without_slot_requests() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::router([("nap", StandInStatus::Sleeping)]))
        .await
        .unwrap();
    let reading = probe_with(&fixture, &server).await;
    assert_eq!(reading.state, ServerState::Ready);
    assert!(reading.idle);
    assert!(reading.first_loaded_model().is_none());
    assert_eq!(server.requests(Endpoint::Slots), 0);
    assert!(server.loads().is_empty());
}

/// Probes with a fault injected and checks: unreachable, in time, with the reason.
async fn check_fault(configure: impl FnOnce(&StandIn), expected_reason: &str) {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("m").with_api_key("k"))
        .await
        .unwrap();
    server
        .write_state_file(&fixture.state_file, std::process::id())
        .unwrap();
    configure(&server);
    let started = Instant::now();
    let reading = fixture.probe.probe().await;
    let elapsed = started.elapsed();
    assert_eq!(
        reading.state,
        ServerState::Unreachable,
        "{:?}",
        reading.reason
    );
    assert!(!reading.idle);
    assert!(reading.models.is_empty());
    let reason = reading.reason.unwrap();
    assert!(
        reason.contains(expected_reason),
        "reason {reason:?} lacks {expected_reason:?}"
    );
    assert!(
        elapsed < REQUEST_TIMEOUT + Duration::from_millis(300),
        "took {elapsed:?}"
    );
}

#[tokio::test]
async fn a_hung_health_is_unreachable_within_the_timeout() {
    check_fault(
        |s| s.inject_fault(Endpoint::Health, Fault::Hang),
        "no answer from /health within",
    )
    .await;
}

#[tokio::test]
async fn a_hung_slots_is_unreachable_within_the_timeout() {
    check_fault(
        |s| s.inject_fault(Endpoint::Slots, Fault::Hang),
        "no answer from /slots within",
    )
    .await;
}

#[tokio::test]
async fn a_slow_server_beyond_the_timeout_is_unreachable() {
    check_fault(
        |s| s.inject_fault(Endpoint::Models, Fault::Slow(Duration::from_secs(5))),
        "no answer from /models within",
    )
    .await;
}

#[tokio::test]
async fn a_500_is_unreachable_with_the_status() {
    check_fault(
        |s| s.inject_fault(Endpoint::Health, Fault::Status500),
        "/health answered 500",
    )
    .await;
    check_fault(
        |s| s.inject_fault(Endpoint::Slots, Fault::Status500),
        "/slots answered 500",
    )
    .await;
}

#[tokio::test]
async fn garbage_is_unreachable_and_says_not_json() {
    check_fault(
        |s| s.inject_fault(Endpoint::Health, Fault::Garbage),
        "/health answered 200 with a body that is not JSON",
    )
    .await;
    check_fault(
        |s| s.inject_fault(Endpoint::Models, Fault::Garbage),
        "/models answered a body that is not JSON",
    )
    .await;
    check_fault(
        |s| s.inject_fault(Endpoint::Slots, Fault::Garbage),
        "/slots answered a body that is not JSON",
    )
    .await;
}

#[tokio::test]
async fn a_refused_key_is_unreachable_and_says_so() {
    check_fault(|s| s.set_api_key(Some("rotated")), "refused the api key").await;
}

#[tokio::test]
async fn a_server_that_went_away_is_unreachable() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("m")).await.unwrap();
    server
        .write_state_file(&fixture.state_file, std::process::id())
        .unwrap();
    server.stop().await;
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.state, ServerState::Unreachable);
    assert!(reading.reason.unwrap().contains("cannot connect"));
}

#[tokio::test]
async fn file_level_states_need_no_http() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("m")).await.unwrap();
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.state, ServerState::Absent);
    assert!(reading.reason.unwrap().contains("does not exist"));

    write(&fixture.state_file, "{\"base_url\": \"http://127.0.0.1");
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.state, ServerState::Invalid);
    assert!(reading.reason.unwrap().contains("truncated"));

    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    server.write_state_file(&fixture.state_file, pid).unwrap();
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.state, ServerState::Stale);
    assert_eq!(
        reading.base_url.as_deref(),
        Some(server.base_url().as_str())
    );
    assert_eq!(
        server.total_requests(),
        0,
        "absent, invalid and stale cost no request"
    );
}

/// Regression: the real llama-server wakes a sleeping model on `GET /slots` (seen on a real
/// build, single and router mode), so a single-model probe asks `/props` first.
#[tokio::test]
async fn single_mode_sleeping_model_is_read_without_waking_it() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny").with_api_key("k"))
        .await
        .unwrap();
    server.set_model_status("tiny", StandInStatus::Sleeping);
    let reading = probe_with(&fixture, &server).await;
    assert_eq!(reading.state, ServerState::Ready);
    assert_eq!(
        reading.models,
        vec![model("tiny", ModelStatus::Sleeping, 0)]
    );
    assert!(reading.idle);
    assert_eq!(server.requests(Endpoint::Slots), 0, "/slots would wake it");
    assert!(server.loads().is_empty());
    assert_eq!(server.model_status("tiny"), Some(StandInStatus::Sleeping));

    server.set_model_status("tiny", StandInStatus::Loaded);
    server.set_busy("tiny", 0, true);
    let reading = probe_with(&fixture, &server).await;
    assert_eq!(reading.models, vec![model("tiny", ModelStatus::Loaded, 1)]);
    assert!(!reading.idle);
}

/// A live process named `llama-server` with `flags` on its command line (a copy of bash waiting
/// on its stdin with a builtin, so no child of its own), whose pid a state file can name: the
/// probe reads its launch arguments as it would the real server's. Killed when dropped.
struct NamedLlamaServer {
    _dir: tempfile::TempDir,
    child: std::process::Child,
}

impl NamedLlamaServer {
    fn spawn(flags: &[&str]) -> NamedLlamaServer {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("llama-server");
        std::fs::copy("/bin/bash", &program).unwrap();
        let child = std::process::Command::new(&program)
            .args(["-c", "read -r _", "llama-server"])
            .args(flags)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // `spawn` returns once exec began; the kernel sets the new command line a moment later.
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read(&cmdline).unwrap_or_default().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        NamedLlamaServer { _dir: dir, child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for NamedLlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_server_started_without_sleep_is_read_with_slots_alone() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny")).await.unwrap();
    let process = NamedLlamaServer::spawn(&["-m", "tiny.gguf", "--port", "8080"]);
    server
        .write_state_file(&fixture.state_file, process.pid())
        .unwrap();
    assert_eq!(fixture.probe.probe().await.state, ServerState::Ready);
    assert_eq!(server.total_requests(), 3, "/health, /models and /slots");

    server.reset_counters();
    server.set_busy("tiny", 0, true);
    let reading = fixture.probe.probe().await;
    assert_eq!(reading.models, vec![model("tiny", ModelStatus::Loaded, 1)]);
    assert_eq!(server.requests(Endpoint::Slots), 1);
    assert_eq!(server.total_requests(), 1, "no /props: it cannot sleep");
}

#[tokio::test]
async fn a_server_started_with_sleep_is_asked_props_first_and_not_woken() {
    let fixture = fixture();
    let server = StandIn::start(StandInConfig::single("tiny")).await.unwrap();
    let process = NamedLlamaServer::spawn(&["-m", "tiny.gguf", "--sleep-idle-seconds", "30"]);
    server
        .write_state_file(&fixture.state_file, process.pid())
        .unwrap();
    assert_eq!(fixture.probe.probe().await.state, ServerState::Ready);
    server.set_model_status("tiny", StandInStatus::Sleeping);
    server.reset_counters();

    let reading = fixture.probe.probe().await;
    assert_eq!(
        reading.models,
        vec![model("tiny", ModelStatus::Sleeping, 0)]
    );
    assert_eq!(server.requests(Endpoint::Slots), 0, "/slots would wake it");
    assert_eq!(server.total_requests(), 1, "/props");
    assert_eq!(server.model_status("tiny"), Some(StandInStatus::Sleeping));
}
