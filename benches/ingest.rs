//! Ingest: `POST /v1/reviews` with 20 KiB transcripts through the real API (`lull::api::app`
//! on a loopback socket, the production SQLite store in a temporary directory), while the managed
//! server reads busy so every review is deferred, not run.
//!
//! - First [`PREFILL`] reviews are stored through the API, so the database is not empty.
//! - Paced: requests start every 5 ms (200 per second) for [`PACED`], each on its schedule
//!   whether or not earlier ones finished (open loop, so a stall is not hidden); the p99.
//! - Sustained: [`CONCURRENCY`] clients post back to back for [`SUSTAINED`]; throughput and the
//!   p50 / p99 latency. It runs last: it stores some 300 MB, far beyond a real database.
//!
//! Results go to `bench/results/latest.json` under `"ingest"`. Run with
//! `cargo bench --bench ingest`.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::json;

use lull::api::Guard;
use lull::engine::Seams;
use lull::llm::{ChatEndpoint, ChatReply, ChatRequest, LlmClient, LlmError, StreamPace};
use lull::server::{
    ManualProbe, ModelReading, ModelStatus, ServerMode, ServerReading, ServerState,
};
use lull::{Config, Engine, Paths};

/// Size of each submitted transcript.
const TRANSCRIPT_BYTES: usize = 20 * 1024;
/// Messages in each transcript.
const MESSAGES: usize = 20;
/// Requests in flight during the sustained run.
const CONCURRENCY: usize = 16;
/// Length of the sustained run, after [`WARM_UP`].
const SUSTAINED: Duration = Duration::from_secs(5);
const WARM_UP: Duration = Duration::from_secs(1);
/// The paced run: rate and length.
const PACED_RATE: u32 = 200;
const PACED: Duration = Duration::from_secs(10);
/// Reviews stored before anything is measured: about a month of one person's reviews.
const PREFILL: u64 = 1_000;
const TOKEN: &str = "bench-token";

/// Never asked: every review is deferred.
struct NoLlm;

impl LlmClient for NoLlm {
    fn chat<'a>(
        &'a self,
        _endpoint: &'a ChatEndpoint,
        _request: ChatRequest,
        _pace: Option<&'a StreamPace>,
    ) -> BoxFuture<'a, Result<ChatReply, LlmError>> {
        Box::pin(std::future::pending())
    }
}

fn busy_server() -> ServerReading {
    ServerReading {
        state: ServerState::Ready,
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        models: vec![ModelReading {
            id: "m".into(),
            status: ModelStatus::Loaded,
            busy_slots: 1,
        }],
        idle: false,
        reason: Some("1 slot(s) busy".into()),
        mode: Some(ServerMode::Single),
        api_key: None,
    }
}

/// The `messages` JSON of a 20 KiB transcript.
fn transcript_json() -> String {
    let per_message = TRANSCRIPT_BYTES / MESSAGES;
    let messages: Vec<_> = (0..MESSAGES)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let content: String = "the quick brown fox jumps over the lazy dog; "
                .chars()
                .cycle()
                .take(per_message - 40)
                .collect();
            json!({ "role": role, "content": content })
        })
        .collect();
    let text = serde_json::to_string(&messages).unwrap();
    assert!(text.len() >= TRANSCRIPT_BYTES - 1024 && text.len() <= TRANSCRIPT_BYTES + 1024);
    text
}

struct Bench {
    client: reqwest::Client,
    url: String,
    messages: Arc<str>,
}

impl Bench {
    async fn post(&self, n: u64) -> Duration {
        let body = format!(
            r#"{{"session_key":"bench-{n}","messages":{}}}"#,
            self.messages
        );
        let started = Instant::now();
        let response = self
            .client
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("the API answers");
        let status = response.status();
        let answer = response.bytes().await.expect("the API's body");
        assert_eq!(status, 202, "{}", String::from_utf8_lossy(&answer));
        started.elapsed()
    }
}

