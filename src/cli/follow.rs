//! `lull jobs start|show|resume --follow`: a training job watched live, from the engine's event
//! stream, until it leaves `running`; then it is shown as `lull jobs show` shows it.
//!
//! [`follow_event`] says what one event means to the person (pure, so what they read is
//! tested); [`follow`] shows it: a progress bar on a terminal, plain lines when stdout is a file
//! or a pipe, only the final JSON with `--json`. The job goes on whatever this command does:
//! Ctrl-C stops the watching, not the training.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::Method;

use super::{render_job, round_line, shown};
use lull::client::{EngineClient, EventStream, SseEvent};
use lull::events::EngineEvent;
use lull::jobs::records::JobStatus;
use lull::jobs::runner;
use lull::jobs::service::JobView;

/// How often the spinner turns between events, so that a paused job still looks alive.
const SPINNER_TICK: Duration = Duration::from_millis(200);

/// How the followed job came to be followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `start` or `resume` just set it going: its answer may not say `running` yet (its runner
    /// moves it there on its own thread), and the events will say when it stops.
    SetGoing,
    /// `show`: it may have stopped long ago, and then there is nothing to wait for.
    Shown,
}

/// What one engine event means to a person following one job.
#[derive(Debug, Clone, PartialEq)]
enum Followed {
    /// About another job, or about something else.
    Unrelated,
    /// The running round moved.
    Progress(Progress),
    /// A round committed: where the bar is, and the line that records the round.
    Round {
        round: u64,
        progress: Progress,
        line: String,
    },
    /// The job moved to this status; `running` again when it was paused or went on.
    Changed(JobStatus),
    /// The listener fell behind and lost events: read the job again.
    Lagged,
    /// The engine is stopping under the job.
    EngineStopping,
}

/// Where a run is, for the bar: counted in mini-batches over all the job's rounds, so that a
/// resumed run starts where the last one left off.
#[derive(Debug, Clone, PartialEq)]
struct Progress {
    round: u64,
    max_rounds: u64,
    batch: u64,
    batches: u64,
    remaining_ms: Option<u64>,
}

impl Progress {
    /// Before the first mini-batch of this run: the round after the `rounds_completed` ones,
    /// no batch yet.
    fn starting(rounds_completed: u32, max_rounds: u64) -> Progress {
        Progress {
            round: u64::from(rounds_completed) + 1,
            max_rounds,
            batch: 0,
            batches: 0,
            remaining_ms: None,
        }
    }

    /// From a `job_progress` event or a job's `progress`.
    fn of(progress: &runner::Progress, max_rounds: u64) -> Progress {
        Progress {
            round: u64::from(progress.round),
            max_rounds,
            batch: progress.batch as u64,
            batches: progress.batches as u64,
            remaining_ms: progress.remaining_ms,
        }
    }

    /// The bar's length and position.
    fn bar(&self) -> (u64, u64) {
        let steps = self.batches.max(1);
        let done = self.round.saturating_sub(1) * steps + self.batch.min(steps);
        (self.max_rounds * steps, done)
    }

    /// The bar's text: which round and batch, and about how long is left — or why it waits.
    fn message(&self, paused: bool) -> String {
        let round = format!("round {}/{}", self.round, self.max_rounds);
        if paused {
            return format!("{round} · paused: your agent is busy");
        }
        if self.batches == 0 {
            return format!("{round} · starting");
        }
        let left = match self.remaining_ms {
            Some(0) => "almost done".to_string(),
            Some(ms) => format!("about {} left", duration_text(ms)),
            None => "estimating the time left".to_string(),
        };
        format!("{round} · batch {}/{} · {left}", self.batch, self.batches)
    }
}

/// `4 s`, `2 min 5 s`, `1 h 3 min`: a time left as a person reads it.
fn duration_text(ms: u64) -> String {
    let seconds = ms.div_ceil(1000);
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        _ => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
    }
}

