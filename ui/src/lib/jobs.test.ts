import { describe, expect, it } from "vitest";
import { interruptedJob, job, jobList, NOW, queuedJob, roundMetrics, runningJob, STOPPING } from "../test/fixtures";
import type { EngineEvent } from "./backend";
import {
  applyProgress,
  comparisonSentence,
  formatAccuracy,
  formatDuration,
  formatImprovement,
  formatLoss,
  jobActions,
  jobsUpdate,
  lossCurves,
  NEW_RUN_DEFAULTS,
  orderJobs,
  polylinePoints,
  progressFraction,
  progressText,
  promotedPhrase,
  readNewRun,
  readProgressEvent,
  refusalHint,
  shortDigest,
  statusLabel,
  stoppingSummary,
  stopSentence,
  upsertJob,
  type JobProgressEvent,
} from "./jobs";

function progressEvent(patch: Partial<JobProgressEvent> = {}): JobProgressEvent {
  return { type: "job_progress", job_id: "job-running", round: 3, batch: 30, batches: 40, elapsed_ms: 40_000, remaining_ms: 20_000, metrics: null, ...patch };
}

describe("orderJobs", () => {
  it("puts running runs first, then queued ones in the order they run, then the rest newest first", () => {
    expect(orderJobs(jobList()).map((one) => one.id)).toEqual([
      "job-running",
      "job-queued-first", // queued 3 min ago: runs next
      "job-queued", // queued 1 min ago
      "job-interrupted", // 30 min old
      "job-done", // 2 h old
      "job-failed", // a day old
    ]);
  });

  it("leaves its input alone", () => {
    const list = jobList();
    const ids = list.map((one) => one.id);
    orderJobs(list);
    expect(list.map((one) => one.id)).toEqual(ids);
  });
});

describe("statusLabel", () => {
  it.each([
    ["queued", "Queued"],
    ["running", "Running"],
    ["completed", "Completed"],
    ["failed", "Failed"],
    ["cancelled", "Cancelled"],
    ["interrupted", "Interrupted"],
    ["budget_exhausted", "Out of time"],
  ] as const)("%s → %s", (status, label) => {
    expect(statusLabel(status)).toBe(label);
  });
});

describe("progress", () => {
  it("counts rounds of max_rounds, and mini-batches within the running round", () => {
    // Round 3 of 10, 10 of 40 batches: 2.25 rounds done.
    expect(progressFraction(runningJob())).toBeCloseTo(0.225);
    expect(progressFraction(queuedJob())).toBe(0);
    expect(progressFraction(interruptedJob())).toBeCloseTo(0.3);
    expect(progressFraction(job())).toBe(1);
    // A target reached early still completes the bar.
    expect(progressFraction(job({ rounds_completed: 4 }))).toBe(1);
    expect(progressFraction(runningJob({ progress: { round: 12, batch: 50, batches: 40, elapsed_ms: 0, remaining_ms: null } }))).toBe(1);
  });

  it("words where a run is", () => {
    expect(progressText(runningJob())).toBe("round 3 of 10 · 42 s left");
    expect(progressText(runningJob({ paused: true }))).toBe("round 3 of 10 · paused: your agent is busy");
    expect(progressText(runningJob({ progress: { round: 3, batch: 1, batches: 40, elapsed_ms: 0, remaining_ms: null } }))).toBe(
      "round 3 of 10",
    );
    expect(progressText(runningJob({ progress: null }))).toBe("round 3 of 10 · starting");
    expect(progressText(queuedJob())).toBe("waiting to start · up to 10 rounds");
    expect(progressText(interruptedJob())).toBe("3 of 10 rounds");
    expect(progressText(job({ rounds_completed: 1, stopping: { ...STOPPING, max_rounds: 1 } }))).toBe("1 of 1 round");
  });

  it("formats durations", () => {
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(41_200)).toBe("42 s");
    expect(formatDuration(0)).toBe("0 s");
    expect(formatDuration(3 * 60_000)).toBe("3 min");
    expect(formatDuration(30 * 60_000)).toBe("30 min");
    expect(formatDuration(65 * 60_000)).toBe("1 h 5 min");
    expect(formatDuration(2 * 3_600_000)).toBe("2 h");
  });
});

