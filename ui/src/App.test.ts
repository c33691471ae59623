import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import App from "./App.svelte";
import type { Status } from "./lib/status";
import Overview from "./views/Overview.svelte";

const busy: Status = {
  defer_mode: "auto",
  paused: false,
  server: {
    state: "ready",
    base_url: "http://127.0.0.1:8080/v1",
    models: [{ id: "qwen3-8b", status: "loaded", busy_slots: 1 }],
    idle: false,
  },
  queue: { queued: 3, running: 0 },
  drafts: { review_pending: 2 },
  jobs: { running: 0 },
};

describe("Overview", () => {
  it("says the engine is starting when there is no status yet", () => {
    render(Overview, { status: null });
    expect(screen.getByRole("status")).toHaveTextContent("The engine is starting…");
  });

  it("shows why learning waits and the server's models", () => {
    render(Overview, { status: busy });
    expect(screen.getByRole("status")).toHaveTextContent("Waiting: the managed server is busy (1 busy slot).");
    expect(screen.getByRole("cell", { name: "qwen3-8b" })).toBeInTheDocument();
  });
});

describe("App", () => {
  it("navigates between the six views", async () => {
    render(App, { status: busy });
    const nav = screen.getByRole("navigation", { name: "Views" });
    const buttons = Array.from(nav.querySelectorAll("button")).map((button) => button.textContent?.trim());
    expect(buttons).toEqual(["Overview", "Reviews", "Drafts 2", "Jobs", "Routing", "Settings"]);
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Overview");

    await fireEvent.click(screen.getByRole("button", { name: /^Drafts/ }));
    expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent("Drafts");
    expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveAttribute("aria-current", "page");
  });
});
