//! Routing benchmarks (issue 5), run with `cargo bench --bench routing`.
//!
//! 1. **Ranking latency**: [`RoutingHead::rank`] against the per-candidate scalar reference
//!    ([`rank_scalar`]) for 100 / 1,000 / 10,000 skills at 384 and 768 dimensions, on the same
//!    weights, with the largest score difference between the two.
//! 2. **Learning quality**: a synthetic contextual bandit in which cosine similarity is close but
//!    misleading for some request clusters; the success rate over the last 500 of 3,000 routed
//!    requests for cosine-only routing, the learned head (default configuration) and the oracle.
//!
//! Prints Markdown tables and merges `{"latency": […], "bandit": {…}}` into
//! `bench/results/latest.json` under `"routing"`, leaving the file's other keys alone.

#[path = "common/bandit.rs"]
mod bandit;
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use bandit::{random_gaussian, Bandit, BANDIT_DIM};
use lull::routing::reference::{rank_scalar, ReferenceSkill};
use lull::routing::{HeadConfig, Outcome, RoutingHead, SkillStats};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Skill counts and dimensions of the latency grid.
const LATENCY_SKILL_COUNTS: [usize; 3] = [100, 1_000, 10_000];
const LATENCY_DIMS: [usize; 2] = [384, 768];
/// Skills returned per ranking, as an agent would ask for.
const LATENCY_TOP_K: usize = 10;
/// Different queries timed per grid cell (and compared against the reference).
const LATENCY_QUERIES: usize = 3;
/// Minimum wall time spent timing each implementation per grid cell.
const TIMING_BUDGET: Duration = Duration::from_millis(300);

/// Requests routed per bandit run, and the final stretch over which success is counted.
const BANDIT_REQUESTS: usize = 3_000;
const BANDIT_WINDOW: usize = 500;
/// Independent bandits (fresh skills, clusters, head seed) averaged into the reported figure.
const BANDIT_RUNS: usize = 5;

fn main() {
    let latency = measure_latency();
    let bandit = run_bandit();
    print_tables(&latency, &bandit);
    common::merge_into_results("routing", routing_results(&latency, &bandit));
}

/// One cell of the latency grid.
struct LatencyRow {
    skills: usize,
    dim: usize,
    head_us: f64,
    scalar_us: f64,
    max_abs_diff: f32,
}

/// Success rates over the last [`BANDIT_WINDOW`] requests.
struct BanditResult {
    cosine: f64,
    head: f64,
    oracle: f64,
}

fn measure_latency() -> Vec<LatencyRow> {
    let mut rows = Vec::new();
    for dim in LATENCY_DIMS {
        for skill_count in LATENCY_SKILL_COUNTS {
            rows.push(measure_latency_cell(skill_count, dim));
        }
    }
    rows
}

