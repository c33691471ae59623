// The desktop notifications the tray process sent, as the recorder on the private session bus
// received them (desktop/scripts/notification_recorder.py).

import { readFileSync } from "node:fs";
import { e2e } from "./env";

/** One notification: who sent it, its one-line title and its body. */
export interface Note {
  app_name: string;
  summary: string;
  body: string;
}

/** Every notification received so far, oldest first. */
export function notes(): Note[] {
  return readFileSync(e2e.notes, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Note);
}
