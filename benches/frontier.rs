//! The trade-off behind the scheduler's settle windows, tuned and reported on different days
//! (DESIGN §7): `lull simulate` for a grid of `scheduler.settle_s` ×
//! `scheduler.settle_after_preemption_s`, on seeds 1–30 to tune and on seeds 31–60 to report,
//! counting on how many days each of DESIGN §7's targets holds. Writes
//! `bench/results/frontier.md`. Run with `cargo bench --bench frontier` (a few minutes on two
//! cores; `immediate` and `hermes` do not depend on the settings and run once per day).
//!
//! Waiting longer before learning spares the server futile starts inside a burst of prompts
//! (fewer requests, less wasted decode) and delays every review; the tables show where the
//! request target and the delay target pull against each other. The row picked on the tuning
//! days is then read off the report days, never the other way round.

use std::fmt::Write as _;
use std::path::Path;

use lull::config::SchedulerConfig;
use lull::sim::{trace, Simulation, DEFAULT_HOURS, DELIVERED_P50_RATIO};

/// Days the settings are tuned on.
const TUNING_SEEDS: std::ops::RangeInclusive<u64> = 1..=30;
/// Days the figures are reported on.
const REPORT_SEEDS: std::ops::RangeInclusive<u64> = 31..=60;
/// Targets that must hold on every day: the first four of [`Simulation::targets`].
const EVERY_DAY_TARGETS: usize = 4;

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

/// One grid row on one set of days.
struct Row {
    settings: (u64, u64),
    /// Days each target of [`Simulation::targets`] holds on.
    held: Vec<usize>,
    days: usize,
    /// Delivered-only p50 ratio on the median day.
    median_p50_ratio: f64,
    per_delivered: String,
    p50_ratio: String,
}

impl Row {
    fn of(settings: (u64, u64), days: &[Simulation]) -> Row {
        let mut held = vec![0usize; days[0].targets().len()];
        for day in days {
            for (count, target) in held.iter_mut().zip(day.targets()) {
                *count += usize::from(target.holds);
            }
        }
        let mut ratios: Vec<f64> = days.iter().map(Simulation::delivered_p50_ratio).collect();
        ratios.sort_by(f64::total_cmp);
        let per_delivered = range(days.iter().map(|d| {
            d.policies.lull.requests_per_covered_review()
                / d.policies.hermes.requests_per_covered_review()
        }));
        Row {
            settings,
            held,
            days: days.len(),
            median_p50_ratio: ratios[(ratios.len() - 1) / 2],
            per_delivered,
            p50_ratio: range(ratios.iter().copied()),
        }
    }

    /// How well the row meets DESIGN §7: every-day targets held on all days, plus the median
    /// target; then days held in all; then the smaller median delay ratio.
    fn score(&self) -> (usize, usize, std::cmp::Reverse<u64>) {
        let whole = self.held[..EVERY_DAY_TARGETS]
            .iter()
            .filter(|&&held| held == self.days)
            .count()
            + usize::from(self.median_p50_ratio <= DELIVERED_P50_RATIO);
        let total = self.held[..EVERY_DAY_TARGETS].iter().sum();
        (
            whole,
            total,
            std::cmp::Reverse((self.median_p50_ratio * 1000.0) as u64),
        )
    }

    fn line(&self, marks: &str) -> String {
        let (settle_s, after_s) = self.settings;
        let n = self.days;
        let h = &self.held;
        format!(
            "| {settle_s}{marks} | {after_s} | {}/{n} | {}/{n} | {}/{n} | {}/{n} | {:.2} ({}/{n}) | {} | {} |",
            h[0], h[1], h[2], h[3], self.median_p50_ratio, h[4], self.per_delivered, self.p50_ratio
        )
    }
}

const HEADER: &str = "| settle_s | after preemption | contention ≤ 1 % | 0 lost | wasted ≤ hermes | requests per delivered < hermes | delivered p50 ratio, median day (days ≤ 1.25×) | per delivered ratio | delivered p50 ratio |\n\
                      |---:|---:|---:|---:|---:|---:|---:|---|---|\n";

fn main() {
    let defaults = SchedulerConfig::default();
    let default_settings = (defaults.settle_s, defaults.settle_after_preemption_s);
    let settings_of = |(settle_s, after_s): (u64, u64)| SchedulerConfig {
        settle_s,
        settle_after_preemption_s: after_s,
        ..defaults.clone()
    };
    let tuning: Vec<u64> = TUNING_SEEDS.collect();
    let report: Vec<u64> = REPORT_SEEDS.collect();

    let mut rows = Vec::new();
    for (name, seeds) in [("tuning", &tuning), ("report", &report)] {
        let baselines = parallel(seeds, |seed| {
            let day = trace::generate(*seed, DEFAULT_HOURS).expect("a generated day");
            let simulation =
                lull::sim::run_with(&day, &settings_of(GRID[0])).expect("the simulation runs");
            (day, simulation)
        });
        let mut per_row = Vec::new();
        for &settings in GRID {
            let days = parallel(&baselines, |(day, baseline)| {
                let mut simulation = baseline.clone();
                if settings != GRID[0] {
                    simulation.policies.lull =
                        lull::sim::run_lull_with(day, &settings_of(settings))
                            .expect("the simulation runs");
                }
                simulation
            });
            let row = Row::of(settings, &days);
            println!("{name}: {}", row.line(""));
            per_row.push(row);
        }
        rows.push(per_row);
    }
    let (tuned, reported) = (&rows[0], &rows[1]);
    let picked = tuned
        .iter()
        .max_by_key(|row| row.score())
        .expect("a grid")
        .settings;
    let marks = |settings| match (settings == picked, settings == default_settings) {
        (true, true) => " (tuned, default)",
        (true, false) => " (tuned)",
        (false, true) => " (default)",
        (false, false) => "",
    };
    let mut text = format!(
        "# Settle windows against DESIGN §7's targets\n\n\
         `cargo bench --bench frontier`: `lull simulate` on generated {DEFAULT_HOURS}-hour days, \
         each row a setting of `scheduler.settle_s` × `settle_after_preemption_s`. Each target \
         column counts the days on which it holds; the ratio columns give lull ÷ hermes \
         (min–max over the days). The settings are picked on seeds 1–30 (most targets held on \
         every day, then most days, then the smaller median delay) and read off seeds 31–60. \
         Picked on seeds 1–30: settle_s {} / after preemption {}; the shipped default is {} / {}{}.\n\n\
         ## Report: seeds 31–60\n\n{HEADER}",
        picked.0,
        picked.1,
        default_settings.0,
        default_settings.1,
        if picked == default_settings {
            " (the same)"
        } else {
            " (not changed here: the defaults live in `src/config.rs`)"
        }
    );
    for row in reported {
        writeln!(text, "{}", row.line(marks(row.settings))).expect("writing to a string");
    }
    text += "\n## Tuning: seeds 1–30\n\n";
    text += HEADER;
    for row in tuned {
        writeln!(text, "{}", row.line(marks(row.settings))).expect("writing to a string");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/results/frontier.md");
    std::fs::write(&path, &text).expect("write bench/results/frontier.md");
    println!("picked on seeds 1–30: {picked:?}; default {default_settings:?}");
    println!("wrote {}", path.display());
}

/// `f` over `items`, spread over the machine's cores, in order.
fn parallel<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(workers);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
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
