// Re-reading the engine when it says something changed. Pure logic with a timer seam, so tests
// drive it with fake timers.
//
// Each engine event triggers a read at once. Reads never overlap: a trigger during a read asks
// for exactly one more read after it. One settle read follows the last trigger of a burst,
// because the engine's learning activity ("waiting: …", "reviewing session …") changes just
// after the event that caused it and has no event of its own. That is a follow-up to an event,
// not a poll: with no events, nothing is read.

/** How long after the last event the settle read happens. */
export const SETTLE_MS = 400;

export interface Timers {
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (callback, ms) => setTimeout(callback, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface Refresher {
  /** Reads now (or right after the read in flight) and once more after `SETTLE_MS`. */
  trigger(): void;
  /** Stops the settle read; later triggers still read. */
  cancel(): void;
}

export function createRefresher(load: () => Promise<void>, timers: Timers = realTimers, settleMs = SETTLE_MS): Refresher {
  let running = false;
  let again = false;
  let settle: unknown = null;

  async function read(): Promise<void> {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        try {
          await load();
        } catch {
          // `load` reports its own failures; one failed read must not stop the next.
        }
      } while (again);
    } finally {
      running = false;
    }
  }

  return {
    trigger() {
      void read();
      if (settle !== null) timers.clear(settle);
      settle = timers.set(() => {
        settle = null;
        void read();
      }, settleMs);
    },
    cancel() {
      if (settle !== null) timers.clear(settle);
      settle = null;
    },
  };
}
