import { describe, expect, it } from "vitest";
import {
  activitySentence,
  busySlots,
  count,
  describeStatus,
  engineSentence,
  serverSentence,
  waitingReason,
  type ModelReading,
  type Status,
} from "./status";
import { ON_AC, ROUTING } from "../test/fixtures";

const loaded = (id: string, busy_slots = 0): ModelReading => ({ id, status: "loaded", busy_slots });

/** A ready, idle server with one loaded model and nothing to do; tests change what they need. */
function status(patch: Partial<Status> = {}, server: Partial<Status["server"]> = {}): Status {
  return {
    version: "0.1.0",
    defer_mode: "auto",
    paused: false,
    reviews_enabled: true,
    queue: { queued: 0, running: 0 },
    drafts: { review_pending: 0, blocked: 0 },
    jobs: { running: 0 },
    learning: { state: "idle", reason: null },
    live_turns: 0,
    routing: ROUTING,
    power: ON_AC,
    ...patch,
    server: {
      state: "ready",
      base_url: "http://127.0.0.1:8080/v1",
      models: [loaded("qwen3-8b")],
      idle: true,
      reason: null,
      ...server,
    },
  };
}

describe("count", () => {
  it("uses the singular for one and the plural otherwise", () => {
    expect(count(0, "draft")).toBe("0 drafts");
    expect(count(1, "draft")).toBe("1 draft");
    expect(count(3, "busy slot")).toBe("3 busy slots");
  });
});

describe("engineSentence", () => {
  it.each([
    ["waiting: 1 live turn(s) in progress", "Waiting: 1 live turn in progress."],
    [
      "waiting: 3 slot(s) busy on the managed server (another client), then the settle window",
      "Waiting: 3 slots busy on the managed server (another client), then the settle window.",
    ],
    ["waiting for the managed server: no managed server: /x/server.json does not exist", "Waiting for the managed server: no managed server: /x/server.json does not exist."],
    ["already a sentence.", "Already a sentence."],
  ])("%s", (reason, expected) => {
    expect(engineSentence(reason)).toBe(expected);
  });
});

describe("waitingReason", () => {
  const queued = { queue: { queued: 2, running: 0 } };
  it.each([
    [status(queued, { state: "absent", base_url: null, models: [] }), "no managed server is running"],
    [status(queued, { state: "starting" }), "the managed server is still starting"],
    [status(queued, { state: "unreachable" }), "the managed server does not answer"],
    [status(queued, { models: [] }), "the managed server reports no models"],
    [
      status(queued, { models: [{ id: "big", status: "sleeping", busy_slots: 0 }] }),
      "no model is loaded, and Lull never loads one just to learn",
    ],
    [status(queued, { idle: false, models: [loaded("a", 2), loaded("b", 1)] }), "the managed server is busy (3 busy slots)"],
    [status({ ...queued, live_turns: 1 }), "your agent is answering (1 live turn)"],
    [status({ ...queued, paused: true }), "learning is paused"],
  ])("%#: %s", (input, expected) => {
    expect(waitingReason(input)).toBe(expected);
  });

  it("is null when the server is ready and idle", () => {
    expect(waitingReason(status(queued))).toBeNull();
  });

  it("does not wait for a busy server when deferral is off", () => {
    expect(waitingReason(status({ ...queued, defer_mode: "never" }, { idle: false }))).toBeNull();
  });
});

describe("activitySentence", () => {
  it("says the engine is idle when there is nothing to do", () => {
    expect(activitySentence(status())).toBe("Idle: nothing to learn right now.");
  });

  it("gives the engine's own reason for waiting", () => {
    const waiting = status({
      queue: { queued: 1, running: 0 },
      learning: { state: "waiting", reason: "waiting: 2 live turn(s) in progress" },
    });
    expect(activitySentence(waiting)).toBe("Waiting: 2 live turns in progress. 1 review queued; none will be lost.");
  });

  it("works out why queued reviews wait when the engine has not said yet", () => {
    const busy = status({ queue: { queued: 1, running: 0 } }, { idle: false, models: [loaded("qwen3-8b", 1)] });
    expect(activitySentence(busy)).toBe(
      "Waiting: the managed server is busy (1 busy slot). 1 review queued; none will be lost.",
    );
  });

  it("names what is running, in the engine's words when it gave some", () => {
    const running = status({ queue: { queued: 0, running: 1 }, learning: { state: "running", reason: "reviewing session agent-7" } });
    expect(activitySentence(running)).toBe("Learning: reviewing session agent-7.");
    const counted = status({ queue: { queued: 0, running: 1 }, jobs: { running: 2 } });
    expect(activitySentence(counted)).toBe("Learning: reviewing 1 conversation and running 2 training jobs.");
  });

  it("says what the machine holds and that it lifts by itself, not how to resume", () => {
    const held = "paused: on battery (34 %); learning resumes on AC or above 50 %";
    const power = { ...ON_AC, power: { source: "battery" as const, percent: 34 }, learning_held: held };
    expect(activitySentence(status({ power, queue: { queued: 2, running: 0 }, learning: { state: "paused", reason: held } }))).toBe(
      "Paused: on battery (34 %); learning resumes on AC or above 50 %. 2 reviews queued; none will be lost.",
    );
    const asleep = { ...ON_AC, sleeping: true, learning_held: "paused: the computer is going to sleep" };
    expect(activitySentence(status({ power: asleep, learning: { state: "paused", reason: "paused: the computer is going to sleep" } }))).toBe(
      "Paused: the computer is going to sleep.",
    );
    expect(describeStatus(status({ power }))).toEqual([
      "Idle: nothing to learn right now.",
      "Paused: on battery (34 %); learning resumes on AC or above 50 %.",
    ]);
    const training = { ...ON_AC, training_held: "paused: on battery (34 %); training resumes on AC (power.jobs_on_battery = false)" };
    expect(describeStatus(status({ power: training, jobs: { running: 1 } }))).toContain(
      "Training is paused: on battery (34 %); training resumes on AC (power.jobs_on_battery = false).",
    );
  });

  it("puts pause first", () => {
    expect(activitySentence(status({ paused: true, queue: { queued: 0, running: 1 } }))).toMatch(/^Paused:/);
    expect(activitySentence(status({ learning: { state: "paused", reason: "learning is paused" } }))).toMatch(/^Paused:/);
  });
});

describe("serverSentence", () => {
  it("lists the loaded models and busy slots", () => {
    const server = status({}, { models: [loaded("a", 1), { id: "b", status: "unloaded", busy_slots: 0 }] }).server;
    expect(busySlots(server)).toBe(1);
    expect(serverSentence(server)).toBe("The managed server at http://127.0.0.1:8080/v1 is ready: 1 model loaded (a), 1 slot busy.");
  });

  it("says what to check when the server does not answer", () => {
    expect(serverSentence(status({}, { state: "unreachable" }).server)).toMatch(/does not answer\. Check/);
  });
});

describe("describeStatus", () => {
  it("adds live turns, drafts, disabled reviews and deferral off after the activity", () => {
    const sentences = describeStatus(
      status({ drafts: { review_pending: 1, blocked: 1 }, reviews_enabled: false, defer_mode: "never", live_turns: 1 }),
    );
    expect(sentences).toEqual([
      "Idle: nothing to learn right now.",
      "Your agent reports 1 live turn: learning on the managed server yields to it.",
      "2 drafts waiting for your review in Drafts.",
      "Reviews are turned off: finished conversations are not reviewed. Turn them on in Settings.",
      "Deferral is off: learning runs at once, even while you use the managed server.",
    ]);
  });
});
