//! The person's latency with learning beside them, on the real llama-server and the real
//! SmolLM2-135M-Instruct (issue 16; DESIGN §7): one seeded day played in four modes, each on a
//! fresh server, compared in one run. Writes `"live_turn"` into `bench/results/latest.json`.
//!
//! `cargo bench --bench live_turn` (part of `make bench`); `LULL_LIVE_TURN_SEED` picks another
//! day. Targets: with Lull (both modes) the person's p50 time to first token within 10 % of
//! `none` and p95 within 25 %, and every review completed by the end of the drain window.

#[path = "common/mod.rs"]
mod common;
#[path = "common/live_turn.rs"]
mod live_turn;

use std::time::Duration;

use live_turn::{DayShape, Figures, Mode};

/// A morning's burst of a person at work: prompts of 0.5–2k tokens (about 1.3 tokens a word
/// here), 128-token answers, 3–25 s of thought (some gaps longer than the 15 s settle window,
/// where Lull starts learning and is then preempted), and a 20 KiB review every two turns.
fn shape(seed: u64) -> DayShape {
    DayShape {
        seed,
        turns: 8,
        prompt_words: (400, 1500),
        answer_tokens: 128,
        think_s: (3.0, 25.0),
        review_every: 2,
        review_bytes: 20 * 1024,
        drain: Duration::from_secs(15 * 60),
        settle_s: 15,
    }
}

fn main() {
    let seed = std::env::var("LULL_LIVE_TURN_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(42);
    let shape = shape(seed);
    let (binary, model) = live_turn::server_and_model();
    let work = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let slots = runtime.block_on(async {
        live_turn::Server::start(&binary, &model)
            .await
            .slots()
            .await
    });
    println!(
        "live turn: seed {seed}, {} turns, a {} KiB review every {} turns; llama-server {} with \
         {slots} slots (its default), SmolLM2-135M-Instruct Q4_1",
        shape.turns,
        shape.review_bytes / 1024,
        shape.review_every,
        live_turn::SERVER_ARGS.join(" ")
    );
    let figures: Vec<Figures> = Mode::ALL
        .iter()
        .map(|&mode| {
            let figures =
                runtime.block_on(live_turn::run(&binary, &model, work.path(), mode, &shape));
            println!("{figures:?}");
            figures
        })
        .collect();
    println!(
        "\n{:<26} {:>9} {:>9} {:>9} {:>11} {:>9} {:>12} {:>9} {:>8}",
        "mode",
        "ttft p50",
        "ttft p95",
        "ttft max",
        "decode t/s",
        "reviews",
        "thrown away",
        "requests",
        "drain"
    );
    for f in &figures {
        println!(
            "{:<26} {:>8.2}s {:>8.2}s {:>8.2}s {:>11.1} {:>5}/{:<3} {:>12} {:>9} {:>7.0}s",
            f.mode,
            f.ttft_p50_s,
            f.ttft_p95_s,
            f.ttft_max_s,
            f.decode_tokens_per_s_p50,
            f.reviews_completed,
            f.reviews,
            f.decode_thrown_away_tokens,
            f.learning_requests,
            f.drain_s
        );
    }
    let none = &figures[0];
    println!("\ntargets (against none):");
    for lull in &figures[2..] {
        let p50 = lull.ttft_p50_s / none.ttft_p50_s;
        let p95 = lull.ttft_p95_s / none.ttft_p95_s;
        let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
        println!(
            "  [{}] {}: p50 {:.2}× (≤ 1.10)  [{}] p95 {:.2}× (≤ 1.25)  [{}] reviews {}/{}",
            mark(p50 <= 1.10),
            lull.mode,
            p50,
            mark(p95 <= 1.25),
            p95,
            mark(lull.reviews_completed == lull.reviews),
            lull.reviews_completed,
            lull.reviews
        );
    }
    common::merge_into_results(
        "live_turn",
        serde_json::json!({
            "command": "cargo bench --bench live_turn",
            "day": shape,
            "server": { "args": live_turn::SERVER_ARGS, "slots": slots },
            "modes": figures,
        }),
    );
}
