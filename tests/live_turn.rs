//! The live-turn benchmark's short day (issue 16), on the real llama-server and the real model:
//! the harness of `benches/live_turn.rs` plays a person beside Lull and beside no learning, and
//! every review finishes. The figures themselves are `make bench`'s (speed is measured there,
//! not asserted here).

#[path = "../benches/common/live_turn.rs"]
mod live_turn;

use std::time::Duration;

use live_turn::{DayShape, Mode};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_day_with_lull_beside_the_person_completes_every_review() {
    if std::env::var_os("LULL_REAL_MODEL").is_none() {
        assert_ne!(
            std::env::var("LULL_REQUIRE_LLAMA").as_deref(),
            Ok("1"),
            "LULL_REQUIRE_LLAMA=1 but LULL_REAL_MODEL is not set: run `make test-rust`"
        );
        eprintln!("skipped: set LULL_LLAMA_SERVER and LULL_REAL_MODEL (make test does)");
        return;
    }
    let (binary, model) = live_turn::server_and_model();
    let shape = DayShape {
        seed: 7,
        turns: 3,
        prompt_words: (60, 120),
        answer_tokens: 16,
        think_s: (0.5, 2.5),
        review_every: 3,
        queued_at_start: 0,
        review_bytes: 2 * 1024,
        drain: Duration::from_secs(240),
        settle_s: 1,
        slots: None,
        context: 32768,
    };
    let work = tempfile::tempdir().unwrap();
    for mode in [Mode::None, Mode::LullReported] {
        let figures = live_turn::run(&binary, &model, work.path(), mode, &shape).await;
        eprintln!("{figures:?}");
        assert!(figures.ttft_p50_s > 0.0, "{figures:?}");
        assert!(figures.decode_tokens_per_s_p50 > 0.0, "{figures:?}");
        assert_eq!(
            figures.reviews_completed, figures.reviews,
            "every review finishes within the drain window: {figures:?}"
        );
    }
}