fn percentile_ms(latencies: &mut [Duration], quantile: f64) -> f64 {
    latencies.sort_unstable();
    let rank = ((quantile * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
    latencies[rank - 1].as_secs_f64() * 1000.0
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn main() {
    // The API and the engine on the daemon's kind of runtime, on a thread of their own; the load
    // on a current-thread runtime of its own, so neither delays the other's timers.
    let (ready, started) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(serve(ready, stopped))
    });
    let addr = started.recv().expect("the API starts");
    let client_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (results, submitted) = client_runtime.block_on(measure(addr));
    stop.send(()).unwrap();
    let queued = server.join().unwrap();
    assert_eq!(queued, submitted, "every review is queued, none ran");
    println!("{}", serde_json::to_string_pretty(&results).unwrap());
    common::merge_into_results("ingest", results);
}

/// Serves the API until `stop`; returns how many reviews are queued at the end.
async fn serve(
    ready: std::sync::mpsc::Sender<SocketAddr>,
    stop: tokio::sync::oneshot::Receiver<()>,
) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        data_dir: dir.path().to_path_buf(),
        config_file: dir.path().join("config.toml"),
    };
    let seams = Seams {
        server: Arc::new(ManualProbe::new(busy_server())),
        server_changes: None,
        llm: Arc::new(NoLlm),
        store: None, // the production store: `<data_dir>/lull.db`, WAL, its writer thread
        embedders: Arc::new(lull::routing::BuiltInEmbedderOnly),
        clock: None,
        events: Default::default(),
        host: None,
    };
    let engine = Engine::open_with(Config::default(), paths, seams)
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let guard = Guard {
        token: Arc::from(TOKEN),
        allowed_hosts: Guard::hosts_for(addr).into(),
    };
    let app = lull::api::app(engine.clone(), guard);
    ready.send(addr).unwrap();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = stop.await;
        })
        .await
        .unwrap();
    let queued = engine.status().await.unwrap().queue.queued;
    engine.shutdown().await;
    queued
}

/// Runs the load; returns the figures and how many reviews were submitted.
async fn measure(addr: SocketAddr) -> (serde_json::Value, u64) {
    let bench = Arc::new(Bench {
        client: reqwest::Client::builder()
            .pool_max_idle_per_host(CONCURRENCY)
            .build()
            .unwrap(),
        url: format!("http://{addr}/v1/reviews"),
        messages: Arc::from(transcript_json()),
    });
    let counter = Arc::new(AtomicU64::new(0));
    let next = {
        let counter = counter.clone();
        move || counter.fetch_add(1, Ordering::Relaxed)
    };

    // Prefill, unmeasured.
    for _ in 0..PREFILL {
        bench.post(next()).await;
    }

    // Paced: open loop at PACED_RATE; each request is its own task, so a slow answer never
    // delays the next one's start. Latency runs from the request's start (tokio's timer wheel
    // wakes up to a millisecond late, which is the load generator's delay, not the API's).
    let interval = Duration::from_secs(1) / PACED_RATE;
    let n_paced = (PACED.as_secs_f64() * f64::from(PACED_RATE)) as u32;
    let paced_start = tokio::time::Instant::now() + Duration::from_millis(100);
    let mut handles = Vec::new();
    for i in 0..n_paced {
        let bench = bench.clone();
        let n = next();
        let scheduled = paced_start + interval * i;
        handles.push(tokio::spawn(async move {
            tokio::time::sleep_until(scheduled).await;
            bench.post(n).await
        }));
    }
    let mut paced = Vec::new();
    for handle in handles {
        paced.push(handle.await.unwrap());
    }
    let paced_p50 = percentile_ms(&mut paced, 0.50);
    let paced_p99 = percentile_ms(&mut paced, 0.99);
    println!(
        "paced at {PACED_RATE}/s: {n_paced} reviews, p50 {paced_p50:.2} ms, p99 {paced_p99:.2} ms"
    );

    // Sustained: CONCURRENCY clients back to back; latencies after the warm-up only.
    let measure_from = Instant::now() + WARM_UP;
    let stop_at = measure_from + SUSTAINED;
    let mut workers = Vec::new();
    for _ in 0..CONCURRENCY {
        let bench = bench.clone();
        let next = next.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let issued = Instant::now();
                if issued >= stop_at {
                    return latencies;
                }
                let latency = bench.post(next()).await;
                if issued >= measure_from {
                    latencies.push(latency);
                }
            }
        }));
    }
    let mut sustained = Vec::new();
    for worker in workers {
        sustained.extend(worker.await.unwrap());
    }
    let elapsed = Instant::now().duration_since(measure_from);
    let throughput = sustained.len() as f64 / elapsed.as_secs_f64();
    let p50 = percentile_ms(&mut sustained, 0.50);
    let p99 = percentile_ms(&mut sustained, 0.99);
    println!(
        "sustained with {CONCURRENCY} clients: {} reviews in {:.2} s = {throughput:.0}/s, \
         p50 {p50:.2} ms, p99 {p99:.2} ms",
        sustained.len(),
        elapsed.as_secs_f64()
    );

    let figures = json!({
        "throughput_rps": throughput.round(),
        "p50_ms": round(p50),
        "p99_ms": round(p99),
        "p99_ms_at_200rps": round(paced_p99),
    });
    (figures, counter.load(Ordering::Relaxed))
}
