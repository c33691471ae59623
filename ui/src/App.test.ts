import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import App from "./App.svelte";
import { SETTLE_MS } from "./lib/refresh";
import { busyStatus, fakeBackend } from "./test/fixtures";
import { tabTo } from "./test/keyboard";

describe("App", () => {
  it("navigates between the six views", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    const nav = screen.getByRole("navigation", { name: "Views" });
    await waitFor(() => expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveTextContent("Drafts 2"));
    const buttons = Array.from(nav.querySelectorAll("button")).map((button) => button.textContent?.trim());
    expect(buttons).toEqual(["Overview", "Reviews", "Drafts 2", "Jobs", "Routing", "Settings"]);
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Overview");

    await fireEvent.click(screen.getByRole("button", { name: /^Drafts/ }));
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Drafts");
    expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveAttribute("aria-current", "page");

    await fireEvent.click(screen.getByRole("button", { name: "Jobs" }));
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Jobs");
    expect(await screen.findByRole("list", { name: "Training runs" })).toBeInTheDocument();
  });

  it("re-reads the engine on an engine event, not on a timer", async () => {
    const { backend, listeners } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("3 reviews queued"));
    const reads = vi.mocked(backend.engineStatus).mock.calls.length;

    vi.mocked(backend.engineStatus).mockResolvedValue(
      busyStatus({ queue: { queued: 0, running: 1 }, learning: { state: "running", reason: "reviewing session agent-7" } }),
    );
    listeners().onEngineEvent({ type: "review_started", review_id: "r1", attempt: 1 });
    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("Learning: reviewing session agent-7."));
    expect(vi.mocked(backend.engineStatus).mock.calls.length).toBeGreaterThan(reads);
  });

  it("turns to the view the tray asks for", async () => {
    const { backend, listeners } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(backend.subscribe).toHaveBeenCalled());
    listeners().onNavigate("reviews");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Reviews"));
    expect(await screen.findByText("agent-7")).toBeInTheDocument();
  });

  it("opens Drafts when the tray asks for it", async () => {
    const { backend, listeners } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(backend.subscribe).toHaveBeenCalled());
    listeners().onNavigate("drafts");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Drafts"));
    expect(await screen.findByRole("heading", { level: 3, name: "git-rebase-safely" })).toBeInTheDocument();
  });

  it("re-reads the drafts on draft and candidate events only, and when Drafts opens", async () => {
    const { backend, listeners } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(backend.listDrafts).toHaveBeenCalled());
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 50));
    const reads = () => vi.mocked(backend.listDrafts).mock.calls.length;
    const before = reads();

    listeners().onEngineEvent({ type: "review_started", review_id: "r1", attempt: 1 });
    listeners().onEngineEvent({ type: "learning_activity", activity: { state: "running", reason: "reviewing session agent-7" } });
    await waitFor(() => expect(vi.mocked(backend.engineStatus).mock.calls.length).toBeGreaterThan(1));
    expect(reads()).toBe(before);

    listeners().onEngineEvent({ type: "draft_changed", draft_id: "d1", skill: "git-rebase-safely", status: "review_pending" });
    await waitFor(() => expect(reads()).toBeGreaterThan(before));
    const afterDraft = reads();
    listeners().onEngineEvent({ type: "candidate_changed", candidate_id: "c1", skill: "git-rebase-safely", status: "superseded", reason: "another draft covers it" });
    await waitFor(() => expect(reads()).toBeGreaterThan(afterDraft));
    const afterCandidate = reads();

    await fireEvent.click(screen.getByRole("button", { name: /^Drafts/ }));
    await waitFor(() => expect(reads()).toBeGreaterThan(afterCandidate));
  });

  it("approves a draft through the backend and reads the drafts again", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    await fireEvent.click(screen.getByRole("button", { name: /^Drafts/ }));
    await screen.findByRole("heading", { level: 3, name: "git-rebase-safely" });
    const reads = vi.mocked(backend.listDrafts).mock.calls.length;
    await fireEvent.click(screen.getByRole("button", { name: "Approve" }));
    expect(backend.approveDraft).toHaveBeenCalledWith("d-clean");
    await waitFor(() => expect(vi.mocked(backend.listDrafts).mock.calls.length).toBeGreaterThan(reads));
  });

  it("shows an engine that failed to start in the header and the Overview", async () => {
    const down = { code: "engine_unavailable", message: "another Lull engine (pid 42) already serves /d" };
    const { backend } = fakeBackend({ engineStatus: () => Promise.reject(down) });
    render(App, { backend });
    expect(await screen.findByText("Engine not running")).toBeInTheDocument();
    expect(screen.getByRole("status")).toHaveTextContent("another Lull engine (pid 42) already serves /d");
  });

  it("saves settings through the backend", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    await fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    await fireEvent.click(await screen.findByRole("checkbox", { name: /Pause learning/ }));
    expect(backend.updateSettings).toHaveBeenCalledWith({ paused: true });
  });
});