/// What `event` means to someone following job `job_id` (of `max_rounds` rounds).
fn follow_event(job_id: &str, max_rounds: u64, event: &SseEvent) -> Followed {
    if event.name.as_deref() == Some("lagged") {
        return Followed::Lagged;
    }
    // An event this version does not know (a newer engine's) is about something else.
    let Ok(event) = serde_json::from_str::<EngineEvent>(&event.data) else {
        return Followed::Unrelated;
    };
    match event {
        EngineEvent::EngineStopping => Followed::EngineStopping,
        EngineEvent::JobChanged {
            job_id: changed,
            status,
        } if changed == job_id => Followed::Changed(status),
        EngineEvent::JobProgress {
            job_id: moved,
            progress,
            metrics,
        } if moved == job_id => {
            let progress = Progress::of(&progress, max_rounds);
            let Some(metrics) = metrics else {
                return Followed::Progress(progress);
            };
            Followed::Round {
                round: progress.round,
                line: round_line(&metrics),
                progress: Progress {
                    batch: progress.batches,
                    ..progress
                },
            }
        }
        _ => Followed::Unrelated,
    }
}

/// A job that is on its way: admitted, or training.
fn in_motion(status: JobStatus) -> bool {
    matches!(status, JobStatus::Queued | JobStatus::Running)
}

