//! `lull simulate` (issues 6 and 16): the simulator's own behaviour on small hand-written
//! traces, the `hermes` baseline's rules as its source has them, what the server still does for
//! a request whose client went (a prompt is read to its end: the step for Lull, the whole prompt
//! for the others) and what Lull's prompt steps cost in requests, then DESIGN §7's targets on
//! several generated days of the report seeds (31–60; the defaults are tuned on 1–30).
//!
//! A review's modelled time is its prompt, read at the simulated server's 2,048 tokens/s, then
//! its answer: with `decode_s` 30 and one turn, 10 s of prompt (20,480 tokens) and a 20 s
//! answer (see `Work` in `src/sim/server.rs`). Lull has that prompt read in steps of 256 tokens,
//! then about 1,024 (half a second each), and every request costs the server 1 ms besides.
//!
//! Every simulation runs the production engine on a paused tokio clock; a generated 8-hour day
//! takes a fraction of a second, so the seeds below cost a few seconds in all.

use std::sync::OnceLock;

use lull::sim::trace::{generate, Trace, TraceEvent, TraceOrigin};
use lull::sim::{run, Simulation, DELIVERED_P50_RATIO};

/// Seeds of the claims: every fifth of the report days 31–60, none of the tuning days 1–30
/// (DESIGN §7: the defaults are never judged on the days they were tuned on).
const SEEDS: [u64; 6] = [31, 36, 41, 46, 51, 56];
/// A working day and its night. Shorter traces hold too few reviews for a ratio such as
/// "1 % of immediate's contention" to mean much (see the report in issue 6).
const HOURS: f64 = 8.0;

fn days() -> &'static [(u64, Simulation)] {
    static DAYS: OnceLock<Vec<(u64, Simulation)>> = OnceLock::new();
    DAYS.get_or_init(|| {
        SEEDS
            .iter()
            .map(|&seed| (seed, run(&generate(seed, HOURS).unwrap()).unwrap()))
            .collect()
    })
}

fn trace(events: Vec<TraceEvent>) -> Trace {
    Trace::new(
        TraceOrigin::File {
            path: "test".into(),
        },
        events,
    )
}

fn turn(at: f64, duration: f64, reported: bool) -> TraceEvent {
    TraceEvent::Turn {
        at,
        session: if reported { "s1" } else { "editor" }.into(),
        duration,
        reported,
    }
}

/// Checks a delay of Lull's on a hand-made trace: the trace's figure plus the millisecond each of
/// its requests costs the server besides its reading (a hundred steps: a tenth of a second).
fn assert_lull_delay(actual: f64, expected: f64) {
    assert!(
        (expected..=expected + 0.2).contains(&actual),
        "lull's delay {actual} s, expected {expected} s and its requests' milliseconds"
    );
}

fn review(at: f64, decode_s: f64) -> TraceEvent {
    TraceEvent::Review {
        at,
        session: "s1".into(),
        turns: 1,
        decode_s: Some(decode_s),
    }
}

#[test]
fn on_an_idle_server_each_policy_runs_a_review_when_its_rules_say() {
    let simulation = run(&trace(vec![review(0.0, 60.0)])).unwrap();
    let policies = &simulation.policies;
    assert_eq!(policies.immediate.delay_p50_s, 60.0);
    // Lull reads the server once and runs at once: nothing is live or settling.
    assert_lull_delay(policies.lull.delay_p50_s, 60.0);
    // Hermes looks every 5 s.
    assert_eq!(policies.hermes.delay_p50_s, 65.0);
    for metrics in [&policies.immediate, &policies.hermes, &policies.lull] {
        assert_eq!(
            (metrics.lost, metrics.contention_s, metrics.wasted_s),
            (0, 0.0, 0.0)
        );
    }
}

