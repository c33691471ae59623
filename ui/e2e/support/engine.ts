// The engine as the tests check it: its local API (bearer token from the data folder, as any
// client), its skills folder on disk, and the stand-in llama-server's busy slot.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { e2e } from "./env";

/** Where a running engine answers: `<data_dir>/api.json` and `<data_dir>/api-token`. */
export interface ApiAddress {
  baseUrl: string;
  token: string;
  pid: number;
}

export function apiAddress(dataDir = e2e.dataDir): ApiAddress {
  const record = JSON.parse(readFileSync(join(dataDir, "api.json"), "utf8")) as { base_url: string; pid: number };
  const token = readFileSync(join(dataDir, "api-token"), "utf8").trim();
  return { baseUrl: record.base_url, token, pid: record.pid };
}

/** One call of the local API; a refusal throws with the engine's error body. */
export async function api<T>(method: string, path: string, body?: unknown, dataDir = e2e.dataDir): Promise<T> {
  const { baseUrl, token } = apiAddress(dataDir);
  const response = await fetch(baseUrl + path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Polls `probe` until it returns something other than `undefined`/`false` and returns that;
 * throws past `timeoutMs`, naming `what` and the last error the probe threw.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      lastError = null;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs / 1000} s: ${what}${lastError ? ` (last: ${String(lastError)})` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Whether a process lives (signal 0 only asks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until the engine of `dataDir` serves its API: api.json written by a live process, health ok. */
export async function engineAnswering(dataDir = e2e.dataDir): Promise<ApiAddress> {
  return eventually(
    `the engine's API answers (${dataDir}/api.json)`,
    async () => {
      if (!existsSync(join(dataDir, "api.json"))) return undefined;
      const address = apiAddress(dataDir);
      if (!alive(address.pid)) return undefined;
      const health = await fetch(address.baseUrl + "/v1/health");
      return health.ok ? address : undefined;
    },
    60_000,
  );
}

/** The person's prompt on the managed server: the stand-in's slot 0 busy, or idle again. */
export function personTyping(busy: boolean): void {
  process.kill(e2e.standInPid, busy ? "SIGUSR1" : "SIGUSR2");
}

/** A sha256 over every file under `dir` (relative paths and contents, in order): "untouched" means equal. */
export function folderDigest(dir: string): string {
  const hash = createHash("sha256");
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      hash.update(relative(dir, path) + "\0");
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(readFileSync(path));
    }
  };
  if (existsSync(dir)) walk(dir);
  return hash.digest("hex");
}
