// The routing head's status (`status.routing`, DESIGN §2.3) and how the Routing view words and
// draws it. Pure: no I/O, no Svelte.

import type { RoutingStatus } from "./generated/engine";
import { count } from "./status";

export type { RoutingStatus } from "./generated/engine";

/** Where the learned head stands, as one sentence. */
export function headSentence(routing: RoutingStatus): string {
  if (routing.warmed_up) {
    return `Learning: the head has learned from ${count(routing.updates, "outcome")}, and its score is blended into every ranking.`;
  }
  const left = Math.max(0, routing.warmup_updates - routing.updates);
  return `Warming up: ${routing.updates} of ${routing.warmup_updates} outcomes so far. Rankings use similarity alone until ${count(left, "more outcome")} ${left === 1 ? "arrives" : "arrive"}.`;
}

/** The recent outcomes, as one sentence. */
export function rewardSentence(routing: RoutingStatus): string {
  const n = routing.recent_rewards.length;
  if (n === 0 || routing.recent_success_rate === null) {
    return "No outcomes yet: your agent reports how a routed skill did with POST /v1/outcomes.";
  }
  const percent = Math.round(routing.recent_success_rate * 100);
  return `${percent} % of the last ${count(n, "routed skill")} succeeded.`;
}

/** "62 %", or "—" when there is nothing to measure. */
export function formatRate(rate: number | null): string {
  return rate === null ? "—" : `${Math.round(rate * 100)} %`;
}

/**
 * The reward curve: the running success share over a sliding window of the last `window`
 * outcomes, as SVG polyline points in a `width`×`height` box (0 % at the bottom, 100 % at the
 * top). Empty for fewer than two outcomes.
 */
export function rewardCurve(rewards: readonly number[], width: number, height: number, window = 10): string {
  if (rewards.length < 2) return "";
  const shares = rewards.map((_, index) => {
    const slice = rewards.slice(Math.max(0, index + 1 - window), index + 1);
    return slice.filter((reward) => reward > 0).length / slice.length;
  });
  const step = width / (shares.length - 1);
  return shares
    .map((share, index) => `${round(index * step)},${round(height - share * height)}`)
    .join(" ");
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