#[test]
fn a_reported_turn_preempts_at_once_and_the_settle_window_follows_it() {
    // A turn 0–10 s, a review at its end, the next prompt at 40 s for 20 s.
    let simulation = run(&trace(vec![
        turn(0.0, 10.0, true),
        review(10.0, 30.0),
        turn(40.0, 20.0, true),
    ]))
    .unwrap();
    let policies = &simulation.policies;
    // Immediate decodes 10–40 s: no overlap, by luck of the think time.
    assert_eq!(policies.immediate.contention_s, 0.0);
    // Lull starts at 25 s (settle), is preempted at 40 s with no overlap, and after that
    // preemption waits the longer window (60 s): it reruns from 120 s and ends at 150 s.
    assert_eq!(policies.lull.contention_s, 0.0);
    assert_eq!(policies.lull.wasted_s, 15.0);
    assert_lull_delay(policies.lull.delay_p50_s, 140.0);
    // Hermes' first look after the settle window is at 25 s too (5 s ticks from 0).
    assert_eq!(policies.hermes.wasted_s, 15.0);
    assert_eq!(policies.hermes.delay_p50_s, 95.0);
}

#[test]
fn another_clients_turn_preempts_lulls_answer_within_a_second_but_not_hermes() {
    // 40 s of prompt, then 20 s of answer: the other client comes while every policy answers.
    let simulation = run(&trace(vec![review(0.0, 60.0), turn(45.3, 5.0, false)])).unwrap();
    let policies = &simulation.policies;
    assert_eq!(policies.immediate.contention_s, 5.0);
    assert_eq!(
        policies.hermes.contention_s, 5.0,
        "hermes cannot see it once running"
    );
    assert!(
        policies.lull.contention_s > 0.0 && policies.lull.contention_s <= 1.0,
        "lull notices from its own stream's pace: {}",
        policies.lull.contention_s
    );
    assert_eq!(policies.lull.lost, 0);
}

#[test]
fn a_hermes_reading_asks_models_then_slots_of_each_loaded_model_uncached() {
    // One review on an idle server: Hermes looks once, at its first poll (5 s), and runs it.
    let simulation = run(&trace(vec![review(0.0, 60.0)])).unwrap();
    let hermes = &simulation.policies.hermes;
    assert_eq!(hermes.detail.probe_reads, 1);
    // `GET /models`, then `GET /slots` for the one loaded model.
    assert_eq!(hermes.detail.probe_requests, 2);
    assert_eq!(hermes.server_requests, 2 + 1);
    // A server busy for a minute: every 5 s poll reads both again, nothing cached.
    let busy = run(&trace(vec![turn(0.0, 62.0, false), review(1.0, 30.0)])).unwrap();
    let hermes = &busy.policies.hermes;
    assert_eq!(hermes.detail.probe_reads, 13, "polls at 5, 10, …, 65 s");
    assert_eq!(hermes.detail.probe_requests, 2 * hermes.detail.probe_reads);
}

#[test]
fn hermes_requeues_a_review_however_often_its_own_turns_preempt_it() {
    // Hermes runs the review at 5 s, 30 s, 55 s and 80 s, and a turn of its own preempts each
    // run 5 s in; the fifth run, from 105 s, ends at 135 s. The source has no requeue cap (the
    // model dropped the review after a third run before issue 16).
    let mut events = vec![review(0.0, 30.0)];
    events.extend([10.0, 35.0, 60.0, 85.0].map(|at| turn(at, 2.0, true)));
    let simulation = run(&trace(events)).unwrap();
    let hermes = &simulation.policies.hermes;
    assert_eq!(hermes.detail.preemptions, 4);
    // Each drop falls 5 s into a 10 s prompt, which the server reads to its end: 10 s wasted a
    // run, beside the whole of each 2 s turn.
    assert_eq!(hermes.wasted_s, 4.0 * 10.0);
    assert_eq!(hermes.contention_s, 4.0 * 2.0);
    assert_eq!((hermes.lost, hermes.delivered), (0, 1));
    assert_eq!(hermes.delay_p50_s, 135.0);
}

#[test]
fn hermes_runs_an_item_30_minutes_old_regardless_of_the_server() {
    // Another client holds a slot for 40 min; Hermes sees it busy at every poll until its item
    // is 30 min old, then runs it anyway (1800–1830 s), beside that client.
    let simulation = run(&trace(vec![turn(0.0, 2400.0, false), review(1.0, 30.0)])).unwrap();
    let hermes = &simulation.policies.hermes;
    assert_eq!(hermes.lost, 0);
    // First poll at or after 1801 s (its item's age-out), on the 5 s grid: 1805 s; then 30 s.
    assert_eq!(hermes.delay_p50_s, 1805.0 + 30.0 - 1.0);
    assert_eq!(hermes.contention_s, 30.0);
    assert_eq!(
        hermes.detail.probe_reads,
        1800 / 5,
        "no reading for the aged-out run"
    );
}

