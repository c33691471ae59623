import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRefresher, SETTLE_MS } from "./refresh";

describe("createRefresher", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** A load that stays in flight until `finish()`. */
  function gatedLoad() {
    let calls = 0;
    let release: (() => void) | null = null;
    const load = () => {
      calls += 1;
      return new Promise<void>((resolve) => (release = resolve));
    };
    return {
      load,
      calls: () => calls,
      finish: async () => {
        release?.();
        release = null;
        await vi.advanceTimersByTimeAsync(0);
      },
    };
  }

  it("reads at once, then once more after the burst settles", async () => {
    const load = vi.fn(async () => {});
    const refresher = createRefresher(load);
    refresher.trigger();
    expect(load).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(SETTLE_MS - 1);
    expect(load).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(load).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(10 * SETTLE_MS);
    expect(load).toHaveBeenCalledTimes(2); // no events, no reads
  });

  it("never overlaps reads: triggers during a read become one more read", async () => {
    const gate = gatedLoad();
    const refresher = createRefresher(gate.load);
    refresher.trigger();
    refresher.trigger();
    refresher.trigger();
    expect(gate.calls()).toBe(1);
    await gate.finish();
    expect(gate.calls()).toBe(2);
    await gate.finish();
    expect(gate.calls()).toBe(2);
    refresher.cancel();
  });

  it("keeps reading after a failed read", async () => {
    const load = vi.fn().mockRejectedValueOnce(new Error("down")).mockResolvedValue(undefined);
    const refresher = createRefresher(load);
    refresher.trigger();
    await vi.advanceTimersByTimeAsync(0);
    refresher.trigger();
    expect(load).toHaveBeenCalledTimes(2);
    refresher.cancel();
  });
});