/// 0 when the job ran to its end (completed, or stopped at its wall-clock budget with its
/// rounds kept), 1 when it did not (failed, cancelled, interrupted).
fn exit_code(status: JobStatus) -> ExitCode {
    match status {
        JobStatus::Completed | JobStatus::BudgetExhausted => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

/// Where the watching is shown.
enum Display {
    /// A terminal: a bar, with the lines that stay printed above it.
    Bar(ProgressBar),
    /// A file or a pipe: only the lines.
    Lines,
    /// `--json`: nothing until the final answer.
    Quiet,
}

impl Display {
    /// The bar when stdout is a terminal (indicatif tells), else plain lines, or nothing for
    /// `--json`, whose one answer is the final job.
    fn new(as_json: bool) -> Display {
        if as_json {
            return Display::Quiet;
        }
        // No length until the first progress: an empty bar, not a full one.
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
        if bar.is_hidden() {
            return Display::Lines;
        }
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{bar:30.cyan/blue}] {msg}")
                .expect("the bar's template parses")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(SPINNER_TICK);
        Display::Bar(bar)
    }

    /// A line that stays: above the bar, or on its own. Plain output that nobody reads any
    /// more (`| head`) ends the watching, rather than a panic of `println!`.
    fn line(&self, text: &str) -> anyhow::Result<()> {
        match self {
            Display::Bar(bar) => bar.println(text),
            Display::Lines => writeln!(std::io::stdout().lock(), "{text}")
                .context("cannot write to standard output")?,
            Display::Quiet => {}
        }
        Ok(())
    }

    /// A change the bar shows in its text, and plain output as a line of its own.
    fn note(&self, text: &str) -> anyhow::Result<()> {
        match self {
            Display::Lines => self.line(text),
            _ => Ok(()),
        }
    }

    /// Moves the bar (plain output has none; its lines say what matters).
    fn show(&self, progress: &Progress, paused: bool) {
        if let Display::Bar(bar) = self {
            let (length, position) = progress.bar();
            bar.set_length(length);
            bar.set_position(position);
            bar.set_message(progress.message(paused));
        }
    }

    /// Takes the bar off the screen before the job is printed in full.
    fn finish(&self) {
        if let Display::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// What the watching knows so far.
struct Watch<'a> {
    client: &'a EngineClient,
    display: Display,
    id: String,
    max_rounds: u64,
    /// The last round with a printed line.
    printed: u64,
    progress: Option<Progress>,
    paused: bool,
    /// It was seen on its way, so a status that is not is where it stopped.
    moving: bool,
}

impl Watch<'_> {
    /// Prints the lines of the job's committed rounds not printed yet, and notes a pause or
    /// its end; true when the job has stopped.
    fn catch_up(&mut self, job: &JobView) -> anyhow::Result<bool> {
        for metrics in &job.metrics {
            let round = u64::from(metrics.round);
            if round > self.printed {
                self.display.line(&round_line(metrics))?;
                self.printed = round;
            }
        }
        if let Some(progress) = &job.progress {
            self.progress = Some(Progress::of(progress, self.max_rounds));
        }
        let progress = self
            .progress
            .get_or_insert_with(|| Progress::starting(job.rounds_completed, self.max_rounds));
        let paused = job.paused;
        if paused != self.paused {
            self.paused = paused;
            self.display.note(if paused {
                "paused: your agent is busy"
            } else {
                "training again"
            })?;
        }
        self.display.show(progress, self.paused);
        self.moving |= in_motion(job.status);
        Ok(self.moving && !in_motion(job.status))
    }

    /// The job as it is now, when an event says only that it moved.
    async fn job(&self) -> anyhow::Result<JobView> {
        let path = format!("/v1/jobs/{}", self.id);
        Ok(self.client.get(&path).await?)
    }

    /// Follows the events until the job leaves `running`.
    async fn until_stopped(&mut self, events: &mut EventStream) -> anyhow::Result<()> {
        let stopped_under = |id: &str| {
            format!(
                "the engine stopped while job {id} ran; when it starts again the job is \
                 interrupted, and `lull jobs resume {id}` continues it"
            )
        };
        loop {
            let next = events.next().await;
            let Some(event) = next.with_context(|| stopped_under(&self.id))? else {
                bail!(stopped_under(&self.id));
            };
            match follow_event(&self.id, self.max_rounds, &event) {
                Followed::Unrelated => {}
                Followed::Progress(progress) => {
                    self.display.show(&progress, self.paused);
                    self.progress = Some(progress);
                }
                Followed::Round {
                    round,
                    progress,
                    line,
                } => {
                    if round > self.printed {
                        self.display.line(&line)?;
                        self.printed = round;
                    }
                    self.display.show(&progress, self.paused);
                    self.progress = Some(progress);
                }
                Followed::Changed(status) if in_motion(status) => {
                    // Running again after a pause, or paused: the job says which.
                    let job = self.job().await?;
                    if self.catch_up(&job)? {
                        return Ok(());
                    }
                }
                Followed::Changed(_) => return Ok(()),
                Followed::Lagged => {
                    let job = self.job().await?;
                    if self.catch_up(&job)? {
                        return Ok(());
                    }
                }
                Followed::EngineStopping => bail!(stopped_under(&self.id)),
            }
        }
    }
}

/// Watches `job` (the answer of the command that set it going, or of `show`) on `events`,
/// subscribed before that command, until it stops; then prints it as `lull jobs show` does (or
/// its JSON) and answers the exit status of how it ended.
pub async fn follow(
    client: &EngineClient,
    mut events: EventStream,
    job: JobView,
    origin: Origin,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let id = job.id.clone();
    if origin == Origin::SetGoing || in_motion(job.status) {
        let mut watch = Watch {
            client,
            display: Display::new(as_json),
            max_rounds: u64::from(job.stopping.max_rounds),
            id: id.clone(),
            printed: 0,
            progress: None,
            paused: false,
            moving: in_motion(job.status),
        };
        let watched = async {
            let hint = format!(
                "following job {} (Ctrl-C stops watching, not the job)",
                shown(&id)
            );
            watch.display.line(&hint)?;
            if watch.catch_up(&job)? {
                return Ok(());
            }
            watch.until_stopped(&mut events).await
        }
        .await;
        watch.display.finish();
        watched?;
    }
    let path = format!("/v1/jobs/{id}");
    let answer = client.request(Method::GET, &path, None).await?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&answer)?);
    }
    let job: JobView = client.typed(&path, answer)?;
    if !as_json {
        print!("{}", render_job(&job));
    }
    Ok(exit_code(job.status))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn event(value: Value) -> SseEvent {
        SseEvent {
            name: None,
            data: value.to_string(),
        }
    }

    fn progress_event(
        round: u64,
        batch: u64,
        remaining_ms: Option<u64>,
        metrics: Value,
    ) -> SseEvent {
        event(json!({
            "type": "job_progress", "job_id": "j1", "round": round, "batch": batch,
            "batches": 4, "elapsed_ms": 900, "remaining_ms": remaining_ms, "metrics": metrics,
        }))
    }

    #[test]
    fn progress_moves_the_bar_over_all_rounds_and_says_what_is_left() {
        let Followed::Progress(progress) =
            follow_event("j1", 10, &progress_event(3, 2, Some(125_000), Value::Null))
        else {
            panic!("a progress event moves the bar");
        };
        assert_eq!(
            progress.bar(),
            (40, 10),
            "round 3, batch 2 of 4: 10 of 40 batches"
        );
        assert_eq!(
            progress.message(false),
            "round 3/10 · batch 2/4 · about 2 min 5 s left"
        );
        assert_eq!(
            progress.message(true),
            "round 3/10 · paused: your agent is busy"
        );
        let Followed::Progress(first) =
            follow_event("j1", 10, &progress_event(1, 1, None, Value::Null))
        else {
            panic!("a progress event moves the bar");
        };
        assert_eq!(
            first.message(false),
            "round 1/10 · batch 1/4 · estimating the time left"
        );
        let starting = Progress::starting(4, 10);
        assert_eq!(
            starting.bar(),
            (10, 4),
            "a resumed run starts where it left off"
        );
        assert_eq!(starting.message(false), "round 5/10 · starting");
        assert_eq!(duration_text(400), "1 s");
        assert_eq!(duration_text(3_723_000), "1 h 2 min");
    }

    #[test]
    fn a_committed_round_prints_its_held_out_metrics_as_show_does() {
        let metrics = json!({
            "round": 3, "train_loss": 0.55, "heldout_loss": 0.5, "live_heldout_loss": 0.625,
            "heldout_accuracy": 0.75, "live_heldout_accuracy": 0.5, "heldout_auc": 0.8,
            "live_heldout_auc": null, "examples_trained": 120, "elapsed_ms": 300,
        });
        let followed = follow_event("j1", 10, &progress_event(3, 4, Some(7_000), metrics));
        let Followed::Round {
            round,
            progress,
            line,
        } = followed
        else {
            panic!("a round's metrics make a line: {followed:?}");
        };
        assert_eq!(round, 3);
        assert_eq!(
            line,
            "round   3: held-out loss 0.5000 (live head 0.6250), accuracy 75.0 % (live 50.0 %)"
        );
        assert_eq!(progress.bar(), (40, 12), "the round is whole");
    }

    #[test]
    fn only_this_jobs_changes_count_and_a_lost_event_or_a_stopping_engine_is_said() {
        let changed = |job_id: &str, status: &str| {
            follow_event(
                "j1",
                10,
                &event(json!({"type": "job_changed", "job_id": job_id, "status": status})),
            )
        };
        assert_eq!(
            changed("j1", "completed"),
            Followed::Changed(JobStatus::Completed)
        );
        assert_eq!(changed("j2", "completed"), Followed::Unrelated);
        let other =
            json!({"type": "job_progress", "job_id": "j2", "round": 1, "batch": 1, "batches": 4});
        assert_eq!(follow_event("j1", 10, &event(other)), Followed::Unrelated);
        let turn = json!({"type": "turn_started", "lease_id": "l"});
        assert_eq!(follow_event("j1", 10, &event(turn)), Followed::Unrelated);
        let lagged = SseEvent {
            name: Some("lagged".into()),
            data: "channel lagged by 3".into(),
        };
        assert_eq!(follow_event("j1", 10, &lagged), Followed::Lagged);
        let stopping = json!({"type": "engine_stopping"});
        assert_eq!(
            follow_event("j1", 10, &event(stopping)),
            Followed::EngineStopping
        );
    }

    #[test]
    fn the_exit_status_says_whether_the_job_ran_to_its_end() {
        for (status, code) in [
            (JobStatus::Completed, ExitCode::SUCCESS),
            (JobStatus::BudgetExhausted, ExitCode::SUCCESS),
            (JobStatus::Failed, ExitCode::from(1)),
            (JobStatus::Cancelled, ExitCode::from(1)),
            (JobStatus::Interrupted, ExitCode::from(1)),
        ] {
            assert_eq!(exit_code(status), code, "{status:?}");
        }
        assert!(
            in_motion(JobStatus::Queued)
                && in_motion(JobStatus::Running)
                && !in_motion(JobStatus::Interrupted)
        );
    }
}
