// What scripts/e2e/run.sh hands the end-to-end tests, read once; a missing variable says the
// tests were started without the harness.

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the end-to-end tests through scripts/e2e/run.sh`);
  return value;
}

/** The harness's answers: where the engine keeps its data, what to launch, where to put shots. */
export const e2e = {
  /** The binary a WebDriver session starts: `lull-window` (the tray process runs already). */
  application: required("LULL_E2E_APPLICATION"),
  /** The engine's data folder (api.json, api-token, skills/). */
  dataDir: required("LULL_E2E_DATA_DIR"),
  /** A private temp folder of this run (the harness removes it). */
  work: required("LULL_E2E_WORK"),
  /** Where each view's screenshot goes. */
  shots: required("LULL_E2E_SHOTS"),
  /** tauri-driver's port. */
  driverPort: Number(required("LULL_E2E_DRIVER_PORT")),
  /** The stand-in llama-server: SIGUSR1 makes its slot busy (the person's prompt), SIGUSR2 idle. */
  standInPid: Number(required("LULL_E2E_STAND_IN_PID")),
  /** The desktop session helpers (lib.sh: the tray menu over D-Bus) and x11_close.py. */
  desktopScripts: required("LULL_E2E_DESKTOP_SCRIPTS"),
  /** What the notification recorder on the private bus received: one JSON object a line. */
  notes: required("LULL_E2E_NOTES"),
  /** The stand-in's state file: the engine's managed server is there while the file is. */
  serverStateFile: required("LULL_E2E_SERVER_STATE_FILE"),
};
