import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import App from "../App.svelte";
import type { Job, StoppingPolicy } from "../lib/jobs";
import type { CommandError } from "../lib/errors";
import { interruptedJob, job, jobList, NOW, queuedJob, roundMetrics, runningJob, withDetail, fakeBackend } from "../test/fixtures";
import { tabTo } from "../test/keyboard";
import Jobs from "./Jobs.svelte";

type Handlers = {
  onopen: (id: string) => Promise<Job>;
  oncancel: (id: string) => Promise<Job>;
  onresume: (id: string) => Promise<Job>;
  onpromote: (id: string) => Promise<Job>;
  onstart: (stopping: StoppingPolicy) => Promise<Job>;
};

function setup(jobs: Job[] | null, overrides: Partial<Handlers> & { error?: CommandError } = {}) {
  const { error, ...rest } = overrides;
  const handlers: Handlers = {
    onopen: vi.fn(async (id: string) => withDetail((jobs ?? []).find((one) => one.id === id) ?? job({ id }))),
    oncancel: vi.fn(async (id: string) =>
      runningJob({ id, status: "cancelled", stop_reason: "cancelled", progress: null, cancellable: false, updated_at: NOW, finished_at: NOW }),
    ),
    onresume: vi.fn(async (id: string) =>
      interruptedJob({ id, status: "running", stop_reason: null, resumable: false, cancellable: true, updated_at: NOW, finished_at: null }),
    ),
    onpromote: vi.fn(async (id: string) => job({ id, promoted_at: NOW, promotable: false, updated_at: NOW })),
    onstart: vi.fn(async (stopping: StoppingPolicy) => queuedJob({ id: "job-new", stopping, created_at: NOW, updated_at: NOW })),
    ...rest,
  };
  const view = render(Jobs, { jobs, error: error ?? null, now: NOW, ...handlers });
  return { handlers, ...view };
}

/** The list's runs, top to bottom, as "status: line". */
function listItems(): string[] {
  const list = screen.getByRole("list", { name: "Training runs" });
  return within(list)
    .getAllByRole("button")
    .map((button) => `${button.querySelector(".status")?.textContent}: ${button.querySelector(".item-line")?.textContent}`);
}

function article(): HTMLElement {
  return screen.getByRole("article");
}

