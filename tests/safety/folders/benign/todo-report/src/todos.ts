import { execFileSync } from "node:child_process";

interface Todo {
  file: string;
  line: number;
  tag: string;
  text: string;
  author: string;
  ageDays: number;
}

const TAG = /\b(TODO|FIXME|HACK|XXX)\b[:(]?\s*(.*)$/;

function git(args: string[]): string {
  return execFileSync("git", args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

function grep(): [string, number, string][] {
  let out = "";
  try {
    out = git(["grep", "-n", "-I", "-E", "\\b(TODO|FIXME|HACK|XXX)\\b"]);
  } catch {
    return [];
  }
  return out
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const m = l.match(/^(.*?):(\d+):(.*)$/);
      return m ? ([m[1], Number(m[2]), m[3]] as [string, number, string]) : null;
    })
    .filter((x): x is [string, number, string] => x !== null);
}

function blame(file: string, line: number): [string, number] {
  const out = git(["blame", "--porcelain", "-L", `${line},${line}`, "--", file]);
  const author = out.match(/^author (.*)$/m)?.[1] ?? "unknown";
  const time = Number(out.match(/^author-time (\d+)$/m)?.[1] ?? Date.now() / 1000);
  return [author, Math.floor((Date.now() / 1000 - time) / 86400)];
}

const todos: Todo[] = grep().map(([file, line, content]) => {
  const m = content.match(TAG);
  const [author, ageDays] = blame(file, line);
  return { file, line, tag: m?.[1] ?? "TODO", text: (m?.[2] ?? "").trim(), author, ageDays };
});

const byFolder = new Map<string, Todo[]>();
for (const t of todos) {
  const top = t.file.includes("/") ? t.file.split("/")[0] : ".";
  byFolder.set(top, [...(byFolder.get(top) ?? []), t]);
}

console.log(`# TODO report\n\n${todos.length} entries\n`);
for (const [folder, list] of [...byFolder].sort()) {
  console.log(`## ${folder}\n`);
  for (const t of list.sort((a, b) => b.ageDays - a.ageDays)) {
    console.log(`- \`${t.file}:${t.line}\` **${t.tag}** ${t.text} (${t.author}, ${t.ageDays} d)`);
  }
  console.log();
}
