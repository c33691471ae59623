//! Reviews over real HTTP against the stand-in llama-server, in real time: the stream is
//! really dropped on preemption, a long prompt is read in steps so that a turn waits one step
//! at most, a `kill -9` mid-review loses nothing, and broken output fails cleanly. Timing logic
//! is covered on a paused clock in `tests/reviews.rs`.

#[path = "common/daemon.rs"]
mod daemon;
#[path = "common/managed.rs"]
mod managed;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use lull::config::Config;
use lull::engine::ReviewSubmission;
use lull::events::EngineEvent;
use lull::gate::SERVER_RECHECK;
use lull::llm::{ChatMessage, PREFILL_STEP_TIME, PREFILL_STEP_TOKENS};
use lull::reviews::ReviewStatus;
use lull::Engine;
use lull_stand_in::{wait_until, Endpoint, PromptRead, StandIn, StandInConfig};

use daemon::{serve_command, Daemon};
use managed::{engine_beside, managed_stand_in, next_event, paths_in};

/// A valid answer whose many words stream for a while at the stand-in's pace.
fn slow_valid_answer() -> String {
    let rationale =
        "the person fixed the failing build by bisecting the history step by step ".repeat(8);
    json!({"candidates": [{
        "skill": "git-bisect", "kind": "create", "rationale": rationale.trim(),
        "evidence": [0], "priority": 0.8, "confidence": 0.7, "related": []
    }]})
    .to_string()
    .replace(',', ", ")
}

fn config_for(state_file: &Path) -> Config {
    let mut config = Config::default();
    config.server.state_file = state_file.to_path_buf();
    config.scheduler.settle_s = 1;
    config.scheduler.settle_after_preemption_s = 1;
    // These tests follow one review's requests: no drafts of its candidates.
    config.learning.max_drafts_per_run = 0;
    config
}

fn submission(session: &str) -> ReviewSubmission {
    ReviewSubmission {
        session_key: session.into(),
        messages: vec![ChatMessage {
            role: "user".into(),
            content: "the build fails, please bisect".into(),
        }],
        focus: None,
        snapshot_at: None,
        runtime: None,
    }
}

/// A submission whose transcript is about `words` words long, so its review prompt spans many
/// prefill steps.
fn long_submission(session: &str, words: usize) -> ReviewSubmission {
    let mut long = submission(session);
    long.messages[0].content = "the build fails again after the merge so please bisect it "
        .repeat(words.div_ceil(11))
        .trim_end()
        .to_owned();
    long
}

