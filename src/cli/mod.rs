//! The `lull` command line: `serve` runs the headless engine, every other command talks to a
//! running engine through its local API, exactly as an agent would.

mod client;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use reqwest::Method;
use serde_json::{json, Map, Value};

use client::EngineClient;
use lull::{Config, Engine, Paths};

/// Lull: learn from your agent's conversations in the lulls of your local llama-server.
#[derive(Parser)]
#[command(name = "lull", version, about)]
pub struct Cli {
    #[command(flatten)]
    locations: Locations,
    #[command(subcommand)]
    command: Command,
}

/// Where to find the configuration and the data.
#[derive(Args)]
struct Locations {
    /// Configuration file [default: $XDG_CONFIG_HOME/lull/config.toml]
    #[arg(long, global = true, env = "LULL_CONFIG")]
    config: Option<PathBuf>,
    /// Data directory [default: $XDG_DATA_HOME/lull]
    #[arg(long, global = true, env = "LULL_DATA_DIR")]
    data_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the engine and its local API in the foreground (the headless daemon).
    Serve,
    /// Show what the running engine is doing.
    Status(OutputFormat),
    /// Show the run-time settings, or change them: `lull settings set paused=true`.
    Settings {
        #[command(flatten)]
        format: OutputFormat,
        #[command(subcommand)]
        action: Option<SettingsAction>,
    },
    /// Replay a day of activity against the production scheduler on a virtual clock, beside
    /// `immediate` and `hermes` scheduling, and print contention, losses, delays and requests.
    ///
    /// A --trace file is JSON lines, one event per line, times in seconds from its start:
    /// {"kind":"turn","at":12,"session":"s1","duration":20,"reported":true} (reported: false is
    /// another client, seen only in /slots); {"kind":"review","at":32,"session":"s1","turns":4}
    /// (optional "decode_s"); {"kind":"restart","at":3600}; {"kind":"end","at":28800}.
    Simulate(SimulateArgs),
    /// List reviews, or act on one: `lull reviews run-now ID`, `lull reviews drop ID`.
    Reviews {
        /// Only reviews with this status (queued, running, done, failed, dropped, superseded).
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        format: OutputFormat,
        #[command(subcommand)]
        action: Option<ReviewAction>,
    },
    /// Work with skills on disk: `lull skills check PATH` vets a SKILL.md or a skill folder.
    Skills {
        #[command(subcommand)]
        action: SkillsAction,
    },
    /// List what reviews proposed to learn.
    Candidates {
        /// Only candidates with this status (e.g. open).
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        format: OutputFormat,
    },
}

