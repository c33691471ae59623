// Driving the window by keyboard only, in tests: `tabTo` presses Tab until the focus reaches an
// element, and fails if it never does (then that element cannot be reached by keyboard).
import type { UserEvent } from "@testing-library/user-event";

/** At most this many presses: more than any view needs to reach anything. */
const MAX_TABS = 80;

/** Presses Tab (Shift+Tab with `backwards`) until `target` has the focus. */
export async function tabTo(user: UserEvent, target: Element, { backwards = false } = {}): Promise<void> {
  for (let presses = 0; presses < MAX_TABS; presses += 1) {
    if (document.activeElement === target) return;
    await user.tab({ shift: backwards });
  }
  if (document.activeElement !== target) {
    throw new Error(`Tab never reached ${target.outerHTML.slice(0, 120)}`);
  }
}
