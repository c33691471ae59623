// Reviews as the engine lists them (`GET /v1/reviews`) and how the Reviews view words them.
// Pure: no I/O, no Svelte.

import type { Review, ReviewStatus } from "./generated/engine";
import { count } from "./status";

export type { Review, ReviewStatus } from "./generated/engine";

/** The filters of the Reviews view, in order; `all` first. */
export const REVIEW_FILTERS = ["all", "queued", "running", "done", "failed", "dropped"] as const;
export type ReviewFilter = (typeof REVIEW_FILTERS)[number];

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How long ago `then` was, short: "just now", "42 s", "7 min", "2 h 5 min", "3 days". */
export function formatAge(then: number, now: number): string {
  const age = Math.max(0, now - then);
  if (age < 5 * SECOND) return "just now";
  if (age < MINUTE) return `${Math.floor(age / SECOND)} s`;
  if (age < HOUR) return `${Math.floor(age / MINUTE)} min`;
  if (age < DAY) {
    const minutes = Math.floor((age % HOUR) / MINUTE);
    return minutes > 0 ? `${Math.floor(age / HOUR)} h ${minutes} min` : `${Math.floor(age / HOUR)} h`;
  }
  return count(Math.floor(age / DAY), "day");
}

/** A person's word for a status. */
export function statusLabel(status: ReviewStatus): string {
  switch (status) {
    case "queued":
      return "Queued";
    case "running":
      return "Running";
    case "done":
      return "Done";
    case "failed":
      return "Failed";
    case "dropped":
      return "Dropped";
    case "superseded":
      return "Replaced by a newer snapshot";
  }
}

/** Only a queued review can be run now or dropped (the engine refuses the others). */
export function isActionable(review: Review): boolean {
  return review.status === "queued";
}

/** The reviews a filter shows; `superseded` ones only under `all`. */
export function filterReviews(reviews: readonly Review[], filter: ReviewFilter): Review[] {
  return filter === "all" ? [...reviews] : reviews.filter((review) => review.status === filter);
}

/** How many reviews each filter shows. */
export function countByFilter(reviews: readonly Review[]): Record<ReviewFilter, number> {
  const counts = Object.fromEntries(REVIEW_FILTERS.map((filter) => [filter, 0])) as Record<ReviewFilter, number>;
  counts.all = reviews.length;
  for (const review of reviews) {
    if (review.status in counts) counts[review.status as ReviewFilter] += 1;
  }
  return counts;
}

/** The note under a review's attempts: how many of its runs failed ("2 failed"), or null. */
export function failuresNote(review: Review): string | null {
  return review.failures > 0 ? `${review.failures} failed` : null;
}
