//! Training-job benchmarks (issue 14), run with `cargo bench --bench jobs` (part of
//! `make bench`).
//!
//! The log: the routing benchmark's contextual bandit ([`Bandit`]) routed as that benchmark
//! routes it: the agent takes the live head's first skill, and the head learns from every
//! outcome as it comes, as the engine's does. Every route and outcome is logged to the real
//! schema in an in-memory store. A job's datasets are the first 10,000 outcomes (by cutoff) and
//! all 100,000.
//!
//! For each dataset and each [`UpdateRule`], a fresh head with the default configuration (the
//! live head's initial weights) trains [`ROUNDS`] rounds. Reported:
//! 1. **Speed**: rounds per second of [`train_round`] (evaluation not included), and loading.
//! 2. **Quality**: after each round, the held-out loss, accuracy and AUC of the trained head,
//!    beside the live head's at the same cutoff: it saw every outcome once, in order,
//!    held-out ones included, as the live head of a real job would have.
//!
//! Prints Markdown tables and merges them into `bench/results/latest.json` under `"jobs"`.

#[path = "common/bandit.rs"]
mod bandit;
mod common;

use std::time::Instant;

use bandit::{Bandit, BANDIT_DIM};
use futures_util::FutureExt;
use lull::jobs::training::{
    evaluate, train_round, Control, Dataset, Metrics, RoundOutcome, Split, UpdateRule,
};
use lull::routing::{floats_to_blob, ForwardPass, HeadConfig, Outcome, RoutingHead};
use lull::store::{Store, StoreError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::{params, Connection};
use serde_json::{json, Value};

/// Outcomes in the two datasets; the larger log holds the smaller one as its prefix.
const DATASET_SIZES: [usize; 2] = [10_000, 100_000];
/// Rounds trained per dataset and rule.
const ROUNDS: usize = 8;
/// Seed of the bandit and of the outcomes' luck.
const SEED: u64 = 0x10B5;

fn main() {
    let store = Store::open_in_memory().expect("in-memory store");
    let largest = *DATASET_SIZES.last().expect("sizes");
    let started = Instant::now();
    let live_heads = log_bandit(&store, largest);
    eprintln!(
        "logged {largest} bandit outcomes in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let sizes: Vec<SizeResult> = DATASET_SIZES
        .iter()
        .zip(&live_heads)
        .map(|(&outcomes, live)| bench_size(&store, outcomes, live))
        .collect();
    print_tables(&sizes);
    common::merge_into_results("jobs", jobs_results(&sizes));
}

/// One dataset's figures.
struct SizeResult {
    outcomes: usize,
    train: usize,
    heldout: usize,
    load_s: f64,
    live: Metrics,
    rules: Vec<RuleResult>,
}

/// One rule's rounds on one dataset.
struct RuleResult {
    rule: UpdateRule,
    rounds_per_s: f64,
    /// Held-out metrics after each round, with that round's train loss.
    rounds: Vec<(f64, Metrics)>,
}

/// Routes `count` bandit requests with a live head that learns from each outcome, logging
/// every route and outcome; returns the live head as it was at each of [`DATASET_SIZES`].
fn log_bandit(store: &Store, count: usize) -> Vec<RoutingHead> {
    run_on(store, move |connection| {
        let mut rng = StdRng::seed_from_u64(SEED);
        let bandit = Bandit::new(&mut rng);
        let mut live = RoutingHead::new(BANDIT_DIM, HeadConfig::default());
        for (index, embedding) in bandit.skills.iter().enumerate() {
            live.upsert_skill(&skill_name(index), embedding)
                .expect("dimension matches");
        }
        let transaction = connection.transaction()?;
        let mut live_heads = Vec::new();
        for request_index in 0..count {
            let cluster = rng.random_range(0..bandit.centres.len());
            let query = bandit.request(&mut rng, cluster);
            let ranking = live.rank(&query, 1).expect("dimension matches");
            let pass = &ranking.passes[0];
            let skill_index = (0..bandit.skills.len())
                .find(|&index| skill_name(index) == pass.skill)
                .expect("a bandit skill");
            let helped = rng.random_bool(Bandit::success_chance(cluster, skill_index));
            let outcome = if helped {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            log_outcome(
                &transaction,
                &format!("route-{request_index:06}"),
                pass,
                outcome,
            )?;
            live.apply_outcome(pass, outcome)
                .expect("pass is from this head");
            if DATASET_SIZES.contains(&(request_index + 1)) {
                live_heads.push(live.clone());
            }
        }
        transaction.commit()?;
        Ok(live_heads)
    })
}

fn skill_name(index: usize) -> String {
    format!("skill-{index:02}")
}

/// Logs one route and its outcome, as the routing service's `records` does.
fn log_outcome(
    connection: &Connection,
    route_id: &str,
    pass: &ForwardPass,
    outcome: Outcome,
) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO routing_routes (id, created_at, query, embedder, dim, query_embedding,
                 head_updates, warmed_up, top_k, candidates)
             VALUES (?1, 0, 'bandit request', 'bandit', ?2, ?3, 0, 1, 1, '[]')",
        )?
        .execute(params![
            route_id,
            pass.query.len() as i64,
            floats_to_blob(&pass.query),
        ])?;
    connection
        .prepare_cached(
            "INSERT INTO routing_outcomes (route_id, skill, outcome, reward, rank, skill_embedding,
                 cosine, success_rate, log_uses, rl, created_at)
             VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6, ?7, ?8, ?9, 0)",
        )?
        .execute(params![
            route_id,
            pass.skill,
            outcome.as_str(),
            outcome.reward(),
            floats_to_blob(&pass.skill_embedding),
            pass.features.cosine,
            pass.features.success_rate,
            pass.features.log_uses,
            pass.rl,
        ])?;
    Ok(())
}

