import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import type { SettingsPatch } from "../lib/settings";
import { SETTINGS } from "../test/fixtures";
import { tabTo } from "../test/keyboard";
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

describe("Settings, by keyboard only", () => {
  it("chooses with the arrow keys and switches with Space, the focus staying on the box changed", async () => {
    const user = userEvent.setup();
    const onchange = vi.fn(async (patch: SettingsPatch) => ({ ...SETTINGS, ...patch }));
    render(Settings, { settings: SETTINGS, onchange });
    await tabTo(user, screen.getByRole("radio", { name: /In the lulls/ }));
    await user.keyboard("{ArrowDown}");
    expect(onchange).toHaveBeenLastCalledWith({ defer_mode: "never" });
    await screen.findByText("Saved.");
    expect(screen.getByRole("radio", { name: /At once/ })).toHaveFocus();

    await tabTo(user, screen.getByRole("checkbox", { name: /Pause learning/ }));
    await user.keyboard(" ");
    expect(onchange).toHaveBeenLastCalledWith({ paused: true });
    await waitFor(() => expect(screen.getByRole("checkbox", { name: /Pause learning/ })).toHaveFocus());
  });

  it("keeps the focus on a refused box, though the boxes are drawn again", async () => {
    const user = userEvent.setup();
    const onchange = vi.fn(() => Promise.reject({ code: "shutting_down", message: "Lull is quitting" }));
    render(Settings, { settings: SETTINGS, onchange });
    const pause = screen.getByRole("checkbox", { name: /Pause learning/ });
    await tabTo(user, pause);
    await user.keyboard(" ");
    expect(await screen.findByText("Not saved: Lull is quitting")).toBeInTheDocument();
    const redrawn = screen.getByRole("checkbox", { name: /Pause learning/ });
    expect(redrawn).not.toBe(pause);
    expect(redrawn).not.toBeChecked();
    expect(redrawn).toHaveFocus();
  });
});