/// Times both implementations on one skill table with a warmed-up head whose weights have
/// moved, so the blend, the features and the patched skill blocks are all exercised.
fn measure_latency_cell(skill_count: usize, dim: usize) -> LatencyRow {
    let mut rng = StdRng::seed_from_u64((skill_count * 10_000 + dim) as u64);
    let names: Vec<String> = (0..skill_count)
        .map(|index| format!("skill-{index:05}"))
        .collect();
    let embeddings: Vec<Vec<f32>> = (0..skill_count)
        .map(|_| random_gaussian(&mut rng, dim))
        .collect();
    let stats: Vec<SkillStats> = (0..skill_count)
        .map(|_| {
            let uses = rng.random_range(0..200);
            SkillStats {
                uses,
                successes: rng.random_range(0..=uses),
            }
        })
        .collect();

    let mut head = RoutingHead::new(dim, HeadConfig::default());
    for (name, embedding) in names.iter().zip(&embeddings) {
        head.upsert_skill(name, embedding)
            .expect("dimension matches");
    }
    for (name, skill_stats) in names.iter().zip(&stats) {
        head.set_skill_stats(name, *skill_stats);
    }
    let warmup_updates = head.config().warmup_updates + 10;
    for _ in 0..warmup_updates {
        let ranking = head
            .rank(&random_gaussian(&mut rng, dim), 3)
            .expect("dimension matches");
        let pass = &ranking.passes[rng.random_range(0..ranking.passes.len())];
        let outcome = if rng.random_bool(0.5) {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        head.apply_outcome(pass, outcome)
            .expect("pass is from this head");
    }
    // The learning above moved the stats; the reference reads them back from the head.
    let reference_skills: Vec<ReferenceSkill<'_>> = names
        .iter()
        .zip(&embeddings)
        .map(|(name, embedding)| ReferenceSkill {
            name,
            embedding,
            stats: head.skill_stats(name).expect("skill is known"),
        })
        .collect();
    let snapshot = head.snapshot();
    let queries: Vec<Vec<f32>> = (0..LATENCY_QUERIES)
        .map(|_| random_gaussian(&mut rng, dim))
        .collect();

    let mut max_abs_diff = 0.0f32;
    for query in &queries {
        let from_head = head.rank(query, skill_count).expect("dimension matches");
        let mut from_reference = rank_scalar(&snapshot, head.config(), query, &reference_skills);
        from_reference.sort_by(|a, b| a.skill.cmp(&b.skill));
        for ranked in &from_head.ranked {
            let index = from_reference
                .binary_search_by(|other| other.skill.cmp(&ranked.skill))
                .expect("same skills");
            let reference = &from_reference[index];
            let diffs = [
                ranked.score - reference.score,
                ranked.cosine - reference.cosine,
                ranked.rl - reference.rl,
            ];
            max_abs_diff = diffs
                .iter()
                .fold(max_abs_diff, |max, diff| max.max(diff.abs()));
        }
    }

    let mut query_index = 0;
    let head_us = median_call_micros(|| {
        query_index = (query_index + 1) % queries.len();
        black_box(
            head.rank(&queries[query_index], LATENCY_TOP_K)
                .expect("dimension matches"),
        );
    });
    let scalar_us = median_call_micros(|| {
        query_index = (query_index + 1) % queries.len();
        black_box(rank_scalar(
            &snapshot,
            head.config(),
            &queries[query_index],
            &reference_skills,
        ));
    });
    LatencyRow {
        skills: skill_count,
        dim,
        head_us,
        scalar_us,
        max_abs_diff,
    }
}

/// Median wall time of one call in microseconds, over at least three calls and
/// [`TIMING_BUDGET`], after one untimed warm-up call.
fn median_call_micros(mut call: impl FnMut()) -> f64 {
    call();
    let started = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < 3 || started.elapsed() < TIMING_BUDGET {
        let call_started = Instant::now();
        call();
        samples.push(call_started.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Runs the bandit [`BANDIT_RUNS`] times (fresh skills, clusters and head each time) and
/// averages, so one lucky or unlucky draw does not make the figure.
fn run_bandit() -> BanditResult {
    let runs: Vec<BanditResult> = (0..BANDIT_RUNS)
        .map(|run| run_bandit_once(run as u64))
        .collect();
    for (run, result) in runs.iter().enumerate() {
        eprintln!(
            "bandit run {run}: cosine {:.3}, head {:.3}, oracle {:.3}",
            result.cosine, result.head, result.oracle
        );
    }
    let mean =
        |rate: fn(&BanditResult) -> f64| runs.iter().map(rate).sum::<f64>() / runs.len() as f64;
    BanditResult {
        cosine: mean(|run| run.cosine),
        head: mean(|run| run.head),
        oracle: mean(|run| run.oracle),
    }
}

/// Routes the same 3,000 requests, with the same luck per request, by cosine alone, by a fresh
/// head with the default configuration (learning from every outcome of its own choices) and by
/// the oracle.
fn run_bandit_once(run: u64) -> BanditResult {
    let mut rng = StdRng::seed_from_u64(0xBA4D17 + run);
    let bandit = Bandit::new(&mut rng);
    let skill_names: Vec<String> = (0..bandit.skills.len())
        .map(|index| format!("skill-{index:02}"))
        .collect();
    let mut head = RoutingHead::new(
        BANDIT_DIM,
        HeadConfig {
            seed: run,
            ..HeadConfig::default()
        },
    );
    for (name, embedding) in skill_names.iter().zip(&bandit.skills) {
        head.upsert_skill(name, embedding)
            .expect("dimension matches");
    }

    let window_start = BANDIT_REQUESTS - BANDIT_WINDOW;
    let (mut cosine_wins, mut head_wins, mut oracle_wins) = (0usize, 0usize, 0usize);
    for request_index in 0..BANDIT_REQUESTS {
        let cluster = rng.random_range(0..bandit.centres.len());
        let query = bandit.request(&mut rng, cluster);
        let luck: f64 = rng.random();
        let helps = |skill: usize| luck < Bandit::success_chance(cluster, skill);

        let ranking = head.rank(&query, 1).expect("dimension matches");
        let pass = &ranking.passes[0];
        let head_choice = skill_names
            .iter()
            .position(|name| *name == pass.skill)
            .expect("known skill");
        let head_helped = helps(head_choice);
        let outcome = if head_helped {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        head.apply_outcome(pass, outcome)
            .expect("pass is from this head");

        if request_index >= window_start {
            cosine_wins += usize::from(helps(argmax_cosine(&bandit.skills, &query)));
            head_wins += usize::from(head_helped);
            oracle_wins += usize::from(helps(cluster));
        }
    }
    let rate = |wins: usize| wins as f64 / BANDIT_WINDOW as f64;
    BanditResult {
        cosine: rate(cosine_wins),
        head: rate(head_wins),
        oracle: rate(oracle_wins),
    }
}

fn argmax_cosine(skills: &[Vec<f32>], query: &[f32]) -> usize {
    let cosine = |skill: &Vec<f32>| skill.iter().zip(query).map(|(a, b)| a * b).sum::<f32>();
    (0..skills.len())
        .max_by(|&a, &b| cosine(&skills[a]).total_cmp(&cosine(&skills[b])))
        .expect("skills exist")
}

fn print_tables(latency: &[LatencyRow], bandit: &BanditResult) {
    println!("## Routing: ranking latency (top {LATENCY_TOP_K}, median per request)\n");
    println!("| skills | dim | head µs | scalar µs | speed-up | max abs diff |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for row in latency {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.0}× | {:.1e} |",
            row.skills,
            row.dim,
            row.head_us,
            row.scalar_us,
            row.scalar_us / row.head_us,
            row.max_abs_diff
        );
    }
    println!("\n## Routing: contextual bandit (success rate over the last {BANDIT_WINDOW} of {BANDIT_REQUESTS})\n");
    println!("| policy | success rate |");
    println!("|---|---:|");
    println!("| cosine only | {:.3} |", bandit.cosine);
    println!("| learned head | {:.3} |", bandit.head);
    println!("| oracle | {:.3} |", bandit.oracle);
    let gap_closed = (bandit.head - bandit.cosine) / (bandit.oracle - bandit.cosine);
    println!(
        "\nThe head closes {:.0}% of the gap between cosine-only and the oracle.",
        100.0 * gap_closed
    );
}

fn routing_results(latency: &[LatencyRow], bandit: &BanditResult) -> Value {
    let round = |value: f64, places: i32| (value * 10f64.powi(places)).round() / 10f64.powi(places);
    let latency: Vec<Value> = latency
        .iter()
        .map(|row| {
            json!({
                "skills": row.skills,
                "dim": row.dim,
                "head_us": round(row.head_us, 1),
                "scalar_us": round(row.scalar_us, 1),
                "max_abs_diff": row.max_abs_diff,
            })
        })
        .collect();
    json!({
        "latency": latency,
        "bandit": {
            "cosine": round(bandit.cosine, 4),
            "head": round(bandit.head, 4),
            "oracle": round(bandit.oracle, 4),
        },
    })
}
