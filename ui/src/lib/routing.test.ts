import { describe, expect, it } from "vitest";
import { formatRate, headSentence, rewardCurve, rewardSentence, type RoutingStatus } from "./routing";

function routing(patch: Partial<RoutingStatus> = {}): RoutingStatus {
  return {
    embedder: { name: "hashed-ngrams-v1", kind: "hashed", dim: 256, fallback_reason: null },
    dim: 256,
    skills: 3,
    skills_dir: "/home/me/.local/share/lull/skills",
    skipped_skills: [],
    updates: 0,
    warmed_up: false,
    warmup_updates: 50,
    persisted_updates: 0,
    save_problem: null,
    head_origin: "fresh head: no saved head for 256-dimensional embeddings",
    head_source: "online",
    baseline: 0,
    recent_rewards: [],
    recent_success_rate: null,
    saved_heads: [],
    cached_routes: 0,
    ...patch,
  };
}

describe("headSentence", () => {
  it("counts down the warm-up, then says the head is blended in", () => {
    expect(headSentence(routing({ updates: 12 }))).toBe(
      "Warming up: 12 of 50 outcomes so far. Rankings use similarity alone until 38 more outcomes arrive.",
    );
    expect(headSentence(routing({ updates: 49 }))).toMatch(/until 1 more outcome arrives\.$/);
    expect(headSentence(routing({ updates: 80, warmed_up: true }))).toBe(
      "Learning: the head has learned from 80 outcomes, and its score is blended into every ranking.",
    );
  });
});

describe("rewardSentence and formatRate", () => {
  it("says how recent routes did, or how to report them", () => {
    expect(rewardSentence(routing())).toMatch(/^No outcomes yet/);
    expect(rewardSentence(routing({ recent_rewards: [1, -1, 1, 1], recent_success_rate: 0.75 }))).toBe(
      "75 % of the last 4 routed skills succeeded.",
    );
    expect(formatRate(null)).toBe("—");
    expect(formatRate(0.625)).toBe("63 %");
  });
});

describe("rewardCurve", () => {
  it("plots the running success share, 100 % at the top", () => {
    expect(rewardCurve([1], 100, 40)).toBe("");
    expect(rewardCurve([1, -1, 1], 100, 40, 2)).toBe("0,0 50,20 100,20");
    expect(rewardCurve([-1, -1], 10, 40)).toBe("0,40 10,40");
  });
});
