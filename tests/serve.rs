//! `lull serve` as a process: start-up time, the token and `api.json` files, signals, restarts,
//! and the errors a person sees when the configuration or the database is wrong.

#[path = "common/daemon.rs"]
mod daemon;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use daemon::{get, send, Daemon};

fn lull(data_dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lull"));
    command
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--config")
        .arg(data_dir.join("config.toml"))
        .env("LULL_API_LISTEN", "127.0.0.1:0")
        .env(
            "LULL_SERVER_STATE_FILE",
            data_dir.join("no-managed-server.json"),
        )
        .env("RUST_LOG", "warn");
    command
}

/// Starts `lull serve` and waits until `/v1/health` answers, failing after `limit`.
fn start(data_dir: &Path, limit: Duration) -> Daemon {
    Daemon::spawn(lull(data_dir).arg("serve"), data_dir, limit)
}

fn terminate(mut daemon: Daemon) -> std::process::ExitStatus {
    let pid = daemon.child.id() as libc::pid_t;
    // SAFETY: sending SIGTERM to our own child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    daemon.child.wait().unwrap()
}

fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    (dir, data)
}

#[test]
fn serve_answers_health_within_a_second_and_cleans_up_on_sigterm() {
    let (_dir, data) = data_dir();
    let daemon = start(&data, Duration::from_secs(1));
    let (status, _) = get(&format!("{}/v1/status", daemon.base_url), None).unwrap();
    assert_eq!(status, 401);
    let (status, body) = get(
        &format!("{}/v1/status", daemon.base_url),
        Some(&daemon.token),
    )
    .unwrap();
    assert_eq!(status, 200, "{body}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("api-token"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    let exit = terminate(daemon);
    assert!(exit.success(), "{exit:?}");
    assert!(
        !data.join("api.json").exists(),
        "api.json must be removed on a clean shutdown"
    );
}

#[test]
fn token_and_settings_survive_a_restart() {
    let (_dir, data) = data_dir();
    let first = start(&data, Duration::from_secs(5));
    let token = first.token.clone();
    let set = lull(&data)
        .args(["settings", "set", "defer_mode=never"])
        .output()
        .unwrap();
    assert!(
        set.status.success(),
        "{}",
        String::from_utf8_lossy(&set.stderr)
    );
    terminate(first);

    let second = start(&data, Duration::from_secs(5));
    assert_eq!(second.token, token, "the token is created once and reused");
    let shown = lull(&data).args(["settings", "--json"]).output().unwrap();
    let settings: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(settings["defer_mode"], "never");
    terminate(second);
}

#[test]
fn cli_without_an_engine_says_how_to_start_one() {
    let (_dir, data) = data_dir();
    let output = lull(&data).arg("status").output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no Lull engine is running") && stderr.contains("lull serve"),
        "{stderr}"
    );
}

#[test]
fn a_bad_config_key_stops_start_up_with_its_name() {
    let (_dir, data) = data_dir();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.toml"),
        "[scheduler]\nsettle_s = \"soon\"\n",
    )
    .unwrap();
    let output = lull(&data).arg("serve").output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("scheduler.settle_s") && stderr.contains("config.toml"),
        "{stderr}"
    );
}

#[test]
fn a_database_from_a_newer_lull_is_refused() {
    let (_dir, data) = data_dir();
    std::fs::create_dir_all(&data).unwrap();
    let connection = rusqlite::Connection::open(data.join("lull.db")).unwrap();
    connection.pragma_update(None, "user_version", 999).unwrap();
    drop(connection);
    let output = lull(&data).arg("serve").output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("schema version 999") && stderr.contains("newer Lull"),
        "{stderr}"
    );
}

#[test]
fn cli_lists_and_drops_reviews() {
    let (_dir, data) = data_dir();
    let daemon = start(&data, Duration::from_secs(5));
    let listed = lull(&data).arg("reviews").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "no reviews\n");

    let review = r#"{"session_key":"s1","messages":[{"role":"user","content":"hi"}]}"#;
    let (status, body) = send(
        "POST",
        &format!("{}/v1/reviews", daemon.base_url),
        Some(&daemon.token),
        Some(review),
    )
    .unwrap();
    assert_eq!(status, 202, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["decision"], "deferred",
        "no managed server: it waits"
    );
    let id = answer["review_id"].as_str().unwrap();

    let listed = lull(&data)
        .args(["reviews", "--status", "queued"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains(id) && text.contains("queued"), "{text}");
    let dropped = lull(&data).args(["reviews", "drop", id]).output().unwrap();
    assert!(
        dropped.status.success(),
        "{}",
        String::from_utf8_lossy(&dropped.stderr)
    );
    let again = lull(&data).args(["reviews", "drop", id]).output().unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("not queued"));
    let shown = lull(&data).args(["reviews", "--json"]).output().unwrap();
    let reviews: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(reviews["reviews"][0]["status"], "dropped");
    assert_eq!(reviews["reviews"][0]["last_error"], "dropped by request");
    terminate(daemon);
}

/// Issue 11, item 2: a second engine on a data folder a live one serves refuses before it
/// touches the database, whatever its `api.listen`; once the first is gone (even killed, with
/// its `api.json` left behind), the folder is free again.
#[test]
fn a_second_engine_on_the_same_data_folder_refuses_and_a_killed_ones_leftovers_do_not_block() {
    let (_dir, data) = data_dir();
    let mut first = start(&data, Duration::from_secs(5));
    let first_pid = first.child.id();
    let starts_before = engine_starts(&data);

    let mut second = lull(&data)
        .arg("serve")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = second.try_wait().unwrap() {
            break exit;
        }
        if std::time::Instant::now() > deadline {
            let _ = second.kill();
            panic!("the second engine kept running beside the first");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!exit.success());
    assert!(
        stderr.contains("another Lull engine") && stderr.contains(&first_pid.to_string()),
        "{stderr}"
    );
    assert_eq!(
        engine_starts(&data),
        starts_before,
        "the refused engine did not touch the database"
    );
    let (status, _) = get(&format!("{}/v1/health", first.base_url), None).unwrap();
    assert_eq!(status, 200, "the first engine still serves");

    // A crash leaves api.json naming a dead process; the OS released the lock with it.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert!(data.join("api.json").exists());
    let third = start(&data, Duration::from_secs(5));
    terminate(third);
}

/// How many times an engine started on `data` (one row each in `engine_starts`).
fn engine_starts(data: &Path) -> i64 {
    let connection = rusqlite::Connection::open_with_flags(
        data.join("lull.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    connection
        .query_row("SELECT COUNT(*) FROM engine_starts", [], |row| row.get(0))
        .unwrap()
}
