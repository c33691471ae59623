import { describe, expect, it } from "vitest";
import { NOW, review as queuedReview } from "../test/fixtures";
import { countByFilter, failuresNote, filterReviews, formatAge, isActionable, statusLabel, type Review } from "./reviews";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function review(patch: Partial<Review> = {}): Review {
  return queuedReview({ id: "r1", enqueued_at: NOW - 5 * MINUTE, ...patch });
}

describe("formatAge", () => {
  it.each([
    [0, "just now"],
    [4 * SECOND, "just now"],
    [42 * SECOND, "42 s"],
    [7 * MINUTE + 30 * SECOND, "7 min"],
    [2 * HOUR, "2 h"],
    [2 * HOUR + 5 * MINUTE, "2 h 5 min"],
    [26 * HOUR, "1 day"],
    [80 * HOUR, "3 days"],
  ])("%i ms → %s", (age, expected) => {
    expect(formatAge(NOW - age, NOW)).toBe(expected);
  });

  it("reads a time in the future (a skewed clock) as just now", () => {
    expect(formatAge(NOW + MINUTE, NOW)).toBe("just now");
  });
});

describe("reviews", () => {
  const list = [
    review({ id: "a", status: "queued" }),
    review({ id: "b", status: "running", attempts: 1 }),
    review({ id: "c", status: "failed", attempts: 3, failures: 3, last_error: "boom" }),
    review({ id: "d", status: "superseded" }),
  ];

  it("filters by status, superseded ones only under all", () => {
    expect(filterReviews(list, "all").map((r) => r.id)).toEqual(["a", "b", "c", "d"]);
    expect(filterReviews(list, "failed").map((r) => r.id)).toEqual(["c"]);
    expect(countByFilter(list)).toEqual({ all: 4, queued: 1, running: 1, done: 0, failed: 1, dropped: 0 });
  });

  it("offers run now and drop for queued reviews only", () => {
    expect(list.map(isActionable)).toEqual([true, false, false, false]);
  });

  it("words statuses and attempts", () => {
    expect(statusLabel("superseded")).toBe("Replaced by a newer snapshot");
    expect(failuresNote(review({ attempts: 1 }))).toBeNull();
    expect(failuresNote(review({ attempts: 3, failures: 2 }))).toBe("2 failed");
  });
});
