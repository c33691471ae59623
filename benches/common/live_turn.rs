//! The person's own latency with learning beside them, on the real llama-server with a real
//! model (issue 16, DESIGN §7). Shared by `benches/live_turn.rs` (a seeded day, `make bench`)
//! and `tests/live_turn.rs` (a short day, `make test`).
//!
//! One seeded [`Day`] of a person's chat turns (think time, then a streamed answer) and of
//! reviews arriving between them is played in each [`Mode`] on a fresh server: `none` (no
//! learning), `immediate` (each review sent at once to the same server, as an agent without Lull
//! does), `lull-reported` (the person's agent reports its turns) and `lull-unreported` (the
//! person's requests come from a client that tells Lull nothing). Every prompt is unique, so no
//! mode profits from the server's prompt cache across turns.

#![allow(dead_code)] // the test uses part of this

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use serde_json::{json, Value};

use lull::engine::ReviewSubmission;
use lull::events::EngineEvent;
use lull::llm::{ChatEndpoint, ChatMessage, HttpLlmClient, LlmClient};
use lull::reviews::prompt::{self, Window};
use lull::reviews::ReviewStatus;
use lull::{Config, Engine, Paths};

/// The model's id on the server (single-model mode answers any).
const MODEL: &str = "smollm2";
/// Words the generated prompts and transcripts are made of.
const VOCABULARY: [&str; 24] = [
    "the", "build", "fails", "after", "we", "deploy", "cache", "commit", "branch", "merge", "test",
    "lint", "crate", "server", "model", "token", "review", "skill", "bisect", "release", "lock",
    "file", "pipeline", "green",
];

/// What a day holds.
#[derive(Debug, Clone, Serialize)]
pub struct DayShape {
    /// Seeds every draw.
    pub seed: u64,
    /// The person's turns.
    pub turns: usize,
    /// Words of a turn's prompt, drawn between the two.
    pub prompt_words: (usize, usize),
    /// Tokens of each answer (the server is asked to ignore end-of-sequence).
    pub answer_tokens: u32,
    /// Seconds of thought before each turn, drawn between the two.
    pub think_s: (f64, f64),
    /// A review arrives after every this many turns (0: none during the day).
    pub review_every: usize,
    /// Reviews queued before the person's first turn.
    pub queued_at_start: usize,
    /// Bytes of each review's transcript.
    pub review_bytes: usize,
    /// After the last turn, how long learning may take to finish.
    pub drain: Duration,
    /// `scheduler.settle_s` for the Lull modes.
    pub settle_s: u64,
    /// `scheduler.settle_after_preemption_s` for the Lull modes.
    pub settle_after_preemption_s: u64,
    /// The server's slots (`-np`); `None` is llama-server's default.
    pub slots: Option<u32>,
    /// The server's context (`-c`), all slots together.
    pub context: u32,
}

impl DayShape {
    /// The server's arguments besides the model and the port: the slots and context of this
    /// day, `/metrics` for the decode tally, no web UI.
    pub fn server_args(&self) -> Vec<String> {
        let mut args = vec!["-c".to_string(), self.context.to_string()];
        if let Some(slots) = self.slots {
            args.extend(["-np".to_string(), slots.to_string()]);
        }
        args.extend(["--metrics".to_string(), "--no-webui".to_string()]);
        args
    }
}

/// One turn of the person.
pub struct Turn {
    /// Thought before it.
    pub think: Duration,
    /// The prompt.
    pub messages: Vec<ChatMessage>,
}

/// A review arriving after turn `after_turn` (0-based), or queued before the day when `None`.
pub struct Arrival {
    /// The turn it follows.
    pub after_turn: Option<usize>,
    /// The conversation to review.
    pub messages: Vec<ChatMessage>,
}

/// A seeded day.
pub struct Day {
    /// The person's turns, in order.
    pub turns: Vec<Turn>,
    /// The reviews, in order.
    pub reviews: Vec<Arrival>,
}

