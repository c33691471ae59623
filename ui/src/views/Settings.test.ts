import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { SettingsPatch } from "../lib/settings";
import { SETTINGS } from "../test/fixtures";
import Settings from "./Settings.svelte";

describe("Settings", () => {
  it("shows the settings in force", () => {
    render(Settings, { settings: { ...SETTINGS, paused: true }, onchange: vi.fn() });
    expect(screen.getByRole("radio", { name: /In the lulls/ })).toBeChecked();
    expect(screen.getByRole("checkbox", { name: /Pause learning/ })).toBeChecked();
    expect(screen.getByRole("checkbox", { name: /Review finished conversations/ })).toBeChecked();
    expect(screen.getByRole("checkbox", { name: /managed server starts or stops/ })).not.toBeChecked();
  });

  it("saves each change through the engine", async () => {
    const onchange = vi.fn(async (patch: SettingsPatch) => ({ ...SETTINGS, ...patch }));
    render(Settings, { settings: SETTINGS, onchange });
    await fireEvent.click(screen.getByRole("radio", { name: /At once/ }));
    expect(onchange).toHaveBeenLastCalledWith({ defer_mode: "never" });
    await fireEvent.click(screen.getByRole("checkbox", { name: /Pause learning/ }));
    expect(onchange).toHaveBeenLastCalledWith({ paused: true });
    expect(await screen.findByText("Saved.")).toBeInTheDocument();
    await fireEvent.click(screen.getByRole("checkbox", { name: /managed server starts or stops/ }));
    expect(onchange).toHaveBeenLastCalledWith({ notify_server_changes: true });
  });

  it("puts a refused change back and says why", async () => {
    const onchange = vi.fn(() => Promise.reject({ code: "shutting_down", message: "Lull is quitting" }));
    render(Settings, { settings: SETTINGS, onchange });
    await fireEvent.click(screen.getByRole("checkbox", { name: /Pause learning/ }));
    expect(await screen.findByText("Not saved: Lull is quitting")).toBeInTheDocument();
    expect(screen.getByRole("checkbox", { name: /Pause learning/ })).not.toBeChecked();
  });
});
