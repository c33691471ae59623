//! Security checks across the engine's edges, each one an attack or a failure a person's laptop
//! can meet:
//!
//! - the API's guards (`tests/api.rs` has one case of each; here every protected route, the
//!   rebinding `Host` tricks and CORS preflights): nothing without the token, nothing from a
//!   foreign origin or a hostile name, and no response that grants a browser anything;
//! - what `lull serve` leaves on disk is private to the person (token, database and its `-wal`
//!   and `-shm`, logs, the data folder);
//! - no secret (the API token, the managed server's `api_key`, an agent's runtime key) reaches a
//!   log line, stderr or an error body, through a whole session that also fails on purpose;
//! - start-up refuses a listen address off loopback, naming the setting;
//! - the skills writer never writes outside `skills.dir`, whatever the name or a link says;
//! - a read-only skills folder at approval and a read-only data folder at start-up are clear
//!   errors that change nothing.
//!
//! Tests may run as root, whom file modes do not stop: "read-only" is then a read-only bind
//! mount of the folder on itself, undone when the test ends ([`ReadOnly`]).

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/managed.rs"]
mod managed;
#[path = "common/offline.rs"]
mod offline;
#[path = "common/snapshot.rs"]
mod snapshot;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use lull::api::{app, load_or_create_token, Guard};
use lull::drafts::records::DraftKind;
use lull::llm::HttpLlmClient;
use lull::skills::{read_skill_file, remove_skill_file, write_skill_file, Expected, WriteError};
use lull::store::Store;
use lull::Engine;
use lull_stand_in::{StandIn, StandInConfig};

use daemon::{send, Daemon};
use snapshot::tree;

const HOST: &str = "127.0.0.1:7707";

/// A SKILL.md for `name` that the safety check finds nothing in.
fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Build the {name} tool.\n---\n# {name}\n\nRun `cargo build`.\n"
    )
}

// ---------------------------------------------------------------------------------------------
// The API's guards, through the router.

/// An engine on a temporary data folder with no managed server, its own store (so tests can
/// seed drafts as synthesis would) and a real token made as `lull serve` makes it.
struct Harness {
    dir: tempfile::TempDir,
    engine: Engine,
    store: Store,
    token: String,
}

impl Harness {
    async fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let (engine, store) = offline::offline_engine(dir.path()).await;
        let token = load_or_create_token(&engine.paths().api_token()).unwrap();
        Harness {
            dir,
            engine,
            store,
            token,
        }
    }

    fn skills_dir(&self) -> PathBuf {
        self.engine
            .config()
            .skills_dir(&self.engine.paths().data_dir)
    }

    fn router(&self) -> axum::Router {
        let guard = Guard {
            token: Arc::from(self.token.as_str()),
            allowed_hosts: Guard::hosts_for(HOST.parse().unwrap()).into(),
        };
        app(self.engine.clone(), guard)
    }

    /// Sends `request`; every answer, whatever its status, is checked to grant no browser
    /// origin anything (there is no CORS in Lull: the app's webview calls over IPC).
    async fn send(&self, request: Request<Body>) -> (StatusCode, Value) {
        let response = self.router().oneshot(request).await.unwrap();
        assert_no_cors(response.headers());
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, body)
    }

    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let builder = request(method, path).header(header::AUTHORIZATION, self.bearer());
        self.send(with_body(builder, body)).await
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// Stores a `review_pending` draft creating skill `skill`, the way synthesis and evaluation
    /// would; returns its id.
    async fn seed_draft(&self, skill: &str) -> String {
        let text = skill_md(skill);
        offline::seed_draft(
            &self.store,
            &self.skills_dir(),
            skill,
            DraftKind::Create,
            &text,
        )
        .await
    }

    /// How many skill versions the provenance records: what an approval adds.
    async fn provenance_rows(&self) -> i64 {
        self.store
            .call(|c| Ok(c.query_row("SELECT COUNT(*) FROM skill_versions", [], |row| row.get(0))?))
            .await
            .unwrap()
    }
}

fn request(method: &str, path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, HOST)
}

fn with_body(builder: axum::http::request::Builder, body: Option<Value>) -> Request<Body> {
    match body {
        Some(value) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(value.to_string()))
            .unwrap(),
        None => builder.body(Body::empty()).unwrap(),
    }
}

