//! A training job under a crash of `lull serve` (issue 14): the engine is `kill -9`ed while a
//! job runs, so nothing on its way out marks the job; the next start finds it `running` under
//! an older generation, makes it `interrupted` with an `adopted_after_restart` refusal receipt,
//! and does not train it again until a person resumes it, which continues from the next round
//! with the last committed checkpoint as its parent. Everything goes over HTTP, as an agent and
//! the CLI would. The same story after a clean stop, in process, is in `tests/jobs.rs`.

#[path = "common/daemon.rs"]
mod daemon;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use daemon::{send, Daemon};
use lull::jobs::records::{receipt_digest, ReceiptKind};

/// The skills folder the routes rank: the same three as `tests/jobs.rs`.
const SKILLS: [(&str, &str); 3] = [
    (
        "deploy-staging",
        "Deploy a service to the staging cluster and check its health",
    ),
    (
        "db-migration",
        "Write and run a database migration safely, with a rollback",
    ),
    ("rotate-certs", "Rotate TLS certificates before they expire"),
];

/// Rounds the job asks for: more than train between its first commit and the turn that holds
/// it (a round is two mini-batches here, and the turn starts a poll after the first commit),
/// few enough that the resumed run finishes in a few seconds of a debug build.
const MAX_ROUNDS: u32 = 12;

fn write_skills(data: &Path) {
    for (name, description) in SKILLS {
        let folder = data.join("skills").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
        )
        .unwrap();
    }
}

/// `lull serve` on `data` with no managed server. A leftover `api.json` (from a killed engine)
/// is removed first, so the new one is waited for.
fn start_daemon(data: &Path) -> Daemon {
    let _ = std::fs::remove_file(data.join("api.json"));
    Daemon::spawn(
        Command::new(env!("CARGO_BIN_EXE_lull"))
            .args(["serve", "--data-dir"])
            .arg(data)
            .arg("--config")
            .arg(data.join("none.toml"))
            .env("LULL_API_LISTEN", "127.0.0.1:0")
            .env(
                "LULL_SERVER_STATE_FILE",
                data.join("no-managed-server.json"),
            )
            .env("RUST_LOG", "warn"),
        data,
        Duration::from_secs(10),
    )
}

