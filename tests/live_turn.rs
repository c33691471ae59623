//! The live-turn benchmark's short day (issues 16 and 30), on the real llama-server and the real
//! model: the harness of `benches/live_turn.rs` plays a person beside no learning and beside Lull
//! in both modes (turns reported, a client that reports nothing). Every review finishes, and
//! after the person's last turn a queued review runs again within the settle window after a
//! preemption plus one reading. The figures themselves are `make bench`'s (speed is measured
//! there, not asserted here).

#[path = "../benches/common/live_turn.rs"]
mod live_turn;

use std::time::Duration;

use lull::gate::SERVER_RECHECK;

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
        queued_at_start: 1,
        review_bytes: 2 * 1024,
        drain: Duration::from_secs(240),
        settle_s: 1,
        settle_after_preemption_s: 3,
        slots: Some(2),
        context: 16384,
    };
    // The window, one reading after it, and what a reading and a dispatch take on a busy CPU.
    let resume_bound = Duration::from_secs(shape.settle_after_preemption_s)
        + SERVER_RECHECK
        + Duration::from_secs(2);
    let work = tempfile::tempdir().unwrap();
    for mode in [Mode::None, Mode::LullReported, Mode::LullUnreported] {
        let figures = live_turn::run(&binary, &model, work.path(), mode, &shape).await;
        eprintln!("{figures:?}");
        assert!(figures.ttft_p50_s > 0.0, "{figures:?}");
        assert!(figures.decode_tokens_per_s_p50 > 0.0, "{figures:?}");
        assert_eq!(
            figures.reviews_completed, figures.reviews,
            "every review finishes within the drain window: {figures:?}"
        );
        if let Some(resumed) = figures.resumed_after_s {
            assert!(
                resumed <= resume_bound.as_secs_f64(),
                "{}: a review ran again {resumed:.1} s after the person's last turn, not within \
                 {resume_bound:?}: {figures:?}",
                mode.name()
            );
        }
    }
}