fn words(rng: &mut StdRng, n: usize) -> String {
    (0..n)
        .map(|_| VOCABULARY[rng.random_range(0..VOCABULARY.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Draws the day of `shape`.
pub fn day(shape: &DayShape) -> Day {
    let mut rng = StdRng::seed_from_u64(shape.seed);
    let turns = (0..shape.turns)
        .map(|index| {
            let n = rng.random_range(shape.prompt_words.0..=shape.prompt_words.1);
            Turn {
                think: Duration::from_secs_f64(rng.random_range(shape.think_s.0..=shape.think_s.1)),
                messages: vec![ChatMessage {
                    role: "user".into(),
                    content: format!("Turn {index}: {}", words(&mut rng, n)),
                }],
            }
        })
        .collect();
    let during = (0..shape.turns)
        .filter(|turn| shape.review_every > 0 && (turn + 1) % shape.review_every == 0)
        .map(Some);
    let reviews = std::iter::repeat_n(None, shape.queued_at_start)
        .chain(during)
        .map(|after_turn| {
            let mut messages = Vec::new();
            let mut bytes = 0;
            while bytes < shape.review_bytes {
                let role = if messages.len() % 2 == 0 {
                    "user"
                } else {
                    "assistant"
                };
                let content = words(&mut rng, 60);
                bytes += content.len();
                messages.push(ChatMessage {
                    role: role.into(),
                    content,
                });
            }
            Arrival {
                after_turn,
                messages,
            }
        })
        .collect();
    Day { turns, reviews }
}

/// Who learns, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No learning at all: the baseline.
    None,
    /// Each review sent at once to the same server.
    Immediate,
    /// Lull, told of every turn.
    LullReported,
    /// Lull, told nothing: only `/slots` and its own stream's pace show the person.
    LullUnreported,
}

impl Mode {
    /// All four, baseline first.
    pub const ALL: [Mode; 4] = [
        Mode::None,
        Mode::Immediate,
        Mode::LullReported,
        Mode::LullUnreported,
    ];

    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Immediate => "immediate",
            Mode::LullReported => "lull, reported turns",
            Mode::LullUnreported => "lull, unreported client",
        }
    }
}

/// What one mode measured.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    /// The mode.
    pub mode: &'static str,
    /// The person's time to first token, median.
    pub ttft_p50_s: f64,
    /// The same, 95th percentile.
    pub ttft_p95_s: f64,
    /// The same, worst.
    pub ttft_max_s: f64,
    /// The person's decode rate after the first token, median.
    pub decode_tokens_per_s_p50: f64,
    /// Reviews that arrived.
    pub reviews: usize,
    /// Reviews finished by the end of the drain window.
    pub reviews_completed: usize,
    /// Tokens the server decoded that no finished request kept (learning thrown away).
    pub decode_thrown_away_tokens: u64,
    /// Prompt tokens the server read, all requests together.
    pub prompt_tokens_read: u64,
    /// HTTP requests learning sent to the server (Lull's readings, prompt steps and reviews;
    /// immediate's reviews).
    pub learning_requests: u64,
    /// Seconds from the last turn's end until learning finished (or the drain window ended).
    pub drain_s: f64,
    /// Lull: seconds from the last turn's end until a review next ran (0 when one was running
    /// then); `None` when none ran after it.
    pub resumed_after_s: Option<f64>,
    /// Every turn's time to first token, in order.
    #[serde(skip)]
    pub ttft_s: Vec<f64>,
}

/// The tail a case's target bounds besides the median.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tail {
    /// The 95th percentile (the long case).
    P95,
    /// The worst turn (the short case, issue 30).
    Worst,
}

