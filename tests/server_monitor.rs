//! The monitor end to end: folder watcher + probe + published readings, against the stand-in.
//!
//! - every transition absent → starting → ready → busy → idle → stale → absent is published
//!   within 1 s, in both server modes;
//! - each bad state file (BOM, empty, truncated, array, missing or ill-typed `base_url`, dead
//!   pid, replaced by rename, folder deleted and recreated) is reported with its reason and the
//!   monitor keeps going;
//! - no request reaches the server while nobody asks; interest polls and dropping it stops
//!   the polling (on a paused clock, through a probe that counts its readings).
//!
//! The file watcher is a real OS thread: a test waits for its readiness
//! ([`ServerMonitor::watching`]) or for a published reading, never for a fixed time.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lull::server::{
    ManualProbe, ModelStatus, MonitorConfig, ServerMonitor, ServerProbe, ServerReading,
    ServerState, Watching, INTEREST_POLL_INTERVAL,
};
use lull_stand_in::{ModelStatus as StandInStatus, StandIn, StandInConfig};
use tokio::sync::watch;

/// The promise: a change shows within a second.
const WITHIN: Duration = Duration::from_secs(1);

fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A state file path whose folders do not exist yet.
fn state_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("runtimes/llamacpp/server.json")
}

async fn wait_for(
    rx: &mut watch::Receiver<ServerReading>,
    what: &str,
    predicate: impl FnMut(&ServerReading) -> bool,
) -> ServerReading {
    let outcome = tokio::time::timeout(WITHIN, async {
        rx.wait_for(predicate).await.map(|reading| reading.clone())
    })
    .await;
    match outcome {
        Ok(Ok(reading)) => reading,
        Ok(Err(_)) => panic!("the monitor stopped while waiting for {what}"),
        Err(_) => panic!(
            "no {what} within {WITHIN:?}; last reading: {:?}",
            *rx.borrow()
        ),
    }
}

async fn wait_state(rx: &mut watch::Receiver<ServerReading>, state: ServerState) -> ServerReading {
    wait_for(rx, state.as_str(), |reading| reading.state == state).await
}

