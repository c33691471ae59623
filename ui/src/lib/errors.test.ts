import { describe, expect, it } from "vitest";
import { engineLight, isEngineDown, toCommandError, withHostState, type CommandError } from "./errors";
import { viewFromHash } from "./views";

describe("toCommandError", () => {
  it("keeps the app's {code, message}, reads an unknown code as internal, and wraps anything else", () => {
    expect(toCommandError({ code: "conflict", message: "review r1 is running" })).toEqual({
      code: "conflict",
      message: "review r1 is running",
    });
    expect(toCommandError({ code: "no_such_code", message: "from another version" })).toEqual({
      code: "internal",
      message: "from another version",
    });
    expect(toCommandError(new Error("boom"))).toEqual({ code: "internal", message: "boom" });
    expect(toCommandError("text")).toEqual({ code: "internal", message: "text" });
  });
});

describe("engineLight", () => {
  it("is down only when the engine is not running, not when it refused something", () => {
    expect(engineLight(true, null)).toBe("running");
    expect(engineLight(false, null)).toBe("starting");
    expect(engineLight(false, { code: "engine_starting", message: "" })).toBe("starting");
    expect(engineLight(false, { code: "engine_unavailable", message: "port taken" })).toBe("down");
    expect(isEngineDown({ code: "conflict", message: "" })).toBe(false);
  });
});

describe("withHostState", () => {
  const down: CommandError = { code: "engine_unavailable", message: "no Lull engine is running for /d" };

  it("words an engine that is not there by what the window knows of its link", () => {
    expect(withHostState(down, { state: "starting" })).toEqual({ code: "engine_starting", message: down.message });
    expect(withHostState(down, { state: "failed", message: "the port is taken" })).toEqual({
      code: "engine_unavailable",
      message: "the port is taken",
    });
    expect(withHostState(down, { state: "running" })).toEqual(down);
    expect(withHostState(down, null)).toEqual(down);
  });

  it("leaves the engine's own refusals and a clean read alone", () => {
    const refused: CommandError = { code: "conflict", message: "review r1 is running" };
    expect(withHostState(refused, { state: "failed", message: "gone" })).toEqual(refused);
    expect(withHostState(null, { state: "failed", message: "gone" })).toBeNull();
  });
});

describe("viewFromHash", () => {
  it("opens the view the tray asked for, else the Overview", () => {
    expect(viewFromHash("#drafts")).toBe("drafts");
    expect(viewFromHash("#nonsense")).toBe("overview");
    expect(viewFromHash("")).toBe("overview");
  });
});