fn error_code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not the error shape: {body}"))
}

/// No `Access-Control-Allow-*` header at all: a browser then refuses any cross-origin read,
/// whatever the status (a `*`, or an echoed origin, would hand it the answer).
fn assert_no_cors(headers: &HeaderMap) {
    let granted: Vec<_> = headers
        .keys()
        .filter(|name| name.as_str().starts_with("access-control-"))
        .collect();
    assert!(granted.is_empty(), "CORS headers in an answer: {headers:?}");
}

/// Every route that needs the token, with a body it would accept.
fn protected_routes() -> Vec<(&'static str, &'static str, Option<Value>)> {
    let review = json!({"session_key": "s", "messages": [{"role": "user", "content": "hi"}]});
    vec![
        ("GET", "/v1/status", None),
        ("GET", "/v1/settings", None),
        ("PATCH", "/v1/settings", Some(json!({"paused": true}))),
        ("GET", "/v1/events", None),
        ("POST", "/v1/turns/start", Some(json!({"session_key": "s"}))),
        ("POST", "/v1/turns/finish", Some(json!({"lease_id": "l"}))),
        ("POST", "/v1/reviews", Some(review)),
        ("GET", "/v1/reviews", None),
        ("DELETE", "/v1/reviews/r", None),
        ("POST", "/v1/reviews/r/run-now", None),
        ("GET", "/v1/candidates", None),
        ("GET", "/v1/drafts", None),
        ("GET", "/v1/drafts/d", None),
        ("POST", "/v1/drafts/d/approve", Some(json!({}))),
        ("POST", "/v1/drafts/d/reject", Some(json!({"reason": "no"}))),
        ("POST", "/v1/drafts/d/edit", Some(json!({"skill_md": "x"}))),
        (
            "POST",
            "/v1/drafts/d/findings/0/dismiss",
            Some(json!({"reason": "ok"})),
        ),
        ("GET", "/v1/skills", None),
        ("POST", "/v1/skills/deploy/rollback", None),
        (
            "POST",
            "/v1/jobs",
            Some(json!({"kind": "routing-head", "stopping": {"max_rounds": 1, "wall_clock_s": 5}})),
        ),
        ("GET", "/v1/jobs", None),
        ("GET", "/v1/jobs/j", None),
        ("POST", "/v1/jobs/j/cancel", None),
        ("POST", "/v1/jobs/j/resume", None),
        ("POST", "/v1/jobs/j/promote", None),
        ("POST", "/v1/route", Some(json!({"query": "build"}))),
        (
            "POST",
            "/v1/outcomes",
            Some(json!({"route_id": "r", "skill": "s", "outcome": "success"})),
        ),
    ]
}

/// Every protected route refuses a request with no token, a wrong one, one a character short
/// or long (a comparison that stopped early or at the shorter length would let these in), the
/// right one in another case or scheme, and never tells the token back. Nothing changed:
/// the settings are as they were and no review was stored.
#[tokio::test]
async fn every_protected_route_refuses_a_missing_or_wrong_token() {
    let harness = Harness::new().await;
    let token = harness.token.clone();
    let mut last_changed = token.clone();
    last_changed.pop();
    last_changed.push(if token.ends_with('0') { '1' } else { '0' });
    let refused = [
        None,
        Some("Bearer wrong".to_string()),
        Some(format!("Bearer {last_changed}")),
        Some(format!("Bearer {}", &token[..token.len() - 1])),
        Some(format!("Bearer {token}0")),
        Some(format!("Bearer {}", token.to_uppercase())),
        Some(format!("Basic {token}")),
        Some(token.clone()),
        Some(format!("Bearer\t{token}")),
    ];
    for (method, path, body) in protected_routes() {
        for authorization in &refused {
            let mut builder = request(method, path);
            if let Some(value) = authorization {
                builder = builder.header(header::AUTHORIZATION, value);
            }
            let (status, answer) = harness.send(with_body(builder, body.clone())).await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {authorization:?}: {answer}"
            );
            assert_eq!(error_code(&answer), "unauthorized");
            assert!(!answer.to_string().contains(&token), "{answer}");
        }
    }
    let (status, settings) = harness.call("GET", "/v1/settings", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        settings["paused"], false,
        "the refused PATCH changed nothing"
    );
    let (_, reviews) = harness.call("GET", "/v1/reviews", None).await;
    assert_eq!(
        reviews["reviews"],
        json!([]),
        "the refused review was not stored"
    );
}

