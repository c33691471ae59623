import { describe, expect, it } from "vitest";
import { engineLight, isEngineDown, toCommandError } from "./errors";
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

describe("viewFromHash", () => {
  it("opens the view the tray asked for, else the Overview", () => {
    expect(viewFromHash("#drafts")).toBe("drafts");
    expect(viewFromHash("#nonsense")).toBe("overview");
    expect(viewFromHash("")).toBe("overview");
  });
});
