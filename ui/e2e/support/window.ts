// The window under WebDriver: one session per window, views chosen in the navigation the way a
// person clicks them, the close button of the window manager, and the tray menu over D-Bus.

import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { remote } from "webdriverio";
import { e2e } from "./env";

export type Browser = WebdriverIO.Browser;

/** Opens the window (`lull-window`) on `dataDir` and waits until the UI has mounted its navigation. */
export async function openWindow(dataDir = e2e.dataDir): Promise<Browser> {
  const browser = await remote({
    hostname: "127.0.0.1",
    port: e2e.driverPort,
    logLevel: "warn",
    // A session that does not start in time will not start on a retry (the app did not come up).
    connectionRetryTimeout: 90_000,
    connectionRetryCount: 0,
    capabilities: {
      // tauri-driver and WebKitWebDriver speak classic WebDriver only (no BiDi).
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application: e2e.application, args: ["--data-dir", dataDir] },
    } as WebdriverIO.Capabilities,
  });
  await browser.$('nav[aria-label="Views"]').waitForExist({ timeout: 30_000 });
  return browser;
}

/** Clicks the navigation button of the view titled `title` and waits for its heading. */
export async function showView(browser: Browser, title: string): Promise<void> {
  const buttons = await browser.$$('nav[aria-label="Views"] button');
  for (const button of buttons) {
    // The Drafts button carries a badge ("Drafts 2"): the title comes first.
    if ((await button.getText()).trim().startsWith(title)) {
      await button.click();
      const heading = browser.$("main h2");
      await browser.waitUntil(async () => (await heading.getText()) === title, { timeoutMsg: `${title} did not open` });
      // The views share one scrolling <main>, which keeps the last view's offset: start at the top.
      await browser.execute(() => document.querySelector("main")?.scrollTo(0, 0));
      return;
    }
  }
  throw new Error(`no navigation button titled ${title}`);
}

/** The X11 ids of the windows titled "Lull" on the test's display. */
export function lullWindows(): string[] {
  const tree = execFileSync("xwininfo", ["-root", "-tree"], { encoding: "utf8" });
  return [...tree.matchAll(/^\s*(0x[0-9a-f]+) "Lull": \(/gm)].map((match) => match[1] as string);
}

/** Closes the window as its close button does (WM_DELETE_WINDOW), not through WebDriver. */
export function closeLikeAPerson(): void {
  const [window] = lullWindows();
  if (!window) throw new Error("no Lull window to close");
  execFileSync("python3", [join(e2e.desktopScripts, "x11_close.py"), window]);
}

/** One item of the tray menu: its label and its check state (`0`, `1`, or `-` for no check). */
export interface TrayItem {
  label: string;
  check: string;
}

/** The D-Bus connection that exports the menu, per engine pid, once found. */
const menuOwners = new Map<number, string>();

/**
 * The tray menu as a panel reads it: the com.canonical.dbusmenu layout exported by the process
 * that hosts the engine (the pid in api.json: the tray process), through the desktop smoke's lib.sh helpers. lib.sh's `find_menu` asks every
 * connection of that pid, and one that never answers (a notification's, say) costs gdbus's 25 s
 * timeout; so the menu's owner, once found, is asked directly.
 */
export function trayMenu(enginePid: number): TrayItem[] {
  const script = `source "$1/lib.sh"; WORK=$2; APP_PID=$3; MENU_OWNER=$4
    if [ -z "$MENU_OWNER" ] || ! gdbus call --session --timeout 5 --dest "$MENU_OWNER" --object-path "$MENU_PATH" \
        --method com.canonical.dbusmenu.GetLayout -- 0 -1 "['label', 'toggle-state', 'enabled']" >"$WORK/menu" 2>/dev/null; then
      find_menu || { echo "no tray menu exported by pid $APP_PID" >&2; exit 1; }
    fi
    echo "$MENU_OWNER"
    menu_items`;
  const work = mkdtempSync(join(e2e.work, "menu-"));
  const output = execFileSync(
    "bash",
    ["-c", script, "tray-menu", e2e.desktopScripts, work, String(enginePid), menuOwners.get(enginePid) ?? ""],
    { encoding: "utf8" },
  );
  const [owner = "", ...lines] = output.split("\n");
  menuOwners.set(enginePid, owner);
  return lines
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [, check = "-", ...label] = line.split(" ");
      return { check, label: label.join(" ") };
    });
}

/** The label of the tray menu item that starts with `prefix` ("Queue:" → "Queue: 2 deferred reviews"). */
export function trayMenuLabel(enginePid: number, prefix: string): string | undefined {
  return trayMenu(enginePid).find((item) => item.label.startsWith(prefix))?.label;
}

/** A tray look: the picture in icons/tray/ the StatusNotifierItem's IconPixmap must equal. */
export type TrayLook = "idle" | "learning" | "paused" | "attention";

/** Whether the tray icon shows `look` now (lib.sh's `tray_look_is`, on the menu's owner once found). */
export function trayLookIs(enginePid: number, look: TrayLook): boolean {
  const owner = menuOwners.get(enginePid);
  if (!owner) trayMenu(enginePid);
  const script = `source "$1/lib.sh"; WORK=$2; MENU_OWNER=$3
    find_menu() { return 0; }  # the owner is known: asking every connection again costs seconds
    tray_look_is "$4"`;
  const work = mkdtempSync(join(e2e.work, "look-"));
  try {
    execFileSync("bash", ["-c", script, "tray-look", e2e.desktopScripts, work, menuOwners.get(enginePid) ?? "", look]);
    return true;
  } catch {
    return false;
  }
}