/// DNS rebinding: a hostile name that resolves to 127.0.0.1 reaches the listener with its own
/// name in `Host`. Each trick is refused even with the right token, on the open route too.
#[tokio::test]
async fn a_host_that_is_not_this_loopback_listener_is_refused() {
    let harness = Harness::new().await;
    let hosts = [
        "evil.example",
        "evil.example:7707",
        "127.0.0.1.evil.example:7707",
        "localhost.evil:7707",
        "localhost.evil",
        "127.0.0.1:7707@evil.example",
        "evil.example@127.0.0.1:7707",
        "user:pass@127.0.0.1:7707",
        "127.0.0.1:7707.evil.example",
        "127.0.0.1:7708",
        "127.0.0.1",
        "0.0.0.0:7707",
        "[::1]:7707",
        "",
    ];
    for host in hosts {
        for path in ["/v1/status", "/v1/health"] {
            let builder = Request::builder()
                .uri(path)
                .header(header::HOST, host)
                .header(header::AUTHORIZATION, harness.bearer());
            let (status, body) = harness.send(builder.body(Body::empty()).unwrap()).await;
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "Host {host:?} {path}: {body}"
            );
            assert_eq!(error_code(&body), "host_not_allowed");
        }
    }
    // No Host header at all (HTTP/1.0) is no way around it either.
    let builder = Request::builder()
        .uri("/v1/status")
        .header(header::AUTHORIZATION, harness.bearer());
    let (status, _) = harness.send(builder.body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    for host in ["127.0.0.1:7707", "localhost:7707", "LOCALHOST:7707"] {
        let builder = Request::builder()
            .uri("/v1/status")
            .header(header::HOST, host)
            .header(header::AUTHORIZATION, harness.bearer());
        let (status, body) = harness.send(builder.body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{host}: {body}");
    }
}

/// A page in the person's browser can send requests to loopback: any origin but the app's own
/// is refused, a CORS preflight from one too, and no answer (checked in [`Harness::send`])
/// carries `Access-Control-Allow-Origin` — neither `*` nor the origin echoed.
#[tokio::test]
async fn foreign_origins_and_their_preflights_are_refused_and_nothing_grants_cors() {
    let harness = Harness::new().await;
    let origins = [
        "http://evil.example",
        "null",
        "http://127.0.0.1:7707",
        "http://localhost:3000",
        "tauri://localhost.evil.example",
        "https://tauri.localhost.evil.example",
        "TAURI://LOCALHOST",
        "",
    ];
    for origin in origins {
        let builder = request("OPTIONS", "/v1/reviews")
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(
                header::ACCESS_CONTROL_REQUEST_HEADERS,
                "authorization, content-type",
            );
        let (status, body) = harness.send(builder.body(Body::empty()).unwrap()).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "preflight from {origin:?}: {body}"
        );
        assert_eq!(error_code(&body), "origin_not_allowed");

        let review = json!({"session_key": "s", "messages": [{"role": "user", "content": "hi"}]});
        let builder = request("POST", "/v1/reviews")
            .header(header::ORIGIN, origin)
            .header(header::AUTHORIZATION, harness.bearer());
        let (status, body) = harness.send(with_body(builder, Some(review))).await;
        assert_eq!(
            status,
            StatusCode::FORBIDDEN,
            "POST from {origin:?}: {body}"
        );
        let builder = request("GET", "/v1/health").header(header::ORIGIN, origin);
        let (status, _) = harness.send(builder.body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "health from {origin:?}");
    }
    let (_, reviews) = harness.call("GET", "/v1/reviews", None).await;
    assert_eq!(
        reviews["reviews"],
        json!([]),
        "no refused review was stored"
    );
    // The app's own origin is let through, and granted no CORS either.
    let builder = request("GET", "/v1/status")
        .header(header::ORIGIN, "tauri://localhost")
        .header(header::AUTHORIZATION, harness.bearer());
    let (status, _) = harness.send(builder.body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
}

// ---------------------------------------------------------------------------------------------
// The skills writer and the skills folder.

/// Names that would leave the skills folder, or pass for another folder's name: separators,
/// absolute paths, NUL, look-alike dots and slashes, invisible and bidi characters. The
/// writer refuses each for reading, writing and removing, and nothing appears anywhere.
#[test]
fn no_skill_name_leads_the_writer_outside_the_skills_folder() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("skills");
    std::fs::create_dir(&dir).unwrap();
    let outside = root.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let outside_name = format!("{}/deploy", outside.display());
    let names = [
        "..",
        "../outside",
        "../../etc/cron.d/deploy",
        outside_name.as_str(),
        "/etc/passwd",
        "deploy\0",
        "deploy\0/../../outside",
        "\0",
        "\u{ff0e}\u{ff0e}",            // fullwidth full stops
        "\u{2024}\u{2024}",            // one dot leaders
        "a\u{2215}b",                  // division slash
        "a\u{ff0f}b",                  // fullwidth solidus
        "a\u{29f8}b",                  // big solidus
        "\u{ff44}\u{ff45}\u{ff50}loy", // fullwidth letters
        "dep\u{200b}loy",              // zero-width space
        "deploy\u{202e}",              // right-to-left override
        "d\u{0435}ploy",               // Cyrillic e
        "deploy%2f..",
        "deploy::$DATA",
        "~",
        "",
    ];
    for name in names {
        let text = skill_md("deploy");
        let written = write_skill_file(&dir, name, &text, &Expected::Absent);
        assert!(
            matches!(
                written,
                Err(WriteError::Escapes { .. } | WriteError::BadName(_))
            ),
            "{name:?}: {written:?}"
        );
        assert!(read_skill_file(&dir, name).is_err(), "{name:?}");
        assert!(remove_skill_file(&dir, name, "0").is_err(), "{name:?}");
    }
    assert_eq!(tree(root.path()), ["outside", "skills"]);
}

