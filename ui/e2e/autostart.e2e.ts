// *Start at login* in Settings, clicked in the real window: it writes the desktop's autostart
// entry, which starts the tray process (`lull-desktop`, beside the window's binary) hidden, and
// a second click removes it. The harness's private home holds the entry (XDG_CONFIG_HOME).

import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually } from "./support/engine";
import { e2e } from "./support/env";
import { openWindow, showView, type Browser } from "./support/window";

let browser: Browser;

beforeAll(async () => {
  browser = await openWindow();
});

afterAll(async () => {
  await browser?.deleteSession().catch(() => undefined);
});

it("Start at login writes the entry that starts the tray hidden, and a second click removes it", async () => {
  const configHome = process.env.XDG_CONFIG_HOME;
  if (!configHome) throw new Error("XDG_CONFIG_HOME is not set: run through scripts/e2e/run.sh");
  const entry = join(configHome, "autostart", "lull.desktop");
  expect(existsSync(entry)).toBe(false);

  await showView(browser, "Settings");
  const box = browser.$("label*=Start at login").$("input[type=checkbox]");
  await box.waitForEnabled({ timeout: 10_000 });
  expect(await box.isSelected()).toBe(false);

  await box.click();
  await eventually("the autostart entry is written", () => existsSync(entry));
  const text = readFileSync(entry, "utf8");
  // The window names the tray beside its own executable, as the OS resolves it (no symlinks).
  const tray = join(realpathSync(dirname(e2e.application)), "lull-desktop");
  expect(text).toContain(`Exec="${tray}" --hidden`);
  expect(text).toContain("Type=Application");
  expect(statSync(entry).mode & 0o777).toBe(0o644);
  await eventually("the box shows it checked", async () => (await box.isSelected()) || undefined);

  await box.click();
  await eventually("the autostart entry is removed", () => !existsSync(entry));
  await eventually("the box shows it unchecked", async () => !(await box.isSelected()) || undefined);
});