#[test]
fn lull_reviews_only_what_is_new_in_a_longer_snapshot() {
    // Two snapshots of one session, 10 then 20 turns, on an idle server.
    let review_of = |at: f64, turns: u32| TraceEvent::Review {
        at,
        session: "s1".into(),
        turns,
        decode_s: None,
    };
    let simulation = run(&trace(vec![review_of(0.0, 10), review_of(100.0, 20)])).unwrap();
    let policies = &simulation.policies;
    // Immediate reads all 20 turns again: 20 s + 2 s × 20.
    assert_eq!(policies.immediate.delay_p95_s, 60.0);
    // Lull reads the 10 new turns and 2 turns of context: 20 s + 2 s × 12.
    assert_lull_delay(policies.lull.delay_p95_s, 44.0);
    // One reading at start (the routing service looks for an embeddings model): `/health`,
    // `/models` and `/slots`; then `/slots` alone before each run (the simulated server, like
    // llama-server by default, cannot sleep); two chat requests, and before each the prompt
    // templated, tokenized and read in steps: 40 of a 20 s prompt, 48 of a 24 s one, each
    // followed by a `/slots` at its checkpoint.
    assert_eq!(policies.lull.detail.prompt_requests, (2 + 40) + (2 + 48));
    assert_eq!(policies.lull.server_requests, 3 + 1 + 1 + 2 + 92 + 88);
    // Hermes: two readings of `/models` and `/slots`, two reviews.
    assert_eq!(policies.hermes.server_requests, 2 * 2 + 2);
}

#[test]
fn the_same_conversation_submitted_again_is_covered_not_lost() {
    let again = |at: f64| TraceEvent::Review {
        at,
        session: "s1".into(),
        turns: 4,
        decode_s: None,
    };
    let simulation = run(&trace(vec![again(0.0), again(200.0)])).unwrap();
    let lull = &simulation.policies.lull;
    // Lull reviews it once; the second submission has nothing new and needs no model call.
    assert_eq!((lull.lost, lull.detail.llm_requests), (0, 1));
    assert_lull_delay(lull.delay_p95_s, 28.0);
    assert_eq!(lull.delay_p50_s, 0.0);
}

#[test]
fn a_restart_loses_hermes_queue_but_not_lulls() {
    // The person closes the agent 5 s after its last turn; the review is still settling.
    let simulation = run(&trace(vec![
        turn(0.0, 10.0, true),
        review(10.0, 30.0),
        TraceEvent::Restart { at: 15.0 },
    ]))
    .unwrap();
    let policies = &simulation.policies;
    assert_eq!(policies.hermes.lost, 1);
    assert_eq!(policies.lull.lost, 0);
    // The reopened engine knows of no turn, but the agent's may be live: it waits a settle
    // window from its start (15 s), finds the server idle and runs the review, 30 s to 60 s.
    assert_lull_delay(policies.lull.delay_p50_s, 50.0);
    // Immediate was decoding at the restart: its review dies with the process.
    assert_eq!(policies.immediate.lost, 1);
}

#[test]
fn a_restart_during_a_lull_review_requeues_it_and_it_completes_once() {
    let simulation = run(&trace(vec![
        review(0.0, 60.0),
        TraceEvent::Restart { at: 30.0 },
    ]))
    .unwrap();
    let lull = &simulation.policies.lull;
    assert_eq!(lull.lost, 0);
    // Found running at start, requeued, rerun a settle window after the start.
    assert_lull_delay(lull.delay_p50_s, 105.0);
    // The first run dies 30 s into its 40 s prompt, in its 61st step, before its chat request;
    // the rerun reads all 80 steps and asks.
    assert_eq!(lull.detail.llm_requests, 1);
    assert_eq!(lull.detail.prompt_requests, (2 + 61) + (2 + 80));
    // The step being read when the process died is read to its end, 0.12 s later.
    assert_eq!(lull.detail.killed_s, 30.12);
    assert_eq!(lull.wasted_s, 0.0, "a restart is not a preemption");
}