/// A skill folder that is a link out of the skills folder, prepared before the approval: the
/// writer refuses to follow it, the target is untouched, the draft waits and the database has
/// no write recorded. (A folder swapped for a link *during* a write is tested beside the
/// writer, `refuses_a_folder_swapped_for_a_link_during_the_write`, through its seam.)
#[tokio::test]
async fn approval_into_a_skill_folder_that_links_outside_is_refused() {
    let harness = Harness::new().await;
    let id = harness.seed_draft("deploy").await;
    let outside = harness.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::create_dir_all(harness.skills_dir()).unwrap();
    std::os::unix::fs::symlink(&outside, harness.skills_dir().join("deploy")).unwrap();

    let (status, body) = harness
        .call("POST", &format!("/v1/drafts/{id}/approve"), Some(json!({})))
        .await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("is a symlink"), "{message}");
    assert!(tree(&outside).is_empty(), "{:?}", tree(&outside));
    let (_, draft) = harness.call("GET", &format!("/v1/drafts/{id}"), None).await;
    assert_eq!(draft["status"], "review_pending");
    assert_eq!(harness.provenance_rows().await, 0);
    // Rolling back through the link is refused too: nothing Lull wrote is there.
    let (status, _) = harness
        .call("POST", "/v1/skills/deploy/rollback", None)
        .await;
    assert!(status.is_client_error(), "{status}");
    assert!(tree(&outside).is_empty());
}

/// A rollback names its skill in the path: percent-encoded separators, dots and NUL are one
/// path segment to the router, and the engine refuses them before touching a file.
#[tokio::test]
async fn rollback_names_that_leave_the_skills_folder_are_refused() {
    let harness = Harness::new().await;
    let before = tree(harness.dir.path());
    for name in [
        "..",
        "%2E%2E",
        "..%2F..%2Foutside",
        "%2Fetc%2Fpasswd",
        "a%00b",
        "a%5Cb",
    ] {
        let (status, body) = harness
            .call("POST", &format!("/v1/skills/{name}/rollback"), None)
            .await;
        assert!(status.is_client_error(), "{name}: {status} {body}");
    }
    assert_eq!(tree(harness.dir.path()), before);
}

// ---------------------------------------------------------------------------------------------
// Read-only folders.

