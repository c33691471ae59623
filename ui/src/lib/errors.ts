// The one error shape every command returns (`{code, message}`: the local API's codes, and
// `engine_unavailable` when no engine answers), the window's link to the engine (`HostState`),
// and how the window reads anything thrown.

/** A command's failure, as the app sends it. */
export interface CommandError {
  code: string;
  message: string;
}

/** The engine is not there yet, shortly after the window started (see `withHostState`). */
export const ENGINE_STARTING = "engine_starting";
/** No engine answers (it failed to start, or stopped); the message says why. */
export const ENGINE_UNAVAILABLE = "engine_unavailable";

/** Whether the window reaches the engine (`engine-host` event, `host_state` command). */
export type HostState =
  | { state: "starting" }
  | { state: "running" }
  | { state: "failed"; message: string };

/** Whatever a command rejected with, as a `CommandError`. */
export function toCommandError(error: unknown): CommandError {
  if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
    const { code, message } = error as { code: unknown; message: unknown };
    if (typeof code === "string" && typeof message === "string") return { code, message };
  }
  if (error instanceof Error) return { code: "internal", message: error.message };
  return { code: "internal", message: String(error) };
}

/** Whether the error means "no engine to ask" rather than "the engine said no". */
export function isEngineDown(error: CommandError | null): boolean {
  return error !== null && (error.code === ENGINE_STARTING || error.code === ENGINE_UNAVAILABLE || error.code === "shutting_down");
}

/** The header's light: the engine runs, is starting, or is not running. */
export type EngineLight = "running" | "starting" | "down";

/** The light for what the last status read gave: a status, or an error. */
export function engineLight(hasStatus: boolean, error: CommandError | null): EngineLight {
  if (error === null) return hasStatus ? "running" : "starting";
  if (error.code === ENGINE_STARTING) return "starting";
  if (isEngineDown(error)) return "down";
  return hasStatus ? "running" : "starting";
}

/**
 * A read's error as the person should see it, given the window's link to the engine: while
 * the window is starting, an engine not there yet is `engine_starting`; once the link failed,
 * its message (the tray's reason the engine did not start, when it gave one) says why.
 */
export function withHostState(error: CommandError | null, host: HostState | null): CommandError | null {
  if (error === null || host === null || !isEngineDown(error)) return error;
  if (host.state === "starting") return { code: ENGINE_STARTING, message: error.message };
  if (host.state === "failed") return { code: ENGINE_UNAVAILABLE, message: host.message };
  return error;
}
