//! The `lull-stand-in` binary as the window's end-to-end tests and the desktop smoke run it: a slot
//! turned busy and idle again from another process, by signal, and the requests it logs to a file.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary, started with `args`, stopped when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary and reads its root URL from its first line of output.
fn start(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lull-stand-in"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    // Keep reading, so the stand-in's later lines do not meet a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut output, &mut std::io::sink()));
    let base_url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let origin = base_url.trim_end_matches("/v1").to_owned();
    (Running(child), origin)
}

async fn busy_slots(origin: &str) -> Vec<bool> {
    let slots: Value = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{origin}/slots"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    slots
        .as_array()
        .unwrap()
        .iter()
        .map(|slot| slot["is_processing"].as_bool().unwrap())
        .collect()
}

fn signal(running: &Running, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), running.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

async fn wait_for(origin: &str, expected: &[bool]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while busy_slots(origin).await != expected {
        assert!(Instant::now() < deadline, "slots never became {expected:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn sigusr1_makes_the_named_slot_busy_and_sigusr2_idle_again() {
    let (running, origin) = start(&[
        "--model",
        "qwen3-8b",
        "--port",
        "0",
        "--busy-on-signal",
        "qwen3-8b:1",
    ]);
    assert_eq!(busy_slots(&origin).await, [false, false]);
    signal(&running, "USR1");
    wait_for(&origin, &[false, true]).await;
    signal(&running, "USR2");
    wait_for(&origin, &[false, false]).await;
    signal(&running, "USR1");
    wait_for(&origin, &[false, true]).await;
}

#[test]
fn busy_on_signal_refuses_a_slot_the_model_does_not_have() {
    let output = Command::new(env!("CARGO_BIN_EXE_lull-stand-in"))
        .args([
            "--model",
            "qwen3-8b",
            "--port",
            "0",
            "--busy-on-signal",
            "qwen3-8b:7",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--busy slot 7"));
}

#[tokio::test]
async fn the_request_log_gets_a_line_per_request_as_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.log");
    let log_arg = log.to_str().unwrap();
    let before_ms = unix_ms();
    let (running, origin) = start(&["--port", "0", "--request-log", log_arg]);
    busy_slots(&origin).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let health = client.get(format!("{origin}/health")).send().await.unwrap();
    assert!(health.status().is_success());
    busy_slots(&origin).await;

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<(u128, &str, &str)> = text
        .lines()
        .map(|line| {
            let mut fields = line.split(' ');
            let at = fields.next().unwrap().parse().unwrap();
            (at, fields.next().unwrap(), fields.next().unwrap())
        })
        .collect();
    let requests: Vec<_> = lines.iter().map(|(_, m, p)| (*m, *p)).collect();
    assert_eq!(
        requests,
        [("GET", "/slots"), ("GET", "/health"), ("GET", "/slots")]
    );
    let after_ms = unix_ms();
    assert!(lines.windows(2).all(|pair| pair[0].0 <= pair[1].0));
    assert!(lines
        .iter()
        .all(|(at, ..)| (before_ms..=after_ms).contains(at)));

    // Another run appends: a script keeps one log across restarts.
    drop(running);
    let (_running, origin) = start(&["--port", "0", "--request-log", log_arg]);
    busy_slots(&origin).await;
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 4);
}

#[test]
fn a_request_log_that_cannot_be_opened_is_refused_at_start() {
    let output = Command::new(env!("CARGO_BIN_EXE_lull-stand-in"))
        .args([
            "--port",
            "0",
            "--request-log",
            "/nonexistent-dir/requests.log",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("opening the request log /nonexistent-dir/requests.log"),
        "{stderr}"
    );
}

fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}
