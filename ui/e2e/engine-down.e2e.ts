// The window when the learning engine is not running: it says so and why, in a view that is
// painted and passes axe-core. Before the process split the window's own process hosts the
// engine, which refuses a data folder another engine (`lull serve`) holds; after it, the window
// finds no engine serving its data folder at all.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { engineAnswering } from "./support/engine";
import { e2e } from "./support/env";
import { axeFindings, look } from "./support/look";
import { openWindow, type Browser } from "./support/window";

let browser: Browser | undefined;
let serve: ChildProcess | undefined;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(e2e.work, "engine-down-"));
  if (!e2e.split) {
    serve = spawn(e2e.lullBin, ["serve", "--data-dir", dataDir], {
      // No managed server for this engine: it only holds the folder.
      env: { ...process.env, LULL_SERVER_STATE_FILE: join(dataDir, "no-server.json") },
      stdio: "ignore",
    });
    await engineAnswering(dataDir);
  }
  browser = await openWindow(dataDir);
});

afterAll(async () => {
  await browser?.deleteSession().catch(() => undefined);
  serve?.kill("SIGTERM");
});

it("says the learning engine is not running, and why", async () => {
  if (!browser) throw new Error("no window");
  const card = browser.$('main [role="status"]');
  const saysNotRunning = async () => (await card.getText()).includes("Lull's learning engine is not running.");
  await browser.waitUntil(saysNotRunning, { timeout: 30_000, timeoutMsg: "the window never said the engine is not running" });
  // And keeps saying it: an answer that arrives late must not turn it back to "starting".
  await browser.pause(1_000);
  expect(await saysNotRunning()).toBe(true);
  if (serve) expect(await card.getText()).toContain(`another Lull engine (pid ${serve.pid})`);
  await look(browser, "engine-not-running");
  expect(await saysNotRunning()).toBe(true);
});

it("passes axe-core: nothing serious or critical", (context) => {
  const found = axeFindings.get("engine-not-running");
  if (found === undefined) context.skip();
  expect(found).toEqual([]);
});
