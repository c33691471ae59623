import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";
import { defineConfig } from "vitest/config";

// Builds the window's UI into ui/dist, which the Tauri app embeds (src-tauri/tauri.conf.json).
export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  clearScreen: false,
  // The header imports the mark from ../icons (its one source drawing).
  server: { fs: { allow: [".."] } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // WebKitGTK (Linux), WebKit (macOS) and WebView2 (Windows) all run these.
    target: ["es2021", "safari15", "chrome105"],
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
    // src/theme.test.ts reads app.css as text (`?raw`); vitest empties CSS it does not include.
    css: { include: [/app\.css/] },
  },
});
