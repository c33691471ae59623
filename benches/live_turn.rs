//! The person's latency with learning beside them, on the real llama-server and the real
//! SmolLM2-135M-Instruct (issues 16, 28 and 30; DESIGN §7): seeded days played in four modes,
//! each day and mode on a fresh server, compared in one run. Two cases: `long` (a morning's burst
//! of long prompts, several days) and `short` (issue 30: short turns in quick succession on two
//! slots, with reviews queued before the first). Writes `"live_turn"` into
//! `bench/results/latest.json`.
//!
//! `cargo bench --bench live_turn` (part of `make bench`); `LULL_LIVE_TURN_CASES=short` runs one
//! case, `LULL_LIVE_TURN_SEEDS=1,2,3` other days. Targets: with Lull (both modes) the person's
//! p50 time to first token within 10 % of `none` and p95 within 25 % (the short case: its worst
//! within 25 %), and every review completed by the end of the drain window.

#[path = "common/mod.rs"]
mod common;
#[path = "common/live_turn.rs"]
mod live_turn;

use std::time::Duration;

use live_turn::{Case, DayShape, Tail};

/// A morning's burst of a person at work: prompts of 0.5–2k tokens (about 1.3 tokens a word
/// here), 128-token answers, 3–25 s of thought (some gaps longer than the 15 s settle window,
/// where Lull starts learning and is then preempted), and a 20 KiB review every two turns.
fn long_turns(seed: u64) -> DayShape {
    DayShape {
        seed,
        turns: 14,
        prompt_words: (400, 1500),
        answer_tokens: 128,
        think_s: (3.0, 25.0),
        review_every: 2,
        queued_at_start: 0,
        review_bytes: 20 * 1024,
        drain: Duration::from_secs(15 * 60),
        settle_s: 15,
        settle_after_preemption_s: 60,
        slots: None,
        context: 32768,
    }
}

/// Issue 30's setup: turns of about 650 prompt tokens with 3 s of thought between them, four
/// reviews queued before the first, a 2 s settle window, a server with 2 slots and `-c 8192`.
fn short_turns(seed: u64) -> DayShape {
    DayShape {
        seed,
        turns: 14,
        prompt_words: (470, 530),
        answer_tokens: 64,
        think_s: (3.0, 3.0),
        review_every: 0,
        queued_at_start: 4,
        review_bytes: 6 * 1024,
        drain: Duration::from_secs(240),
        settle_s: 2,
        settle_after_preemption_s: 60,
        slots: Some(2),
        context: 8192,
    }
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect()
}

fn main() {
    // `RUST_LOG=lull=debug` shows what the engine decided, turn by turn.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let seeds: Vec<u64> = env_list("LULL_LIVE_TURN_SEEDS", "42,43,44")
        .iter()
        .map(|seed| seed.parse().expect("LULL_LIVE_TURN_SEEDS: numbers"))
        .collect();
    let (binary, model) = live_turn::server_and_model();
    let work = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut cases = Vec::new();
    for name in env_list("LULL_LIVE_TURN_CASES", "short,long") {
        let (shape, tail): (fn(u64) -> DayShape, Tail) = match name.as_str() {
            "short" => (short_turns, Tail::Worst),
            "long" => (long_turns, Tail::P95),
            other => panic!("LULL_LIVE_TURN_CASES: unknown case {other} (short, long)"),
        };
        let case = runtime.block_on(Case::run(
            &name,
            tail,
            &binary,
            &model,
            work.path(),
            seeds.iter().map(|&seed| shape(seed)).collect(),
        ));
        case.print();
        cases.push(case);
    }
    common::merge_into_results(
        "live_turn",
        serde_json::json!({
            "command": "cargo bench --bench live_turn",
            "model": "SmolLM2-135M-Instruct Q4_1",
            "cases": cases,
        }),
    );
}
