//! Idle footprint of the headless daemon: the built `lull serve` binary, with a temporary data
//! directory, measured from `/proc` over [`WINDOW`] twice:
//!
//! - with an empty queue (no managed server: its state file is absent);
//! - with one review waiting on a busy managed server (the stand-in llama-server with a slot
//!   held busy, and a supervisor state file naming it), so the dispatcher rechecks it.
//!
//! CPU is the process's `utime + stime` (`/proc/<pid>/stat`) over the window; since those count
//! in 10 ms ticks, the per-thread run time of `/proc/<pid>/task/*/schedstat` (nanoseconds) is
//! read too and the larger of the two is reported. Wake-ups are the threads' context switches;
//! memory is `VmRSS` of `/proc/<pid>/status`. Results go to `bench/results/latest.json` under
//! `"idle"`. Run with `cargo bench --bench idle`; `LULL_BENCH_IDLE_SECS` shortens the windows
//! for a quick look.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lull_stand_in::{StandIn, StandInConfig};
use serde_json::{json, Value};

/// Length of each measured window.
const WINDOW: Duration = Duration::from_secs(60);
/// Quiet time after start-up (or after submitting) before a window opens.
const SETTLE: Duration = Duration::from_secs(3);
/// Longest wait for `lull serve` to answer `/v1/health`.
const START_LIMIT: Duration = Duration::from_secs(20);

/// CPU and scheduling counters of a process at one moment.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: Instant,
    stat_ticks: u64,
    schedstat_ns: u64,
    context_switches: u64,
}