describe("Jobs", () => {
  it("says when there are no runs yet, and offers to start one", () => {
    setup([]);
    expect(screen.getByRole("status")).toHaveTextContent(
      "No training runs yet: start one to train a routing head from what your agent reported.",
    );
    expect(screen.queryByRole("list", { name: "Training runs" })).toBeNull();
    expect(screen.getByRole("button", { name: "New training run…" })).toBeEnabled();
  });

  it("says it is loading", () => {
    setup(null);
    expect(screen.getByRole("status")).toHaveTextContent("Loading training runs…");
  });

  it("shows the engine's error instead of the list", () => {
    setup(jobList(), { error: { code: "engine_unavailable", message: "The engine stopped: the database is locked." } });
    expect(screen.getByRole("status")).toHaveTextContent("The engine stopped: the database is locked.");
    expect(screen.queryByRole("list", { name: "Training runs" })).toBeNull();
    expect(screen.queryByRole("button", { name: "New training run…" })).toBeNull();
  });

  it("lists running runs first, then queued ones in run order, then the rest newest first, each with a bar", () => {
    setup(jobList());
    expect(listItems()).toEqual([
      "Running: round 3 of 10 · 42 s left · created 5 min ago",
      "Queued: waiting to start · up to 10 rounds · created 3 min ago",
      "Queued: waiting to start · up to 10 rounds · created 1 min ago",
      "Interrupted: 3 of 10 rounds · created 30 min ago",
      "Completed: 10 of 10 rounds · created 2 h ago",
      "Failed: 0 of 10 rounds · created 1 day ago",
    ]);
    expect(screen.getByText("1 running, 2 queued.")).toBeInTheDocument();
    const bars = within(screen.getByRole("list", { name: "Training runs" })).getAllByRole("progressbar");
    expect(bars.map((bar) => bar.getAttribute("aria-valuenow"))).toEqual(["23", "0", "0", "30", "100", "0"]);
    // The running one is selected first.
    const first = within(screen.getByRole("list", { name: "Training runs" })).getAllByRole("button")[0];
    expect(first).toHaveAttribute("aria-current", "true");
    expect(within(article()).getByText("Running")).toBeInTheDocument();
  });

  it("shows a finished run: the curve, why it stopped, the dataset, the artifact, receipts and checkpoints", async () => {
    const { handlers } = setup(jobList());
    await fireEvent.click(screen.getByRole("button", { name: /^Run of .*Completed/ }));
    expect(handlers.onopen).toHaveBeenCalledWith("job-done");
    const shown = article();
    expect(within(shown).getByRole("heading", { name: "Why it stopped" })).toBeInTheDocument();
    expect(shown).toHaveTextContent("It ran all 10 rounds it was allowed.");
    expect(shown).toHaveTextContent(
      "After round 10, the trained head does better than the live head on the 480 held-out examples: loss 0.430 against 0.620",
    );
    expect(screen.getByRole("img", { name: /Held-out loss over 10 rounds: trained head 0\.430, live head 0\.620/ })).toBeInTheDocument();
    expect(screen.getByTestId("trained-curve").getAttribute("points")?.split(" ")).toHaveLength(10);
    expect(screen.getByTestId("live-curve").getAttribute("points")?.split(" ")).toHaveLength(10);
    expect(shown).toHaveTextContent("2400 examples, 480 of them held out for evaluation");
    expect(within(shown).getByText("e3b0c44298fc…")).toHaveAttribute(
      "title",
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );

    const receipts = await screen.findByRole("table", { name: "Receipts" });
    const receiptRows = within(receipts).getAllByRole("row").slice(1);
    expect(receiptRows).toHaveLength(11);
    expect(receiptRows[0]).toHaveTextContent(/^1admission2 h ago1d0000000000…$/);
    expect(receiptRows[1]).toHaveTextContent(/^2training/);
    const checkpoints = screen.getByRole("table", { name: "Checkpoints" });
    const checkpointRows = within(checkpoints).getAllByRole("row").slice(1);
    expect(checkpointRows).toHaveLength(10);
    expect(checkpointRows[0]).toHaveTextContent(/^101c0ffeeaaaa…—/);
    expect(checkpointRows[1]).toHaveTextContent(/^202c0ffeeaaaa…01c0ffeeaaaa…/);
  });

  it("says when a run's receipts cannot be read, and still shows the run", async () => {
    setup([job()], { onopen: () => Promise.reject({ code: "not_found", message: "no job job-done" }) });
    expect(await screen.findByText("Could not read this run's receipts: no job job-done")).toBeInTheDocument();
    expect(article()).toHaveTextContent("It ran all 10 rounds it was allowed.");
  });

  it("reads a run again when a round commits, not on every progress step", async () => {
    const { handlers, rerender } = setup([runningJob()]);
    await waitFor(() => expect(handlers.onopen).toHaveBeenCalledTimes(1));
    const props = { now: NOW, ...handlers };
    await rerender({ ...props, jobs: [runningJob({ progress: { round: 3, batch: 20, batches: 40, elapsed_ms: 35_000, remaining_ms: 30_000 } })] });
    expect(handlers.onopen).toHaveBeenCalledTimes(1);
    await rerender({ ...props, jobs: [runningJob({ rounds_completed: 3, metrics: [1, 2, 3].map((n) => roundMetrics(n)) })] });
    await waitFor(() => expect(handlers.onopen).toHaveBeenCalledTimes(2));
  });

  it("says a run is paused while your agent is busy", () => {
    setup([runningJob({ paused: true }), queuedJob({ paused: true })]);
    expect(listItems()[0]).toBe("Running: round 3 of 10 · paused: your agent is busy · created 5 min ago");
    expect(listItems()[1]).toBe("Queued: queued · paused: your agent is busy · created 1 min ago");
    expect(screen.getByRole("note")).toHaveTextContent(
      "Paused: your agent is busy. Training waits between mini-batches while your agent answers, and continues on its own in the next lull.",
    );
    expect(within(article()).getByRole("progressbar", { name: "Progress" })).toHaveAttribute(
      "aria-valuetext",
      "23 % · round 3 of 10 · paused: your agent is busy",
    );
  });

  it("cancels a running run after asking, and says its checkpoints are kept", async () => {
    const { handlers } = setup([runningJob()]);
    expect(screen.queryByRole("button", { name: "Resume" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Promote" })).toBeNull();
    await fireEvent.click(screen.getByRole("button", { name: "Cancel…" }));
    expect(screen.getByRole("group", { name: /Stop this run now\? It keeps the 2 rounds it committed/ })).toBeInTheDocument();
    await fireEvent.keyDown(screen.getByRole("button", { name: "Keep it running" }), { key: "Escape" });
    expect(screen.queryByRole("group", { name: /Stop this run now/ })).toBeNull();
    expect(handlers.oncancel).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByRole("button", { name: "Cancel…" }));
    await fireEvent.click(screen.getByRole("button", { name: "Stop the run" }));
    expect(handlers.oncancel).toHaveBeenCalledWith("job-running");
    expect(await screen.findByText("Cancelled after 2 rounds. Its checkpoints are kept.")).toBeInTheDocument();
    expect(within(article()).getByText("Cancelled")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Cancel…" })).toBeNull();
    expect(article()).toHaveTextContent("It was cancelled after 2 rounds. Its checkpoints are kept");
  });

  it("shows the engine's refusal to resume, and what to do next", async () => {
    const { handlers } = setup([interruptedJob()], {
      onresume: vi.fn(() =>
        Promise.reject({ code: "checkpoint_chain_broken", message: "round 2's checkpoint does not match its digest" }),
      ),
    });
    expect(article()).toHaveTextContent(
      "Lull restarted while it was running, so it was stopped rather than silently retrained. Resume checks every checkpoint",
    );
    await fireEvent.click(screen.getByRole("button", { name: "Resume" }));
    expect(handlers.onresume).toHaveBeenCalledWith("job-interrupted");
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("round 2's checkpoint does not match its digest");
    expect(alert).toHaveTextContent("Its saved rounds cannot be trusted, so this run cannot continue. Start a new run to train again.");
    expect(within(article()).getByText("Interrupted")).toBeInTheDocument();
  });

  it("resumes an interrupted run", async () => {
    const { handlers } = setup([interruptedJob()]);
    await fireEvent.click(screen.getByRole("button", { name: "Resume" }));
    expect(handlers.onresume).toHaveBeenCalledWith("job-interrupted");
    expect(await screen.findByText("Resumed: every checkpoint verified, and it continues after round 3.")).toBeInTheDocument();
    expect(within(article()).getByText("Running")).toBeInTheDocument();
  });

  it("promotes a completed run", async () => {
    const { handlers } = setup([job()]);
    expect(screen.getByText(/^Promote makes this head the one that ranks skills for your agent/)).toBeInTheDocument();
    await fireEvent.click(screen.getByRole("button", { name: "Promote" }));
    expect(handlers.onpromote).toHaveBeenCalledWith("job-done");
    expect(
      await screen.findByText("Promoted: the trained head now ranks skills for your agent. Lull kept the previous head."),
    ).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Promote" })).toBeNull();
    expect(screen.getByText("Promoted just now. Its head went live then.")).toBeInTheDocument();
  });

  it("starts a new run only from a valid form, with the policy in the engine's units", async () => {
    const { handlers } = setup([]);
    await fireEvent.click(screen.getByRole("button", { name: "New training run…" }));
    const rounds = screen.getByLabelText("Rounds, at most");
    expect(rounds).toHaveValue("10");
    await waitFor(() => expect(rounds).toHaveFocus());
    expect(screen.getByLabelText("Time budget")).toHaveValue("30");

    await fireEvent.input(rounds, { target: { value: "0" } });
    await fireEvent.input(screen.getByLabelText("Target accuracy (optional)"), { target: { value: "150" } });
    await fireEvent.input(screen.getByLabelText("Time budget"), { target: { value: "" } });
    await fireEvent.click(screen.getByRole("button", { name: "Start training" }));
    expect(handlers.onstart).not.toHaveBeenCalled();
    expect(rounds).toHaveAttribute("aria-invalid", "true");
    expect(rounds).toHaveAccessibleDescription(/Enter a whole number of rounds from 1 to 1000\.$/);
    expect(screen.getByLabelText("Target accuracy (optional)")).toHaveAccessibleDescription(
      /Enter a held-out accuracy above 0 and up to 100 %, or leave it empty for no target\.$/,
    );
    expect(screen.getByLabelText("Time budget")).toHaveAccessibleDescription(/Enter a budget from 1 to 1440 minutes\.$/);
    expect(screen.getByLabelText("Minimum improvement (optional)")).toHaveAttribute("aria-invalid", "false");

    await fireEvent.input(rounds, { target: { value: "20" } });
    await fireEvent.input(screen.getByLabelText("Target accuracy (optional)"), { target: { value: "90" } });
    await fireEvent.input(screen.getByLabelText("Minimum improvement (optional)"), { target: { value: "0.001" } });
    await fireEvent.input(screen.getByLabelText("Time budget"), { target: { value: "15" } });
    await fireEvent.click(screen.getByRole("button", { name: "Start training" }));
    expect(handlers.onstart).toHaveBeenCalledWith({ max_rounds: 20, target: 0.9, min_improvement: 0.001, wall_clock_s: 900 });

    expect(
      await screen.findByText(
        "Training run started: up to 20 rounds · target 90 % held-out accuracy · stops when the held-out loss improves by less than 0.001 a round · 15 min budget.",
      ),
    ).toBeInTheDocument();
    expect(screen.queryByLabelText("Rounds, at most")).toBeNull();
    expect(listItems()).toEqual(["Queued: waiting to start · up to 20 rounds · created just now"]);
  });

  it("leaves empty optional fields out, and shows the engine's refusal to start", async () => {
    const { handlers } = setup([], {
      onstart: vi.fn(() => Promise.reject({ code: "no_data", message: "no routing outcomes to train on yet" })),
    });
    await fireEvent.click(screen.getByRole("button", { name: "New training run…" }));
    await fireEvent.click(screen.getByRole("button", { name: "Start training" }));
    expect(handlers.onstart).toHaveBeenCalledWith({ max_rounds: 10, target: null, min_improvement: null, wall_clock_s: 1800 });
    expect(await screen.findByRole("alert")).toHaveTextContent("no routing outcomes to train on yet");
    expect(screen.getByLabelText("Rounds, at most")).toBeInTheDocument();

    await fireEvent.keyDown(screen.getByLabelText("Rounds, at most"), { key: "Escape" });
    expect(screen.queryByLabelText("Rounds, at most")).toBeNull();
    await waitFor(() => expect(screen.getByRole("button", { name: "New training run…" })).toHaveFocus());
  });
});

describe("Jobs, in the app", () => {
  async function openJobs() {
    const fake = fakeBackend();
    render(App, { backend: fake.backend });
    await waitFor(() => expect(fake.backend.subscribe).toHaveBeenCalled());
    await fireEvent.click(screen.getByRole("button", { name: "Jobs" }));
    await screen.findByRole("list", { name: "Training runs" });
    await waitFor(() => expect(fake.backend.getJob).toHaveBeenCalledWith("job-running"));
    // Let the settle read after opening pass.
    await new Promise((resolve) => setTimeout(resolve, 450));
    return fake;
  }

  it("moves a running run's bar with each progress event, without reading the list again", async () => {
    const { backend, listeners } = await openJobs();
    const listReads = vi.mocked(backend.listJobs).mock.calls.length;
    const statusReads = vi.mocked(backend.engineStatus).mock.calls.length;
    const bar = () => within(article()).getByRole("progressbar", { name: "Progress" });
    expect(bar()).toHaveAttribute("aria-valuenow", "23");

    listeners().onEngineEvent({ type: "job_progress", job_id: "job-running", round: 3, batch: 30, batches: 40, elapsed_ms: 40_000, remaining_ms: 20_000, metrics: null });
    await waitFor(() => expect(bar()).toHaveAttribute("aria-valuenow", "28"));
    expect(bar()).toHaveAttribute("aria-valuetext", "28 % · round 3 of 10 · 20 s left");
    expect(listItems()[0]).toMatch(/^Running: round 3 of 10 · 20 s left · created /);

    listeners().onEngineEvent({
      type: "job_progress",
      job_id: "job-running",
      round: 4,
      batch: 4,
      batches: 40,
      elapsed_ms: 50_000,
      remaining_ms: 9_000,
      metrics: null,
    });
    await waitFor(() => expect(bar()).toHaveAttribute("aria-valuenow", "31"));
    expect(screen.getByRole("article")).toHaveTextContent("round 4 of 10 · 9 s left");
    expect(vi.mocked(backend.listJobs).mock.calls.length).toBe(listReads);
    expect(vi.mocked(backend.engineStatus).mock.calls.length).toBe(statusReads);
  });

  it("reads the list again when a run changes", async () => {
    const { backend, listeners } = await openJobs();
    const listReads = vi.mocked(backend.listJobs).mock.calls.length;
    vi.mocked(backend.listJobs).mockResolvedValue(
      jobList().map((one) => (one.id === "job-running" ? runningJob({ status: "completed", progress: null, rounds_completed: 10, updated_at: NOW }) : one)),
    );
    listeners().onEngineEvent({ type: "job_changed", job_id: "job-running", status: "completed" });
    await waitFor(() => expect(vi.mocked(backend.listJobs).mock.calls.length).toBeGreaterThan(listReads));
    await waitFor(() => expect(listItems()).not.toContain("Running: round 3 of 10 · 42 s left · created 5 min ago"));
  });

  it("promotes through the backend and reads the runs again", async () => {
    const { backend } = await openJobs();
    await fireEvent.click(screen.getByRole("button", { name: /^Run of .*Completed/ }));
    const listReads = vi.mocked(backend.listJobs).mock.calls.length;
    await fireEvent.click(screen.getByRole("button", { name: "Promote" }));
    expect(backend.promoteJob).toHaveBeenCalledWith("job-done");
    await waitFor(() => expect(vi.mocked(backend.listJobs).mock.calls.length).toBeGreaterThan(listReads));
  });
});

describe("Jobs, by keyboard only", () => {
  it("opens the running run from the list and cancels it after asking; Escape keeps it running", async () => {
    const user = userEvent.setup();
    const { handlers } = setup(jobList());
    const items = within(screen.getByRole("list", { name: "Training runs" })).getAllByRole("button");
    await tabTo(user, items[0]!);
    const running = items.find((item) => item.textContent?.includes("Running"))!;
    while (document.activeElement !== running) await user.keyboard("{ArrowDown}");
    await user.keyboard("{Enter}");
    expect(within(article()).getByText("Running")).toBeInTheDocument();

    await tabTo(user, screen.getByRole("button", { name: "Cancel…" }));
    await user.keyboard("{Enter}");
    expect(screen.getByRole("button", { name: "Stop the run" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("group", { name: /Stop this run now/ })).toBeNull();
    expect(screen.getByRole("button", { name: "Cancel…" })).toHaveFocus();

    await user.keyboard("{Enter}{Enter}");
    expect(handlers.oncancel).toHaveBeenCalledWith("job-running");
    await waitFor(() => expect(screen.getByRole("heading", { level: 3, name: /^Run of / })).toHaveFocus());
  });

  it("starts a run from the form: the first field takes the focus, Enter starts it", async () => {
    const user = userEvent.setup();
    const { handlers } = setup([]);
    await tabTo(user, screen.getByRole("button", { name: "New training run…" }));
    await user.keyboard("{Enter}");
    const rounds = screen.getByLabelText("Rounds, at most");
    await waitFor(() => expect(rounds).toHaveFocus());
    await user.clear(rounds);
    await user.keyboard("4");
    await tabTo(user, screen.getByLabelText("Time budget"));
    await user.clear(screen.getByLabelText("Time budget"));
    await user.keyboard("15{Enter}");
    expect(handlers.onstart).toHaveBeenCalledWith({ max_rounds: 4, target: null, min_improvement: null, wall_clock_s: 900 });
    await waitFor(() => expect(screen.getByRole("heading", { level: 3, name: /^Run of / })).toHaveFocus());
  });

  it("promotes a finished run, and puts the focus back on Promote when the engine refuses", async () => {
    const user = userEvent.setup();
    const { handlers } = setup([job()], {
      onpromote: vi.fn(() => Promise.reject({ code: "conflict", message: "another head went live meanwhile" })),
    });
    await tabTo(user, screen.getByRole("button", { name: "Promote" }));
    await user.keyboard("{Enter}");
    expect(handlers.onpromote).toHaveBeenCalledWith("job-done");
    expect(await screen.findByRole("alert")).toHaveTextContent("another head went live meanwhile");
    expect(screen.getByRole("button", { name: "Promote" })).toHaveFocus();
  });
});
