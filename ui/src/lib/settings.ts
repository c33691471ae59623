// The run-time settings (`GET/PATCH /v1/settings`). Pure: no I/O, no Svelte.

import type { DeferMode } from "./status";

/** The settings in force. */
export interface Settings {
  defer_mode: DeferMode;
  paused: boolean;
  reviews_enabled: boolean;
  /** A desktop notification when the managed server appears or goes away (off by default). */
  notify_server_changes: boolean;
}

/** A partial change; absent keys keep their value. */
export type SettingsPatch = Partial<Settings>;
