//! What the benchmarks share: merging one key into `bench/results/latest.json` (other keys,
//! such as `"routing"` of `benches/routing.rs`, are left alone) and rendering the whole file as
//! the Markdown tables of `bench/results/latest.md`, one reproducing command per row.

#![allow(dead_code)] // each benchmark uses part of this

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// `bench/results/latest.json`.
pub fn results_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/results/latest.json")
}

/// Sets `results[key] = value`, keeps every other key, and rewrites `latest.md`.
pub fn merge_into_results(key: &str, value: Value) {
    let path = results_path();
    let mut results = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| {
                panic!(
                    "{} is not a JSON object; fix or delete it and rerun",
                    path.display()
                )
            }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(error) => panic!("cannot read {}: {error}", path.display()),
    };
    results[key] = value;
    std::fs::create_dir_all(path.parent().expect("results path has a folder"))
        .expect("create bench/results");
    write_atomically(
        &path,
        &(serde_json::to_string_pretty(&results).expect("results serialise") + "\n"),
    );
    write_atomically(&path.with_extension("md"), &render_markdown(&results));
    println!("wrote \"{key}\" into {}", path.display());
}

fn write_atomically(path: &Path, text: &str) {
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&temporary, text).expect("write results");
    std::fs::rename(&temporary, path).expect("replace results");
}

/// Whole numbers as such, one decimal from 1 up, two below.
fn num(value: &Value) -> String {
    match value.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) if x.abs() >= 1.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
        None => "–".into(),
    }
}

/// DESIGN §7's targets, checked on the simulation's figures (as `Simulation::targets` does).
fn simulation_targets(policies: &Value) -> String {
    let f = |policy: &str, key: &str| policies[policy][key].as_f64().unwrap_or(f64::NAN);
    let per_delivered =
        |policy: &str| f(policy, "server_requests") / f(policy, "delivered").max(1.0);
    let claims = [
        (
            "lull contention ≤ 1 % of immediate's",
            f("lull", "contention_s") <= 0.01 * f("immediate", "contention_s"),
        ),
        ("lull loses 0 reviews", f("lull", "lost") == 0.0),
        (
            "lull wasted decode ≤ hermes'",
            f("lull", "wasted_s") <= f("hermes", "wasted_s"),
        ),
        (
            "lull requests per review delivered < hermes'",
            per_delivered("lull") < per_delivered("hermes"),
        ),
        (
            "lull delivered-only p50 delay ≤ 1.25× hermes' (DESIGN: on the median day)",
            f("lull", "delay_delivered_p50_s")
                <= lull::sim::DELIVERED_P50_RATIO * f("hermes", "delay_delivered_p50_s"),
        ),
    ];
    let mut text = String::from("\nTargets on this day:\n\n");
    for (claim, holds) in claims {
        text += &format!("- {} {claim}\n", if holds { "✅" } else { "❌ missed:" });
    }
    text
}

/// The Markdown of `latest.md`: every section present in `results`.
pub fn render_markdown(results: &Value) -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mut md = format!(
        "# Benchmark results\n\n\
         Written by `make bench` from `bench/results/latest.json`; every row names the command \
         that reproduces it. Last written on a machine with {cores} cores; wall-clock figures \
         (ingest, idle) move with whatever else that machine was doing.\n",
    );
    if let Some(sim) = results.get("simulation").filter(|v| v.is_object()) {
        let trace = &sim["trace"];
        md += &format!(
            "\n## Scheduling simulation\n\n\
             Generated day: seed {}, {} h ({} reported turns, {} turns of other clients, {} reviews, \
             {} restarts). Production gate and queue on a virtual clock; see `src/sim/`.\n\n\
             | policy | contention_s | lost | delivered | delay_p50_s | delay_p95_s | delay_delivered_p50_s | delay_delivered_p95_s | wasted_s | server_requests | command |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
            trace["seed"], trace["hours"], trace["reported_turns"], trace["foreign_turns"],
            trace["reviews"], trace["restarts"],
        );
        let command = format!(
            "`lull simulate --seed {} --hours {}`",
            trace["seed"], trace["hours"]
        );
        for policy in ["immediate", "hermes", "lull"] {
            let m = &sim["policies"][policy];
            md += &format!(
                "| {policy} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {command} |\n",
                num(&m["contention_s"]),
                num(&m["lost"]),
                num(&m["delivered"]),
                num(&m["delay_p50_s"]),
                num(&m["delay_p95_s"]),
                num(&m["delay_delivered_p50_s"]),
                num(&m["delay_delivered_p95_s"]),
                num(&m["wasted_s"]),
                num(&m["server_requests"]),
            );
        }
        md += &simulation_targets(&sim["policies"]);
    }
    let ingest = results.get("ingest").filter(|v| v.is_object());
    let idle = results.get("idle").filter(|v| v.is_object());
    if ingest.is_some() || idle.is_some() {
        md += "\n## Ingest and idle footprint\n\n\
               | figure | value | target | command |\n|---|---:|---|---|\n";
    }
    if let Some(ingest) = ingest {
        let command = "`cargo bench --bench ingest`";
        for (name, key, target) in [
            (
                "ingest throughput (reviews/s, 20 KiB transcripts)",
                "throughput_rps",
                "≥ 2000",
            ),
            ("ingest latency p50 (ms), sustained", "p50_ms", ""),
            ("ingest latency p99 (ms), sustained", "p99_ms", ""),
            (
                "ingest latency p99 (ms) at 200 requests/s",
                "p99_ms_at_200rps",
                "≤ 5",
            ),
        ] {
            md += &format!(
                "| {name} | {} | {target} | {command} |\n",
                num(&ingest[key])
            );
        }
    }
    if let Some(idle) = idle {
        let command = "`cargo bench --bench idle`";
        for (name, key, target) in [
            (
                "`lull serve` CPU, empty queue (ms/min)",
                "cpu_ms_per_min_empty",
                "< 10",
            ),
            (
                "`lull serve` CPU, a review waiting on a busy server (ms/min)",
                "cpu_ms_per_min_waiting",
                "",
            ),
            (
                "`lull serve` wake-ups, empty queue (per min)",
                "wakeups_per_min_empty",
                "",
            ),
            (
                "`lull serve` wake-ups, a review waiting (per min)",
                "wakeups_per_min_waiting",
                "",
            ),
            ("`lull serve` resident memory (MB)", "rss_mb", ""),
        ] {
            md += &format!("| {name} | {} | {target} | {command} |\n", num(&idle[key]));
        }
    }
    if let Some(routing) = results.get("routing").filter(|v| v.is_object()) {
        let command = "`cargo bench --bench routing`";
        md += "\n## Routing head\n\n| figure | value | command |\n|---|---:|---|\n";
        if let Some(bandit) = routing.get("bandit").filter(|v| v.is_object()) {
            for (name, key) in [
                ("bandit success, cosine only", "cosine"),
                ("bandit success, routing head", "head"),
                ("bandit success, oracle", "oracle"),
            ] {
                md += &format!("| {name} | {} | {command} |\n", num(&bandit[key]));
            }
        }
        for row in routing["latency"].as_array().into_iter().flatten() {
            md += &format!(
                "| rank {} skills, dim {}: head µs (scalar reference µs) | {} ({}) | {command} |\n",
                row["skills"],
                row["dim"],
                num(&row["head_us"]),
                num(&row["scalar_us"]),
            );
        }
    }
    if let Some(safety) = results.get("safety").filter(|v| v.is_object()) {
        md += &safety_table(safety);
    }
    if let Some(jobs) = results.get("jobs").filter(|v| v.is_object()) {
        md += &jobs_table(jobs);
    }
    md
}