/// One case of the benchmark: several seeded days, each played in every [`Mode`] on a fresh
/// server, and the person's time to first token pooled over the days per mode.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// Its name (`short`, `long`).
    pub name: String,
    /// The tail its target bounds.
    pub tail: Tail,
    /// The days, as drawn.
    pub days: Vec<DayShape>,
    /// Per day, the figures of each mode (in [`Mode::ALL`]'s order).
    pub figures: Vec<Vec<Figures>>,
    /// Per mode, over all days.
    pub pooled: Vec<Pooled>,
}

/// A mode's figures over all days of a case.
#[derive(Debug, Clone, Serialize)]
pub struct Pooled {
    /// The mode.
    pub mode: &'static str,
    /// The person's turns measured.
    pub turns: usize,
    /// Time to first token over all turns: median, 95th percentile, worst.
    pub ttft_p50_s: f64,
    /// See `ttft_p50_s`.
    pub ttft_p95_s: f64,
    /// See `ttft_p50_s`.
    pub ttft_max_s: f64,
    /// The lowest and highest of the days' own medians: the spread over days.
    pub day_p50_range_s: (f64, f64),
    /// Reviews that arrived and those finished within the drain windows, all days together.
    pub reviews: usize,
    /// See `reviews`.
    pub reviews_completed: usize,
    /// Learning's requests to the server, all days together.
    pub learning_requests: u64,
    /// The longest drain, in seconds.
    pub drain_max_s: f64,
    /// Lull: the longest wait from a day's last turn until a review ran again, in seconds.
    pub resumed_after_max_s: Option<f64>,
}

impl Case {
    /// Plays every day of `days` in every mode.
    pub async fn run(
        name: &str,
        tail: Tail,
        binary: &Path,
        model: &Path,
        work: &Path,
        days: Vec<DayShape>,
    ) -> Case {
        let mut figures = Vec::new();
        for shape in &days {
            let mut day = Vec::new();
            let dir = work.join(format!("{name}-{}", shape.seed));
            for mode in Mode::ALL {
                let measured = run(binary, model, &dir, mode, shape).await;
                eprintln!("{name} seed {}: {measured:?}", shape.seed);
                day.push(measured);
            }
            figures.push(day);
        }
        let pooled = (0..Mode::ALL.len())
            .map(|m| {
                let of_mode: Vec<&Figures> = figures.iter().map(|day| &day[m]).collect();
                let mut ttft: Vec<f64> = of_mode.iter().flat_map(|f| f.ttft_s.clone()).collect();
                let day_p50s = of_mode.iter().map(|f| f.ttft_p50_s);
                Pooled {
                    mode: Mode::ALL[m].name(),
                    turns: ttft.len(),
                    ttft_p50_s: percentile(&mut ttft, 0.5),
                    ttft_p95_s: percentile(&mut ttft, 0.95),
                    ttft_max_s: percentile(&mut ttft, 1.0),
                    day_p50_range_s: (
                        day_p50s.clone().fold(f64::INFINITY, f64::min),
                        day_p50s.fold(0.0, f64::max),
                    ),
                    reviews: of_mode.iter().map(|f| f.reviews).sum(),
                    reviews_completed: of_mode.iter().map(|f| f.reviews_completed).sum(),
                    learning_requests: of_mode.iter().map(|f| f.learning_requests).sum(),
                    drain_max_s: of_mode.iter().map(|f| f.drain_s).fold(0.0, f64::max),
                    resumed_after_max_s: of_mode
                        .iter()
                        .filter_map(|f| f.resumed_after_s)
                        .reduce(f64::max),
                }
            })
            .collect();
        Case {
            name: name.into(),
            tail,
            days,
            figures,
            pooled,
        }
    }