/// Waits until the stand-in's streams on `model` have sent `tokens` more content tokens than
/// when called: the stream went on for that many steps of its pace, however busy the machine.
async fn wait_for_tokens(server: &StandIn, model: &str, tokens: u64, limit: Duration) {
    let target = server.tokens_streamed(model) + tokens;
    wait_until(limit, || server.tokens_streamed(model) >= target).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_start_drops_the_stream_within_500_ms_and_the_review_completes_later() {
    let dir = tempfile::tempdir().unwrap();
    let config = StandInConfig::single("tiny")
        .with_api_key("k")
        .with_pace(Duration::from_millis(40));
    let (server, engine, mut events) = engine_beside(dir.path(), config, config_for).await;
    server.push_reply("tiny", slow_valid_answer());
    server.push_reply("tiny", slow_valid_answer());
    let (id, _) = engine.submit_review(submission("s1")).await.unwrap();

    wait_until(Duration::from_secs(30), || server.busy_slots("tiny") == 1).await;
    // The review is past its prompt and decoding when the turn starts.
    wait_for_tokens(&server, "tiny", 5, Duration::from_secs(10)).await;
    // Taken before the turn starts: the engine's tasks may drop the stream before this thread
    // runs again.
    let preempted_at = Instant::now();
    let lease = engine.start_turn();
    wait_until(Duration::from_secs(2), || !server.stream_drops().is_empty()).await;
    let drop = &server.stream_drops()[0];
    assert!(
        drop.at >= preempted_at,
        "the stream was dropped before the turn started"
    );
    let dropped_after = drop.at - preempted_at;
    assert!(
        dropped_after <= Duration::from_millis(500),
        "the stand-in saw the stream dropped {dropped_after:?} after the turn started"
    );
    assert!(
        drop.tokens_sent > 0,
        "the review had really started decoding"
    );
    next_event(&mut events, Duration::from_secs(2), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;

    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.attempts), (ReviewStatus::Queued, 1));

    server.set_pace(Duration::from_millis(1));
    engine.finish_turn(&lease).unwrap();
    next_event(&mut events, Duration::from_secs(20), |e| {
        matches!(e, EngineEvent::ReviewCompleted { .. })
    })
    .await;
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.attempts), (ReviewStatus::Done, 2));
    assert!(review.completion_tokens.is_some(), "usage is recorded");
    assert_eq!(engine.candidates(None).await.unwrap().len(), 1);
    let request = &server.chat_requests()[1];
    assert_eq!(request["stream"], true);
    assert_eq!(request["response_format"]["type"], "json_schema");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_client_slows_our_stream_and_one_slots_read_confirms_the_preemption() {
    let dir = tempfile::tempdir().unwrap();
    let config = StandInConfig::single("tiny")
        .with_pace(Duration::from_millis(20))
        .with_contention_factor(100.0);
    let (server, engine, mut events) = engine_beside(dir.path(), config, config_for).await;
    server.push_reply("tiny", slow_valid_answer());
    engine.submit_review(submission("s1")).await.unwrap();
    wait_until(Duration::from_secs(30), || server.busy_slots("tiny") == 1).await;
    assert_eq!(server.chat_requests()[0]["return_progress"], true);

    // A stream that keeps its pace costs no request: 40 tokens (at least 800 ms at its pace)
    // go by without a `/slots` read.
    let slots_while_running = server.requests(Endpoint::Slots);
    wait_for_tokens(&server, "tiny", 40, Duration::from_secs(10)).await;
    assert_eq!(server.requests(Endpoint::Slots), slots_while_running);
    assert!(
        server.stream_drops().is_empty(),
        "the stream kept running meanwhile"
    );

    // An editor plugin starts a request on the other slot: our tokens slow to one per 2 s.
    let started = Instant::now();
    server.set_busy("tiny", 1, true);
    wait_until(Duration::from_secs(3), || !server.stream_drops().is_empty()).await;
    let dropped_after = server.stream_drops()[0].at - started;
    assert!(
        dropped_after <= Duration::from_millis(1500),
        "dropped {dropped_after:?} after the other client started"
    );
    assert_eq!(
        server.requests(Endpoint::Slots),
        slots_while_running + 1,
        "one read confirmed the stall"
    );
    let event = next_event(&mut events, Duration::from_secs(2), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;
    assert!(
        matches!(event, EngineEvent::ReviewPreempted { ref reason, .. } if reason.contains("another client")),
        "{event:?}"
    );
    engine.shutdown().await;
}

/// Issue 30: after the person's last busy slot, a review their turns keep preempting runs again
/// within the settle window after a preemption plus one reading, whether the agent reports its
/// turns or the client reports nothing; turn after turn, so no back-off grows meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_persons_last_busy_slot_a_preempted_review_runs_again_within_the_window() {
    let window = Duration::from_secs(3);
    let bound = window + SERVER_RECHECK + Duration::from_millis(1500);
    for reported in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let config = StandInConfig::single("tiny")
            .with_pace(Duration::from_millis(20))
            .with_contention_factor(100.0);
        let (server, engine, mut events) = engine_beside(dir.path(), config, |state| {
            let mut config = config_for(state);
            config.scheduler.settle_after_preemption_s = window.as_secs();
            config
        })
        .await;
        for _ in 0..4 {
            server.push_reply("tiny", slow_valid_answer());
        }
        let (id, _) = engine.submit_review(submission("s1")).await.unwrap();
        let started = |e: &EngineEvent| matches!(e, EngineEvent::ReviewStarted { .. });
        next_event(&mut events, Duration::from_secs(30), started).await;
        for turn in 0..3 {
            // The review is decoding when the person's turn takes the other slot.
            wait_for_tokens(&server, "tiny", 3, Duration::from_secs(10)).await;
            let lease = reported.then(|| engine.start_turn());
            server.set_busy("tiny", 1, true);
            next_event(&mut events, Duration::from_secs(5), |e| {
                matches!(e, EngineEvent::ReviewPreempted { .. })
            })
            .await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            server.set_busy("tiny", 1, false);
            if let Some(lease) = lease {
                engine.finish_turn(&lease).unwrap();
            }
            let free = Instant::now();
            next_event(&mut events, bound + Duration::from_secs(5), started).await;
            let resumed = free.elapsed();
            assert!(
                resumed <= bound,
                "reported turns {reported}, turn {turn}: the review ran again {resumed:?} after \
                 the last busy slot, not within {bound:?}"
            );
        }
        next_event(&mut events, Duration::from_secs(30), |e| {
            matches!(e, EngineEvent::ReviewCompleted { .. })
        })
        .await;
        let review = engine.review(&id).await.unwrap();
        assert_eq!((review.status, review.attempts), (ReviewStatus::Done, 4));
        engine.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_output_over_http_fails_after_three_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let config = StandInConfig::single("tiny").with_pace(Duration::from_millis(1));
    let (server, state_file) = managed_stand_in(dir.path(), config).await;
    for _ in 0..3 {
        server.push_reply("tiny", "{\"candidates\": [ {\"skill\": ");
    }
    let paths = paths_in(dir.path());
    let mut config = config_for(&state_file);
    config.scheduler.settle_s = 0;
    let engine = Engine::open(config, paths).await.unwrap();
    let mut events = engine.events().subscribe();
    let (id, _) = engine.submit_review(submission("s1")).await.unwrap();
    next_event(&mut events, Duration::from_secs(20), |e| {
        matches!(
            e,
            EngineEvent::ReviewFailed {
                will_retry: false,
                ..
            }
        )
    })
    .await;
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.failures), (ReviewStatus::Failed, 3));
    assert!(review.last_error.unwrap().contains("not the expected JSON"));
    assert_eq!(server.requests(Endpoint::ChatCompletions), 3);
    engine.shutdown().await;
}

