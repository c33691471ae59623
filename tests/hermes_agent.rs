//! Lull as the learning engine of the real Hermes Agent: PyPI's `hermes-agent` 0.19.0
//! (`scripts/hermes/ensure-hermes.sh` installs it into a cached virtualenv), on the real
//! `llama-server` with the real SmolLM2-135M-Instruct, set up with `lull hermes setup` and a
//! private `HERMES_HOME`, as a person would.
//!
//! `make test` runs it with `LULL_HERMES=<hermes>` beside the variables of `real_llama.rs`; a
//! plain `cargo test` without them says so and skips, unless `LULL_REQUIRE_LLAMA=1` demands them.
//! It takes a few minutes: two turns of one Hermes session, Lull's review of it once Hermes is
//! done, a draft, its approval, and a last Hermes run (with Lull stopped) that loads the skill.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/llama.rs"]
mod llama;

use daemon::{get, read_only_db, send, serve_command, Daemon};
use llama::{real_model, required_path, server_binary, start_server, API_KEY};

/// The requests of a one-shot run are short (the model writes at most this many tokens each),
/// so a turn takes seconds on the 135M model.
const HERMES_MAX_TOKENS: u32 = 96;
/// Lull's settle window here: long enough that Hermes starting its next run never looks like a
/// lull, short enough for a test.
const SETTLE_S: &str = "15";
/// Attempts at a draft before its candidate fails: the 135M model, sampling, often loops on a
/// synthesis of its own weak proposal (Lull stops it and tries again); more tries make the test
/// about Lull, not about the model's luck.
const DRAFT_ATTEMPTS: &str = "12";

fn hermes_binary() -> Option<PathBuf> {
    required_path(
        "LULL_HERMES",
        "the `hermes` command of hermes-agent 0.19.0 (scripts/hermes/ensure-hermes.sh prints it)",
    )
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One `hermes chat -q … -Q` run: what it printed, its session, when it exited.
struct HermesRun {
    answer: String,
    session_id: String,
    exited_at_ms: i64,
}

/// The Hermes install of the test: its command, its home, and Lull's data folder it reports to.
struct Hermes {
    binary: PathBuf,
    home: PathBuf,
    lull_data: PathBuf,
}

impl Hermes {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .env("HERMES_HOME", &self.home)
            .env("LULL_DATA_DIR", &self.lull_data)
            // Every request Hermes sends is also written to `sessions/request_dump_*.json`.
            .env("HERMES_DUMP_REQUESTS", "1")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENROUTER_API_KEY")
            .stdin(Stdio::null());
        command
    }

    /// A one-shot chat with the tools of `toolsets` only: the prompt of every tool Hermes has
    /// would not fit the small model's 8192-token context.
    fn chat(&self, prompt: &str, toolsets: &str, resume: Option<&str>) -> HermesRun {
        let mut command = self.command();
        command.args([
            "chat",
            "-q",
            prompt,
            "-Q",
            "-t",
            toolsets,
            "--max-turns",
            "2",
        ]);
        if let Some(session) = resume {
            command.args(["--resume", session]);
        }
        let output = run_bounded(&mut command, Duration::from_secs(300));
        let exited_at_ms = now_ms();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "hermes chat failed: {}\n{stdout}\n{stderr}",
            output.status
        );
        // `-Q` prints the answer on stdout and `session_id: <id>` on stderr.
        let session_id = stderr
            .lines()
            .find_map(|line| line.trim().strip_prefix("session_id:"))
            .unwrap_or_else(|| panic!("hermes printed no session_id: {stdout}\n{stderr}"))
            .trim()
            .to_string();
        HermesRun {
            answer: stdout.trim().to_string(),
            session_id,
            exited_at_ms,
        }
    }

    /// The requests Hermes sent in `session` (its request dumps), oldest first.
    fn requests(&self, session: &str) -> Vec<Value> {
        let mut dumps: Vec<PathBuf> = std::fs::read_dir(self.home.join("sessions"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with(&format!("request_dump_{session}_")))
            })
            .collect();
        dumps.sort();
        dumps
            .iter()
            .map(|path| serde_json::from_str::<Value>(&std::fs::read_to_string(path).unwrap()))
            .map(Result::unwrap)
            // Hermes also dumps a request again when it fails; `preflight` is the one it sent.
            .filter(|dump| dump["reason"] == "preflight")
            .collect()
    }
}