impl Daemon {
    /// `method path` with an optional JSON body; the status and the JSON answer (null if none).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let body = body.map(|body| body.to_string());
        let (status, text) = send(
            method,
            &format!("{}{path}", self.base_url),
            Some(self.token.trim()),
            body.as_deref(),
        )
        .unwrap_or_else(|| panic!("{method} {path}: the engine did not answer"));
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{method} {path}: {text}"))
        };
        (status, value)
    }

    fn job(&self, id: &str) -> Value {
        let (status, job) = self.call("GET", &format!("/v1/jobs/{id}"), None);
        assert_eq!(status, 200, "{job}");
        job
    }

    /// Polls the job until `done` holds of it, failing after `limit`.
    fn job_when(&self, id: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
        let started = Instant::now();
        loop {
            let job = self.job(id);
            if done(&job) {
                return job;
            }
            assert!(started.elapsed() < limit, "gave up after {limit:?}: {job}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Logs `n` routes with outcomes over HTTP: the skill a request names succeeds, the others
    /// fail (as `tests/jobs.rs` logs them in process).
    fn log_outcomes(&self, n: usize) {
        let requests = [
            ("deploy the payments api to staging", "deploy-staging"),
            ("add a column to the orders table", "db-migration"),
            ("the certificate expires next week", "rotate-certs"),
        ];
        for i in 0..n {
            let (query, right) = requests[i % requests.len()];
            let body = json!({ "query": format!("{query} #{i}") });
            let (status, answer) = self.call("POST", "/v1/route", Some(body));
            assert_eq!(status, 200, "{answer}");
            let ranked = answer["ranked"].as_array().unwrap();
            let chosen = ranked[i % ranked.len()]["skill"].as_str().unwrap();
            let outcome = if chosen == right {
                "success"
            } else {
                "failure"
            };
            let report =
                json!({ "route_id": answer["route_id"], "skill": chosen, "outcome": outcome });
            let (status, refused) = self.call("POST", "/v1/outcomes", Some(report));
            assert_eq!(status, 204, "{refused}");
        }
    }
}

/// Receipts numbered 1, 2, … with no gap, each digest recomputed from its kind and payload.
fn assert_dense(job: &Value) {
    let receipts = job["receipts"].as_array().unwrap();
    for (index, receipt) in receipts.iter().enumerate() {
        assert_eq!(
            receipt["seq"],
            index + 1,
            "receipts are dense: {receipts:?}"
        );
        let kind: ReceiptKind = serde_json::from_value(receipt["kind"].clone()).unwrap();
        assert_eq!(
            receipt["digest"].as_str().unwrap(),
            receipt_digest(kind, &receipt["payload"]),
            "receipt {} digests to what it says",
            receipt["seq"]
        );
    }
}

#[test]
fn a_kill_9_under_a_running_job_interrupts_it_and_only_resume_trains_it_on_from_the_next_round() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    write_skills(&data);

    let mut first = start_daemon(&data);
    first.log_outcomes(150);
    let stopping = json!({ "max_rounds": MAX_ROUNDS, "wall_clock_s": 600 });
    let (status, job) = first.call(
        "POST",
        "/v1/jobs",
        Some(json!({ "kind": "routing-head", "stopping": stopping })),
    );
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_str().unwrap().to_string();
    first.job_when(&id, Duration::from_secs(10), |job| {
        job["rounds_completed"].as_u64() >= Some(1)
    });
    // A live turn holds the job between mini-batches: it stays `running` with its rounds
    // committed so far, whatever the machine's pace, until the engine dies under it.
    let (status, turn) = first.call(
        "POST",
        "/v1/turns/start",
        Some(json!({ "session_key": "s1" })),
    );
    assert_eq!(status, 200, "{turn}");
    let held = first.job_when(&id, Duration::from_secs(5), |job| job["paused"] == true);
    assert_eq!(held["status"], "running", "{held}");
    let rounds_then = held["rounds_completed"].as_u64().unwrap();
    assert!(
        rounds_then >= 1 && rounds_then < MAX_ROUNDS as u64,
        "{held}"
    );

    first.child.kill().unwrap(); // SIGKILL: no shutdown; the job stays `running` on disk
    first.child.wait().unwrap();
    drop(first);

    let second = start_daemon(&data);
    let adopted = second.job(&id);
    assert_eq!(adopted["status"], "interrupted", "{adopted}");
    assert_eq!(adopted["stop_reason"], "adopted_after_restart");
    assert_eq!(
        adopted["rounds_completed"], rounds_then,
        "no round was lost"
    );
    let refusal = adopted["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|receipt| receipt["kind"] == "refusal")
        .expect("a refusal receipt");
    assert_eq!(refusal["payload"]["reason"], "adopted_after_restart");
    assert_eq!(refusal["payload"]["rounds_completed"], rounds_then);
    assert_eq!(adopted["resumable"], true);
    assert_dense(&adopted);
    // No live turn holds this engine: a retrained job would move at once.
    std::thread::sleep(Duration::from_millis(500));
    let idle = second.job(&id);
    assert_eq!(
        (&idle["status"], &idle["rounds_completed"]),
        (&json!("interrupted"), &json!(rounds_then)),
        "not retrained without Resume: {idle}"
    );
    assert_eq!(
        idle["receipts"], adopted["receipts"],
        "nothing was recorded"
    );

    let checkpoints = adopted["checkpoints"].as_array().unwrap();
    assert_eq!(checkpoints.len() as u64, rounds_then);
    let last_sha = checkpoints.last().unwrap()["sha256"].clone();
    let (status, resumed) = second.call("POST", &format!("/v1/jobs/{id}/resume"), None);
    assert_eq!(status, 200, "{resumed}");
    // The resumed runner moves the job to `running` on its own thread: the answer and the
    // next reads may still say `interrupted`.
    second.job_when(&id, Duration::from_secs(5), |job| {
        job["status"] != "interrupted"
    });
    let done = second.job_when(&id, Duration::from_secs(15), |job| {
        !matches!(job["status"].as_str(), Some("queued" | "running"))
    });
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["stop_reason"], "max_rounds");
    assert_eq!(done["rounds_completed"], MAX_ROUNDS);
    let next = &done["checkpoints"][rounds_then as usize];
    assert_eq!(
        next["round"],
        rounds_then + 1,
        "it continued from the next round"
    );
    assert_eq!(
        next["parent_sha256"], last_sha,
        "with the last committed round as parent"
    );
    let resume = done["receipts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|receipt| receipt["kind"] == "resume")
        .expect("a resume receipt");
    assert_eq!(resume["payload"]["from_round"], rounds_then);
    assert_eq!(resume["payload"]["parent_sha256"], last_sha);
    assert_dense(&done);
}