/// A stand-in that reads 32 tokens a batch, 40 ms each: a step takes about half a second
/// (400 tokens), a 3,000-word review's prompt about 4 s.
fn stepping_stand_in() -> StandInConfig {
    StandInConfig::single("tiny")
        .with_pace(Duration::from_millis(1))
        .with_prompt_pace(Duration::from_millis(40))
        .with_batch_tokens(32)
}

/// The longest prompt step the stand-in has read so far.
fn longest_step(server: &StandIn) -> Duration {
    reads_at(server, Endpoint::Completion)
        .iter()
        .map(|step| step.ended - step.started)
        .max()
        .expect("a step was read")
}

/// The stand-in's prompt reads at `endpoint`, in the order they ended.
fn reads_at(server: &StandIn, endpoint: Endpoint) -> Vec<PromptRead> {
    server
        .prompt_reads()
        .into_iter()
        .filter(|read| read.endpoint == endpoint)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviews_prompt_is_read_in_steps_and_its_chat_request_finds_all_but_the_last_cached() {
    let dir = tempfile::tempdir().unwrap();
    // 20 ms a 32-token batch: the first step (256 tokens) takes 160 ms, so the next ones are
    // what the stand-in reads in half a second (800 tokens).
    let config = StandInConfig::single("tiny")
        .with_api_key("k")
        .with_pace(Duration::from_millis(1))
        .with_prompt_pace(Duration::from_millis(20))
        .with_batch_tokens(32);
    let (server, engine, mut events) = engine_beside(dir.path(), config, config_for).await;
    server.push_reply("tiny", slow_valid_answer());
    let (id, _) = engine
        .submit_review(long_submission("s1", 2500))
        .await
        .unwrap();
    next_event(&mut events, Duration::from_secs(30), |e| {
        matches!(e, EngineEvent::ReviewCompleted { .. })
    })
    .await;
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.attempts), (ReviewStatus::Done, 1));

    let chat_reads = reads_at(&server, Endpoint::ChatCompletions);
    assert_eq!(chat_reads.len(), 1);
    let chat = &chat_reads[0];
    let steps = reads_at(&server, Endpoint::Completion);
    let n_steps = steps.len();
    assert!(
        n_steps >= 3,
        "a {}-token prompt in {n_steps} steps",
        chat.total
    );
    assert_eq!(review.prompt_tokens, Some(chat.total as u64));

    // The server's own routes come first, then one /completion per step, each followed by a
    // /slots read at its checkpoint (a stall on a busy machine may add one), then the chat
    // request.
    let mut prompt_requests: Vec<Endpoint> = server
        .request_log()
        .iter()
        .map(|request| request.endpoint)
        .skip_while(|endpoint| *endpoint != Endpoint::ApplyTemplate)
        .filter(|endpoint| {
            matches!(
                endpoint,
                Endpoint::ApplyTemplate
                    | Endpoint::Tokenize
                    | Endpoint::Completion
                    | Endpoint::Slots
                    | Endpoint::ChatCompletions
            )
        })
        .collect();
    prompt_requests.dedup_by(|a, b| a == b && *a == Endpoint::Slots);
    let mut expected = vec![Endpoint::ApplyTemplate, Endpoint::Tokenize];
    for _ in 0..n_steps {
        expected.extend([Endpoint::Completion, Endpoint::Slots]);
    }
    expected.push(Endpoint::ChatCompletions);
    assert_eq!(prompt_requests, expected);

    // The first step reads 256 tokens; each next one reads on top of the one before, in one
    // slot, and is sized by time: each takes about PREFILL_STEP_TIME, not a fixed count...
    assert_eq!((steps[0].cached, steps[0].total), (0, PREFILL_STEP_TOKENS));
    for pair in steps.windows(2) {
        assert_eq!(pair[1].slot, chat.slot);
        assert_eq!(
            pair[1].cached, pair[0].total,
            "each step extends the one before"
        );
    }
    for step in &steps[1..steps.len() - 1] {
        let took = step.ended - step.started;
        assert!(
            took >= PREFILL_STEP_TIME / 2 && took <= PREFILL_STEP_TIME * 2,
            "a step took {took:?}"
        );
    }
    // ...and the chat request's `prompt_progress` reported everything the steps read as cache.
    let last = steps.last().unwrap();
    assert_eq!(chat.cached, last.total);
    assert!(chat.total - chat.cached <= last.total - last.cached);
    let request = &server.chat_requests()[0];
    assert_eq!(request["return_progress"], true);
    engine.shutdown().await;
}

