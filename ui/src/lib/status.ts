// The engine's status (`GET /v1/status`, DESIGN §4) and the sentences the Overview shows for it.
// Everything here is pure: no I/O, no Svelte.

/** The managed llama-server's state (DESIGN §3). */
export type ServerState = "absent" | "invalid" | "stale" | "starting" | "ready" | "unreachable";

/** A model's state on a router-mode server (`/models` → `data[].status.value`). */
export type ModelStatus = "loaded" | "loading" | "unloaded" | "sleeping" | "downloading";

/** `auto`: learning bound for the managed server waits for a lull. `never`: it runs at once. */
export type DeferMode = "auto" | "never";

/** One model the managed server reports. */
export interface ModelInfo {
  id: string;
  status: ModelStatus;
  busy_slots: number;
}

/** The managed server as the engine sees it. */
export interface ServerStatus {
  state: ServerState;
  /** The server's OpenAI-compatible base URL (ends in `/v1`); null when unknown. */
  base_url: string | null;
  models: ModelInfo[];
  /** True when no slot of any loaded model is processing. */
  idle: boolean;
}

/** The body of `GET /v1/status`. */
export interface Status {
  defer_mode: DeferMode;
  paused: boolean;
  server: ServerStatus;
  queue: { queued: number; running: number };
  drafts: { review_pending: number };
  jobs: { running: number };
  /** Extras the engine sends beyond the v1 contract; absent from older engines. */
  version?: string;
  reviews_enabled?: boolean;
}

/** "1 review", "2 reviews". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Total busy slots over all models of the managed server. */
export function busySlots(server: ServerStatus): number {
  return server.models.reduce((sum, model) => sum + model.busy_slots, 0);
}

/** Why learning work bound for the managed server cannot start now, or null if it can. */
export function waitingReason(status: Status): string | null {
  const { server } = status;
  if (status.paused) return "learning is paused";
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

/** What the engine is doing now, as one sentence. */
export function activitySentence(status: Status): string {
  if (status.paused) {
    return "Paused: learning is on hold until you resume it from the tray menu.";
  }
  const { queue, jobs } = status;
  if (queue.running > 0 || jobs.running > 0) {
    const parts: string[] = [];
    if (queue.running > 0) parts.push(`reviewing ${count(queue.running, "conversation")}`);
    if (jobs.running > 0) parts.push(`running ${count(jobs.running, "training job")}`);
    return `Learning: ${parts.join(" and ")}.`;
  }
  if (queue.queued === 0) return "Idle: nothing to learn right now.";
  const reason = waitingReason(status);
  if (reason === null) return `Ready: ${count(queue.queued, "queued review")} will start in the next lull.`;
  return `Waiting: ${reason}. ${capitalize(count(queue.queued, "review"))} queued; none will be lost.`;
}

/** The managed server's state, as one sentence. */
export function serverSentence(server: ServerStatus): string {
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

/** Every sentence the Overview shows for a status, the most important first. */
export function describeStatus(status: Status): string[] {
  const sentences = [activitySentence(status), serverSentence(status.server)];
  if (status.drafts.review_pending > 0) {
    const drafts = count(status.drafts.review_pending, "draft");
    sentences.push(`${drafts} waiting for your review in Drafts.`);
  }
  if (status.reviews_enabled === false) {
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
