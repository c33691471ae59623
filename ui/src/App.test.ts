import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import App from "./App.svelte";
import { busyStatus, fakeBackend } from "./test/fixtures";

describe("App", () => {
  it("navigates between the six views; those the engine cannot fill yet say so", async () => {
    const { backend } = fakeBackend();
    render(App, { backend });
    const nav = screen.getByRole("navigation", { name: "Views" });
    await waitFor(() => expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveTextContent("Drafts 2"));
    const buttons = Array.from(nav.querySelectorAll("button")).map((button) => button.textContent?.trim());
    expect(buttons).toEqual(["Overview", "Reviews", "Drafts 2", "Jobs", "Routing", "Settings"]);
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Overview");

    await fireEvent.click(screen.getByRole("button", { name: /^Drafts/ }));
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Drafts");
    expect(screen.getByRole("status")).toHaveTextContent(/^Nothing here yet/);
    expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveAttribute("aria-current", "page");
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