/// Issue 28: a blind first step of 256 tokens takes a slow server longer than a person should
/// wait (0.78 s on this project's CPU). The client remembers the pace its steps showed, so the
/// next prompt's first step is what the server reads in half a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_reviews_first_step_is_sized_by_the_pace_the_last_one_showed() {
    let dir = tempfile::tempdir().unwrap();
    // 100 ms a 32-token batch: 320 tokens/s, 160 in half a second.
    let config = stepping_stand_in().with_prompt_pace(Duration::from_millis(100));
    let (server, engine, mut events) = engine_beside(dir.path(), config, config_for).await;
    for session in ["s1", "s2"] {
        server.push_reply("tiny", slow_valid_answer());
        engine
            .submit_review(long_submission(session, 600))
            .await
            .unwrap();
        next_event(&mut events, Duration::from_secs(60), |e| {
            matches!(e, EngineEvent::ReviewCompleted { .. })
        })
        .await;
    }
    let chats = reads_at(&server, Endpoint::ChatCompletions);
    assert_eq!(chats.len(), 2);
    let steps = reads_at(&server, Endpoint::Completion);
    let first_of = |after: Instant| {
        steps
            .iter()
            .find(|step| step.started >= after)
            .expect("the review was read in steps")
    };
    let blind = first_of(steps[0].started);
    assert_eq!(blind.total, PREFILL_STEP_TOKENS);
    assert!(
        blind.ended - blind.started > PREFILL_STEP_TIME,
        "the blind step overran"
    );
    let known = first_of(chats[0].ended);
    assert!(
        (100..=160).contains(&known.total),
        "the second review's first step ends at token {}",
        known.total
    );
    let took = known.ended - known.started;
    assert!(
        took <= PREFILL_STEP_TIME + Duration::from_millis(150),
        "it took {took:?}"
    );
    engine.shutdown().await;
}

