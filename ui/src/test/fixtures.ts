// Shared test data: a busy status, a few reviews, settings, and a fake backend.
import { vi } from "vitest";
import type { Backend, BackendListeners } from "../lib/backend";
import type { Review } from "../lib/reviews";
import type { Settings } from "../lib/settings";
import type { Status } from "../lib/status";

export const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);

export function busyStatus(patch: Partial<Status> = {}): Status {
  return {
    defer_mode: "auto",
    paused: false,
    reviews_enabled: true,
    version: "0.1.0",
    server: {
      state: "ready",
      base_url: "http://127.0.0.1:8080/v1",
      models: [{ id: "qwen3-8b", status: "loaded", busy_slots: 1 }],
      idle: false,
      reason: "the server is processing: qwen3-8b (1 busy)",
    },
    learning: { state: "waiting", reason: "waiting: 1 slot(s) busy on the managed server (another client), then the settle window" },
    live_turns: 1,
    queue: { queued: 3, running: 0 },
    drafts: { review_pending: 2 },
    jobs: { running: 0 },
    ...patch,
  };
}

export function reviewList(): Review[] {
  return [
    {
      id: "r-queued",
      session_key: "agent-7",
      status: "queued",
      enqueued_at: NOW - 4 * 60_000,
      attempts: 1,
      failures: 0,
      last_error: "preempted: a live turn started",
    },
    {
      id: "r-failed",
      session_key: "agent-3",
      status: "failed",
      enqueued_at: NOW - 2 * 3_600_000,
      attempts: 3,
      failures: 3,
      last_error: "the model's answer is not the expected JSON",
    },
    { id: "r-done", session_key: "agent-1", status: "done", enqueued_at: NOW - 30_000, attempts: 1, failures: 0, last_error: null },
  ];
}

export const SETTINGS: Settings = {
  defer_mode: "auto",
  paused: false,
  reviews_enabled: true,
  notify_server_changes: false,
};

/** A backend with canned answers; `emit` plays the app's events. */
export function fakeBackend(overrides: Partial<Backend> = {}) {
  let listeners: BackendListeners | null = null;
  const backend: Backend = {
    appVersion: vi.fn(async () => "0.1.0"),
    engineStatus: vi.fn(async () => busyStatus()),
    listReviews: vi.fn(async () => reviewList()),
    runReviewNow: vi.fn(async () => {}),
    dropReview: vi.fn(async () => {}),
    getSettings: vi.fn(async () => SETTINGS),
    updateSettings: vi.fn(async (patch) => ({ ...SETTINGS, ...patch })),
    subscribe: vi.fn(async (next: BackendListeners) => {
      listeners = next;
      return () => (listeners = null);
    }),
    ...overrides,
  };
  return {
    backend,
    listeners: () => {
      if (!listeners) throw new Error("the app did not subscribe");
      return listeners;
    },
  };
}