describe("progress events", () => {
  it("reads a job_progress event, with or without a round's metrics", () => {
    expect(readProgressEvent({ ...progressEvent() })).toEqual(progressEvent());
    const withMetrics = readProgressEvent({ ...progressEvent({ metrics: roundMetrics(3) }) });
    expect(withMetrics?.metrics?.round).toBe(3);
    // The app forwards what the engine sent: a malformed one (another version's) is refused.
    expect(readProgressEvent({ type: "job_progress", job_id: "j", round: "3" } as unknown as EngineEvent)).toBeNull();
    expect(readProgressEvent({ type: "job_changed", job_id: "j", status: "running" })).toBeNull();
    expect(readProgressEvent({ ...progressEvent(), remaining_ms: undefined } as unknown as EngineEvent)?.remaining_ms).toBeNull();
  });

  it("moves the run's bar from the event alone", () => {
    const list = jobList();
    const next = applyProgress(list, progressEvent());
    const moved = next?.find((one) => one.id === "job-running");
    expect(moved?.progress).toEqual({ round: 3, batch: 30, batches: 40, elapsed_ms: 40_000, remaining_ms: 20_000 });
    expect(moved && progressText(moved)).toBe("round 3 of 10 · 20 s left");
    expect(moved?.rounds_completed).toBe(2);
    // The others are untouched, and so is the input.
    expect(next?.find((one) => one.id === "job-done")).toEqual(job());
    expect(list.find((one) => one.id === "job-running")?.progress?.batch).toBe(10);
  });

  it("counts a committed round the event carries, once", () => {
    const once = applyProgress(jobList(), progressEvent({ batch: 40, metrics: roundMetrics(3) })) ?? [];
    const twice = applyProgress(once, progressEvent({ batch: 40, metrics: roundMetrics(3) })) ?? [];
    const moved = twice.find((one) => one.id === "job-running");
    expect(moved?.rounds_completed).toBe(3);
    expect(moved?.metrics.map((one) => one.round)).toEqual([1, 2, 3]);
  });

  it("marks a queued run running, ignores a stopped one, and asks for a read for an unknown one", () => {
    const started = applyProgress([queuedJob()], progressEvent({ job_id: "job-queued", round: 1, batch: 1 }));
    expect(started?.[0]?.status).toBe("running");
    const late = applyProgress([job()], progressEvent({ job_id: "job-done" }));
    expect(late).toEqual([job()]);
    expect(applyProgress([job()], progressEvent({ job_id: "job-nobody" }))).toBeNull();
  });

  it("patches on progress, re-reads on other job events and lagged, and while a run trains, on turns", () => {
    expect(jobsUpdate({ ...progressEvent() }, jobList()).kind).toBe("patch");
    expect(jobsUpdate({ ...progressEvent({ job_id: "job-new" }) }, jobList()).kind).toBe("reread");
    expect(jobsUpdate({ ...progressEvent() }, null).kind).toBe("reread");
    expect(jobsUpdate({ type: "job_changed", job_id: "job-done", status: "completed" }, jobList()).kind).toBe("reread");
    expect(jobsUpdate({ type: "lagged" }, jobList()).kind).toBe("reread");
    expect(jobsUpdate({ type: "engine_started", version: "0.1.0", generation: 7 }, jobList()).kind).toBe("reread");
    expect(jobsUpdate({ type: "turn_started", lease_id: "l1" }, jobList()).kind).toBe("reread");
    expect(jobsUpdate({ type: "turn_finished", lease_id: "l1" }, [job()]).kind).toBe("none");
    expect(jobsUpdate({ type: "draft_changed", draft_id: "d1", skill: "git-rebase-safely", status: "review_pending" }, jobList()).kind).toBe("none");
  });
});

describe("upsertJob", () => {
  it("keeps the newer of the listed run and the answer, and adds a new one", () => {
    const answer = job({ promoted_at: NOW, updated_at: NOW });
    expect(upsertJob(jobList(), answer).find((one) => one.id === "job-done")?.promoted_at).toBe(NOW);
    const stale = job({ updated_at: NOW - 86_400_000, status: "running" });
    expect(upsertJob(jobList(), stale).find((one) => one.id === "job-done")?.status).toBe("completed");
    expect(upsertJob(null, answer)).toEqual([answer]);
  });
});

