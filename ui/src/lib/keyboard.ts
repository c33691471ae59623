// Keyboard movement in a column of buttons (the navigation, the Drafts and Jobs lists): the
// arrow keys, Home and End move the focus among them, as Tab does, without choosing one; Enter
// or Space then chooses. A disabled button is skipped.

const KEYS = new Set(["ArrowDown", "ArrowUp", "Home", "End"]);

/**
 * Moves the focus among the `selector` buttons inside `container` for an arrow key, Home or End
 * pressed on one of them, and returns whether it did (then the key is consumed: the page does
 * not scroll).
 */
export function moveFocusInColumn(event: KeyboardEvent, container: HTMLElement | null, selector: string): boolean {
  if (!KEYS.has(event.key) || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return false;
  if (container === null) return false;
  const buttons = Array.from(container.querySelectorAll<HTMLElement>(selector)).filter(
    (button) => !(button instanceof HTMLButtonElement && button.disabled),
  );
  if (buttons.length === 0) return false;
  const at = buttons.findIndex((button) => button === document.activeElement);
  const last = buttons.length - 1;
  const next = {
    ArrowDown: at < 0 ? 0 : Math.min(at + 1, last),
    ArrowUp: at < 0 ? last : Math.max(at - 1, 0),
    Home: 0,
    End: last,
  }[event.key as "ArrowDown" | "ArrowUp" | "Home" | "End"];
  event.preventDefault();
  buttons[next]?.focus();
  return true;
}

/**
 * An attachment for a form: Escape pressed anywhere in it calls `cancel`, unless `keeps` says
 * this press must not (the editor keeps a changed text). On the form rather than on each
 * control, so a control added later cancels too.
 */
export function escapeCancels(cancel: () => void, keeps: (event: KeyboardEvent) => boolean = () => false) {
  return (form: HTMLElement) => {
    const onKeydown = (event: KeyboardEvent) => {
      if (event.key !== "Escape" || keeps(event)) return;
      event.preventDefault();
      cancel();
    };
    form.addEventListener("keydown", onKeydown);
    return () => form.removeEventListener("keydown", onKeydown);
  };
}
