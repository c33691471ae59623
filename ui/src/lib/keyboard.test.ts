import { describe, expect, it } from "vitest";
import { moveFocusInColumn } from "./keyboard";

function column(disabled: number[] = []): { list: HTMLUListElement; buttons: HTMLButtonElement[] } {
  const list = document.createElement("ul");
  const buttons = ["one", "two", "three", "four"].map((name, index) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.textContent = name;
    button.disabled = disabled.includes(index);
    item.append(button);
    list.append(item);
    return button;
  });
  list.addEventListener("keydown", (event) => moveFocusInColumn(event, list, "button"));
  document.body.replaceChildren(list);
  return { list, buttons };
}

function press(target: HTMLElement, key: string, init: KeyboardEventInit = {}): KeyboardEvent {
  const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

describe("moveFocusInColumn", () => {
  it("moves down and up, stopping at either end", () => {
    const { buttons } = column();
    buttons[0]?.focus();
    press(buttons[0]!, "ArrowDown");
    expect(document.activeElement).toBe(buttons[1]);
    press(buttons[1]!, "ArrowUp");
    press(buttons[0]!, "ArrowUp");
    expect(document.activeElement).toBe(buttons[0]);
    press(buttons[0]!, "End");
    expect(document.activeElement).toBe(buttons[3]);
    press(buttons[3]!, "ArrowDown");
    expect(document.activeElement).toBe(buttons[3]);
    press(buttons[3]!, "Home");
    expect(document.activeElement).toBe(buttons[0]);
  });

  it("skips a disabled button", () => {
    const { buttons } = column([1]);
    buttons[0]?.focus();
    press(buttons[0]!, "ArrowDown");
    expect(document.activeElement).toBe(buttons[2]);
  });

  it("consumes the keys it uses and leaves the others (and modified ones) alone", () => {
    const { buttons } = column();
    buttons[0]?.focus();
    expect(press(buttons[0]!, "ArrowDown").defaultPrevented).toBe(true);
    expect(press(buttons[1]!, "Tab").defaultPrevented).toBe(false);
    expect(press(buttons[1]!, "ArrowDown", { shiftKey: true }).defaultPrevented).toBe(false);
    expect(document.activeElement).toBe(buttons[1]);
  });
});
