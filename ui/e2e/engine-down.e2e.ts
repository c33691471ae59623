// The window when the learning engine is not running: it says so and why, in a view that is
// painted and passes axe-core: the window finds no engine serving its data folder.

import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { e2e } from "./support/env";
import { axeFindings, look } from "./support/look";
import { openWindow, type Browser } from "./support/window";

let browser: Browser | undefined;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(e2e.work, "engine-down-"));
  browser = await openWindow(dataDir);
});

afterAll(async () => {
  await browser?.deleteSession().catch(() => undefined);
});

it("says the learning engine is not running, and why", async () => {
  if (!browser) throw new Error("no window");
  const card = browser.$('main [role="status"]');
  const saysNotRunning = async () => (await card.getText()).includes("Lull's learning engine is not running.");
  await browser.waitUntil(saysNotRunning, { timeout: 30_000, timeoutMsg: "the window never said the engine is not running" });
  // And keeps saying it: an answer that arrives late must not turn it back to "starting".
  await browser.pause(1_000);
  expect(await saysNotRunning()).toBe(true);
  await look(browser, "engine-not-running");
  expect(await saysNotRunning()).toBe(true);
});

it("passes axe-core: nothing serious or critical", (context) => {
  const found = axeFindings.get("engine-not-running");
  if (found === undefined) context.skip();
  expect(found).toEqual([]);
});
