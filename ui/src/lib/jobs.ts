// Training jobs as the engine sends them (`list_jobs`, `get_job`, …; spec: JOBS.md "Job JSON",
// DESIGN §2.4), the events that move them, and how the Jobs view words and draws them. Pure: no
// I/O, no Svelte.

import type { EngineEvent } from "./backend";
import { agoPhrase } from "./drafts";
import type { ErrorCode } from "./errors";
import type { Checkpoint, JobStatus, JobView, Receipt, RoundMetrics, Stopping } from "./generated/engine";
import { count } from "./status";

export type { RoundMetrics } from "./generated/engine";

/** One training run: the engine's `JobView`. */
export type Job = JobView;

/** When a job stops; fixed at admission. */
export type StoppingPolicy = Stopping;

/** One entry of a job's append-only record. */
export type JobReceipt = Receipt;

/** One committed round's saved head. */
export type JobCheckpoint = Checkpoint;

/** The stop reasons the engine names; any other `stop_reason` is an error's text. */
export type StopReason =
  | "max_rounds"
  | "target_reached"
  | "min_improvement"
  | "wall_clock_exceeded"
  | "cancelled"
  | "adopted_after_restart"
  | "no_data";

/** `job_progress`: a running job moved (within a round, or a round committed, with its metrics). */
export type JobProgressEvent = Extract<EngineEvent, { type: "job_progress" }>;

// ---------------------------------------------------------------------------------------------
// Order, and keeping the list current from events

function statusRank(status: JobStatus): number {
  if (status === "running") return 0;
  if (status === "queued") return 1;
  return 2;
}

/**
 * Running jobs first (newest first), then queued ones in the order they will run (oldest
 * first), then the rest newest first.
 */
export function orderJobs(jobs: readonly Job[]): Job[] {
  return [...jobs].sort((a, b) => {
    const rank = statusRank(a.status) - statusRank(b.status);
    if (rank !== 0) return rank;
    const age = a.status === "queued" ? a.created_at - b.created_at : b.created_at - a.created_at;
    return age || a.id.localeCompare(b.id);
  });
}

/** Whether the job can still move: a progress event is about it. */
export function isActive(job: Job): boolean {
  return job.status === "running" || job.status === "queued";
}