/// A folder made read-only for the rest of a test, as a disk remounted read-only would be.
/// For a normal user every folder in it becomes 0500 and every file 0400 (owner-only modes:
/// the engine tightens a data folder open to others to 0700, which would undo 0555). Root
/// ignores modes, so for root the folder is bind-mounted read-only on itself (any write in it
/// fails with EROFS). Dropping it makes everything writable again.
struct ReadOnly {
    dir: PathBuf,
    how: Protection,
}

enum Protection {
    /// Each path with the mode to give back.
    Modes(Vec<(PathBuf, u32)>),
    Mounted,
}

impl ReadOnly {
    /// `None`, with the reason printed, when neither way works here (root without the right
    /// to mount, as in some containers).
    fn make(dir: &Path) -> Option<ReadOnly> {
        let dir = dir.to_path_buf();
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            let mut modes = Vec::new();
            for path in std::iter::once(dir.clone()).chain(tree(&dir).iter().map(|p| dir.join(p))) {
                let metadata = std::fs::symlink_metadata(&path).unwrap();
                let read_only = if metadata.is_dir() { 0o500 } else { 0o400 };
                modes.push((path.clone(), metadata.permissions().mode() & 0o7777));
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(read_only))
                    .unwrap();
            }
            return Some(ReadOnly {
                dir,
                how: Protection::Modes(modes),
            });
        }
        let path = c_path(&dir);
        // SAFETY: `path` is NUL-terminated; a bind mount of the folder on itself, then made
        // read-only (a bind mount takes its flags only on a remount).
        let mounted = unsafe {
            let none = std::ptr::null();
            libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                none,
                libc::MS_BIND,
                none.cast(),
            ) == 0
                && libc::mount(
                    none,
                    path.as_ptr(),
                    none,
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                    none.cast(),
                ) == 0
        };
        if !mounted {
            let err = std::io::Error::last_os_error();
            eprintln!(
                "skipped: running as root, whom file modes do not stop, and a read-only bind \
                 mount is not allowed here ({err})"
            );
            // SAFETY: undoes the bind mount if only the remount failed; harmless otherwise.
            unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
            return None;
        }
        Some(ReadOnly {
            dir,
            how: Protection::Mounted,
        })
    }
}

fn c_path(path: &Path) -> std::ffi::CString {
    std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap()
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        match &self.how {
            // SAFETY: the path is NUL-terminated and names the mount made in `make`.
            Protection::Mounted => unsafe {
                libc::umount2(c_path(&self.dir).as_ptr(), libc::MNT_DETACH);
            },
            Protection::Modes(modes) => {
                for (path, mode) in modes {
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)).unwrap();
                }
            }
        }
    }
}

/// Approving into a read-only skills folder fails with a message that says what to do, leaves
/// the draft waiting, records nothing and writes nothing; once the folder is writable again the
/// same draft is approved.
#[tokio::test]
async fn approval_into_a_read_only_skills_folder_fails_clearly_and_changes_nothing() {
    let harness = Harness::new().await;
    let id = harness.seed_draft("deploy").await;
    std::fs::create_dir_all(harness.skills_dir()).unwrap();
    let Some(read_only) = ReadOnly::make(&harness.skills_dir()) else {
        return;
    };
    let (status, body) = harness
        .call("POST", &format!("/v1/drafts/{id}/approve"), Some(json!({})))
        .await;
    assert!(status.is_server_error(), "{status}: {body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&harness.skills_dir().display().to_string()),
        "{message}"
    );
    assert!(message.contains("you can write to it"), "{message}");
    let (_, draft) = harness.call("GET", &format!("/v1/drafts/{id}"), None).await;
    assert_eq!(draft["status"], "review_pending", "{draft}");
    assert_eq!(harness.provenance_rows().await, 0);
    assert!(tree(&harness.skills_dir()).is_empty());

    drop(read_only);
    let (status, draft) = harness
        .call("POST", &format!("/v1/drafts/{id}/approve"), Some(json!({})))
        .await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(draft["status"], "approved");
    assert_eq!(harness.provenance_rows().await, 1);
    assert_eq!(
        std::fs::read_to_string(harness.skills_dir().join("deploy/SKILL.md")).unwrap(),
        skill_md("deploy")
    );
}

