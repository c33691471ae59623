// What a view looks like once its data is shown: a screenshot that must not be blank, and
// axe-core run inside the real WebKit, which must find nothing serious or critical.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PNG } from "pngjs";
import { expect } from "vitest";
import { e2e } from "./env";
import type { Browser } from "./window";

/** A painted view has text, the mark and its colours; a blank or half-loaded one a handful. */
const MIN_COLOURS = 64;
/** axe-core impacts that fail a view (with colour contrast checked). */
const FAILING_IMPACTS = ["serious", "critical"];

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** How many distinct colours `png` holds, counted up to `limit`. */
export function distinctColours(png: Buffer, limit = Number.MAX_SAFE_INTEGER): number {
  const { data } = PNG.sync.read(png);
  const colours = new Set<number>();
  for (let offset = 0; offset < data.length && colours.size < limit; offset += 4) {
    colours.add(data.readUInt32BE(offset));
  }
  return colours.size;
}

/** One axe-core violation, as much of it as a person fixing the view needs. */
export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core on the page as it is now (injected once per page). */
export async function axeViolations(browser: Browser): Promise<Violation[]> {
  const injected = await browser.execute(() => "axe" in window);
  if (!injected) await browser.execute(axeSource);
  const answer = await browser.executeAsync((done: (result: string) => void) => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<AxeResults> } })
      .axe;
    type AxeResults = {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }[];
    };
    axe
      .run(document, { resultTypes: ["violations"] })
      .then((results) =>
        done(
          JSON.stringify(
            results.violations.map((violation) => ({
              id: violation.id,
              impact: violation.impact,
              help: violation.help,
              nodes: violation.nodes.map((node) => `${node.target.join(" ")}: ${node.failureSummary ?? ""}`),
            })),
          ),
        ),
      )
      .catch((error: unknown) => done(JSON.stringify({ error: String(error) })));
  });
  const parsed = JSON.parse(answer) as Violation[] | { error: string };
  if (!Array.isArray(parsed)) throw new Error(`axe-core failed: ${parsed.error}`);
  return parsed;
}

/** Saves `<shots>/<name>.png` of the page as it is now, and returns the picture. */
export async function shoot(browser: Browser, name: string): Promise<Buffer> {
  const png = Buffer.from(await browser.takeScreenshot(), "base64");
  mkdirSync(e2e.shots, { recursive: true });
  writeFileSync(join(e2e.shots, `${name}.png`), png);
  return png;
}

/** What axe-core found serious or critical on each view looked at, by shot name. */
export const axeFindings = new Map<string, string[]>();

/**
 * Shoots the view (`<shots>/<name>.png`), fails if the picture is blank, and runs axe-core:
 * serious and critical violations go to `axeFindings` (each view's accessibility test fails on
 * them, so a click test reports only its clicks); lesser ones are printed.
 */
export async function look(browser: Browser, name: string): Promise<void> {
  // Fonts and late layout settle in a frame or two after the data arrives.
  await browser.pause(300);
  const png = await shoot(browser, name);
  expect(distinctColours(png, MIN_COLOURS + 1), `${name}.png is blank`).toBeGreaterThan(MIN_COLOURS);

  const violations = await axeViolations(browser);
  const failing = violations.filter((violation) => FAILING_IMPACTS.includes(violation.impact ?? ""));
  for (const violation of violations.filter((violation) => !failing.includes(violation))) {
    console.warn(`axe (${name}): ${describe(violation)}`);
  }
  axeFindings.set(name, failing.map(describe));
}

function describe(violation: Violation): string {
  return `${violation.impact} ${violation.id}: ${violation.help} — ${violation.nodes.join("; ")}`;
}