describe("stopSentence", () => {
  it("says nothing while a run is queued or running", () => {
    expect(stopSentence(runningJob())).toBeNull();
    expect(stopSentence(queuedJob())).toBeNull();
  });

  it("words each stop reason", () => {
    expect(stopSentence(job())).toBe("It ran all 10 rounds it was allowed.");
    expect(
      stopSentence(job({ stop_reason: "target_reached", rounds_completed: 4, metrics: [1, 2, 3, 4].map((n) => roundMetrics(n)), stopping: { ...STOPPING, target: 0.68 } })),
    ).toBe("It reached its target: 68 % held-out accuracy, against a target of 68 %, after 4 rounds.");
    expect(stopSentence(job({ stop_reason: "min_improvement", rounds_completed: 6, stopping: { ...STOPPING, min_improvement: 0.001 } }))).toBe(
      "It stopped improving: after 6 rounds the held-out loss fell by less than 0.001 in a round, so more rounds were unlikely to help.",
    );
    expect(
      stopSentence(job({ status: "budget_exhausted", stop_reason: "wall_clock_exceeded", rounds_completed: 7, resumable: true })),
    ).toBe("It ran out of time: its 30 min budget ran out after 7 rounds. Resume checks every checkpoint and continues after round 7.");
    expect(stopSentence(job({ status: "cancelled", stop_reason: "cancelled", rounds_completed: 1 }))).toBe(
      "It was cancelled after 1 round. Its checkpoints are kept; a cancelled run cannot be resumed, so start a new one to train again.",
    );
    expect(stopSentence(interruptedJob())).toBe(
      "Lull restarted while it was running, so it was stopped rather than silently retrained. Resume checks every checkpoint and continues after round 3.",
    );
    expect(stopSentence(interruptedJob({ resumable: false }))).toBe(
      "Lull restarted while it was running, so it was stopped rather than silently retrained. Start a new run to train again.",
    );
    expect(stopSentence(job({ status: "failed", stop_reason: "no_data", rounds_completed: 0 }))).toMatch(
      /^There was nothing to train on: your agent has not reported routing outcomes/,
    );
  });

  it("quotes an error's text", () => {
    expect(stopSentence(job({ status: "failed", stop_reason: "disk full.", error: null }))).toBe("It failed: disk full.");
    expect(stopSentence(job({ status: "failed", stop_reason: "io", error: "disk full" }))).toBe("It failed: disk full.");
    expect(stopSentence(job({ status: "failed", stop_reason: null, error: "disk full" }))).toBe("It failed: disk full.");
  });
});

describe("metrics", () => {
  it("formats losses, accuracies, improvements and digests", () => {
    expect(formatLoss(0.41234)).toBe("0.412");
    expect(formatLoss(null)).toBe("—");
    expect(formatAccuracy(0.875)).toBe("87.5 %");
    expect(formatAccuracy(0.9)).toBe("90 %");
    expect(formatAccuracy(undefined)).toBe("—");
    expect(formatImprovement(0.1 + 0.2)).toBe("0.3");
    expect(shortDigest("e3b0c44298fc1c149afbf4c8996fb924")).toBe("e3b0c44298fc…");
    expect(shortDigest("ab12")).toBe("ab12");
  });

  it("sums up the stopping policy", () => {
    expect(stoppingSummary(STOPPING)).toBe("up to 10 rounds · 30 min budget");
    expect(stoppingSummary({ max_rounds: 1, target: 0.85, min_improvement: 0.001, wall_clock_s: 90 })).toBe(
      "up to 1 round · target 85 % held-out accuracy · stops when the held-out loss improves by less than 0.001 a round · 2 min budget",
    );
  });

  it("compares the trained head with the live one on the last round", () => {
    expect(comparisonSentence(job())).toBe(
      "After round 10, the trained head does better than the live head on the 480 held-out examples: loss 0.430 against 0.620, accuracy 80 % against 66 %.",
    );
    expect(comparisonSentence(job({ metrics: [roundMetrics(1, { heldout_loss: 0.7 })] }))).toMatch(/does worse than the live head/);
    expect(comparisonSentence(job({ promoted_at: 1 }))).toMatch(/than the head it replaced/);
    expect(comparisonSentence(queuedJob())).toBeNull();
    expect(promotedPhrase(job(), NOW)).toBeNull();
    expect(promotedPhrase(job({ promoted_at: NOW - 3 * 60_000 }), NOW)).toBe("Promoted 3 min ago.");
  });

  it("draws the trained and the live head's held-out loss per round", () => {
    const metrics = [roundMetrics(1, { heldout_loss: 0.6, live_heldout_loss: 0.8 }), roundMetrics(2, { heldout_loss: 0.4, live_heldout_loss: 0.8 })];
    const curves = lossCurves(metrics, 100, 50);
    expect([curves?.bottom, curves?.top]).toEqual([0.4, 0.8]);
    expect(polylinePoints(curves?.trained ?? [])).toBe("0,25 100,50");
    expect(polylinePoints(curves?.live ?? [])).toBe("0,0 100,0");
    // Close losses still get a tenth of room; one round sits in the middle; none draws nothing.
    const flat = lossCurves([roundMetrics(1, { heldout_loss: 0.5, live_heldout_loss: 0.5 })], 100, 50);
    expect([flat?.bottom, flat?.top]).toEqual([0.5, 0.6]);
    expect(flat?.trained[0]).toMatchObject({ x: 50, y: 50 });
    expect(lossCurves([], 100, 50)).toBeNull();
  });
});

