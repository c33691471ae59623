//! The scheduling simulation on the benchmark's fixed day: `lull simulate` with seed
//! [`DEFAULT_SEED`] over [`DEFAULT_HOURS`] hours, merged into `bench/results/latest.json` under
//! `"simulation"`. Run with `cargo bench --bench simulation`.

mod common;

use lull::sim::{trace, DEFAULT_HOURS, DEFAULT_SEED};

fn main() {
    let day = trace::generate(DEFAULT_SEED, DEFAULT_HOURS).expect("the benchmark's day");
    let simulation = lull::sim::run(&day).expect("the simulation runs");
    print!("{}", simulation.table());
    common::merge_into_results(
        "simulation",
        serde_json::to_value(&simulation).expect("the simulation serialises"),
    );
}
