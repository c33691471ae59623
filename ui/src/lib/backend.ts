// The only way the UI reaches outside itself: Tauri commands to the app that hosts the engine,
// and the events it forwards. Views never call this directly; `App.svelte` does, through the
// `Backend` interface, so tests pass a fake one.
import { invoke, isTauri } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { Draft } from "./drafts";
import { ENGINE_UNAVAILABLE, toCommandError } from "./errors";
import type { DraftStatus, EngineEvent as StreamedEvent, ReviewStatus } from "./generated/engine";
import type { Job, StoppingPolicy } from "./jobs";
import type { Review } from "./reviews";
import type { Settings, SettingsPatch } from "./settings";
import type { Status } from "./status";

/**
 * One engine event as the app forwards it from `GET /v1/events` (`{"type":"review_queued",…}`),
 * or `{"type":"lagged"}` when the app fell behind and missed some: anything may have changed.
 */
export type EngineEvent = StreamedEvent | { type: "lagged" };

/** Whether the app's engine runs (`engine-host` event). */
export type HostState =
  | { state: "starting" }
  | { state: "running" }
  | { state: "stopping" }
  | { state: "failed"; message: string };

/** What the window hears from the app. */
export interface BackendListeners {
  /** Something changed in the engine: re-read what is shown. */
  onEngineEvent(event: EngineEvent): void;
  /** The engine started, failed or is stopping. */
  onHostChange(state: HostState): void;
  /** The tray asks for a view ("drafts", "reviews"). */
  onNavigate(view: string): void;
}

/** Every operation the window uses. Each command rejects with a `CommandError`. */
export interface Backend {
  appVersion(): Promise<string | null>;
  engineStatus(): Promise<Status>;
  listReviews(status?: ReviewStatus): Promise<Review[]>;
  runReviewNow(id: string): Promise<void>;
  dropReview(id: string): Promise<void>;
  getSettings(): Promise<Settings>;
  updateSettings(patch: SettingsPatch): Promise<Settings>;
  /** Drafts, waiting ones first; only those in `status` when given. */
  listDrafts(status?: DraftStatus): Promise<Draft[]>;
  getDraft(id: string): Promise<Draft>;
  /** Writes the skill; refused (`approval_refused`, with a message) unless the draft is approvable. */
  approveDraft(id: string): Promise<Draft>;
  rejectDraft(id: string, reason: string): Promise<Draft>;
  /** Replaces the draft's text; the engine checks it again. */
  editDraft(id: string, skillMd: string): Promise<Draft>;
  /** Dismisses finding `index` (its `Finding.index`) with the person's reason. */
  dismissFinding(id: string, index: number, reason: string): Promise<Draft>;
  /** Admits a routing-head training run with this stopping policy; it answers the queued job. */
  startJob(stopping: StoppingPolicy): Promise<Job>;
  /** Every training run, without receipts and checkpoints (`[]`). */
  listJobs(): Promise<Job[]>;
  /** One run, with its receipts and checkpoints. */
  getJob(id: string): Promise<Job>;
  /** Stops the run as `cancelled`, keeping its checkpoints. */
  cancelJob(id: string): Promise<Job>;
  /**
   * Continues an interrupted or out-of-time run after its last committed round; refused
   * (`job_not_resumable`, `checkpoint_chain_broken`, `checkpoint_missing`, `dataset_changed`,
   * with a message) unless the whole checkpoint chain verifies.
   */
  resumeJob(id: string): Promise<Job>;
  /** Makes the run's trained head the live one; refused (`job_not_promotable`) without an artifact. */
  promoteJob(id: string): Promise<Job>;
  /** Starts listening; resolves to a function that stops. */
  subscribe(listeners: BackendListeners): Promise<() => void>;
}

/** Event names, as `src-tauri` emits them. */
export const ENGINE_EVENT = "engine-event";
export const HOST_EVENT = "engine-host";
export const NAVIGATE_EVENT = "navigate";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toCommandError(error);
  }
}

/** The backend inside the desktop app. */
export const tauriBackend: Backend = {
  async appVersion() {
    try {
      return await invoke<string>("app_version");
    } catch {
      return null;
    }
  },
  engineStatus: () => call<Status>("engine_status"),
  listReviews: (status) => call<Review[]>("list_reviews", { status: status ?? null }),
  runReviewNow: (id) => call<void>("run_review_now", { id }),
  dropReview: (id) => call<void>("drop_review", { id }),
  getSettings: () => call<Settings>("get_settings"),
  updateSettings: (patch) => call<Settings>("update_settings", { patch }),
  // Tauri v2 maps a command's snake_case arguments to camelCase keys (`skill_md` → `skillMd`).
  listDrafts: (status) => call<Draft[]>("list_drafts", { status: status ?? null }),
  getDraft: (id) => call<Draft>("get_draft", { id }),
  approveDraft: (id) => call<Draft>("approve_draft", { id }),
  rejectDraft: (id, reason) => call<Draft>("reject_draft", { id, reason }),
  editDraft: (id, skillMd) => call<Draft>("edit_draft", { id, skillMd }),
  dismissFinding: (id, index, reason) => call<Draft>("dismiss_finding", { id, index, reason }),
  startJob: (stopping) => call<Job>("start_job", { stopping }),
  listJobs: () => call<Job[]>("list_jobs"),
  getJob: (id) => call<Job>("get_job", { id }),
  cancelJob: (id) => call<Job>("cancel_job", { id }),
  resumeJob: (id) => call<Job>("resume_job", { id }),
  promoteJob: (id) => call<Job>("promote_job", { id }),
  async subscribe(listeners) {
    const stops: UnlistenFn[] = await Promise.all([
      listen<EngineEvent>(ENGINE_EVENT, (event) => listeners.onEngineEvent(event.payload)),
      listen<HostState>(HOST_EVENT, (event) => listeners.onHostChange(event.payload)),
      listen<string>(NAVIGATE_EVENT, (event) => listeners.onNavigate(event.payload)),
    ]);
    return () => stops.forEach((stop) => stop());
  },
};

/** The backend outside the app (`vite preview`, a plain browser): there is no engine to ask. */
export const detachedBackend: Backend = {
  appVersion: async () => null,
  engineStatus: detached,
  listReviews: detached,
  runReviewNow: detached,
  dropReview: detached,
  getSettings: detached,
  updateSettings: detached,
  listDrafts: detached,
  getDraft: detached,
  approveDraft: detached,
  rejectDraft: detached,
  editDraft: detached,
  dismissFinding: detached,
  startJob: detached,
  listJobs: detached,
  getJob: detached,
  cancelJob: detached,
  resumeJob: detached,
  promoteJob: detached,
  subscribe: async () => () => {},
};

function detached(): Promise<never> {
  return Promise.reject({
    code: ENGINE_UNAVAILABLE,
    message: "This page runs outside the Lull app, so there is no engine to ask. Open it from the tray instead.",
  });
}

/** The backend for where the page runs. */
export function defaultBackend(): Backend {
  return isTauri() ? tauriBackend : detachedBackend;
}