/// Issue 30: a client that only decodes beside Lull's prompt steps slows none of them (its
/// answer gets a token a step instead), so no pace can see it; the `/slots` read at the
/// checkpoint after the step does, and no next step is sent beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_client_that_slows_no_step_stops_the_review_at_the_next_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (server, engine, mut events) =
        engine_beside(dir.path(), stepping_stand_in(), config_for).await;
    server.push_reply("tiny", slow_valid_answer());
    engine
        .submit_review(long_submission("s1", 3000))
        .await
        .unwrap();
    wait_until(Duration::from_secs(30), || {
        server.requests(Endpoint::Completion) >= 3
    })
    .await;
    let ours = reads_at(&server, Endpoint::Completion)[0].slot;
    let started = Instant::now();
    server.set_busy("tiny", 1 - ours, true);
    let steps_before = server.requests(Endpoint::Completion);
    let event = next_event(&mut events, Duration::from_secs(10), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;
    assert!(
        matches!(event, EngineEvent::ReviewPreempted { ref reason, .. } if reason.contains("another client")),
        "{event:?}"
    );
    let longest_step = longest_step(&server);
    assert!(
        started.elapsed() <= longest_step * 2,
        "preempted {:?} after the other client started; a step takes up to {longest_step:?}",
        started.elapsed()
    );
    assert!(
        server.requests(Endpoint::Completion) <= steps_before + 1,
        "at most the step sent as the other client started: {} steps after {steps_before}",
        server.requests(Endpoint::Completion)
    );
    assert!(reads_at(&server, Endpoint::ChatCompletions).is_empty());
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_during_a_reviews_prompt_frees_the_slot_within_a_step_not_the_whole_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let (server, engine, mut events) =
        engine_beside(dir.path(), stepping_stand_in(), config_for).await;
    server.push_reply("tiny", slow_valid_answer());
    let (id, _) = engine
        .submit_review(long_submission("s1", 3000))
        .await
        .unwrap();

    // The person comes back while the review's prompt is being read, a few steps in.
    wait_until(Duration::from_secs(30), || {
        server.requests(Endpoint::Completion) >= 3
    })
    .await;
    let preempted_at = Instant::now();
    let lease = engine.start_turn();
    wait_until(Duration::from_secs(30), || server.busy_slots("tiny") == 0).await;
    let freed_after = preempted_at.elapsed();
    next_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, EngineEvent::ReviewPreempted { .. })
    })
    .await;
    let longest_step = longest_step(&server);
    assert!(
        freed_after <= longest_step * 2,
        "the slot was freed {freed_after:?} after the turn started; a step takes up to \
         {longest_step:?}"
    );
    assert!(
        reads_at(&server, Endpoint::ChatCompletions).is_empty(),
        "the turn came before the chat request"
    );

    // The review completes after the turn; its chat request is what the review would have sent
    // whole without the steps.
    engine.finish_turn(&lease).unwrap();
    next_event(&mut events, Duration::from_secs(30), |e| {
        matches!(e, EngineEvent::ReviewCompleted { .. })
    })
    .await;
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.attempts), (ReviewStatus::Done, 2));
    let chat_request = server.chat_requests().pop().unwrap();
    engine.shutdown().await;

    // The same prompt sent whole, on a stand-in like this one, its client gone at its first
    // progress chunk: the stand-in reads it to its end, as llama-server does.
    let whole = StandIn::start(stepping_stand_in()).await.unwrap();
    let mut response = reqwest::Client::new()
        .post(format!("{}/chat/completions", whole.base_url()))
        .json(&chat_request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response
        .chunk()
        .await
        .unwrap()
        .expect("a first progress chunk");
    let dropped_at = Instant::now();
    drop(response);
    wait_until(Duration::from_secs(60), || whole.busy_slots("tiny") == 0).await;
    let whole_freed_after = dropped_at.elapsed();
    let whole_read = &whole.prompt_reads()[0];
    assert!(whole_read.client_gone && whole_read.cached == 0);
    assert!(
        freed_after * 4 <= whole_freed_after,
        "in steps the slot was freed {freed_after:?} after the turn; read whole, \
         {whole_freed_after:?} after the client went"
    );
}