#[test]
fn lull_has_the_prompt_read_in_steps_and_pays_a_request_for_each() {
    // 10 s of prompt on an idle server: `/apply-template`, `/tokenize`, then a step of 256
    // tokens and 19 of about 1,024 (half a second each), and the chat request reads the rest.
    let simulation = run(&trace(vec![review(0.0, 30.0)])).unwrap();
    let policies = &simulation.policies;
    let lull = &policies.lull;
    assert_eq!(lull.detail.prompt_requests, 2 + 20);
    assert_eq!(lull.detail.llm_requests, 1);
    // The start's reading (`/health`, `/models`, `/slots`), one `/slots` before the run, and
    // one at the checkpoint after each step, where the request holds no slot.
    assert_eq!(lull.detail.probe_reads_between_steps, 20);
    assert_eq!(lull.server_requests, 3 + 1 + 22 + 20 + 1);
    // The steps cost requests, not time (1 ms each besides the reading).
    assert_lull_delay(lull.delay_p50_s, 30.0);
    // The others send the prompt whole with the chat request.
    for metrics in [&policies.immediate, &policies.hermes] {
        assert_eq!(
            (metrics.detail.prompt_requests, metrics.detail.llm_requests),
            (0, 1)
        );
    }
}

#[test]
fn a_turn_during_lulls_prompt_step_waits_only_for_the_rest_of_the_step() {
    // Lull's steps end at 0.128 s and about every half second after; the person's turn at
    // 2.375 s preempts it at once, in a step that ends 0.25 s later: the server reads that
    // step to its end, beside the turn, and then lets the slot go.
    let simulation = run(&trace(vec![review(0.0, 30.0), turn(2.375, 10.0, true)])).unwrap();
    let lull = &simulation.policies.lull;
    assert_eq!(lull.detail.preemptions, 1);
    assert_eq!(lull.contention_s, 0.25);
    assert_eq!(lull.wasted_s, 2.62);
    assert_eq!(lull.lost, 0);
}

#[test]
fn a_whole_prompt_hermes_drops_is_read_to_its_end_beside_the_turn() {
    // Hermes sends the review at 5 s, whole: 10 s of prompt, read until 15 s. Its own turn at
    // 8 s preempts it, and llama-server reads the dropped prompt to its end anyway: 7 s beside
    // the person's turn, and all 10 s thrown away.
    let simulation = run(&trace(vec![review(0.0, 30.0), turn(8.0, 20.0, true)])).unwrap();
    let policies = &simulation.policies;
    let hermes = &policies.hermes;
    assert_eq!(hermes.detail.preemptions, 1);
    assert_eq!(hermes.contention_s, 7.0);
    assert_eq!(hermes.wasted_s, 10.0);
    // Lull, preempted by the same turn in one of its steps, holds the slot for the rest of it.
    assert!(
        policies.lull.contention_s > 0.0 && policies.lull.contention_s <= 0.5,
        "{}",
        policies.lull.contention_s
    );
}

#[test]
fn a_whole_prompt_cut_off_by_a_restart_is_still_read_to_its_end() {
    // Immediate's review reads its 10 s prompt from 0 s; the process dies at 4 s, its
    // connection closes, and the server reads on until 10 s, 4 s into another client's turn.
    let simulation = run(&trace(vec![
        review(0.0, 30.0),
        TraceEvent::Restart { at: 4.0 },
        turn(6.0, 10.0, false),
    ]))
    .unwrap();
    let immediate = &simulation.policies.immediate;
    assert_eq!(immediate.lost, 1);
    assert_eq!(immediate.contention_s, 4.0);
    assert_eq!(immediate.detail.killed_s, 10.0);
    assert_eq!(immediate.wasted_s, 0.0, "a restart is not a preemption");
}

