//! `lull serve` as a child process of a test, found through its `api.json`, and a minimal HTTP
//! client so the tests that use it need no client crate of their own.

#![allow(dead_code)] // each test crate uses its own part of it

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `lull serve`; killed when dropped.
pub struct Daemon {
    pub child: Child,
    pub base_url: String,
    pub token: String,
}

/// `lull serve` on `data` (its configuration `none.toml` there, which need not exist) with the
/// supervisor's state file at `state_file`, on a free loopback port, and no settle window: the
/// command each test that runs the engine as a process starts from, adding its own settings.
pub fn serve_command(data: &Path, state_file: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lull"));
    command
        .args(["serve", "--data-dir"])
        .arg(data)
        .arg("--config")
        .arg(data.join("none.toml"))
        .env("LULL_API_LISTEN", "127.0.0.1:0")
        .env("LULL_SERVER_STATE_FILE", state_file)
        .env("LULL_SCHEDULER_SETTLE_S", "0")
        // A developer's laptop on battery must not hold the tests' learning.
        .env("LULL_POWER_ON_BATTERY", "always")
        .env("LULL_POWER_JOBS_ON_BATTERY", "true");
    command
}

/// The database of the engine on `data`, read-only: a test looks without taking part, whether
/// the engine runs or was killed.
pub fn read_only_db(data: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        data.join("lull.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .unwrap()
}

/// What `PRAGMA integrity_check` says of the database on `data` (`ok` when whole).
pub fn integrity_check(data: &Path) -> String {
    read_only_db(data)
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap()
}

impl Daemon {
    /// Spawns `command` (a `lull … serve` invocation whose data folder is `data_dir`) and waits
    /// until the `api.json` it writes names an address whose `/v1/health` answers 200, failing
    /// after `limit`.
    pub fn spawn(command: &mut Command, data_dir: &Path, limit: Duration) -> Daemon {
        Daemon::spawn_with_stderr(command, data_dir, limit, Stdio::null())
    }

    /// [`Daemon::spawn`], with the engine's stderr sent to `stderr` (a file a test reads).
    pub fn spawn_with_stderr(
        command: &mut Command,
        data_dir: &Path,
        limit: Duration,
        stderr: Stdio,
    ) -> Daemon {
        let started = Instant::now();
        let child = command.stderr(stderr).spawn().unwrap();
        let mut daemon = Daemon {
            child,
            base_url: String::new(),
            token: String::new(),
        };
        let api_json = data_dir.join("api.json");
        while started.elapsed() < limit {
            if let Ok(text) = std::fs::read_to_string(&api_json) {
                let discovery: Value = serde_json::from_str(&text).unwrap();
                let base_url = discovery["base_url"].as_str().unwrap().to_string();
                if get(&format!("{base_url}/v1/health"), None)
                    .is_some_and(|(status, _)| status == 200)
                {
                    daemon.token = std::fs::read_to_string(data_dir.join("api-token")).unwrap();
                    daemon.base_url = base_url;
                    return daemon;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("lull serve did not answer /v1/health within {limit:?}");
    }
}

impl Drop for Daemon {
    /// A failing test must not leave an engine running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.1 GET.
pub fn get(url: &str, token: Option<&str>) -> Option<(u16, String)> {
    send("GET", url, token, None)
}

/// A minimal HTTP/1.1 request with an optional JSON body; `None` when nothing answered.
pub fn send(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Option<(u16, String)> {
    request(method, url, token, body).ok()
}

/// Why [`request`] got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// Nothing listened: the request never reached an engine.
    NotSent,
    /// The connection was made but no whole answer came back: the request may have landed.
    Lost,
}

/// [`send`], saying whether a request that got no answer may have reached the engine.
pub fn request(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, String), Unanswered> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").ok_or(Unanswered::NotSent)?;
    let (host, path) = rest.split_at(rest.find('/').ok_or(Unanswered::NotSent)?);
    let mut stream = std::net::TcpStream::connect(host).map_err(|_| Unanswered::NotSent)?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|_| Unanswered::Lost)?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|_| Unanswered::Lost)?;
    let status = response
        .get(9..12)
        .and_then(|status| status.parse().ok())
        .ok_or(Unanswered::Lost)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    // An engine killed while it wrote its answer leaves a body shorter than it announced.
    let announced = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    if announced.is_some_and(|length| body.len() < length) {
        return Err(Unanswered::Lost);
    }
    Ok((status, body.to_string()))
}
