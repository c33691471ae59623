//! Lull against the real llama.cpp `llama-server`, with a tiny random-weight model the test
//! writes itself (`scripts/llama/make_tiny_gguf.py`; nothing is downloaded).
//!
//! `make test` builds the server once (`scripts/llama/ensure-llama-server.sh`) and runs these
//! with `LULL_LLAMA_SERVER=<binary>` and `LULL_REQUIRE_LLAMA=1`. A plain `cargo test` without the
//! binary says so and skips, unless `LULL_REQUIRE_LLAMA=1` demands it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lull::config::Config;
use lull::engine::ReviewSubmission;
use lull::events::EngineEvent;
use lull::llm::{ChatEndpoint, ChatMessage, ChatRequest, HttpLlmClient, LlmClient, StreamPace};
use lull::reviews::ReviewStatus;
use lull::server::{
    sleep_mode, ModelStatus, MonitorConfig, ServerMonitor, ServerReading, ServerState, SleepMode,
};
use lull::{Engine, Paths};

const API_KEY: &str = "real-llama-key";

/// The real server as a child process; killed when dropped.
struct RealServer {
    child: Child,
    base_url: String,
}

impl Drop for RealServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_binary() -> Option<PathBuf> {
    match std::env::var_os("LULL_LLAMA_SERVER") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("LULL_REQUIRE_LLAMA").as_deref() == Ok("1") => {
            panic!("LULL_REQUIRE_LLAMA=1 but LULL_LLAMA_SERVER is not set: run `make test`")
        }
        None => {
            eprintln!("skipped: set LULL_LLAMA_SERVER to a llama-server binary (make test does)");
            None
        }
    }
}

/// The one-slot, one-thread server of most tests, with the script's smallest model.
const TINY: ServerShape = ServerShape {
    model_args: &[],
    server_args: &["-c", "4096", "-np", "1", "--threads", "1"],
};

/// The model the script writes and how the server runs it.
struct ServerShape {
    model_args: &'static [&'static str],
    server_args: &'static [&'static str],
}

fn write_tiny_model(dir: &Path, model_args: &[&str]) -> PathBuf {
    let model = dir.join("lull-tiny.gguf");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/llama/make_tiny_gguf.py");
    let output = Command::new("python3")
        .arg(script)
        .args(model_args)
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "make_tiny_gguf.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    model
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `llama-server -m <tiny model>` and writes the supervisor's state file for it.
fn start_real_server(
    binary: &Path,
    dir: &Path,
    state_file: &Path,
    shape: &ServerShape,
) -> RealServer {
    let model = write_tiny_model(dir, shape.model_args);
    let port = free_port();
    let child = Command::new(binary)
        .arg("-m")
        .arg(&model)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--api-key",
            API_KEY,
        ])
        .args(shape.server_args)
        .arg("--no-webui")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let record = serde_json::json!({ "base_url": base_url, "api_key": API_KEY, "pid": child.id() });
    std::fs::write(state_file, record.to_string()).unwrap();
    RealServer { child, base_url }
}

impl RealServer {
    /// Where to send chat requests for `model`.
    fn endpoint(&self, model: &str) -> ChatEndpoint {
        ChatEndpoint {
            base_url: self.base_url.clone(),
            api_key: Some(API_KEY.into()),
            model: model.into(),
        }
    }
}

/// Streams a long answer (the tiny model never stops on its own) in a task of its own.
fn long_story(
    endpoint: ChatEndpoint,
    pace: Option<StreamPace>,
) -> tokio::task::JoinHandle<Result<lull::llm::ChatReply, lull::llm::LlmError>> {
    let request = ChatRequest {
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "tell me a long story".into(),
        }],
        json_schema: None,
        max_tokens: 4000,
    };
    tokio::spawn(async move {
        HttpLlmClient::default()
            .chat(&endpoint, request, pace.as_ref())
            .await
    })
}