    /// The case's table and its targets against `none`: p50 within 10 % for both Lull modes,
    /// and the case's [`Tail`] within 25 %.
    pub fn print(&self) {
        let shape = &self.days[0];
        println!(
            "\nlive turn, case {}: {} days (seeds {}), {} turns a day; llama-server {}",
            self.name,
            self.days.len(),
            self.days
                .iter()
                .map(|d| d.seed.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            shape.turns,
            shape.server_args().join(" ")
        );
        println!(
            "{:<26} {:>6} {:>9} {:>9} {:>9} {:>15} {:>9} {:>9} {:>8}",
            "mode",
            "turns",
            "ttft p50",
            "ttft p95",
            "ttft max",
            "day p50s",
            "reviews",
            "requests",
            "drain"
        );
        for p in &self.pooled {
            println!(
                "{:<26} {:>6} {:>8.3}s {:>8.3}s {:>8.3}s {:>6.3}–{:<6.3}s {:>5}/{:<3} {:>9} {:>7.0}s",
                p.mode,
                p.turns,
                p.ttft_p50_s,
                p.ttft_p95_s,
                p.ttft_max_s,
                p.day_p50_range_s.0,
                p.day_p50_range_s.1,
                p.reviews_completed,
                p.reviews,
                p.learning_requests,
                p.drain_max_s
            );
        }
        let none = &self.pooled[0];
        let (tail, tail_name): (fn(&Pooled) -> f64, &str) = match self.tail {
            Tail::Worst => (|p| p.ttft_max_s, "worst"),
            Tail::P95 => (|p| p.ttft_p95_s, "p95"),
        };
        println!("targets (against none):");
        for lull in &self.pooled[2..] {
            let p50 = lull.ttft_p50_s / none.ttft_p50_s;
            let tail_ratio = tail(lull) / tail(none);
            let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
            println!(
                "  [{}] {}: p50 {:.2}× (≤ 1.10)  [{}] {tail_name} {:.2}× (≤ 1.25)  [{}] reviews {}/{}  (learning ran again ≤ {:.1} s after the last turn)",
                mark(p50 <= 1.10),
                lull.mode,
                p50,
                mark(tail_ratio <= 1.25),
                tail_ratio,
                mark(lull.reviews_completed == lull.reviews),
                lull.reviews_completed,
                lull.reviews,
                lull.resumed_after_max_s.unwrap_or(0.0)
            );
        }
    }
}

/// The real server as a child process; killed when dropped.
pub struct Server {
    child: Child,
    origin: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `binary -m model args` on a free port and waits until it answers `/health`.
    pub async fn start(binary: &Path, model: &Path, args: &[String]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(binary)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start llama-server");
        let server = Server {
            child,
            origin: format!("http://127.0.0.1:{port}"),
        };
        let started = Instant::now();
        while !reqwest::get(format!("{}/health", server.origin))
            .await
            .is_ok_and(|response| response.status().is_success())
        {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama-server never became healthy"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    /// Slots, from `/props`.
    pub async fn slots(&self) -> u64 {
        let props: Value = reqwest::get(format!("{}/props", self.origin))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        props["total_slots"].as_u64().unwrap_or(0)
    }

    fn endpoint(&self) -> ChatEndpoint {
        ChatEndpoint {
            base_url: format!("{}/v1", self.origin),
            api_key: None,
            model: MODEL.into(),
        }
    }

    /// A counter of `/metrics` (`llamacpp:<name>`).
    async fn metric(&self, name: &str) -> u64 {
        let text = reqwest::get(format!("{}/metrics", self.origin))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let key = format!("llamacpp:{name} ");
        text.lines()
            .find_map(|line| line.strip_prefix(&key))
            .and_then(|value| value.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as u64
    }

    /// Writes the supervisor's state file Lull reads, naming `origin` (a [`CountingProxy`] in
    /// front of this server) and this server's pid.
    fn write_state_file(&self, path: &Path, origin: &str) {
        let record = json!({ "base_url": format!("{origin}/v1"), "pid": self.child.id() });
        std::fs::write(path, record.to_string()).unwrap();
    }
}

/// Forwards every request to the server and counts them: what learning costs the server in
/// requests. Responses stream through, and a client that goes closes the upstream request too.
pub struct CountingProxy {
    origin: String,
    requests: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CountingProxy {
    async fn start(upstream: String) -> CountingProxy {
        let requests = Arc::new(AtomicU64::new(0));
        let counter = requests.clone();
        let client = reqwest::Client::new();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (client, upstream, counter) = (client.clone(), upstream.clone(), counter.clone());
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                let path = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
                let mut forwarded = client.request(parts.method, format!("{upstream}{path}"));
                for (name, value) in &parts.headers {
                    if name != axum::http::header::HOST {
                        forwarded = forwarded.header(name, value);
                    }
                }
                match forwarded.body(body).send().await {
                    Ok(response) => {
                        let mut answer =
                            axum::response::Response::builder().status(response.status());
                        for (name, value) in response.headers() {
                            answer = answer.header(name, value);
                        }
                        answer
                            .body(axum::body::Body::from_stream(response.bytes_stream()))
                            .unwrap()
                    }
                    Err(_) => axum::response::Response::builder()
                        .status(502)
                        .body(axum::body::Body::empty())
                        .unwrap(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        CountingProxy {
            origin,
            requests,
            task,
        }
    }

    fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

/// One streamed answer to the person: time to first token, tokens, and the decode rate.
struct Answer {
    ttft: Duration,
    tokens: u64,
    decode_tokens_per_s: f64,
}

async fn ask(server: &Server, messages: &[ChatMessage], answer_tokens: u32) -> Answer {
    let started = Instant::now();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", server.origin))
        .json(&json!({
            "model": MODEL,
            "messages": messages,
            "stream": true,
            "max_tokens": answer_tokens,
            "ignore_eos": true,
        }))
        .send()
        .await
        .expect("the person's request");
    assert!(response.status().is_success(), "{}", response.status());
    let mut stream = response.bytes_stream();
    let (mut first, mut last, mut tokens) = (None, started, 0u64);
    let mut pending = Vec::new();
    while let Some(chunk) = stream.next().await {
        pending.extend_from_slice(&chunk.expect("the person's stream"));
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let Some(data) = line.trim().strip_prefix("data: ") else {
                continue;
            };
            if data == "[DONE]" {
                continue;
            }
            let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
            if value["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|text| !text.is_empty())
            {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
                tokens += 1;
            }
        }
    }
    let first = first.expect("the person got no token");
    let decode = (last - first).as_secs_f64();
    Answer {
        ttft: first - started,
        tokens,
        decode_tokens_per_s: if decode > 0.0 {
            (tokens - 1) as f64 / decode
        } else {
            0.0
        },
    }
}

/// Who learns beside the person in one run.
enum Learner {
    None,
    Immediate(Vec<tokio::task::JoinHandle<Option<u64>>>),
    Lull {
        engine: Engine,
        reported: bool,
        ids: Vec<String>,
        proxy: CountingProxy,
        runs: ReviewRuns,
    },
}

/// When reviews started and stopped running, from the engine's events.
struct ReviewRuns {
    changes: Arc<Mutex<Vec<(Instant, bool)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ReviewRuns {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ReviewRuns {
    fn follow(engine: &Engine) -> ReviewRuns {
        let changes = Arc::new(Mutex::new(Vec::new()));
        let mut events = engine.events().subscribe();
        let log = changes.clone();
        let task = tokio::spawn(async move {
            loop {
                let running = match events.recv().await {
                    Ok(EngineEvent::ReviewStarted { .. }) => true,
                    Ok(
                        EngineEvent::ReviewPreempted { .. }
                        | EngineEvent::ReviewCompleted { .. }
                        | EngineEvent::ReviewFailed { .. },
                    ) => false,
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                log.lock().unwrap().push((Instant::now(), running));
            }
        });
        ReviewRuns { changes, task }
    }

    /// Seconds from `since` until a review next ran: 0 when one was running then.
    fn resumed_after(&self, since: Instant) -> Option<f64> {
        let changes = self.changes.lock().unwrap();
        let running_then = changes
            .iter()
            .rev()
            .find(|(at, _)| *at <= since)
            .is_some_and(|&(_, running)| running);
        if running_then {
            return Some(0.0);
        }
        changes
            .iter()
            .find(|&&(at, running)| at > since && running)
            .map(|(at, _)| (*at - since).as_secs_f64())
    }
}

/// Plays `day` in `mode` on a fresh server and measures it.
pub async fn run(
    binary: &Path,
    model: &Path,
    work: &Path,
    mode: Mode,
    day_shape: &DayShape,
) -> Figures {
    let day = day(day_shape);
    let server = Server::start(binary, model, &day_shape.server_args()).await;
    let mut learner = match mode {
        Mode::None => Learner::None,
        Mode::Immediate => Learner::Immediate(Vec::new()),
        Mode::LullReported | Mode::LullUnreported => {
            let dir = work.join(mode.name().replace([' ', ','], "-"));
            std::fs::create_dir_all(&dir).unwrap();
            let state_file = dir.join("server.json");
            let proxy = CountingProxy::start(server.origin.clone()).await;
            server.write_state_file(&state_file, &proxy.origin);
            let mut config = Config::default();
            config.server.state_file = state_file;
            config.scheduler.settle_s = day_shape.settle_s;
            config.scheduler.settle_after_preemption_s = day_shape.settle_after_preemption_s;
            config.api.listen = "127.0.0.1:0".into();
            let paths = Paths {
                data_dir: dir.join("data"),
                config_file: dir.join("none.toml"),
            };
            let engine = Engine::open(config, paths).await.expect("open the engine");
            Learner::Lull {
                runs: ReviewRuns::follow(&engine),
                engine,
                reported: mode == Mode::LullReported,
                ids: Vec::new(),
                proxy,
            }
        }
    };

    for arrival in day.reviews.iter().filter(|r| r.after_turn.is_none()) {
        submit(&mut learner, &server, arrival, "queued").await;
    }
    let mut answers = Vec::new();
    for (index, turn) in day.turns.iter().enumerate() {
        tokio::time::sleep(turn.think).await;
        let lease = match &learner {
            Learner::Lull {
                engine,
                reported: true,
                ..
            } => Some(engine.start_turn()),
            _ => None,
        };
        answers.push(ask(&server, &turn.messages, day_shape.answer_tokens).await);
        if let (Some(lease), Learner::Lull { engine, .. }) = (lease, &learner) {
            let _ = engine.finish_turn(&lease);
        }
        for arrival in day.reviews.iter().filter(|r| r.after_turn == Some(index)) {
            submit(&mut learner, &server, arrival, &index.to_string()).await;
        }
    }

    let person_done = Instant::now();
    let (completed, learning_tokens) = drain(&mut learner, day_shape.drain).await;
    let drain_s = person_done.elapsed().as_secs_f64();
    let person_tokens: u64 = answers.iter().map(|answer| answer.tokens).sum();
    let predicted = server.metric("tokens_predicted_total").await;
    let prompt_tokens_read = server.metric("prompt_tokens_total").await;
    let (learning_requests, resumed_after_s) = match &learner {
        Learner::None => (0, None),
        Learner::Immediate(_) => (day.reviews.len() as u64, None),
        Learner::Lull {
            engine,
            proxy,
            runs,
            ..
        } => {
            engine.shutdown().await;
            (proxy.requests(), runs.resumed_after(person_done))
        }
    };
    let mut ttft: Vec<f64> = answers.iter().map(|a| a.ttft.as_secs_f64()).collect();
    let mut rates: Vec<f64> = answers.iter().map(|a| a.decode_tokens_per_s).collect();
    Figures {
        mode: mode.name(),
        ttft_p50_s: percentile(&mut ttft, 0.5),
        ttft_p95_s: percentile(&mut ttft, 0.95),
        ttft_max_s: percentile(&mut ttft, 1.0),
        decode_tokens_per_s_p50: percentile(&mut rates, 0.5),
        reviews: match mode {
            Mode::None => 0,
            _ => day.reviews.len(),
        },
        reviews_completed: completed,
        decode_thrown_away_tokens: predicted.saturating_sub(person_tokens + learning_tokens),
        prompt_tokens_read,
        learning_requests,
        drain_s,
        resumed_after_s,
        ttft_s: answers.iter().map(|a| a.ttft.as_secs_f64()).collect(),
    }
}

async fn submit(learner: &mut Learner, server: &Server, arrival: &Arrival, session: &str) {
    match learner {
        Learner::None => {}
        Learner::Immediate(handles) => {
            let endpoint = server.endpoint();
            let request = prompt::review_request(&arrival.messages, Window::whole(), None);
            handles.push(tokio::spawn(async move {
                let reply = HttpLlmClient::default()
                    .chat(&endpoint, request, None)
                    .await
                    .ok()?;
                Some(reply.completion_tokens.unwrap_or(0))
            }));
        }
        Learner::Lull { engine, ids, .. } => {
            let (id, _) = engine
                .submit_review(ReviewSubmission {
                    session_key: format!("session-{session}-{}", ids.len()),
                    messages: arrival.messages.clone(),
                    focus: None,
                    snapshot_at: None,
                    runtime: None,
                })
                .await
                .expect("submit a review");
            ids.push(id);
        }
    }
}

/// Waits until learning has finished or `limit` passed; returns the reviews finished and the
/// tokens their answers kept.
async fn drain(learner: &mut Learner, limit: Duration) -> (usize, u64) {
    let deadline = Instant::now() + limit;
    match learner {
        Learner::None => (0, 0),
        Learner::Immediate(handles) => {
            let (mut completed, mut tokens) = (0, 0);
            for handle in handles.drain(..) {
                let left = deadline.saturating_duration_since(Instant::now());
                if let Ok(Ok(Some(kept))) = tokio::time::timeout(left, handle).await {
                    completed += 1;
                    tokens += kept;
                }
            }
            (completed, tokens)
        }
        Learner::Lull { engine, ids, .. } => loop {
            let mut finished = (0, 0);
            let mut pending = false;
            for id in ids.iter() {
                let review = engine.review(id).await.expect("the review exists");
                match review.status {
                    ReviewStatus::Done => {
                        finished.0 += 1;
                        finished.1 += review.completion_tokens.unwrap_or(0);
                    }
                    ReviewStatus::Queued | ReviewStatus::Running => pending = true,
                    _ => {}
                }
            }
            if !pending || Instant::now() >= deadline {
                return finished;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        },
    }
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((values.len() - 1) as f64 * p).round() as usize;
    values[rank]
}

/// The server binary and the model: `LULL_LLAMA_SERVER` and `LULL_REAL_MODEL` (as `make test`
/// sets them), else what the scripts in `scripts/llama/` build and fetch.
pub fn server_and_model() -> (PathBuf, PathBuf) {
    let from_script = |variable: &str, script: &str| -> PathBuf {
        if let Some(path) = std::env::var_os(variable).filter(|path| !path.is_empty()) {
            return PathBuf::from(path);
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
        let output = Command::new("bash")
            .arg(&script)
            .stderr(Stdio::inherit())
            .output()
            .expect("run the script");
        assert!(output.status.success(), "{} failed", script.display());
        let text = String::from_utf8(output.stdout).unwrap();
        PathBuf::from(text.lines().last().expect("a path").trim())
    };
    (
        from_script("LULL_LLAMA_SERVER", "scripts/llama/ensure-llama-server.sh"),
        from_script("LULL_REAL_MODEL", "scripts/llama/ensure-model.sh"),
    )
}