fn sample(pid: u32) -> Sample {
    let at = Instant::now();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after_name = &stat[stat.rfind(')').expect("stat has a command name") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let stat_ticks = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let mut schedstat_ns = 0;
    let mut context_switches = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc/<pid>/task") {
        let task = task.unwrap().path();
        if let Ok(text) = std::fs::read_to_string(task.join("schedstat")) {
            schedstat_ns += text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(text) = std::fs::read_to_string(task.join("status")) {
            for line in text.lines() {
                if line.starts_with("voluntary_ctxt_switches:")
                    || line.starts_with("nonvoluntary_ctxt_switches:")
                {
                    context_switches += line
                        .split_whitespace()
                        .nth(1)
                        .and_then(|n| n.parse::<u64>().ok())
                        .unwrap_or(0);
                }
            }
        }
    }
    Sample {
        at,
        stat_ticks,
        schedstat_ns,
        context_switches,
    }
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmRSS");
    kib / 1024.0
}

/// CPU per minute and wake-ups per minute over `window`.
struct Footprint {
    cpu_ms_per_min: f64,
    wakeups_per_min: f64,
    rss_mb: f64,
}

fn measure(pid: u32, window: Duration) -> Footprint {
    let before = sample(pid);
    std::thread::sleep(window);
    let after = sample(pid);
    let minutes = (after.at - before.at).as_secs_f64() / 60.0;
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let stat_ms = (after.stat_ticks - before.stat_ticks) as f64 * 1000.0 / ticks_per_s;
    let schedstat_ms = after.schedstat_ns.saturating_sub(before.schedstat_ns) as f64 / 1e6;
    Footprint {
        cpu_ms_per_min: stat_ms.max(schedstat_ms) / minutes,
        wakeups_per_min: after
            .context_switches
            .saturating_sub(before.context_switches) as f64
            / minutes,
        rss_mb: rss_mb(pid),
    }
}

/// A running `lull serve`, stopped with SIGTERM when dropped.
struct Daemon {
    child: Child,
    base_url: String,
    token: String,
}

impl Daemon {
    fn start(data_dir: &Path, state_file: &Path) -> Daemon {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lull"))
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--config")
            .arg(data_dir.join("config.toml"))
            .arg("serve")
            .env("LULL_API_LISTEN", "127.0.0.1:0")
            .env("LULL_SERVER_STATE_FILE", state_file)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn lull serve");
        let started = Instant::now();
        let api_json = data_dir.join("api.json");
        while started.elapsed() < START_LIMIT {
            if let Ok(text) = std::fs::read_to_string(&api_json) {
                let discovery: Value = serde_json::from_str(&text).unwrap();
                let base_url = discovery["base_url"].as_str().unwrap().to_string();
                let token = std::fs::read_to_string(data_dir.join("api-token")).unwrap();
                return Daemon {
                    child,
                    base_url,
                    token: token.trim().to_string(),
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("lull serve did not write api.json within {START_LIMIT:?}");
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let window = std::env::var("LULL_BENCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(WINDOW);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();

    // An empty queue and no managed server.
    let dir = tempfile::tempdir().unwrap();
    let state_file: PathBuf = dir.path().join("runtime/server.json");
    std::fs::create_dir_all(state_file.parent().unwrap()).unwrap();
    let empty = {
        let daemon = Daemon::start(&dir.path().join("data-empty"), &state_file);
        let client = Client::new(&runtime, &daemon);
        assert_eq!(client.get("/v1/status")["queue"]["queued"], 0);
        std::thread::sleep(SETTLE);
        measure(daemon.pid(), window)
    };
    println!(
        "empty queue: {:.2} ms CPU/min, {:.1} wake-ups/min, {:.1} MB resident",
        empty.cpu_ms_per_min, empty.wakeups_per_min, empty.rss_mb
    );

    // One review waiting on a busy managed server.
    let stand_in = runtime
        .block_on(StandIn::start(StandInConfig::single("bench-model")))
        .expect("the stand-in starts");
    stand_in.set_busy("bench-model", 0, true);
    stand_in
        .write_state_file(&state_file, std::process::id())
        .unwrap();
    let waiting = {
        let daemon = Daemon::start(&dir.path().join("data-waiting"), &state_file);
        let client = Client::new(&runtime, &daemon);
        let answer = client.post(
            "/v1/reviews",
            json!({"session_key": "bench", "messages": [{"role": "user", "content": "hello"}]}),
        );
        assert_eq!(answer["decision"], "deferred", "{answer}");
        std::thread::sleep(SETTLE);
        let status = client.get("/v1/status");
        assert_eq!(status["queue"]["queued"], 1, "{status}");
        assert_eq!(status["learning"]["state"], "waiting", "{status}");
        measure(daemon.pid(), window)
    };
    println!(
        "a review waiting on a busy server: {:.2} ms CPU/min, {:.1} wake-ups/min, {:.1} MB resident",
        waiting.cpu_ms_per_min, waiting.wakeups_per_min, waiting.rss_mb
    );
    runtime.block_on(stand_in.stop());

    let round = |x: f64| (x * 100.0).round() / 100.0;
    common::merge_into_results(
        "idle",
        json!({
            "cpu_ms_per_min_empty": round(empty.cpu_ms_per_min),
            "cpu_ms_per_min_waiting": round(waiting.cpu_ms_per_min),
            "rss_mb": round(empty.rss_mb.max(waiting.rss_mb)),
            "wakeups_per_min_empty": round(empty.wakeups_per_min),
            "wakeups_per_min_waiting": round(waiting.wakeups_per_min),
            "window_s": window.as_secs(),
        }),
    );
}

/// A few requests to the daemon's API.
struct Client<'a> {
    runtime: &'a tokio::runtime::Runtime,
    http: reqwest::Client,
    base_url: String,
    token: String,
}

impl<'a> Client<'a> {
    fn new(runtime: &'a tokio::runtime::Runtime, daemon: &Daemon) -> Client<'a> {
        Client {
            runtime,
            http: reqwest::Client::new(),
            base_url: daemon.base_url.clone(),
            token: daemon.token.clone(),
        }
    }

    fn get(&self, path: &str) -> Value {
        let request = self
            .http
            .get(format!("{}{path}", self.base_url))
            .bearer_auth(&self.token);
        self.runtime
            .block_on(async { request.send().await?.json().await })
            .expect("the daemon answers")
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let request = self
            .http
            .post(format!("{}{path}", self.base_url))
            .bearer_auth(&self.token)
            .json(&body);
        self.runtime
            .block_on(async { request.send().await?.json().await })
            .expect("the daemon answers")
    }
}
