// The engine's status (`GET /v1/status`, DESIGN §4, plus the engine's extras) and the sentences
// the Overview shows for it. Everything here is pure: no I/O, no Svelte. The types are the
// engine's own, generated from its Rust types.

import type { ServerReading, Status } from "./generated/engine";

export type { DeferMode, ModelReading, ServerReading, Status } from "./generated/engine";

/** "1 review", "2 reviews". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Total busy slots over all models of the managed server. */
export function busySlots(server: ServerReading): number {
  return server.models.reduce((sum, model) => sum + model.busy_slots, 0);
}

/**
 * Why learning work bound for the managed server cannot start now, or null if it can, worked
 * out from the status alone. The Overview prefers the engine's own `learning.reason`; this
 * fills in when the engine has not said (yet).
 */
export function waitingReason(status: Status): string | null {
  const { server } = status;
  if (status.paused) return "learning is paused";
  if (status.live_turns > 0 && status.defer_mode === "auto") {
    return `your agent is answering (${count(status.live_turns, "live turn")})`;
  }
  switch (server.state) {
    case "absent":
      return "no managed server is running";
    case "invalid":
      return "the managed server's state file cannot be read";
    case "stale":
      return "the managed server's process has exited";
    case "starting":
      return "the managed server is still starting";
    case "unreachable":
      return "the managed server does not answer";
    case "ready":
      break;
  }
  if (server.models.length === 0) return "the managed server reports no models";
  if (!server.models.some((model) => model.status === "loaded")) {
    return "no model is loaded, and Lull never loads one just to learn";
  }
  if (status.defer_mode === "auto" && !server.idle) {
    const busy = busySlots(server);
    return busy > 0 ? `the managed server is busy (${count(busy, "busy slot")})` : "the managed server is busy";
  }
  return null;
}

/**
 * The engine's reason as a sentence: "waiting: 1 live turn(s) in progress" → "Waiting: 1 live
 * turn in progress." (plurals spelled out, first letter capital, one full stop).
 */
export function engineSentence(reason: string): string {
  const plurals = reason.replace(/(\d+) ([^()]*?)\(s\)/g, (_, n: string, phrase: string) =>
    Number(n) === 1 ? `${n} ${phrase}` : `${n} ${phrase}s`,
  );
  const trimmed = plurals.trim().replace(/\.+$/, "");
  return `${capitalize(trimmed)}.`;
}

/** What the engine is doing now, as one sentence: the Overview's headline. */
export function activitySentence(status: Status): string {
  const { queue, jobs, learning } = status;
  const queued = `${capitalize(count(queue.queued, "review"))} queued; none will be lost.`;
  const held = status.power.learning_held;
  if (!status.paused && learning.state === "paused" && held) {
    // The machine holds learning (its battery, its sleep): it lifts by itself.
    const sentence = engineSentence(learning.reason ?? held);
    return queue.queued > 0 ? `${sentence} ${queued}` : sentence;
  }
  if (status.paused || learning.state === "paused") {
    return "Paused: learning is on hold until you resume it in Settings or from the tray menu.";
  }
  if (learning.state === "running" && learning.reason) {
    return `Learning: ${learning.reason.replace(/\.+$/, "")}.`;
  }
  if (queue.running > 0 || jobs.running > 0) {
    const parts: string[] = [];
    if (queue.running > 0) parts.push(`reviewing ${count(queue.running, "conversation")}`);
    if (jobs.running > 0) parts.push(`running ${count(jobs.running, "training job")}`);
    return `Learning: ${parts.join(" and ")}.`;
  }
  if (queue.queued === 0) return "Idle: nothing to learn right now.";
  if (learning.state === "waiting" && learning.reason) {
    return `${engineSentence(learning.reason)} ${queued}`;
  }
  const reason = waitingReason(status);
  if (reason === null) return `Ready: ${count(queue.queued, "queued review")} will start in the next lull.`;
  return `Waiting: ${reason}. ${queued}`;
}

/** The managed server's state, as one sentence. */
export function serverSentence(server: ServerReading): string {
  const at = server.base_url ? ` at ${server.base_url}` : "";
  switch (server.state) {
    case "absent":
      return "No managed server: the supervisor's state file was not found. Learning bound for it waits until a server starts.";
    case "invalid":
      return "The supervisor's state file cannot be read (it may be half-written, or lack base_url).";
    case "stale":
      return "The supervisor's state file names a process that is no longer running.";
    case "starting":
      return `The managed server${at} is starting.`;
    case "unreachable":
      return `The managed server${at} does not answer. Check that it is running and that its API key is right.`;
    case "ready":
      break;
  }
  const loaded = server.models.filter((model) => model.status === "loaded");
  const busy = busySlots(server);
  const models = loaded.length > 0
    ? `${count(loaded.length, "model")} loaded (${loaded.map((model) => model.id).join(", ")})`
    : "no model loaded";
  const slots = busy > 0 ? `${count(busy, "slot")} busy` : "idle";
  return `The managed server${at} is ready: ${models}, ${slots}.`;
}

/** Every sentence the Overview's "now" card shows for a status, the most important first. */
export function describeStatus(status: Status): string[] {
  const sentences = [activitySentence(status)];
  const { learning_held, training_held } = status.power;
  if (learning_held && status.learning.state !== "paused" && !status.paused) {
    sentences.push(engineSentence(learning_held));
  }
  if (training_held && status.jobs.running > 0) {
    sentences.push(`Training is ${training_held.replace(/\.+$/, "")}.`);
  }
  const turns = status.live_turns;
  if (turns > 0) {
    sentences.push(`Your agent reports ${count(turns, "live turn")}: learning on the managed server yields to it.`);
  }
  const waiting = status.drafts.review_pending + status.drafts.blocked;
  if (waiting > 0) {
    const drafts = count(waiting, "draft");
    sentences.push(`${drafts} waiting for your review in Drafts.`);
  }
  if (!status.reviews_enabled) {
    sentences.push("Reviews are turned off: finished conversations are not reviewed. Turn them on in Settings.");
  }
  if (status.defer_mode === "never") {
    sentences.push("Deferral is off: learning runs at once, even while you use the managed server.");
  }
  return sentences;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