/// Training rounds' speed, and the held-out metrics after the last round beside the live head's.
fn jobs_table(jobs: &Value) -> String {
    let command = "`cargo bench --bench jobs`";
    let mut md = format!(
        "\n## Training jobs\n\nThe routing bandit's log ({} dims, the agent taking the live head's \
         first skill); a fresh head trained by each update rule. Metrics are held-out loss / \
         accuracy / AUC.\n\n| figure | value | command |\n|---|---:|---|\n",
        jobs["dim"],
    );
    let metrics = |m: &Value| {
        format!(
            "{:.3} / {:.3} / {:.3}",
            m["heldout_loss"].as_f64().unwrap_or(f64::NAN),
            m["heldout_accuracy"].as_f64().unwrap_or(f64::NAN),
            m["heldout_auc"].as_f64().unwrap_or(f64::NAN),
        )
    };
    for size in jobs["sizes"].as_array().into_iter().flatten() {
        let outcomes = &size["outcomes"];
        md += &format!(
            "| {outcomes} outcomes: live head (online, every outcome once) | {} | {command} |\n",
            metrics(&size["live"])
        );
        for rule in size["rules"].as_array().into_iter().flatten() {
            let name = rule["rule"].as_str().unwrap_or("?");
            md += &format!(
                "| {outcomes} outcomes, {name}: rounds/s | {} | {command} |\n",
                num(&rule["rounds_per_s"])
            );
            let rounds = rule["rounds"].as_array().map_or(&[][..], Vec::as_slice);
            if let Some(last) = rounds.last() {
                md += &format!(
                    "| {outcomes} outcomes, {name}: after round {} | {} | {command} |\n",
                    last["round"],
                    metrics(last)
                );
            }
        }
    }
    md
}

/// The safety check's speed and its accuracy beside the keyword scanner's.
fn safety_table(safety: &Value) -> String {
    let command = "`cargo bench --bench safety`";
    let mut md = format!(
        "\n## Safety check\n\n| figure | value | target | command |\n|---|---:|---|---|\n\
         | one typical SKILL.md ({} bytes), p50 / p99 ms | {} / {} | ≤ 5 | {command} |\n\
         | a long SKILL.md ({} bytes), p50 ms | {} | ≤ 5 | {command} |\n\
         | a folder of {} files, p50 ms | {} | well under 1000 | {command} |\n",
        safety["typical_file_bytes"],
        num(&safety["typical_p50_ms"]),
        num(&safety["typical_p99_ms"]),
        safety["large_file_bytes"],
        num(&safety["large_p50_ms"]),
        safety["folder_files"],
        num(&safety["folder_p50_ms"]),
    );
    for (name, key) in [
        ("tuning corpus", "corpus"),
        ("held-out corpus", "holdout"),
        ("adversarial corpus", "adversarial"),
    ] {
        let Some(set) = safety.get(key).filter(|v| v.is_object()) else {
            continue;
        };
        md += &format!(
            "| {name} ({} malicious, {} benign): detection / false positives at high+, % | {} / {} (keyword scanner: {} / {}) | ≥ 95 / ≤ 5 | {command} |\n",
            set["malicious"],
            set["benign"],
            num(&set["detection_pct"]),
            num(&set["false_positive_pct"]),
            num(&set["keyword_detection_pct"]),
            num(&set["keyword_false_positive_pct"]),
        );
    }
    md
}