/// `lull serve` on `data` with the managed server at `state_file` and no settle window. A
/// leftover `api.json` (from a killed engine) is removed first, so the new one is waited for.
fn start_daemon(data: &Path, state_file: &Path) -> Daemon {
    let _ = std::fs::remove_file(data.join("api.json"));
    Daemon::spawn(
        &mut serve_command(data, state_file),
        data,
        Duration::from_secs(10),
    )
}

impl Daemon {
    async fn get(&self, path: &str) -> Value {
        let response = reqwest::Client::new()
            .get(format!("{}{path}", self.base_url))
            .bearer_auth(&self.token)
            .send()
            .await
            .unwrap();
        response.json().await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_9_mid_review_loses_nothing_and_creates_no_twins() {
    let dir = tempfile::tempdir().unwrap();
    let config = StandInConfig::single("tiny").with_pace(Duration::from_millis(40));
    let (server, state_file) = managed_stand_in(dir.path(), config).await;
    server.push_reply("tiny", slow_valid_answer());
    server.push_reply("tiny", slow_valid_answer());
    let data = paths_in(dir.path()).data_dir;

    let mut first = start_daemon(&data, &state_file);
    let submitted = reqwest::Client::new()
        .post(format!("{}/v1/reviews", first.base_url))
        .bearer_auth(&first.token)
        .json(&json!({"session_key": "s1", "messages": [{"role": "user", "content": "please bisect"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(submitted.status(), 202);
    wait_until(Duration::from_secs(30), || server.busy_slots("tiny") == 1).await;
    first.child.kill().unwrap(); // SIGKILL: no clean shutdown, the review stays `running` on disk
    first.child.wait().unwrap();

    server.set_pace(Duration::from_millis(1));
    let second = start_daemon(&data, &state_file);
    let started = Instant::now();
    let review = loop {
        let reviews = second.get("/v1/reviews").await;
        let review = reviews["reviews"][0].clone();
        if review["status"] == "done" {
            break review;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the review did not complete: {review}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(review["attempts"], 2);
    let candidates = second.get("/v1/candidates").await;
    assert_eq!(
        candidates["candidates"].as_array().unwrap().len(),
        1,
        "candidates exist once"
    );
    assert_eq!(
        second.get("/v1/reviews").await["reviews"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// A server whose `/tokenize` answers garbage: the review's run fails with a message naming
/// what was wrong, the review stays queued for a retry after its back-off (nothing lost), and
/// once the server answers properly the review completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_from_a_prompt_step_route_fails_the_run_clearly_and_the_review_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (server, engine, mut events) = engine_beside(
        dir.path(),
        StandInConfig::single("tiny").with_pace(Duration::from_millis(1)),
        config_for,
    )
    .await;
    server.inject_fault(Endpoint::Tokenize, lull_stand_in::Fault::Garbage);
    server.push_reply("tiny", slow_valid_answer());
    let (id, _) = engine
        .submit_review(long_submission("s1", 600))
        .await
        .unwrap();
    let failed = next_event(&mut events, Duration::from_secs(30), |e| {
        matches!(e, EngineEvent::ReviewFailed { .. })
    })
    .await;
    assert!(
        matches!(failed, EngineEvent::ReviewFailed { ref error, will_retry: true, .. }
            if error.contains("/tokenize") && error.contains("not JSON")),
        "{failed:?}"
    );
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.failures), (ReviewStatus::Queued, 1));
    assert!(
        server.requests(Endpoint::ChatCompletions) == 0,
        "no chat request after a failed step"
    );

    server.clear_fault(Endpoint::Tokenize);
    next_event(&mut events, Duration::from_secs(30), |e| {
        matches!(e, EngineEvent::ReviewCompleted { .. })
    })
    .await;
    let review = engine.review(&id).await.unwrap();
    assert_eq!((review.status, review.failures), (ReviewStatus::Done, 1));
    engine.shutdown().await;
}