describe("jobActions and refusalHint", () => {
  it("shows the actions the engine allows", () => {
    expect(jobActions(runningJob())).toEqual(["cancel"]);
    expect(jobActions(interruptedJob())).toEqual(["resume"]);
    expect(jobActions(job())).toEqual(["promote"]);
    expect(jobActions(job({ promotable: false }))).toEqual([]);
  });

  it("says what to do after a refusal that ends a run", () => {
    expect(refusalHint("checkpoint_chain_broken")).toMatch(/Start a new run/);
    expect(refusalHint("dataset_changed")).toMatch(/Start a new run/);
    expect(refusalHint("engine_unavailable")).toBeNull();
  });
});

describe("readNewRun", () => {
  it("reads the defaults as ten rounds in half an hour", () => {
    expect(readNewRun(NEW_RUN_DEFAULTS)).toEqual({
      ok: true,
      stopping: { max_rounds: 10, target: null, min_improvement: null, wall_clock_s: 1800 },
    });
  });

  it("turns a percent target into 0..1, minutes into seconds, and takes a decimal comma", () => {
    expect(readNewRun({ maxRounds: " 25 ", targetPercent: "87.5", minImprovement: "0,001", wallClockMinutes: "1.5" })).toEqual({
      ok: true,
      stopping: { max_rounds: 25, target: 0.875, min_improvement: 0.001, wall_clock_s: 90 },
    });
    expect(readNewRun({ ...NEW_RUN_DEFAULTS, targetPercent: "85 %" })).toMatchObject({ ok: true, stopping: { target: 0.85 } });
  });

  it("says what is wrong with each field", () => {
    const reading = readNewRun({ maxRounds: "2.5", targetPercent: "120", minImprovement: "0", wallClockMinutes: "" });
    expect(reading.ok).toBe(false);
    if (reading.ok) return;
    expect(Object.keys(reading.errors).sort()).toEqual(["maxRounds", "minImprovement", "targetPercent", "wallClockMinutes"]);
    expect(reading.errors.maxRounds).toBe("Enter a whole number of rounds from 1 to 1000.");
    expect(reading.errors.wallClockMinutes).toBe("Enter a budget from 1 to 1440 minutes.");
  });

  it.each([
    ["maxRounds", "0"],
    ["maxRounds", "1001"],
    ["maxRounds", "ten"],
    ["maxRounds", "-3"],
    ["targetPercent", "0"],
    ["targetPercent", "abc"],
    ["minImprovement", "-0.1"],
    ["wallClockMinutes", "0.5"],
    ["wallClockMinutes", "1441"],
  ] as const)("refuses %s = %s", (key, value) => {
    const reading = readNewRun({ ...NEW_RUN_DEFAULTS, [key]: value });
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(Object.keys(reading.errors)).toEqual([key]);
  });
});
