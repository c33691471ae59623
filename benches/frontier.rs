//! The trade-off behind the scheduler's settle windows: `lull simulate` over many generated days
//! for a grid of `scheduler.settle_s` × `scheduler.settle_after_preemption_s`, counting on how
//! many days each of issue 6's targets holds. Writes `bench/results/frontier.md`. Run with
//! `cargo bench --bench frontier` (well under a minute on two cores).
//!
//! Waiting longer before learning spares the server futile starts inside a burst of prompts
//! (fewer requests, less wasted decode) and delays every review; this table shows where the
//! request target and the median-delay target pull against each other.

use std::fmt::Write as _;
use std::path::Path;

use lull::config::SchedulerConfig;
use lull::sim::{trace, Simulation, DEFAULT_HOURS, DEFAULT_SEED};

/// The days: seeds 1–30 and the benchmark's.
fn seeds() -> Vec<u64> {
    (1..=30).chain([DEFAULT_SEED]).collect()
}

/// `(settle_s, settle_after_preemption_s)` pairs; equal values mean no longer window.
const GRID: &[(u64, u64)] = &[
    (15, 15),
    (15, 45),
    (15, 60),
    (15, 90),
    (20, 60),
    (30, 30),
    (30, 60),
    (30, 90),
    (45, 45),
    (45, 90),
    (60, 60),
];

fn main() {
    let seeds = seeds();
    let defaults = SchedulerConfig::default();
    let mut text = format!(
        "# Settle windows against issue 6's targets\n\n\
         `cargo bench --bench frontier`: `lull simulate` on {} generated {}-hour days (seeds 1–30 \
         and {DEFAULT_SEED}) per row. Each target column counts the days on which it holds; the \
         ratio columns give lull ÷ hermes (min–max over the days). The default row is marked.\n\n\
         | settle_s | after preemption | contention | lost | p50 | wasted | requests | requests ratio | per covered review | p50 ratio |\n\
         |---:|---:|---:|---:|---:|---:|---:|---|---|---|\n",
        seeds.len(),
        DEFAULT_HOURS
    );
    for &(settle_s, after_s) in GRID {
        let scheduler = SchedulerConfig {
            settle_s,
            settle_after_preemption_s: after_s,
            ..defaults.clone()
        };
        let days = simulate_days(&seeds, &scheduler);
        let mut held = [0usize; 5];
        for day in &days {
            for (count, target) in held.iter_mut().zip(day.targets()) {
                *count += usize::from(target.holds);
            }
        }
        let ratio = |f: &dyn Fn(&Simulation) -> f64| range(days.iter().map(f));
        let requests = ratio(&|d| {
            d.policies.lull.server_requests as f64 / d.policies.hermes.server_requests as f64
        });
        let per_covered = ratio(&|d| {
            d.policies.lull.requests_per_covered_review()
                / d.policies.hermes.requests_per_covered_review()
        });
        let p50 = ratio(&|d| d.policies.lull.delay_p50_s / d.policies.hermes.delay_p50_s);
        let default =
            if (settle_s, after_s) == (defaults.settle_s, defaults.settle_after_preemption_s) {
                " (default)"
            } else {
                ""
            };
        let n = days.len();
        let row = format!(
            "| {settle_s}{default} | {after_s} | {}/{n} | {}/{n} | {}/{n} | {}/{n} | {}/{n} | {requests} | {per_covered} | {p50} |",
            held[0], held[1], held[2], held[3], held[4]
        );
        println!("{row}");
        writeln!(text, "{row}").expect("writing to a string");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/results/frontier.md");
    std::fs::write(&path, text).expect("write bench/results/frontier.md");
    println!("wrote {}", path.display());
}

/// One simulation per seed, spread over the machine's cores (each builds its own runtime).
fn simulate_days(seeds: &[u64], scheduler: &SchedulerConfig) -> Vec<Simulation> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = seeds.len().div_ceil(workers);
    std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|&seed| {
                            let day =
                                trace::generate(seed, DEFAULT_HOURS).expect("a generated day");
                            lull::sim::run_with(&day, scheduler).expect("the simulation runs")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a simulation thread panicked"))
            .collect()
    })
}

/// `min–max` with two decimals.
fn range(values: impl Iterator<Item = f64>) -> String {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), x| {
        (low.min(x), high.max(x))
    });
    format!("{low:.2}–{high:.2}")
}