// ---------------------------------------------------------------------------------------------
// `lull serve` as a process.

/// `lull serve` on `data`, its managed server's state file at `state_file`, listening on a
/// free loopback port.
fn lull(data: &Path, state_file: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lull"));
    command
        .arg("--data-dir")
        .arg(data)
        .arg("--config")
        .arg(data.join("none.toml"))
        .env("LULL_API_LISTEN", "127.0.0.1:0")
        .env("LULL_SERVER_STATE_FILE", state_file)
        .env("LULL_SCHEDULER_SETTLE_S", "0");
    command
}

/// Starts `command serve` with its stderr in `<dir>/stderr.log`, which is returned.
fn start(command: &mut Command, data: &Path, dir: &Path) -> (Daemon, PathBuf) {
    let stderr_path = dir.join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let daemon = Daemon::spawn_with_stderr(
        command.arg("serve"),
        data,
        Duration::from_secs(10),
        Stdio::from(stderr),
    );
    (daemon, stderr_path)
}

/// SIGTERM, then waits: the engine flushes its logs on the way out.
fn terminate(mut daemon: Daemon) {
    // SAFETY: sending SIGTERM to our own child.
    unsafe { libc::kill(daemon.child.id() as libc::pid_t, libc::SIGTERM) };
    let exit = daemon.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

/// Runs `command serve` to its end, which must come within 10 s; its exit and stderr.
fn run_to_exit(command: &mut Command) -> (std::process::ExitStatus, String) {
    let mut child = command
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("lull serve kept running");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    (
        output.status,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// What a running engine keeps on disk — the data folder, the token, the database with its
/// `-wal` and `-shm`, the logs — opens to nobody but the person: on a shared machine another
/// user must not read the transcripts or take the token. The log files are private too, in a
/// folder only the person can enter. A first start creates all this private, rather than
/// creating it open and then warning that it was open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_lull_serve_keeps_on_disk_is_private_to_the_person() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (daemon, stderr) = start(
        lull(&data, &dir.path().join("none.json")).env("RUST_LOG", "info"),
        &data,
        dir.path(),
    );
    // A review is a write, so the database has its WAL and shared memory files.
    let review = r#"{"session_key":"s1","messages":[{"role":"user","content":"hi"}]}"#;
    let url = format!("{}/v1/reviews", daemon.base_url);
    let (status, body) = send("POST", &url, Some(&daemon.token), Some(review)).unwrap();
    assert_eq!(status, 202, "{body}");

    let mut private = vec![
        data.clone(),
        data.join("api-token"),
        data.join("lull.db"),
        data.join("lull.db-wal"),
        data.join("lull.db-shm"),
        data.join("logs"),
    ];
    let logs: Vec<PathBuf> = std::fs::read_dir(data.join("logs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(!logs.is_empty(), "no log file");
    private.extend(logs);
    let modes: Vec<String> = private
        .iter()
        .map(|path| format!("{} {:o}", path.display(), mode_of(path)))
        .collect();
    private.retain(|path| mode_of(path) & 0o077 != 0);
    assert!(
        private.is_empty(),
        "open to others: {private:?} (all: {modes:?})"
    );
    terminate(daemon);
    let stderr = std::fs::read_to_string(stderr).unwrap();
    assert!(!stderr.contains("open to others"), "{stderr}");
}

/// Every secret of a session — the API token, the managed server's `api_key` from the
/// supervisor's state file, an agent's runtime `api_key` — stays out of the log files, stderr
/// (at debug level) and every answer, through a session that completes a review on the managed
/// server, fails one on a server that refuses the agent's key, is called with wrong tokens and
/// unknown ids, and sees the managed server start refusing its key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_log_line_stderr_or_an_answer() {
    const MANAGED_KEY: &str = "sk-managed-6b1f0d2e9c";
    const RUNTIME_KEY: &str = "sk-runtime-a4c7e19b35";
    let dir = tempfile::tempdir().unwrap();
    let answer = json!({"candidates": [{
        "skill": "git-bisect", "kind": "create", "rationale": "the person bisected by hand",
        "evidence": [0], "priority": 0.8, "confidence": 0.7, "related": []
    }]})
    .to_string();
    let managed_config = StandInConfig::single("tiny").with_api_key(MANAGED_KEY);
    let (managed, state_file) = managed::managed_stand_in(dir.path(), managed_config).await;
    managed.push_reply("tiny", answer.clone());
    // Another server, not the managed one, whose key the agent gets wrong.
    let other = StandIn::start(StandInConfig::single("tiny").with_api_key("sk-other-right"))
        .await
        .unwrap();
    let data = dir.path().join("data");
    let (daemon, stderr) = start(
        lull(&data, &state_file)
            .env("RUST_LOG", "debug")
            .env("LULL_LEARNING_MAX_DRAFTS_PER_RUN", "0"),
        &data,
        dir.path(),
    );
    let token = daemon.token.clone();
    let mut answers = Vec::new();
    let mut call = |method: &str, path: &str, token: Option<&str>, body: Option<Value>| {
        let url = format!("{}{path}", daemon.base_url);
        let body = body.map(|body| body.to_string());
        let (status, text) = send(method, &url, token, body.as_deref()).unwrap();
        answers.push(format!("{method} {path} → {status} {text}"));
        (status, text)
    };

    let transcript = json!([{"role": "user", "content": "the build fails, please bisect"}]);
    let (status, _) = call(
        "POST",
        "/v1/reviews",
        Some(&token),
        Some(json!({"session_key": "managed", "messages": transcript})),
    );
    assert_eq!(status, 202);
    let runtime = json!({"base_url": other.base_url(), "api_key": RUNTIME_KEY, "model": "tiny"});
    let (status, _) = call(
        "POST",
        "/v1/reviews",
        Some(&token),
        Some(json!({"session_key": "refused", "messages": transcript, "runtime": runtime})),
    );
    assert_eq!(status, 202);
    let first = if token.starts_with('0') { "1" } else { "0" };
    let wrong = format!("{first}{}", &token[1..]);
    for bad in [None, Some("wrong"), Some(wrong.as_str())] {
        let (status, _) = call("GET", "/v1/status", bad, None);
        assert_eq!(status, 401);
    }
    for (method, path) in [
        ("GET", "/v1/drafts/no-such-draft"),
        ("DELETE", "/v1/reviews/no-such-review"),
        ("POST", "/v1/reviews/no-such-review/run-now"),
        ("POST", "/v1/jobs/no-such-job/cancel"),
        ("POST", "/v1/skills/no-such-skill/rollback"),
    ] {
        let (status, _) = call(method, path, Some(&token), None);
        assert!((400..500).contains(&status), "{method} {path}: {status}");
    }
    let (status, _) = call(
        "POST",
        "/v1/turns/finish",
        Some(&token),
        Some(json!({"lease_id": "no-such-lease"})),
    );
    assert!((400..500).contains(&status));

    // Wait until the managed review is done and the refused one has failed at least once.
    let started = Instant::now();
    loop {
        let (_, text) = call("GET", "/v1/reviews", Some(&token), None);
        let reviews: Value = serde_json::from_str(&text).unwrap();
        let of = |session: &str| {
            reviews["reviews"]
                .as_array()
                .unwrap()
                .iter()
                .find(|review| review["session_key"] == session)
                .cloned()
                .unwrap()
        };
        let refused = of("refused");
        if let (true, Some(refused_error)) = (
            of("managed")["status"] == "done",
            refused["last_error"].as_str(),
        ) {
            assert!(refused_error.contains("401"), "{refused_error}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{reviews}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The supervisor restarts the server with another key: Lull's key is now refused.
    managed.set_api_key(Some("sk-managed-rotated"));
    let started = Instant::now();
    while !call("GET", "/v1/status", Some(&token), None)
        .1
        .contains("\"unreachable\"")
    {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            answers.last()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    terminate(daemon);

    let mut seen = vec![(
        "stderr".to_string(),
        std::fs::read_to_string(&stderr).unwrap(),
    )];
    for entry in std::fs::read_dir(data.join("logs")).unwrap() {
        let path = entry.unwrap().path();
        seen.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).unwrap(),
        ));
    }
    seen.push(("answers".to_string(), answers.join("\n")));
    // The places searched hold this session: its start, the refusal and the failed attempt.
    let all: String = seen.iter().map(|(_, text)| text.as_str()).collect();
    assert!(all.contains("local API listening"), "no log of the start");
    assert!(all.contains("401"), "no trace of the refused key");
    for (place, text) in &seen {
        for (secret, what) in [
            (token.as_str(), "the API token"),
            (MANAGED_KEY, "the managed server's key"),
            (RUNTIME_KEY, "the agent's runtime key"),
        ] {
            let line = text.lines().find(|line| line.contains(secret));
            assert!(line.is_none(), "{what} in {place}: {line:?}");
        }
    }
}

/// An address off loopback, from the environment or the config file, stops start-up before
/// the engine opens anything, with a message naming `api.listen` and where it was set.
#[test]
fn a_listen_address_off_loopback_is_refused_before_anything_starts() {
    for listen in ["0.0.0.0:0", "[::]:0", "192.168.1.20:7707"] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let (exit, stderr) =
            run_to_exit(lull(&data, &dir.path().join("none.json")).env("LULL_API_LISTEN", listen));
        assert!(!exit.success(), "{listen}");
        assert!(
            stderr.contains("api.listen") && stderr.contains("LULL_API_LISTEN"),
            "{stderr}"
        );
        assert!(stderr.contains("not a loopback address"), "{stderr}");
        assert!(
            !data.join("lull.db").exists(),
            "{listen}: the engine opened its database"
        );
        assert!(!data.join("api.json").exists());

        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("none.toml"),
            format!("[api]\nlisten = \"{listen}\"\n"),
        )
        .unwrap();
        let mut command = lull(&data, &dir.path().join("none.json"));
        command.env_remove("LULL_API_LISTEN");
        let (exit, stderr) = run_to_exit(&mut command);
        assert!(!exit.success(), "{listen}");
        assert!(
            stderr.contains("api.listen") && stderr.contains("none.toml"),
            "{stderr}"
        );
        assert!(!data.join("lull.db").exists());
    }
}

/// A data folder that became read-only (a full or failing disk remounted read-only): start-up
/// fails within seconds with a message naming the folder and what to do, and the database is
/// as it was.
#[test]
fn a_read_only_data_folder_stops_start_up_clearly_and_keeps_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let state_file = dir.path().join("none.json");
    let daemon = Daemon::spawn(
        lull(&data, &state_file).arg("serve"),
        &data,
        Duration::from_secs(10),
    );
    terminate(daemon);
    let starts = engine_starts(&data);

    let Some(read_only) = ReadOnly::make(&data) else {
        return;
    };
    let (exit, stderr) = run_to_exit(&mut lull(&data, &state_file));
    drop(read_only);
    assert!(!exit.success());
    assert!(stderr.contains(&data.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("make it writable") || stderr.contains("data folder is writable"),
        "{stderr}"
    );
    assert_eq!(
        engine_starts(&data),
        starts,
        "the refused start wrote nothing"
    );
    let connection = rusqlite::Connection::open(data.join("lull.db")).unwrap();
    let check: String = connection
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
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

/// An endpoint that quotes the key it refused (some do) does not put it into Lull's error,
/// which becomes a review's `last_error` and a log line.
#[tokio::test]
async fn a_key_an_endpoint_quotes_back_is_kept_out_of_the_error() {
    use lull::llm::{ChatEndpoint, ChatMessage, ChatRequest, LlmClient};
    const KEY: &str = "sk-agent-9d3e7f21";
    let quoting = axum::Router::new().fallback(|headers: HeaderMap| async move {
        let sent = headers[header::AUTHORIZATION].to_str().unwrap().to_owned();
        let body = json!({"error": {"message": format!("invalid key `{sent}`")}});
        (StatusCode::UNAUTHORIZED, axum::Json(body))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, quoting).await });
    let endpoint = ChatEndpoint {
        base_url: format!("http://{addr}/v1"),
        api_key: Some(KEY.into()),
        model: "tiny".into(),
    };
    let request = ChatRequest {
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "hi".into(),
        }],
        json_schema: None,
        max_tokens: 8,
    };
    let err = HttpLlmClient::default()
        .chat(&endpoint, request, None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("401") && err.contains("invalid key"), "{err}");
    assert!(!err.contains(KEY), "{err}");
}