async fn wait_for_reading(
    monitor: &ServerMonitor,
    limit: Duration,
    wanted: impl Fn(&ServerReading) -> bool,
) -> (ServerReading, Duration) {
    let started = Instant::now();
    loop {
        let reading = monitor.refresh().await;
        if wanted(&reading) {
            return (reading, started.elapsed());
        }
        assert!(
            started.elapsed() < limit,
            "no matching reading within {limit:?}; last: {reading:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_file_to_ready_busy_slot_and_freed_within_a_second_of_the_drop() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("runtimes/llamacpp/server.json");
    let monitor = ServerMonitor::start(MonitorConfig::new(&state_file))
        .await
        .unwrap();
    assert_eq!(monitor.read().await.state, ServerState::Absent);

    std::fs::create_dir_all(state_file.parent().unwrap()).unwrap();
    let server = start_real_server(&binary, dir.path(), &state_file, &TINY);
    let (ready, _) = wait_for_reading(&monitor, Duration::from_secs(60), |r| {
        r.state == ServerState::Ready
    })
    .await;
    assert_eq!(ready.base_url.as_deref(), Some(server.base_url.as_str()));
    assert_eq!(ready.models.len(), 1, "{ready:?}");
    assert_eq!(ready.models[0].status, ModelStatus::Loaded);
    assert!(ready.idle, "{ready:?}");
    assert_eq!(
        sleep_mode(server.child.id()),
        SleepMode::Never,
        "no --sleep-idle-seconds"
    );

    let stream = long_story(server.endpoint(&ready.models[0].id), None);
    let (busy, _) =
        wait_for_reading(&monitor, Duration::from_secs(10), |r| r.n_busy_slots() == 1).await;
    assert!(!busy.idle);

    stream.abort();
    let (_, freed_after) = wait_for_reading(&monitor, Duration::from_secs(5), |r| r.idle).await;
    assert!(
        freed_after <= Duration::from_secs(1),
        "slot freed {freed_after:?} after the drop"
    );
    println!("real llama-server: slot freed {freed_after:?} after Lull dropped the stream");

    drop(server);
    std::fs::remove_file(&state_file).unwrap();
    wait_for_reading(&monitor, Duration::from_secs(5), |r| {
        r.state == ServerState::Absent
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_runs_is_preempted_and_ends_cleanly_on_the_real_server() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    let server = start_real_server(&binary, dir.path(), &state_file, &TINY);

    let mut config = Config::default();
    config.server.state_file = state_file.clone();
    config.scheduler.settle_s = 1;
    config.scheduler.settle_after_preemption_s = 1;
    let paths = Paths {
        data_dir: dir.path().join("data"),
        config_file: dir.path().join("none.toml"),
    };
    let engine = Engine::open(config, paths).await.unwrap();
    let monitor = ServerMonitor::start(MonitorConfig::new(&state_file))
        .await
        .unwrap();
    wait_for_reading(&monitor, Duration::from_secs(60), |r| {
        r.state == ServerState::Ready
    })
    .await;
    let mut events = engine.events().subscribe();

    let submission = ReviewSubmission {
        session_key: "real".into(),
        messages: vec![
            ChatMessage {
                role: "user".into(),
                content: "the build fails on CI".into(),
            },
            ChatMessage {
                role: "assistant".into(),
                content: "I bisected it to the lockfile".into(),
            },
        ],
        focus: None,
        snapshot_at: None,
        runtime: None,
    };
    let (id, _) = engine.submit_review(submission).await.unwrap();
    wait_for_reading(&monitor, Duration::from_secs(20), |r| r.n_busy_slots() == 1).await;
    // Past prompt processing, into decoding: the server notices a dropped client on its next
    // write, and it writes nothing while it reads the prompt.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let lease = engine.start_turn();
    let (_, freed_after) = wait_for_reading(&monitor, Duration::from_secs(5), |r| r.idle).await;
    assert!(
        freed_after <= Duration::from_secs(1),
        "preemption freed the slot after {freed_after:?}"
    );
    let review = engine.review(&id).await.unwrap();
    assert_eq!(
        (review.status, review.attempts),
        (ReviewStatus::Queued, 1),
        "requeued, not dropped"
    );

    engine.finish_turn(&lease).unwrap();
    let terminal = tokio::time::timeout(Duration::from_secs(240), async {
        loop {
            match events.recv().await.unwrap() {
                EngineEvent::ReviewCompleted { .. }
                | EngineEvent::ReviewFailed {
                    will_retry: false, ..
                } => return,
                _ => {}
            }
        }
    })
    .await;
    assert!(terminal.is_ok(), "the review reached no terminal state");
    let review = engine.review(&id).await.unwrap();
    // A random-weight model's answer is gibberish: either the schema-constrained JSON happens to
    // validate, or (usually) the review fails after its retries with the reason recorded.
    match review.status {
        ReviewStatus::Done => assert!(review.completion_tokens.unwrap_or(0) > 0),
        ReviewStatus::Failed => {
            assert!(review.last_error.as_deref().is_some_and(|e| !e.is_empty()))
        }
        other => panic!("unexpected terminal status {other:?}"),
    }
    assert!(review.attempts >= 2);
    engine.shutdown().await;
    drop(server);
}

/// Measured on the real server, not assumed: another client's long prompt stalls our stream,
/// and [`StreamPace`] (what running work watches instead of polling `/slots`) notices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_clients_prompt_stalls_our_stream_on_the_real_server() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    // Two slots, and a model large enough that a long prompt takes the CPU a while to read.
    let shape = ServerShape {
        model_args: &[
            "--layers",
            "8",
            "--embd",
            "512",
            "--heads",
            "8",
            "--kv-heads",
            "8",
            "--ff",
            "1536",
            "--ctx",
            "8192",
        ],
        server_args: &["-c", "16384", "-np", "2", "--threads", "2"],
    };
    let server = start_real_server(&binary, dir.path(), &state_file, &shape);
    let monitor = ServerMonitor::start(MonitorConfig::new(&state_file))
        .await
        .unwrap();
    wait_for_reading(&monitor, Duration::from_secs(60), |r| {
        r.state == ServerState::Ready
    })
    .await;

    let pace = StreamPace::new();
    let ours = long_story(server.endpoint("tiny"), Some(pace.clone()));
    // Alone on the server, our stream keeps its pace.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        tokio::time::timeout(Duration::from_secs(1), pace.stalled())
            .await
            .is_err(),
        "our stream stalled with nobody else on the server"
    );
    assert!(!ours.is_finished(), "our answer ended too soon to measure");

    let long_prompt: String = (0..400).map(|i| format!("word{i} ")).collect();
    let other = {
        let url = format!("{}/chat/completions", server.base_url);
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(API_KEY)
                .json(&serde_json::json!({
                    "messages": [{"role": "user", "content": long_prompt}],
                    "max_tokens": 4,
                }))
                .send()
                .await
                .map(|response| response.status())
        })
    };
    let started = Instant::now();
    tokio::time::timeout(Duration::from_secs(20), pace.stalled())
        .await
        .expect("our stream never stalled while another client's prompt was read");
    let noticed_after = started.elapsed();
    println!("our stream stalled {noticed_after:?} after another client sent a ~4k-token prompt");
    assert!(noticed_after < Duration::from_secs(5));
    assert!(
        !ours.is_finished(),
        "the stall was not the end of our answer"
    );
    ours.abort();
    assert!(other.await.unwrap().unwrap().is_success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sleeping_model_is_read_as_sleeping_and_stays_asleep_on_the_real_server() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    let shape = ServerShape {
        model_args: TINY.model_args,
        server_args: &[
            "-c",
            "2048",
            "-np",
            "1",
            "--threads",
            "1",
            "--sleep-idle-seconds",
            "1",
        ],
    };
    let server = start_real_server(&binary, dir.path(), &state_file, &shape);
    let monitor = ServerMonitor::start(MonitorConfig::new(&state_file))
        .await
        .unwrap();
    let asleep = |r: &ServerReading| {
        r.state == ServerState::Ready
            && r.models.first().map(|m| m.status) == Some(ModelStatus::Sleeping)
    };
    // A reading of an awake server asks `/slots`, which restarts the server's idle timer: read
    // less often than its 1 s timer until it sleeps, then often; no reading may wake it.
    let started = Instant::now();
    while !asleep(&monitor.refresh().await) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the model never fell asleep"
        );
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    assert_eq!(sleep_mode(server.child.id()), SleepMode::Possible);
    for _ in 0..10 {
        let reading = monitor.refresh().await;
        assert!(asleep(&reading), "{reading:?}");
        assert!(reading.idle, "a sleeping model is idle: {reading:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