/// Runs `work` on the in-memory store, which answers at once.
fn run_on<R: Send + 'static>(
    store: &Store,
    work: impl FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
) -> R {
    store
        .call(work)
        .now_or_never()
        .expect("an in-memory store answers at once")
        .expect("the statements run")
}

fn bench_size(store: &Store, outcomes: usize, live: &RoutingHead) -> SizeResult {
    let started = Instant::now();
    let dataset = run_on(store, move |connection| {
        Dataset::load(connection, BANDIT_DIM, Some(outcomes as i64))
    });
    let load_s = started.elapsed().as_secs_f64();
    assert_eq!(dataset.examples.len(), outcomes);
    let split = Split::of(&dataset);
    let live = evaluate(live, dataset.select(&split.heldout)).expect("held-out examples");
    let rules = [UpdateRule::Reinforce, UpdateRule::CrossEntropy]
        .into_iter()
        .map(|rule| bench_rule(&dataset, &split, rule))
        .collect();
    SizeResult {
        outcomes,
        train: split.train.len(),
        heldout: split.heldout.len(),
        load_s,
        live,
        rules,
    }
}

fn bench_rule(dataset: &Dataset, split: &Split, rule: UpdateRule) -> RuleResult {
    let mut head = RoutingHead::new(BANDIT_DIM, HeadConfig::default());
    let mut training_s = 0.0;
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let outcome = train_round(&mut head, dataset, split, rule, |_| Control::Continue)
            .expect("the dataset has training examples");
        training_s += started.elapsed().as_secs_f64();
        let RoundOutcome::Completed { train_loss, .. } = outcome else {
            unreachable!("the callback never stops the round");
        };
        let heldout = evaluate(&head, dataset.select(&split.heldout)).expect("held-out examples");
        eprintln!(
            "{} outcomes, {}, round {}: train loss {train_loss:.4}, held-out {heldout:?}",
            dataset.examples.len(),
            rule.as_str(),
            rounds.len() + 1
        );
        rounds.push((train_loss, heldout));
    }
    RuleResult {
        rule,
        rounds_per_s: ROUNDS as f64 / training_s,
        rounds,
    }
}

fn auc_text(metrics: &Metrics) -> String {
    metrics
        .auc
        .map_or_else(|| "–".to_owned(), |auc| format!("{auc:.3}"))
}

fn print_tables(sizes: &[SizeResult]) {
    println!("## Training jobs: rounds on the routing bandit's log ({BANDIT_DIM} dims)\n");
    println!("| outcomes | train / held out | load s | rule | rounds/s | examples/s |");
    println!("|---:|---:|---:|---|---:|---:|");
    for size in sizes {
        for rule in &size.rules {
            println!(
                "| {} | {} / {} | {:.2} | {} | {:.2} | {:.0} |",
                size.outcomes,
                size.train,
                size.heldout,
                size.load_s,
                rule.rule.as_str(),
                rule.rounds_per_s,
                rule.rounds_per_s * size.train as f64,
            );
        }
    }
    println!("\n## Training jobs: held-out loss / accuracy / AUC by round\n");
    println!("| outcomes | head | round | train loss | held-out loss | accuracy | AUC |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for size in sizes {
        println!(
            "| {} | live (online, every outcome once) | – | – | {:.4} | {:.4} | {} |",
            size.outcomes,
            size.live.loss,
            size.live.accuracy,
            auc_text(&size.live)
        );
        for rule in &size.rules {
            for (round, (train_loss, heldout)) in rule.rounds.iter().enumerate() {
                println!(
                    "| {} | {} | {} | {train_loss:.4} | {:.4} | {:.4} | {} |",
                    size.outcomes,
                    rule.rule.as_str(),
                    round + 1,
                    heldout.loss,
                    heldout.accuracy,
                    auc_text(heldout)
                );
            }
        }
    }
}

fn metrics_json(metrics: &Metrics) -> Value {
    json!({
        "heldout_loss": metrics.loss,
        "heldout_accuracy": metrics.accuracy,
        "heldout_auc": metrics.auc,
    })
}

fn jobs_results(sizes: &[SizeResult]) -> Value {
    let sizes: Vec<Value> = sizes
        .iter()
        .map(|size| {
            let rules: Vec<Value> = size
                .rules
                .iter()
                .map(|rule| {
                    let rounds: Vec<Value> = rule
                        .rounds
                        .iter()
                        .enumerate()
                        .map(|(round, (train_loss, heldout))| {
                            let mut value = metrics_json(heldout);
                            value["round"] = json!(round + 1);
                            value["train_loss"] = json!(train_loss);
                            value
                        })
                        .collect();
                    json!({
                        "rule": rule.rule.as_str(),
                        "rounds_per_s": rule.rounds_per_s,
                        "examples_per_s": rule.rounds_per_s * size.train as f64,
                        "rounds": rounds,
                    })
                })
                .collect();
            json!({
                "outcomes": size.outcomes,
                "train": size.train,
                "heldout": size.heldout,
                "load_s": size.load_s,
                "live": metrics_json(&size.live),
                "rules": rules,
            })
        })
        .collect();
    json!({
        "command": "cargo bench --bench jobs",
        "dim": BANDIT_DIM,
        "sizes": sizes,
    })
}