describe("App, training runs", () => {
  it("re-reads the runs on job events only, and when Jobs opens; a progress event reads nothing", async () => {
    const { backend, listeners } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(backend.listJobs).toHaveBeenCalled());
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 50));
    const reads = () => vi.mocked(backend.listJobs).mock.calls.length;
    const statusReads = () => vi.mocked(backend.engineStatus).mock.calls.length;
    const before = reads();

    listeners().onEngineEvent({ type: "review_started", review_id: "r1", attempt: 1 });
    listeners().onEngineEvent({ type: "draft_changed", draft_id: "d1", skill: "git-rebase-safely", status: "review_pending" });
    await waitFor(() => expect(statusReads()).toBeGreaterThan(1));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 50));
    expect(reads()).toBe(before);

    const statusBefore = statusReads();
    listeners().onEngineEvent({ type: "job_progress", job_id: "job-running", round: 3, batch: 11, batches: 40, elapsed_ms: 31_000, remaining_ms: 41_000, metrics: null });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 50));
    expect(reads()).toBe(before);
    expect(statusReads()).toBe(statusBefore);

    listeners().onEngineEvent({ type: "job_changed", job_id: "job-running", status: "completed" });
    await waitFor(() => expect(reads()).toBeGreaterThan(before));
    expect(statusReads()).toBeGreaterThan(statusBefore);
    const afterChange = reads();

    // A progress event for a run the list does not hold yet asks for the list.
    listeners().onEngineEvent({ type: "job_progress", job_id: "job-unknown", round: 1, batch: 1, batches: 40, elapsed_ms: 1_000, remaining_ms: null, metrics: null });
    await waitFor(() => expect(reads()).toBeGreaterThan(afterChange));
    const afterUnknown = reads();

    await fireEvent.click(screen.getByRole("button", { name: "Jobs" }));
    await waitFor(() => expect(reads()).toBeGreaterThan(afterUnknown));
  });

  it("starts a run through the backend, and shows it before the list is read again", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    await fireEvent.click(screen.getByRole("button", { name: "Jobs" }));
    await fireEvent.click(await screen.findByRole("button", { name: "New training run…" }));
    await fireEvent.click(screen.getByRole("button", { name: "Start training" }));
    expect(backend.startJob).toHaveBeenCalledWith({ max_rounds: 10, target: null, min_improvement: null, wall_clock_s: 1800 });
    expect(await screen.findByText(/^Training run started: up to 10 rounds · 30 min budget\.$/)).toBeInTheDocument();
  });
});

describe("App, changes with no engine event", () => {
  it("re-reads the engine when the person opens a view", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    await waitFor(() => expect(backend.engineStatus).toHaveBeenCalled());
    const reads = vi.mocked(backend.engineStatus).mock.calls.length;
    await fireEvent.click(screen.getByRole("button", { name: "Routing" }));
    expect(vi.mocked(backend.engineStatus).mock.calls.length).toBeGreaterThan(reads);
  });
});

describe("App, by keyboard only", () => {
  it("moves through the views with the arrow keys, and opens one with Enter", async () => {
    const user = userEvent.setup();
    const { backend } = fakeBackend();
    render(App, { backend });
    await user.tab();
    expect(screen.getByRole("button", { name: "Overview" })).toHaveFocus();
    await user.keyboard("{ArrowDown}{ArrowDown}{ArrowDown}");
    expect(screen.getByRole("button", { name: "Jobs" })).toHaveFocus();
    await user.keyboard("{ArrowUp}{Enter}");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Drafts"));
    expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveAttribute("aria-current", "page");
    expect(screen.getByRole("button", { name: "Overview" })).not.toHaveAttribute("aria-current");
    await user.keyboard("{End}");
    expect(screen.getByRole("button", { name: "Settings" })).toHaveFocus();
  });

  it("approves a draft: Tab to it, Enter, Tab to Approve, Enter", async () => {
    const user = userEvent.setup();
    const { backend } = fakeBackend();
    render(App, { backend });
    await user.tab();
    await user.keyboard("{ArrowDown}{ArrowDown}{Enter}");
    const item = await screen.findByRole("button", { name: /^git-rebase-safely/ });
    await tabTo(user, item);
    await user.keyboard("{Enter}");
    await tabTo(user, screen.getByRole("button", { name: "Approve" }));
    await user.keyboard("{Enter}");
    expect(backend.approveDraft).toHaveBeenCalledWith("d-clean");
    // Its buttons are gone: the focus is on the draft's title, where the answer shows.
    await waitFor(() => expect(screen.getByRole("heading", { level: 3, name: "git-rebase-safely" })).toHaveFocus());
  });

  it("reaches the Overview's and the Routing view's content, which scrolls with the keyboard", async () => {
    const user = userEvent.setup();
    const { backend } = fakeBackend();
    render(App, { backend });
    await screen.findByText("Live turns");
    const main = screen.getByRole("main");
    await tabTo(user, main);
    await tabTo(user, screen.getByRole("button", { name: "Routing" }), { backwards: true });
    await user.keyboard("{Enter}");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Routing"));
    await user.tab();
    await user.tab();
    expect(main).toHaveFocus();
  });
});
