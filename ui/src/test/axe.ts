// Runs axe-core on rendered markup, in jsdom, and returns what it finds serious or critical.
//
// jsdom lays nothing out and paints nothing, so two things are arranged here:
// - `color-contrast` is switched off: jsdom cannot compute the colours text is drawn in. The
//   palettes are checked instead by src/theme.test.ts, and the WebKit run (axe.min.js injected
//   through WebDriver, in the real window) checks contrast on the page as drawn.
// - jsdom has no canvas, which axe's label-in-name rule uses to tell an icon-font ligature from a
//   word. A stand-in canvas says no text is a ligature (the UI uses no icon font), so the rule
//   still checks every visible label against its accessible name.
import axe from "axe-core";

/** One rule broken, where, and how badly. */
export interface Violation {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The impacts that fail a test: `moderate` and `minor` are reported but allowed. */
const FAILING = new Set(["serious", "critical"]);

/** A 2D context in which every glyph draws the same: nothing is an icon ligature. */
function inkOnlyContext(canvas: HTMLCanvasElement) {
  return {
    canvas,
    font: "",
    textAlign: "left",
    textBaseline: "top",
    measureText: (text: string) => ({ width: 30 * Math.max(text.length, 1) }),
    fillText: () => {},
    clearRect: () => {},
    getImageData: (_x: number, _y: number, width: number, height: number) => ({
      data: new Uint8ClampedArray(Math.max(1, Math.ceil(width) * Math.ceil(height)) * 4).fill(255),
    }),
  };
}

/** Every violation axe finds in `node`, at any impact. */
export async function axeViolations(node: Element): Promise<Violation[]> {
  const original = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (this: HTMLCanvasElement) {
    return inkOnlyContext(this);
  } as unknown as typeof original;
  try {
    const results = await axe.run(node, {
      rules: { "color-contrast": { enabled: false } },
      resultTypes: ["violations"],
    });
    return results.violations.map((violation) => ({
      rule: violation.id,
      impact: violation.impact ?? "unknown",
      help: violation.help,
      targets: violation.nodes.map((one) => one.target.join(" ")),
    }));
  } finally {
    HTMLCanvasElement.prototype.getContext = original;
  }
}

/** The serious and critical violations in `node`, as lines that name the rule and the places. */
export async function seriousViolations(node: Element): Promise<string[]> {
  return (await axeViolations(node))
    .filter((violation) => FAILING.has(violation.impact))
    .map((violation) => `${violation.impact} ${violation.rule} (${violation.help}): ${violation.targets.join(", ")}`);
}