/** A `job_progress` event's fields, or null when the event is not one (or is malformed). */
export function readProgressEvent(event: EngineEvent): JobProgressEvent | null {
  if (event.type !== "job_progress" || typeof event.job_id !== "string") return null;
  const { round, batch, batches, elapsed_ms, remaining_ms, metrics } = event;
  if (![round, batch, batches, elapsed_ms].every(isNumber)) return null;
  if (remaining_ms !== null && remaining_ms !== undefined && !isNumber(remaining_ms)) return null;
  return {
    type: "job_progress",
    job_id: event.job_id,
    round,
    batch,
    batches,
    elapsed_ms,
    remaining_ms: remaining_ms ?? null,
    metrics: isRoundMetrics(metrics) ? metrics : null,
  };
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function isRoundMetrics(value: unknown): value is RoundMetrics {
  if (typeof value !== "object" || value === null) return false;
  const fields = value as Record<string, unknown>;
  return ["round", "heldout_loss", "live_heldout_loss", "heldout_accuracy", "live_heldout_accuracy"].every((key) =>
    isNumber(fields[key]),
  );
}

/**
 * The list with one progress event applied to its job: the bar moves without a re-read. A
 * round's metrics, when the event carries them, are added and count as committed. Null when the
 * job is not in the list (a re-read is due); the list unchanged when the job has stopped (a late
 * event).
 */
export function applyProgress(jobs: readonly Job[], event: JobProgressEvent): Job[] | null {
  const job = jobs.find((one) => one.id === event.job_id);
  if (!job) return null;
  if (!isActive(job)) return [...jobs];
  const { round, batch, batches, elapsed_ms, remaining_ms, metrics } = event;
  const committed = metrics && !job.metrics.some((one) => one.round === metrics.round) ? [...job.metrics, metrics] : job.metrics;
  const next: Job = {
    ...job,
    // The job_changed that says it started may still be on its way.
    status: "running",
    progress: { round, batch, batches, elapsed_ms, remaining_ms },
    metrics: committed,
    rounds_completed: Math.max(job.rounds_completed, metrics?.round ?? 0),
  };
  return jobs.map((one) => (one.id === job.id ? next : one));
}

/** The list with `next` in place of the job with its id unless the listed one is newer; added if absent. */
export function upsertJob(jobs: readonly Job[] | null, next: Job): Job[] {
  const list = jobs ?? [];
  const listed = list.find((one) => one.id === next.id);
  if (!listed) return [...list, next];
  if (listed.updated_at > next.updated_at) return [...list];
  return list.map((one) => (one.id === next.id ? next : one));
}

/** What an engine event means for the jobs the window holds. */
export type JobsUpdate = { kind: "none" } | { kind: "reread" } | { kind: "patch"; jobs: Job[] };

/**
 * How to follow one engine event: a progress event patches the list in place; any other job
 * event, `engine_started` and `lagged` (events were missed) ask for a re-read. A live turn
 * starting or ending pauses or continues training, so while a job runs it asks for a re-read
 * too.
 */
export function jobsUpdate(event: EngineEvent, jobs: readonly Job[] | null): JobsUpdate {
  if (event.type === "job_progress") {
    const progress = readProgressEvent(event);
    const patched = progress && jobs ? applyProgress(jobs, progress) : null;
    return patched ? { kind: "patch", jobs: patched } : { kind: "reread" };
  }
  // A new engine start marks the runs an older one left running as interrupted.
  if (event.type.startsWith("job_") || event.type === "lagged" || event.type === "engine_started") {
    return { kind: "reread" };
  }
  if ((event.type === "turn_started" || event.type === "turn_finished") && (jobs ?? []).some((job) => job.status === "running")) {
    return { kind: "reread" };
  }
  return { kind: "none" };
}

// ---------------------------------------------------------------------------------------------
// Words

/** A person's word for a status. */
export function statusLabel(status: JobStatus): string {
  switch (status) {
    case "queued":
      return "Queued";
    case "running":
      return "Running";
    case "completed":
      return "Completed";
    case "failed":
      return "Failed";
    case "cancelled":
      return "Cancelled";
    case "interrupted":
      return "Interrupted";
    case "budget_exhausted":
      return "Out of time";
  }
}

/** "42 s", "3 min", "1 h 5 min"; "0 s" for nothing. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "0 s";
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** A loss: "0.412"; "—" when there is none. */
export function formatLoss(loss: number | null | undefined): string {
  return isNumber(loss) ? loss.toFixed(3) : "—";
}

/** An accuracy (0..1): "87.5 %", "90 %"; "—" when there is none. */
export function formatAccuracy(accuracy: number | null | undefined): string {
  if (!isNumber(accuracy)) return "—";
  return `${Math.round(accuracy * 1000) / 10} %`;
}

/** A loss decrease: "0.001", without a float's noise. */
export function formatImprovement(value: number): string {
  return String(Number(value.toPrecision(6)));
}

/** The first characters of a digest, for a glance (the full one goes in a title). */
export function shortDigest(digest: string, length = 12): string {
  return digest.length > length ? `${digest.slice(0, length)}…` : digest;
}

/** The stopping policy in one line: "up to 10 rounds · target 85 % held-out accuracy · 30 min budget". */
export function stoppingSummary(stopping: StoppingPolicy): string {
  const parts = [`up to ${count(stopping.max_rounds, "round")}`];
  if (stopping.target !== null) parts.push(`target ${formatAccuracy(stopping.target)} held-out accuracy`);
  if (stopping.min_improvement !== null) {
    parts.push(`stops when the held-out loss improves by less than ${formatImprovement(stopping.min_improvement)} a round`);
  }
  parts.push(`${formatDuration(stopping.wall_clock_s * 1000)} budget`);
  return parts.join(" · ");
}

/**
 * How far the run is, 0..1, counted in rounds of `max_rounds` (a target or a stalled loss may
 * end it sooner): within the current round by mini-batches while it runs; full once completed.
 */
export function progressFraction(job: Job): number {
  if (job.status === "completed") return 1;
  const max = job.stopping.max_rounds;
  if (max <= 0) return 0;
  const progress = job.status === "running" ? job.progress : null;
  const done = progress
    ? Math.max(progress.round - 1, 0) + (progress.batches > 0 ? Math.min(progress.batch / progress.batches, 1) : 0)
    : job.rounds_completed;
  return Math.min(Math.max(done / max, 0), 1);
}

/** The paused wording, as the design has it. */
export const PAUSED_PHRASE = "paused: your agent is busy";

/** "3 of 10 rounds", "1 of 1 round". */
export function roundsPhrase(job: Job): string {
  return `${job.rounds_completed} of ${count(job.stopping.max_rounds, "round")}`;
}

/**
 * The line under a run's bar: "round 3 of 10 · 42 s left" while it runs, "round 3 of 10 ·
 * paused: your agent is busy" while a live turn holds it, "3 of 10 rounds" once it stopped.
 */
export function progressText(job: Job): string {
  const max = job.stopping.max_rounds;
  switch (job.status) {
    case "queued":
      return job.paused ? `queued · ${PAUSED_PHRASE}` : `waiting to start · up to ${count(max, "round")}`;
    case "running": {
      const round = job.progress?.round ?? Math.min(job.rounds_completed + 1, max);
      const parts = [`round ${round} of ${max}`];
      if (job.paused) parts.push(PAUSED_PHRASE);
      else if (job.progress?.remaining_ms !== null && job.progress?.remaining_ms !== undefined) {
        parts.push(`${formatDuration(job.progress.remaining_ms)} left`);
      } else if (!job.progress) parts.push("starting");
      return parts.join(" · ");
    }
    default:
      return roundsPhrase(job);
  }
}

/** The last committed round's metrics, if any. */
export function lastMetrics(job: Job): RoundMetrics | null {
  return job.metrics.length > 0 ? (job.metrics[job.metrics.length - 1] ?? null) : null;
}

function withoutFullStop(text: string): string {
  return text.trim().replace(/\.+$/, "");
}

/**
 * Why the run stopped, in words for a person, with what can be done next; null while it has not
 * stopped.
 */
export function stopSentence(job: Job): string | null {
  const rounds = count(job.rounds_completed, "round");
  const resume = job.resumable ? ` Resume checks every checkpoint and continues after round ${job.rounds_completed}.` : "";
  const last = lastMetrics(job);
  switch (job.stop_reason) {
    case null:
      if (job.status === "failed") return `It failed${job.error ? `: ${withoutFullStop(job.error)}` : ""}.`;
      if (job.status === "completed") return `It completed after ${rounds}.`;
      return isActive(job) ? null : `It stopped after ${rounds}.${resume}`;
    case "max_rounds":
      return `It ran all ${count(job.stopping.max_rounds, "round")} it was allowed.`;
    case "target_reached":
      return `It reached its target: ${formatAccuracy(last?.heldout_accuracy)} held-out accuracy${
        job.stopping.target !== null ? `, against a target of ${formatAccuracy(job.stopping.target)}` : ""
      }, after ${rounds}.`;
    case "min_improvement":
      return `It stopped improving: after ${rounds} the held-out loss fell by less than ${
        job.stopping.min_improvement !== null ? formatImprovement(job.stopping.min_improvement) : "the minimum"
      } in a round, so more rounds were unlikely to help.`;
    case "wall_clock_exceeded":
      return `It ran out of time: its ${formatDuration(job.stopping.wall_clock_s * 1000)} budget ran out after ${rounds}.${resume}`;
    case "cancelled":
      return `It was cancelled after ${rounds}. Its checkpoints are kept; a cancelled run cannot be resumed, so start a new one to train again.`;
    case "adopted_after_restart":
      return `Lull restarted while it was running, so it was stopped rather than silently retrained.${
        resume || " Start a new run to train again."
      }`;
    case "no_data":
      return "There was nothing to train on: your agent has not reported routing outcomes for the live head yet. Start a run once it has (it reports them with POST /v1/outcomes).";
    default:
      return `It failed: ${withoutFullStop(job.error ?? job.stop_reason)}.`;
  }
}

/** The trained head against the live one on the last round, in one sentence; null before a round. */
export function comparisonSentence(job: Job): string | null {
  const last = lastMetrics(job);
  if (!last) return null;
  const delta = last.live_heldout_loss - last.heldout_loss;
  const verdict =
    Math.abs(delta) < 0.0005 ? "as well as" : delta > 0 ? "better than" : "worse than";
  // Once promoted, this run's head is the live one: the comparison is with the head it replaced.
  const other = job.promoted_at === null ? "the live head" : "the head it replaced";
  return `After round ${last.round}, the trained head does ${verdict} ${other} on the ${count(
    job.dataset.heldout,
    "held-out example",
  )}: loss ${formatLoss(last.heldout_loss)} against ${formatLoss(last.live_heldout_loss)}, accuracy ${formatAccuracy(
    last.heldout_accuracy,
  )} against ${formatAccuracy(last.live_heldout_accuracy)}.`;
}

/** Whether it was promoted, in words; null when not. */
export function promotedPhrase(job: Job, now: number): string | null {
  return job.promoted_at === null ? null : `Promoted ${agoPhrase(job.promoted_at, now)}.`;
}

/** The actions a run offers. */
export type JobAction = "cancel" | "resume" | "promote";

/** The actions shown for a run, as the engine allows them. */
export function jobActions(job: Job): JobAction[] {
  const actions: JobAction[] = [];
  if (job.cancellable) actions.push("cancel");
  if (job.resumable) actions.push("resume");
  if (job.promotable) actions.push("promote");
  return actions;
}

/**
 * What to do after the engine refused an action, by its code (the engine's message says what
 * happened); null when its message says enough.
 */
export function refusalHint(code: ErrorCode): string | null {
  switch (code) {
    case "checkpoint_chain_broken":
    case "checkpoint_missing":
      return "Its saved rounds cannot be trusted, so this run cannot continue. Start a new run to train again.";
    case "dataset_changed":
      return "The outcomes it trains on changed since it was admitted, so this run cannot continue. Start a new run to train on what your agent reported since.";
    case "job_not_resumable":
    case "job_not_promotable":
      return "The run changed since this window last read it; what it shows now is current.";
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The metric curve

export interface CurvePoint {
  x: number;
  y: number;
  round: number;
  loss: number;
}

export interface LossCurves {
  /** The trained head's held-out loss, per round. */
  trained: CurvePoint[];
  /** The live head's, on the same held-out split. */
  live: CurvePoint[];
  /** The loss at the bottom of the box. */
  bottom: number;
  /** The loss at the top of the box. */
  top: number;
}

/**
 * The held-out loss of the trained and the live head per round, as points in a `width`×`height`
 * box: round 1 on the left, the last on the right (a single round in the middle); the losses
 * between `bottom` (the lowest, rounded down to a tenth) and `top` (the highest, rounded up to a
 * tenth, at least a tenth above), so that a small improvement still shows. Null before a round.
 */
export function lossCurves(metrics: readonly RoundMetrics[], width: number, height: number): LossCurves | null {
  if (metrics.length === 0) return null;
  const losses = metrics.flatMap((one) => [one.heldout_loss, one.live_heldout_loss]).filter(isNumber);
  const lowest = losses.length > 0 ? Math.max(Math.min(...losses), 0) : 0;
  const highest = losses.length > 0 ? Math.max(...losses, 0) : 0;
  const bottom = Math.floor(lowest * 10 + 1e-9) / 10;
  const top = Math.max(Math.ceil(highest * 10 - 1e-9) / 10, round1(bottom + 0.1));
  const step = metrics.length > 1 ? width / (metrics.length - 1) : 0;
  const place = (index: number, loss: number, round: number): CurvePoint => ({
    x: round1(metrics.length > 1 ? index * step : width / 2),
    y: round1(height - ((Math.min(Math.max(loss, bottom), top) - bottom) / (top - bottom)) * height),
    round,
    loss,
  });
  return {
    trained: metrics.map((one, index) => place(index, one.heldout_loss, one.round)),
    live: metrics.map((one, index) => place(index, one.live_heldout_loss, one.round)),
    bottom,
    top,
  };
}

/** Points as an SVG polyline's `points`. */
export function polylinePoints(points: readonly CurvePoint[]): string {
  return points.map((point) => `${point.x},${point.y}`).join(" ");
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

// ---------------------------------------------------------------------------------------------
// The New training run… form

/** The form's fields, as typed. */
export interface NewRunFields {
  maxRounds: string;
  /** Percent, 0..100; empty: no target. */
  targetPercent: string;
  /** Empty: no minimum. */
  minImprovement: string;
  wallClockMinutes: string;
}

export const NEW_RUN_DEFAULTS: NewRunFields = { maxRounds: "10", targetPercent: "", minImprovement: "", wallClockMinutes: "30" };

/** The most rounds the form offers: a run is a bounded, short thing on a laptop. */
export const MAX_ROUNDS_LIMIT = 1000;
/** The longest budget the form offers, in minutes (a day). */
export const WALL_CLOCK_LIMIT_MIN = 24 * 60;

export type NewRunErrors = Partial<Record<keyof NewRunFields, string>>;

export type NewRunReading = { ok: true; stopping: StoppingPolicy } | { ok: false; errors: NewRunErrors };

/** A decimal as a person types it ("0.5", "0,5", " 30 "); null when it is not one. */
function parseDecimal(text: string): number | null {
  const trimmed = text.trim().replace(",", ".");
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

/** The form's fields as a stopping policy (minutes → seconds, percent → 0..1), or what is wrong with each. */
export function readNewRun(fields: NewRunFields): NewRunReading {
  const errors: NewRunErrors = {};

  const rounds = parseDecimal(fields.maxRounds);
  if (rounds === null || !Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS_LIMIT) {
    errors.maxRounds = `Enter a whole number of rounds from 1 to ${MAX_ROUNDS_LIMIT}.`;
  }

  let target: number | null = null;
  if (fields.targetPercent.trim() !== "") {
    const percent = parseDecimal(fields.targetPercent.replace(/%\s*$/, ""));
    if (percent === null || percent <= 0 || percent > 100) {
      errors.targetPercent = "Enter a held-out accuracy above 0 and up to 100 %, or leave it empty for no target.";
    } else target = Math.round(percent * 100) / 10_000;
  }

  let minImprovement: number | null = null;
  if (fields.minImprovement.trim() !== "") {
    const value = parseDecimal(fields.minImprovement);
    if (value === null || value <= 0) {
      errors.minImprovement = "Enter a loss decrease above 0 (for example 0.001), or leave it empty to train every round.";
    } else minImprovement = value;
  }

  const minutes = parseDecimal(fields.wallClockMinutes);
  if (minutes === null || minutes < 1 || minutes > WALL_CLOCK_LIMIT_MIN) {
    errors.wallClockMinutes = `Enter a budget from 1 to ${WALL_CLOCK_LIMIT_MIN} minutes.`;
  }

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    stopping: {
      max_rounds: rounds as number,
      target,
      min_improvement: minImprovement,
      wall_clock_s: Math.round((minutes as number) * 60),
    },
  };
}
