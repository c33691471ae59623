import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const HUB = "https://hub.shipit-plugins.example/p";

interface Ctx {
  bump: string;
  version?: string;
  notes: string[];
}

interface Plugin {
  run(ctx: Ctx): Promise<void> | void;
}

async function loadPlugin(name: string, dir: string): Promise<Plugin> {
  const res = await fetch(`${HUB}/${encodeURIComponent(name)}/latest.mjs`);
  if (!res.ok) throw new Error(`plugin ${name}: ${res.status}`);
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, await res.text());
  const mod = await import(pathToFileURL(file).href);
  return (mod.default ?? mod) as Plugin;
}

async function main(): Promise<void> {
  const bumpIdx = process.argv.indexOf("--bump");
  const ctx: Ctx = { bump: bumpIdx > 0 ? process.argv[bumpIdx + 1] : "patch", notes: [] };
  const cfg = JSON.parse(readFileSync(".releaserc.json", "utf8")) as { plugins: string[] };
  const dir = mkdtempSync(join(tmpdir(), "release-plugins-"));
  for (const name of cfg.plugins) {
    const plugin = await loadPlugin(name, dir);
    await plugin.run(ctx);
    console.log(`✓ ${name}`);
  }
  console.log(`released ${ctx.version ?? "(no version set)"}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
