import { defineConfig } from "vitest/config";

// The window's end-to-end tests (e2e/*.e2e.ts), run by scripts/e2e/run.sh against the real app:
// in Node (no jsdom), one file at a time (one WebDriver session, one app), with time for the
// engine to draft skills and train. `npm test` (vite.config.ts) never includes them.
export default defineConfig({
  test: {
    environment: "node",
    include: ["e2e/**/*.e2e.ts"],
    fileParallelism: false,
    pool: "forks",
    poolOptions: { forks: { singleFork: true } },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // A test's clicks depend on the ones before it in its file (the engine's state).
    sequence: { shuffle: false },
    reporters: ["verbose"],
  },
});