#[test]
fn a_learning_prompt_waits_while_a_turns_prompt_is_read() {
    // 40 s of prompt; another client's 5 s turn at 20.3 s reads its prompt for 2.35 s (the
    // stall model's 47 %), and every learning prompt on the server waits that long.
    let simulation = run(&trace(vec![review(0.0, 60.0), turn(20.3, 5.0, false)])).unwrap();
    let policies = &simulation.policies;
    assert_eq!(policies.immediate.delay_p50_s, 60.0 + 2.35);
    assert_eq!(policies.hermes.delay_p50_s, 65.0 + 2.35);
    assert_eq!(policies.hermes.contention_s, 5.0);
    // Lull's step ends late, which its pace sees: past 2.5× its half-second gap it reads the
    // server, finds the other slot and drops the step, whose rest the server then reads.
    let lull = &policies.lull;
    assert_eq!((lull.detail.preemptions, lull.lost), (1, 0));
    assert!(
        lull.contention_s > 0.5 && lull.contention_s <= 1.25 + 0.5,
        "noticed within 2.5 steps of silence, then the rest of a step: {}",
        lull.contention_s
    );
}

#[test]
fn lull_contention_is_at_most_one_percent_of_immediates() {
    for (seed, day) in days() {
        let (lull, immediate) = (&day.policies.lull, &day.policies.immediate);
        assert!(
            lull.contention_s <= 0.01 * immediate.contention_s,
            "seed {seed}: {} s vs {} s\n{}",
            lull.contention_s,
            immediate.contention_s,
            day.table()
        );
    }
}

/// FIXME(issue 16): DESIGN §7's contention target misses on seed 37, one of the 30 report days
/// (with 49 and 53, which miss narrowly, see `bench/results/frontier.md`): ~71 s vs immediate's
/// 1,194.6 s (6 %). A review there waits 30 min through a busy stretch and dispatches by age
/// (`max_age_s` 1800: deferral may delay learning, never lose it), beside the person's turns;
/// with `max_age_s` 2400 the same day has 3.2 s. It missed the same way before the prompt's
/// costs were modelled (68.4 s vs 913.3 s) and before issue 16's baseline corrections (68.4 s vs
/// 904.1 s); the default is not tuned on a report day. Asserted as it is today.
#[test]
fn seed_37_misses_the_contention_target_by_an_aged_out_review() {
    let day = run(&generate(37, HOURS).unwrap()).unwrap();
    let (lull, immediate) = (&day.policies.lull, &day.policies.immediate);
    assert!(
        lull.contention_s > 0.01 * immediate.contention_s && lull.contention_s < 100.0,
        "seed 37 changed: {} s vs {} s\n{}",
        lull.contention_s,
        immediate.contention_s,
        day.table()
    );
    assert_eq!(lull.lost, 0);
}

#[test]
fn lull_loses_no_review() {
    for (seed, day) in days() {
        assert!(day.trace.restarts > 0, "seed {seed}: the day has restarts");
        assert_eq!(day.policies.lull.lost, 0, "seed {seed}\n{}", day.table());
    }
}