#[derive(Subcommand)]
enum SkillsAction {
    /// Vet a skill before installing it: prompt injection, secrets sent away, download-and-run,
    /// destructive commands, persistence, hidden characters, and more. Offline; nothing is
    /// sent anywhere. Exits 1 when a high or critical finding stands, 2 when it cannot check.
    Check {
        /// A SKILL.md file or a skill folder.
        path: PathBuf,
        /// Print `{"max_risk","findings":[{"rule","category","risk","file","line","excerpt","message"}],"sha256","rules_version"}`.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ReviewAction {
    /// Run a queued review now, whatever the gate says.
    RunNow { id: String },
    /// Drop a queued review.
    Drop { id: String },
}

#[derive(Args)]
struct SimulateArgs {
    /// Seed of the generated day; another seed draws another day.
    #[arg(long, default_value_t = lull::sim::DEFAULT_SEED)]
    seed: u64,
    /// Length of the generated day in hours (its last third is the night).
    #[arg(long, default_value_t = lull::sim::DEFAULT_HOURS)]
    hours: f64,
    /// Replay this JSON-lines trace instead of a generated day.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print the `"simulation"` JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Lull's settle window for this run (`scheduler.settle_s`; default 15).
    #[arg(long, value_name = "SECONDS")]
    settle_s: Option<u64>,
    /// Lull's settle window after a preemption for this run
    /// (`scheduler.settle_after_preemption_s`; default 60).
    #[arg(long, value_name = "SECONDS")]
    settle_after_preemption_s: Option<u64>,
}

#[derive(Subcommand)]
enum SettingsAction {
    /// Change settings, each given as key=value (defer_mode=auto|never, paused=…, reviews_enabled=…, notify_server_changes=…).
    Set {
        #[arg(required = true, value_name = "KEY=VALUE")]
        assignments: Vec<String>,
    },
}

#[derive(Args)]
struct OutputFormat {
    /// Print the engine's JSON answer instead of text.
    #[arg(long)]
    json: bool,
}

impl Cli {
    /// Runs the chosen command; the exit status it asks for (an error exits 2).
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        let paths = || {
            Paths::resolve(
                self.locations.data_dir.clone(),
                self.locations.config.clone(),
            )
        };
        // Every command succeeds or fails, but `skills check` also reports what it found.
        let done = match self.command {
            Command::Skills {
                action: SkillsAction::Check { path, json },
            } => return check_skill(&path, json),
            Command::Simulate(args) => simulate(args).await,
            Command::Serve => serve(paths()?).await,
            Command::Reviews {
                status,
                format,
                action,
            } => {
                let client = EngineClient::connect(&paths()?)?;
                match action {
                    Some(ReviewAction::RunNow { id }) => {
                        client
                            .request(Method::POST, &format!("/v1/reviews/{id}/run-now"), None)
                            .await?;
                        println!("review {id} is running now");
                    }
                    Some(ReviewAction::Drop { id }) => {
                        client
                            .request(Method::DELETE, &format!("/v1/reviews/{id}"), None)
                            .await?;
                        println!("review {id} dropped");
                    }
                    None => {
                        let reviews = client
                            .request(Method::GET, &with_status("/v1/reviews", status), None)
                            .await?;
                        print_value(&reviews, format.json, render_reviews);
                    }
                }
                Ok(())
            }
            Command::Candidates { status, format } => {
                let client = EngineClient::connect(&paths()?)?;
                let candidates = client
                    .request(Method::GET, &with_status("/v1/candidates", status), None)
                    .await?;
                print_value(&candidates, format.json, render_candidates);
                Ok(())
            }
            Command::Status(format) => {
                let status = EngineClient::connect(&paths()?)?
                    .request(Method::GET, "/v1/status", None)
                    .await?;
                print_value(&status, format.json, render_status);
                Ok(())
            }
            Command::Settings { format, action } => {
                let client = EngineClient::connect(&paths()?)?;
                let settings = match action {
                    None => client.request(Method::GET, "/v1/settings", None).await?,
                    Some(SettingsAction::Set { assignments }) => {
                        let patch = parse_assignments(&assignments)?;
                        client
                            .request(Method::PATCH, "/v1/settings", Some(&patch))
                            .await?
                    }
                };
                print_value(&settings, format.json, render_settings);
                Ok(())
            }
        };
        done.map(|()| ExitCode::SUCCESS)
    }
}

/// `lull skills check`: the table (or JSON) of findings; exit 1 when one is high or worse.
fn check_skill(path: &std::path::Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let report = lull::safety::check_path(path)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_safety_report(&report));
    }
    Ok(if report.max_risk >= lull::safety::Risk::High {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Worst first, one finding a line: risk, where, what it does and what to do.
fn render_safety_report(report: &lull::safety::SafetyReport) -> String {
    if report.findings.is_empty() {
        return format!("no findings (rules v{})\n", report.rules_version);
    }
    let mut text = format!(
        "worst risk: {} · {} finding(s) · rules v{}\n",
        report.max_risk.as_str(),
        report.findings.len(),
        report.rules_version
    );
    for finding in &report.findings {
        text += &format!(
            "{:<8} {}:{}  {}\n         {} [{}]\n",
            finding.risk.as_str(),
            finding.file,
            finding.line,
            finding.excerpt,
            finding.message,
            finding.rule,
        );
    }
    text
}

async fn serve(paths: Paths) -> anyhow::Result<()> {
    let _log_guard = lull::logging::init(Some(&paths.logs_dir()))?;
    let config = Config::load(&paths.config_file, std::env::vars())?;
    let engine = Engine::open(config, paths).await?;
    tracing::info!(data_dir = %engine.paths().data_dir.display(), "engine started");
    lull::api::serve(engine.clone(), shutdown_signal()).await?;
    engine.shutdown().await;
    tracing::info!("engine stopped");
    Ok(())
}

async fn simulate(args: SimulateArgs) -> anyhow::Result<()> {
    let mut scheduler = lull::config::SchedulerConfig::default();
    scheduler.settle_s = args.settle_s.unwrap_or(scheduler.settle_s);
    scheduler.settle_after_preemption_s = args
        .settle_after_preemption_s
        .unwrap_or(scheduler.settle_after_preemption_s);
    let options = lull::sim::Options {
        seed: args.seed,
        hours: args.hours,
        trace_file: args.trace,
        scheduler,
    };
    let simulation = lull::sim::run_detached(options).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&simulation)?);
    } else {
        print!("{}", simulation.table());
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("installing the SIGTERM handler");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("shutting down");
}