/// Runs `command` to its end, killing it after `limit` (a hung Hermes fails the test, it does
/// not hang it).
fn run_bounded(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{command:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn lull(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_lull"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "lull {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Hermes's `config.yaml` for a local llama-server, as a person writes it. The context length
/// is declared (Hermes refuses models under 64K); the real slot holds 8192 tokens.
fn write_hermes_config(home: &Path, base_url: &str) {
    std::fs::create_dir_all(home).unwrap();
    let config = format!(
        "model:\n  default: smollm2\n  provider: custom\n  base_url: {base_url}\n  api_key: {API_KEY}\n  \
         context_length: 65536\n  max_tokens: {HERMES_MAX_TOKENS}\n\
         auxiliary:\n  compression:\n    context_length: 65536\n\
         skills:\n  creation_nudge_interval: 10\n"
    );
    std::fs::write(home.join("config.yaml"), config).unwrap();
}

/// The engine's log lines with `needle` (the file under `<data>/logs`).
fn log_lines(data: &Path, needle: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(data.join("logs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        lines.extend(
            text.lines()
                .filter(|l| l.contains(needle))
                .map(String::from),
        );
    }
    lines
}

/// `key=value` of a tracing line.
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line
        .find(&format!(" {key}="))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + key.len()
        + 2;
    line[start..].split_whitespace().next().unwrap()
}

fn api(daemon: &Daemon, method: &str, path: &str, body: Option<&str>) -> Value {
    let (status, text) = send(
        method,
        &format!("{}{path}", daemon.base_url),
        Some(&daemon.token),
        body,
    )
    .unwrap_or_else(|| panic!("{method} {path}: no answer"));
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {text}"
    );
    serde_json::from_str(&text).unwrap()
}

fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn hermes_agent_learns_a_skill_through_lull() {
    let (Some(hermes), Some(server_bin), Some(model)) =
        (hermes_binary(), server_binary(), real_model())
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("lull");
    let state_file = dir.path().join("server.json");
    let hermes = Hermes {
        binary: hermes,
        home: dir.path().join("hermes"),
        lull_data: data.clone(),
    };
    // One decode thread: on two cores shared with the test run, two fall to a few tokens/s.
    let server = start_server(
        &server_bin,
        &model,
        &state_file,
        &["-c", "8192", "-np", "1", "--threads", "1"],
    );
    let health = server.base_url.trim_end_matches("/v1").to_string() + "/health";
    wait_for("llama-server healthy", Duration::from_secs(60), || {
        get(&health, None).filter(|(status, _)| *status == 200)
    });
    write_hermes_config(&hermes.home, &server.base_url);

    // The set-up, as the README has it (with this test's folders).
    let config = data.join("none.toml"); // the configuration serve_command starts Lull with
    let home = hermes.home.to_str().unwrap();
    let setup = lull(&[
        "hermes",
        "setup",
        "--data-dir",
        data.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--hermes-home",
        home,
    ]);
    let printed = String::from_utf8_lossy(&setup.stdout);
    assert!(printed.contains("plugins.enabled gains lull"), "{printed}");
    assert!(
        printed.contains("skills.creation_nudge_interval → 0"),
        "{printed}"
    );
    let skills_dir = hermes.home.join("skills");
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains(&format!("dir = \"{}\"", skills_dir.display())));

    let daemon = Daemon::spawn(
        serve_command(&data, &state_file)
            .env("LULL_SCHEDULER_SETTLE_S", SETTLE_S)
            .env("LULL_LEARNING_MAX_RETRIES", DRAFT_ATTEMPTS),
        &data,
        Duration::from_secs(30),
    );

    // Two turns of one session, a person coming back to it.
    let asks = [
        "Remember this for next time: when CI fails with `the lock file needs to be updated`, \
         compare the Cargo.toml and Cargo.lock changes of the last commit before bisecting.",
        "And how do I update only the serde entry of Cargo.lock?",
    ];
    let first = hermes.chat(asks[0], "todo", None);
    let second = hermes.chat(asks[1], "todo", Some(&first.session_id));
    assert_eq!(
        second.session_id, first.session_id,
        "--resume keeps the session"
    );
    let session = first.session_id.clone();
    let session_key = format!("hermes:{session}");

    // Every LLM request Hermes sent held a Lull lease, and every lease was given back.
    let requests = hermes.requests(&session);
    assert!(requests.len() >= 2, "{} requests", requests.len());
    let started: Vec<String> = log_lines(&data, "turn started")
        .into_iter()
        .filter(|line| field(line, "session") == session_key)
        .collect();
    let leases: Vec<&str> = started.iter().map(|line| field(line, "lease")).collect();
    assert_eq!(
        leases.len(),
        requests.len(),
        "one lease per request: {started:#?}"
    );
    let finished = log_lines(&data, "turn finished");
    let finished_at = |lease: &str| -> String {
        let line = finished
            .iter()
            .find(|line| field(line, "lease") == lease)
            .unwrap_or_else(|| panic!("lease {lease} never finished: {finished:#?}"));
        line.split_whitespace().next().unwrap().to_string()
    };
    // One request at a time: each lease is given back before the next is taken (the log's
    // RFC 3339 times sort as text).
    for pair in started.windows(2) {
        let next_started = pair[1].split_whitespace().next().unwrap();
        let lease = field(&pair[0], "lease");
        assert!(
            finished_at(lease).as_str() <= next_started,
            "lease {lease} was still held when the next request began: {started:#?} {finished:#?}"
        );
    }
    finished_at(leases.last().unwrap());

    // The session reached Lull with the messages Hermes exchanged, and was reviewed once Hermes
    // was done (its run began after the last exit plus the settle window).
    let db = read_only_db(&data);
    let (messages, finished_at, duration_ms): (String, i64, i64) = wait_for(
        "the review of the session done",
        Duration::from_secs(300),
        || {
            db.query_row(
                "SELECT messages, finished_at, duration_ms FROM reviews
                 WHERE session_key = ?1 AND status = 'done' ORDER BY finished_at DESC LIMIT 1",
                [&session_key],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .ok()
        },
    );
    let messages: Vec<Value> = serde_json::from_str(&messages).unwrap();
    let said = |role: &str, text: &str| {
        messages
            .iter()
            .any(|m| m["role"] == role && m["content"].as_str().unwrap().trim() == text.trim())
    };
    for ask in asks {
        assert!(said("user", ask), "{ask:?} not in {messages:#?}");
    }
    assert!(
        !messages.iter().any(|m| m["role"] == "system"),
        "Hermes's system prompt is not the conversation"
    );
    let last_request = requests.last().unwrap();
    let sent: Vec<&Value> = last_request["request"]["body"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .collect();
    assert!(
        messages.len() > sent.len(),
        "the review holds what Hermes last sent plus its answer: {} vs {}",
        messages.len(),
        sent.len()
    );
    assert!(
        messages.last().unwrap()["role"] == "assistant",
        "{messages:#?}"
    );
    assert!(!second.answer.is_empty());
    let run_began = finished_at - duration_ms;
    assert!(
        run_began >= second.exited_at_ms,
        "the review ran while Hermes was still working: began {run_began}, Hermes exited {}",
        second.exited_at_ms
    );
    assert_eq!(log_lines(&data, "review done").len(), 1);
    // The run's record, for the reader.
    for needle in [
        "turn started",
        "turn finished",
        "review submitted",
        "review done",
    ] {
        for line in log_lines(&data, needle) {
            println!("lull log: {line}");
        }
    }

    // A draft reaches the person; they read it (dismissing what the safety check flags high in
    // the small model's text) and approve it.
    let draft = wait_for("a draft for the person", Duration::from_secs(600), || {
        let drafts = api(&daemon, "GET", "/v1/drafts", None);
        let ready = drafts["drafts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["status"] == "review_pending" || d["status"] == "blocked")
            .cloned();
        if ready.is_none() {
            let candidates = api(&daemon, "GET", "/v1/candidates", None)["candidates"].clone();
            let candidates = candidates.as_array().unwrap();
            assert!(
                candidates.is_empty() || candidates.iter().any(|c| c["status"] != "failed"),
                "every candidate failed: {candidates:#?}"
            );
        }
        ready
    });
    let id = draft["id"].as_str().unwrap();
    for finding in draft["safety"]["findings"].as_array().unwrap() {
        if finding["dismissed"].is_null()
            && matches!(finding["risk"].as_str(), Some("high" | "critical"))
        {
            api(
                &daemon,
                "POST",
                &format!("/v1/drafts/{id}/findings/{}/dismiss", finding["index"]),
                Some(r#"{"reason":"read and accepted in a test"}"#),
            );
        }
    }
    let approved = api(&daemon, "POST", &format!("/v1/drafts/{id}/approve"), None);
    assert_eq!(approved["status"], "approved", "{approved}");
    let name = approved["skill"].as_str().unwrap();
    let skill_md = std::fs::read_to_string(skills_dir.join(name).join("SKILL.md")).unwrap();
    assert_eq!(skill_md, approved["skill_md"].as_str().unwrap());

    // Hermes lists the approved skill.
    let listed = run_bounded(
        hermes.command().args(["skills", "list"]),
        Duration::from_secs(60),
    );
    let listing = String::from_utf8_lossy(&listed.stdout);
    println!(
        "approved {}:\n{skill_md}\nhermes skills list:\n{listing}",
        skills_dir.join(name).join("SKILL.md").display()
    );
    assert!(
        listed.status.success() && listing.contains(name),
        "Hermes does not list {name}"
    );

    // With Lull stopped (killed: its api.json still names a dead port), Hermes's next session
    // runs as before and its system prompt carries the skill.
    drop(daemon);
    let alone = hermes.chat("Say hi.", "skills", None);
    assert!(!alone.answer.is_empty());
    let prompt = hermes.requests(&alone.session_id)[0]["request"]["body"]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let listed_skills = prompt
        .split_once("<available_skills>")
        .and_then(|(_, rest)| rest.split_once("</available_skills>"))
        .map(|(inside, _)| inside)
        .unwrap_or_else(|| panic!("no <available_skills> in the system prompt: {prompt}"));
    assert!(
        listed_skills.contains(&format!("{name}:")),
        "{listed_skills}"
    );
    let hermes_log = std::fs::read_to_string(hermes.home.join("logs/agent.log")).unwrap();
    let warnings = hermes_log
        .lines()
        .filter(|l| l.contains("lull_hermes") && l.contains("WARNING"))
        .count();
    assert_eq!(
        warnings, 1,
        "the plugin warns once that Lull is gone: {hermes_log}"
    );
    drop(server);
}