/// DESIGN §7: delay is reported twice, and the delivered-only p50 stays ≤ 1.25× Hermes' on the
/// median day. Issue 6 claimed more, a p50 no worse than Hermes' on every day; that rested on
/// Hermes' losses, which its old restarts (always inside its settle window) made certain. With
/// restarts at random moments Hermes loses little, and Lull's delivered p50 is above Hermes' on
/// 23 of the 30 report days (median 1.10×; within 1.25× on 20, see
/// `bench/results/frontier.md`): Lull trades some delay for not taking the GPU.
#[test]
fn lull_delivered_median_delay_is_within_a_quarter_of_hermes_on_the_median_day() {
    let mut ratios = Vec::new();
    for (seed, day) in days() {
        let (lull, hermes) = (&day.policies.lull, &day.policies.hermes);
        assert_eq!(lull.delivered + lull.lost, hermes.delivered + hermes.lost);
        // Over delivered reviews only, a delay can only be shorter than with the lost counted.
        assert!(
            lull.delay_delivered_p50_s <= lull.delay_p50_s,
            "seed {seed}"
        );
        assert!(
            hermes.delay_delivered_p50_s <= hermes.delay_p50_s,
            "seed {seed}"
        );
        ratios.push(day.delivered_p50_ratio());
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[(ratios.len() - 1) / 2];
    assert!(
        median <= DELIVERED_P50_RATIO,
        "median day's delivered p50 ratio {median:.2} (days: {ratios:.2?})"
    );
}

#[test]
fn lull_wastes_no_more_decode_than_hermes() {
    for (seed, day) in days() {
        let (lull, hermes) = (&day.policies.lull, &day.policies.hermes);
        assert!(
            lull.wasted_s <= hermes.wasted_s,
            "seed {seed}: {} s vs {} s\n{}",
            lull.wasted_s,
            hermes.wasted_s,
            day.table()
        );
    }
}

/// FIXME(issue 28): DESIGN §7's request target misses on every report day once Lull's prompt
/// steps are charged. Lull has the server read a review's prompt half a second at a time, one
/// request a step (`llm::prefill`), so that dropping it costs the person at most a step, and
/// reads `/slots` at the checkpoint after each step, so that its next step is never read beside
/// another client's answer (issue 30): a review then costs two requests per half second of its
/// prompt. What the scheduling itself asks, readings besides the checkpoints and chat
/// requests, stays under Hermes' on every day. Asserted as it is today.
#[test]
fn lull_makes_more_requests_per_review_delivered_than_hermes_once_its_steps_count() {
    for (seed, day) in days() {
        let (lull, hermes) = (&day.policies.lull, &day.policies.hermes);
        // Running work reads the server only when its own stream stalls: a handful a day.
        assert!(
            lull.detail.probe_reads_running <= 12,
            "seed {seed}: {} reads while running",
            lull.detail.probe_reads_running
        );
        let per_delivered = |requests: u64| requests as f64 / lull.delivered.max(1) as f64;
        assert!(
            lull.requests_per_covered_review() > hermes.requests_per_covered_review(),
            "seed {seed} changed: {:.2} vs {:.2} requests per review delivered\n{}",
            lull.requests_per_covered_review(),
            hermes.requests_per_covered_review(),
            day.table()
        );
        let scheduling = lull.server_requests
            - lull.detail.prompt_requests
            - lull.detail.probe_reads_between_steps;
        assert!(
            per_delivered(scheduling) < hermes.requests_per_covered_review(),
            "seed {seed}: {:.2} vs {:.2} requests per review delivered, prompt steps aside\n{}",
            per_delivered(scheduling),
            hermes.requests_per_covered_review(),
            day.table()
        );
    }
}

#[test]
fn the_same_seed_replays_the_same_day() {
    let trace = generate(SEEDS[0], HOURS).unwrap();
    let again = run(&trace).unwrap();
    let (_, first) = &days()[0];
    for (a, b) in [
        (&first.policies.immediate, &again.policies.immediate),
        (&first.policies.hermes, &again.policies.hermes),
        (&first.policies.lull, &again.policies.lull),
    ] {
        assert_eq!(
            (
                a.contention_s,
                a.lost,
                a.delay_p50_s,
                a.delay_p95_s,
                a.wasted_s
            ),
            (
                b.contention_s,
                b.lost,
                b.delay_p50_s,
                b.delay_p95_s,
                b.wasted_s
            )
        );
        // The engine's clock starts from the wall clock, whose millisecond phase can move a
        // recheck by a tick: a few probe reads in thousands.
        assert!(a.server_requests.abs_diff(b.server_requests) <= a.server_requests / 100 + 2);
    }
}

#[test]
fn the_json_object_has_the_contract_names() {
    let (_, day) = &days()[0];
    let json = serde_json::to_value(day).unwrap();
    assert!(json["trace"].is_object());
    for policy in ["immediate", "hermes", "lull"] {
        let metrics = json["policies"][policy].as_object().unwrap();
        let mut keys: Vec<&str> = metrics.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "contention_s",
                "delay_delivered_p50_s",
                "delay_delivered_p95_s",
                "delay_p50_s",
                "delay_p95_s",
                "delivered",
                "lost",
                "server_requests",
                "wasted_s"
            ]
        );
    }
}

#[test]
fn the_example_trace_replays() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/traces/example.jsonl");
    let simulation = run(&Trace::from_file(std::path::Path::new(path)).unwrap()).unwrap();
    assert_eq!(
        (simulation.trace.reviews, simulation.trace.restarts),
        (3, 1)
    );
    assert_eq!(simulation.policies.lull.lost, 0);
    assert_eq!(
        simulation.policies.hermes.lost, 1,
        "the review queued 16 s before the restart"
    );
}
