import { render, screen, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import { busyStatus } from "../test/fixtures";
import Overview from "./Overview.svelte";

describe("Overview", () => {
  it("says the engine is starting when there is no status yet", () => {
    render(Overview, { status: null });
    expect(screen.getByRole("status")).toHaveTextContent("The engine is starting…");
  });

  it("shows what learning does and why it waits, live turns, and the server's models with busy slots", () => {
    render(Overview, { status: busyStatus() });
    const now = screen.getByRole("status");
    expect(now).toHaveTextContent("Waiting: 1 slot busy on the managed server (another client), then the settle window. 3 reviews queued; none will be lost.");
    expect(now).toHaveTextContent("Your agent reports 1 live turn");
    expect(screen.getByText("Live turns").nextElementSibling).toHaveTextContent("1");
    const server = screen.getByRole("region", { name: "Managed server" });
    expect(within(server).getByText("ready")).toBeInTheDocument();
    expect(within(server).getByText("1 busy slot")).toBeInTheDocument();
    const row = within(server).getByRole("row", { name: /qwen3-8b/ });
    expect(within(row).getAllByRole("cell").map((cell) => cell.textContent)).toEqual(["qwen3-8b", "loaded", "1"]);
  });

  it("says the battery holds learning, as a pause that lifts on AC", () => {
    const held = "paused: on battery (34 %); learning resumes on AC or above 50 %";
    render(Overview, {
      status: busyStatus({
        learning: { state: "paused", reason: held },
        power: { power: { source: "battery", percent: 34 }, sleeping: false, learning_held: held, training_held: null },
      }),
    });
    const now = screen.getByRole("status");
    expect(now).toHaveTextContent("Paused: on battery (34 %); learning resumes on AC or above 50 %. 3 reviews queued; none will be lost.");
    expect(now).not.toHaveTextContent("resume it in Settings");
  });

  it("says why the server is not ready, in the engine's words", () => {
    const absent = busyStatus({
      server: { state: "absent", base_url: null, models: [], idle: false, reason: "no managed server: /h/server.json does not exist" },
    });
    render(Overview, { status: absent });
    expect(screen.getByText("No managed server: /h/server.json does not exist.")).toBeInTheDocument();
    expect(screen.queryByRole("table")).toBeNull();
  });

  it("shows why the engine is not running instead of a status", () => {
    render(Overview, {
      status: null,
      error: { code: "engine_unavailable", message: "Lull's local API stopped: cannot listen on 127.0.0.1:7707" },
    });
    const card = screen.getByRole("status");
    expect(card).toHaveTextContent("Lull's learning engine is not running.");
    expect(card).toHaveTextContent("cannot listen on 127.0.0.1:7707");
  });
});
