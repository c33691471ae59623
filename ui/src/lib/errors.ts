// The one error shape every command returns (`{code, message}`, the API's error detail), with
// the codes of the engine's one list (generated from its Rust `ErrorCode`: the local API's, the
// client's `engine_unavailable` and the window's `engine_starting`), and how the window reads
// anything thrown.

import { ERROR_CODES, type ErrorCode, type ErrorDetail } from "./generated/engine";

export type { ErrorCode } from "./generated/engine";

/** A command's failure, as the app sends it. */
export type CommandError = ErrorDetail;

/** The engine is still opening its database. */
export const ENGINE_STARTING = "engine_starting" satisfies ErrorCode;
/** The engine failed to start or stopped; the message says why. */
export const ENGINE_UNAVAILABLE = "engine_unavailable" satisfies ErrorCode;

/** Whether `code` is one of the engine's codes. */
function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && (ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Whatever a command rejected with, as a `CommandError`; a code the engine does not have (a
 * bug, or an app of another version) reads as `internal`, its message kept.
 */
export function toCommandError(error: unknown): CommandError {
  if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
    const { code, message } = error as { code: unknown; message: unknown };
    if (typeof code === "string" && typeof message === "string") {
      return { code: isErrorCode(code) ? code : "internal", message };
    }
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
