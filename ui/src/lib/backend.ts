// The only way the UI reaches outside itself: Tauri commands to the app that hosts it. Outside
// Tauri (tests, `vite preview`) every call answers null.
import { invoke, isTauri } from "@tauri-apps/api/core";

/** The app's version (`app_version` command), or null outside the desktop app. */
export async function appVersion(): Promise<string | null> {
  if (!isTauri()) return null;
  try {
    return await invoke<string>("app_version");
  } catch {
    return null;
  }
}
