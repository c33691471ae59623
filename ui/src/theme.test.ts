// The two palettes in app.css: both complete, the pairs text is drawn on readable (WCAG AA),
// the focus ring visible against what it sits on, and no view with a colour of its own.
// (jsdom paints nothing, so axe cannot check contrast here; this reads the palettes instead.)
import { describe, expect, it } from "vitest";
import css from "./app.css?raw";

const SOURCES = import.meta.glob(["./**/*.svelte"], { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;

type Palette = Record<string, string>;

function variables(block: string): Palette {
  return Object.fromEntries(Array.from(block.matchAll(/--([\w-]+):\s*([^;]+);/g), (match) => [match[1], match[2]!.trim()]));
}

/** The light palette (the first `:root` block) and the dark one (inside the media query). */
function palettes(): { light: Palette; dark: Palette } {
  const dark = /@media \(prefers-color-scheme: dark\)\s*\{\s*:root\s*\{([^}]*)\}/.exec(css);
  const light = /:root\s*\{([^}]*)\}/.exec(css);
  if (!light || !dark) throw new Error("app.css has no light or no dark palette");
  return { light: variables(light[1]!), dark: variables(dark[1]!) };
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255).map((channel) =>
    channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4,
  );
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(palette: Palette, one: string, other: string): number {
  const [a, b] = [palette[one], palette[other]];
  if (!a?.match(/^#[0-9a-f]{6}$/i) || !b?.match(/^#[0-9a-f]{6}$/i)) throw new Error(`--${one} or --${other} is not a #rrggbb colour`);
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

/** Text and the background it is drawn on: 4.5:1 at least. */
const TEXT_PAIRS: [string, string][] = [
  ["text", "bg"],
  ["text", "surface"],
  ["text", "surface-sunk"],
  ["text-dim", "bg"],
  ["text-dim", "surface"],
  ["text-dim", "surface-sunk"],
  ["on-accent", "accent"],
  ["on-danger", "danger"],
  ["ok-text", "ok-bg"],
  ["ok-text", "surface"],
  ["warn-text", "warn-bg"],
  ["warn-strong-text", "warn-bg"],
  ["info-text", "info-bg"],
  ["bad-text", "bad-bg"],
  ["bad-text", "surface"],
  ["bad-text", "surface-sunk"],
  ["strong-text", "strong-bg"],
  ["diff-add-text", "diff-add-bg"],
  ["diff-remove-text", "diff-remove-bg"],
  ["chrome-text", "chrome"],
  ["chrome-text", "chrome-line"],
  ["chrome-text-dim", "chrome"],
  ["chrome-text-dim", "chrome-soft"],
  ["chrome", "amber"],
];

/** The focus ring, field borders and lines that carry meaning, against what they sit on: 3:1. */
const NON_TEXT_PAIRS: [string, string][] = [
  ["focus", "bg"],
  ["focus", "surface"],
  ["focus", "surface-sunk"],
  ["chrome-accent", "chrome-soft"],
  ["chrome-accent", "chrome-line"],
  ["line-strong", "surface"],
  ["danger", "surface"],
  ["accent", "surface"],
  ["accent", "line"],
  ["chart-live", "surface"],
];

describe("the palettes", () => {
  it("follow the system's light or dark preference", () => {
    expect(css).toMatch(/color-scheme:\s*light dark;/);
    expect(css).toContain("@media (prefers-color-scheme: dark)");
  });

  it("name the same colours in both themes", () => {
    const { light, dark } = palettes();
    const colours = (palette: Palette) => Object.keys(palette).filter((name) => /^(#|rgb)/.test(palette[name]!)).sort();
    expect(colours(dark)).toEqual(colours(light));
  });

  for (const theme of ["light", "dark"] as const) {
    it(`draw text readably in the ${theme} theme`, () => {
      const palette = palettes()[theme];
      const low = TEXT_PAIRS.filter(([one, other]) => contrast(palette, one, other) < 4.5).map(
        ([one, other]) => `--${one} on --${other}: ${contrast(palette, one, other).toFixed(2)}`,
      );
      expect(low).toEqual([]);
    });

    it(`show the focus ring and field borders in the ${theme} theme`, () => {
      const palette = palettes()[theme];
      const low = NON_TEXT_PAIRS.filter(([one, other]) => contrast(palette, one, other) < 3).map(
        ([one, other]) => `--${one} on --${other}: ${contrast(palette, one, other).toFixed(2)}`,
      );
      expect(low).toEqual([]);
    });
  }

  it("draw a focus ring on whatever has the keyboard's focus", () => {
    expect(css).toMatch(/:focus-visible\s*\{\s*outline:\s*2px solid var\(--focus\);/);
  });
});

describe("the views", () => {
  it("use the palette's colours only", () => {
    const literal = /#[0-9a-f]{3,8}\b|\brgba?\(|\bhsla?\(|:\s*(white|black)\b/i;
    const offenders = Object.entries(SOURCES).flatMap(([file, source]) =>
      source
        .split("\n")
        .map((line, index) => ({ line, index }))
        .filter(({ line }) => literal.test(line) && !/^\s*(\/\/|<!--|\*)/.test(line) && !/\{#|href="#/.test(line))
        .map(({ line, index }) => `${file}:${index + 1}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  it("name only variables app.css defines", () => {
    const { light } = palettes();
    const defined = new Set([...Object.keys(light), ...Array.from(css.matchAll(/--([\w-]+):/g), (match) => match[1]!)]);
    const used = [css, ...Object.values(SOURCES)].flatMap((source) => Array.from(source.matchAll(/var\(--([\w-]+)\)/g), (match) => match[1]!));
    expect([...new Set(used.filter((name) => !defined.has(name)))]).toEqual([]);
  });
});