fn write_by_rename(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn write_in_place(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Drives one server through every transition; `busy_model` is where a slot gets busy.
async fn every_transition(server: StandIn, busy_model: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let monitor = ServerMonitor::start(MonitorConfig::new(&path))
        .await
        .unwrap();
    let mut rx = monitor.subscribe();
    assert_eq!(monitor.latest().state, ServerState::Absent);
    // Work is waiting for the GPU: someone is interested, so the monitor keeps looking.
    let _interest = monitor.interest();

    server.write_state_file(&path, std::process::id()).unwrap();
    let reading = wait_state(&mut rx, ServerState::Starting).await;
    assert_eq!(
        reading.base_url.as_deref(),
        Some(server.base_url().as_str())
    );

    server.set_ready(true);
    let reading = wait_state(&mut rx, ServerState::Ready).await;
    assert!(reading.idle, "{reading:?}");
    assert!(reading.first_loaded_model().is_some());

    server.set_busy(busy_model, 0, true);
    let reading = wait_for(&mut rx, "busy", |r| r.is_ready() && !r.idle).await;
    assert_eq!(reading.model(busy_model).unwrap().busy_slots, 1);

    server.set_busy(busy_model, 0, false);
    let reading = wait_for(&mut rx, "idle", |r| r.is_ready() && r.idle).await;
    assert_eq!(reading.n_busy_slots(), 0);

    server.write_state_file(&path, dead_pid()).unwrap();
    let reading = wait_state(&mut rx, ServerState::Stale).await;
    assert!(reading.reason.unwrap().contains("not running"));

    std::fs::remove_file(&path).unwrap();
    wait_state(&mut rx, ServerState::Absent).await;
    assert!(
        server.loads().is_empty(),
        "the monitor woke a model: {:?}",
        server.loads()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_mode_every_transition_within_a_second() {
    let server = StandIn::start(StandInConfig::single("tiny").with_api_key("k").loading())
        .await
        .unwrap();
    every_transition(server, "tiny").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn router_mode_every_transition_within_a_second() {
    let server = StandIn::start(
        StandInConfig::router([
            ("chat", StandInStatus::Loaded),
            ("big", StandInStatus::Sleeping),
            ("other", StandInStatus::Unloaded),
        ])
        .with_api_key("k")
        .loading(),
    )
    .await
    .unwrap();
    every_transition(server, "chat").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn router_model_status_changes_show_without_waking_anything() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let server = StandIn::start(StandInConfig::router([
        ("chat", StandInStatus::Loaded),
        ("big", StandInStatus::Sleeping),
    ]))
    .await
    .unwrap();
    server.write_state_file(&path, std::process::id()).unwrap();
    let monitor = ServerMonitor::start(MonitorConfig::new(&path))
        .await
        .unwrap();
    let mut rx = monitor.subscribe();
    let _interest = monitor.interest();
    let reading = wait_state(&mut rx, ServerState::Ready).await;
    assert_eq!(reading.model("big").unwrap().status, ModelStatus::Sleeping);

    server.set_model_status("chat", StandInStatus::Sleeping);
    server.set_model_status("big", StandInStatus::Loaded);
    let reading = wait_for(&mut rx, "chat asleep", |r| {
        r.model("chat")
            .is_some_and(|m| m.status == ModelStatus::Sleeping)
    })
    .await;
    assert_eq!(reading.first_loaded_model().unwrap().id, "big");
    assert!(server.loads().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_bad_state_file_is_reported_and_the_monitor_keeps_going() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let server = StandIn::start(StandInConfig::single("m")).await.unwrap();
    let monitor = ServerMonitor::start(MonitorConfig::new(&path))
        .await
        .unwrap();
    let mut rx = monitor.subscribe();
    let _interest = monitor.interest();
    let good = format!(
        "{{\"base_url\":\"{}\",\"api_key\":\"\",\"pid\":{}}}",
        server.base_url(),
        std::process::id()
    );

    let bad_files: [(&str, Vec<u8>, &str); 7] = [
        ("empty", Vec::new(), "empty"),
        (
            "truncated",
            good.as_bytes()[..good.len() / 2].to_vec(),
            "truncated",
        ),
        ("array", format!("[{good}]").into_bytes(), "holds an array"),
        (
            "missing base_url",
            b"{\"api_key\":\"k\",\"pid\":1}".to_vec(),
            "no `base_url`",
        ),
        (
            "base_url a number",
            b"{\"base_url\":8080}".to_vec(),
            "`base_url` in the state file is a number",
        ),
        (
            "base_url an object",
            b"{\"base_url\":{\"host\":\"h\"}}".to_vec(),
            "is an object",
        ),
        (
            "not json",
            b"base_url=http://h/v1".to_vec(),
            "not valid JSON",
        ),
    ];
    for (name, bytes, reason) in bad_files {
        write_in_place(&path, &bytes);
        let reading = wait_for(&mut rx, name, |r| {
            r.state == ServerState::Invalid
                && r.reason.as_deref().is_some_and(|t| t.contains(reason))
        })
        .await;
        assert!(!reading.idle);
        // The engine keeps running: a good file brings the server back.
        write_in_place(&path, good.as_bytes());
        wait_state(&mut rx, ServerState::Ready).await;
    }

    // A BOM is not a fault.
    write_in_place(&path, b"{}");
    wait_state(&mut rx, ServerState::Invalid).await;
    let mut with_bom = b"\xEF\xBB\xBF".to_vec();
    with_bom.extend_from_slice(good.as_bytes());
    write_in_place(&path, &with_bom);
    wait_state(&mut rx, ServerState::Ready).await;

    // A dead pid is stale.
    let stale = good.replace(
        &format!("\"pid\":{}", std::process::id()),
        &format!("\"pid\":{}", dead_pid()),
    );
    write_by_rename(&path, stale.as_bytes());
    wait_state(&mut rx, ServerState::Stale).await;

    // A file replaced by rename is seen.
    write_by_rename(&path, good.as_bytes());
    wait_state(&mut rx, ServerState::Ready).await;

    // The whole folder deleted, then recreated with the file.
    std::fs::remove_dir_all(dir.path().join("runtimes")).unwrap();
    wait_state(&mut rx, ServerState::Absent).await;
    write_by_rename(&path, b"[]");
    wait_state(&mut rx, ServerState::Invalid).await;
    write_by_rename(&path, good.as_bytes());
    wait_state(&mut rx, ServerState::Ready).await;

    // And again, deleted and recreated quickly, inside one debounce window.
    std::fs::remove_dir_all(dir.path().join("runtimes")).unwrap();
    write_by_rename(&path, stale.as_bytes());
    wait_state(&mut rx, ServerState::Stale).await;
    write_in_place(&path, good.as_bytes());
    wait_state(&mut rx, ServerState::Ready).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_that_appears_after_start_is_watched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c/server.json");
    let server = StandIn::start(StandInConfig::single("m")).await.unwrap();
    let monitor = ServerMonitor::start(MonitorConfig::new(&path))
        .await
        .unwrap();
    let mut rx = monitor.subscribe();
    let mut watching = monitor.watching();
    assert_eq!(
        *watching.borrow(),
        Watching::Ancestor(dir.path().to_path_buf())
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // The watcher re-arms on the new folder itself: from then on every write there is seen.
    let folder = path.parent().unwrap().to_path_buf();
    tokio::time::timeout(
        WITHIN,
        watching.wait_for(|now| *now == Watching::Folder(folder.clone())),
    )
    .await
    .expect("the new folder is watched within a second")
    .unwrap();
    server.write_state_file(&path, std::process::id()).unwrap();
    // Nobody is interested: the monitor still probes once because a new server appeared.
    let reading = wait_state(&mut rx, ServerState::Ready).await;
    assert!(reading.idle);
}

/// How long to watch for stray readings (virtual time, so the 60 s cost nothing);
/// `LULL_ZERO_REQUEST_WINDOW_S` sets another.
fn quiet_window() -> Duration {
    let seconds = std::env::var("LULL_ZERO_REQUEST_WINDOW_S")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(60u64);
    Duration::from_secs(seconds)
}

fn ready() -> ServerReading {
    ServerReading {
        state: ServerState::Ready,
        base_url: Some("http://127.0.0.1:9/v1".into()),
        models: Vec::new(),
        idle: true,
        reason: None,
        mode: None,
        api_key: None,
    }
}

/// The monitor's own timing on a paused clock: each reading of the counting probe is one probe
/// of the server (the requests one probe costs are `tests/server_probe.rs`'s business).
#[tokio::test(start_paused = true)]
async fn no_request_reaches_the_server_while_nobody_asks() {
    let dir = tempfile::tempdir().unwrap();
    let path = state_path(&dir);
    let probe = Arc::new(ManualProbe::new(ready()));
    let monitor = ServerMonitor::start_with_probe(MonitorConfig::new(&path), probe.clone())
        .await
        .unwrap();
    let at_start = probe.reads();
    assert!(at_start <= 1, "at most one reading at start: {at_start}");

    let window = quiet_window();
    tokio::time::sleep(window).await;
    let stray = probe.reads() - at_start;
    println!("readings of the managed server over {window:?} while nothing waits: {stray}");
    assert_eq!(stray, 0);

    // Ten askers at once cost one probe: they share the one cached.
    let before = probe.reads();
    futures_util::future::join_all((0..10).map(|_| monitor.read())).await;
    assert_eq!(probe.reads() - before, 1, "a burst costs one probe");
    // A reading asked afresh (Lull's request just let go of its slot) is never the cached one.
    ServerProbe::read_afresh(&monitor).await;
    assert_eq!(probe.reads() - before, 2, "afresh, past the cache");

    // Interest polls every INTEREST_POLL_INTERVAL (the cache is shorter, so each poll probes);
    // dropping the last guard stops the polling.
    let before = probe.reads();
    let interest = monitor.interest();
    let second = monitor.interest();
    tokio::time::sleep(INTEREST_POLL_INTERVAL * 10 + INTEREST_POLL_INTERVAL / 2).await;
    assert_eq!(
        probe.reads() - before,
        10,
        "interest keeps the reading fresh"
    );
    drop(interest);
    let one_left = probe.reads();
    tokio::time::sleep(INTEREST_POLL_INTERVAL * 3).await;
    assert!(
        probe.reads() - one_left >= 2,
        "one guard is left: polling goes on"
    );
    drop(second);
    tokio::time::sleep(INTEREST_POLL_INTERVAL).await;
    let stopped = probe.reads();
    tokio::time::sleep(window).await;
    assert_eq!(
        probe.reads(),
        stopped,
        "polling stopped with the last guard"
    );
}