/// `["paused=true", "defer_mode=never"]` → `{"paused":true,"defer_mode":"never"}`.
fn parse_assignments(assignments: &[String]) -> anyhow::Result<Value> {
    let mut patch = Map::new();
    for assignment in assignments {
        let (key, raw) = assignment
            .split_once('=')
            .with_context(|| format!("`{assignment}` is not KEY=VALUE, e.g. paused=true"))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| json!(raw));
        patch.insert(key.trim().to_string(), value);
    }
    Ok(Value::Object(patch))
}

fn print_value(value: &Value, as_json: bool, render: fn(&Value) -> String) {
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).expect("JSON prints")
        );
    } else {
        print!("{}", render(value));
    }
}

fn render_settings(settings: &Value) -> String {
    format!(
        "defer mode:       {}\npaused:           {}\nreviews enabled:  {}\nserver notices:   {}\n",
        settings["defer_mode"].as_str().unwrap_or("?"),
        yes_no(&settings["paused"]),
        yes_no(&settings["reviews_enabled"]),
        yes_no(&settings["notify_server_changes"]),
    )
}

fn render_status(status: &Value) -> String {
    let server = &status["server"];
    let mut text = format!(
        "Lull {}\nlearning:         {}\ndefer mode:       {}\nmanaged server:   {}{}\n",
        status["version"].as_str().unwrap_or("?"),
        if status["paused"] == json!(true) {
            "paused"
        } else {
            "on"
        },
        status["defer_mode"].as_str().unwrap_or("?"),
        server["state"].as_str().unwrap_or("?"),
        server["base_url"]
            .as_str()
            .map(|url| format!(" at {url}"))
            .unwrap_or_default(),
    );
    for model in server["models"].as_array().into_iter().flatten() {
        text += &format!(
            "  model {} ({}), {} busy slot(s)\n",
            model["id"].as_str().unwrap_or("?"),
            model["status"].as_str().unwrap_or("?"),
            model["busy_slots"]
        );
    }
    text += &format!(
        "reviews:          {} queued, {} running\ndrafts:           {} waiting for review\njobs:             {} running\n",
        status["queue"]["queued"], status["queue"]["running"], status["drafts"]["review_pending"], status["jobs"]["running"],
    );
    text
}

fn with_status(path: &str, status: Option<String>) -> String {
    match status {
        Some(status) => format!("{path}?status={status}"),
        None => path.to_string(),
    }
}

fn render_reviews(answer: &Value) -> String {
    let reviews = answer["reviews"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if reviews.is_empty() {
        return "no reviews\n".to_string();
    }
    let mut text = String::new();
    for review in reviews {
        text += &format!(
            "{}  {:<10} session {}  attempts {}{}\n",
            review["id"].as_str().unwrap_or("?"),
            review["status"].as_str().unwrap_or("?"),
            review["session_key"].as_str().unwrap_or("?"),
            review["attempts"],
            review["last_error"]
                .as_str()
                .map(|e| format!("  ({e})"))
                .unwrap_or_default(),
        );
    }
    text
}

fn render_candidates(answer: &Value) -> String {
    let candidates = answer["candidates"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if candidates.is_empty() {
        return "no candidates\n".to_string();
    }
    let mut text = String::new();
    for candidate in candidates {
        text += &format!(
            "{:<24} {:<6} priority {:.2} confidence {:.2}  {}\n",
            candidate["skill"].as_str().unwrap_or("?"),
            candidate["kind"].as_str().unwrap_or("?"),
            candidate["priority"].as_f64().unwrap_or(0.0),
            candidate["confidence"].as_f64().unwrap_or(0.0),
            candidate["rationale"].as_str().unwrap_or(""),
        );
    }
    text
}

fn yes_no(value: &Value) -> &'static str {
    if value == &json!(true) {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_become_a_typed_patch() {
        let patch = parse_assignments(&["paused=true".into(), "defer_mode=never".into()]).unwrap();
        assert_eq!(patch, json!({"paused": true, "defer_mode": "never"}));
        assert!(parse_assignments(&["paused".into()])
            .unwrap_err()
            .to_string()
            .contains("KEY=VALUE"));
    }
}
