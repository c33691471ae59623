// The data the window shows, made the way an agent makes it: conversations submitted for review
// (the stand-in answers them with scripts/e2e/replies.py, whose candidates cite these messages
// by index), skills on disk, and routes with their outcomes.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { api, eventually } from "./engine";
import { e2e } from "./env";

type Message = { role: "user" | "assistant"; content: string };

/** agent-2's session: replies.py's first review proposes git-bisect (0, 1) and ssh-key-setup (2, 3). */
export const BISECT_AND_SSH: Message[] = [
  { role: "user", content: "the build broke after yesterday's merges; find the commit that did it" },
  {
    role: "assistant",
    content:
      "I ran git bisect from v1.2 (good) to HEAD (bad) with the failing test: the first bad commit is 4f2c1e9, which changed the config loader.",
  },
  { role: "user", content: "great. Also give the new CI runner an SSH key so it can push tags" },
  {
    role: "assistant",
    content:
      "Done: build-07 has an ed25519 key, its public key is a deploy key with write access, and ssh -T git@git.example.com works.",
  },
  { role: "user", content: "thanks, remember both for next time" },
];

/** agent-6's session: replies.py's second review proposes changelog-entry (0, 1). */
export const CHANGELOG: Message[] = [
  { role: "user", content: "write the changelog for 1.3 like you did for 1.2" },
  {
    role: "assistant",
    content: "Added a 1.3 section under Unreleased: two features under Added, one fix under Fixed, one line each.",
  },
  { role: "user", content: "good, keep doing it that way" },
  { role: "assistant", content: "Will do." },
];

/** A finished two-message conversation about `request`. */
export function conversation(request: string): Message[] {
  return [
    { role: "user", content: request },
    { role: "assistant", content: "Done: I ran it and checked the logs." },
  ];
}

/** The skills the routing head ranks, each with what requests about it look like. */
const SKILLS: Record<string, { description: string; requests: string[] }> = {
  "deploy-staging": {
    description: "Deploy a service to the staging cluster and check its health",
    requests: [
      "deploy the {} service to staging",
      "push the {} build to the staging cluster",
      "is the {} rollout on staging healthy",
    ],
  },
  "db-migration": {
    description: "Write and run a database migration safely, with a rollback",
    requests: ["add a column to the {} table", "migrate the {} schema with a rollback", "rename a field in the {} database"],
  },
  "rotate-certs": {
    description: "Rotate TLS certificates before they expire",
    requests: ["the {} certificate expires next week", "renew the TLS cert of {}", "rotate the {} keys before they lapse"],
  },
};
const SERVICES = ["payments", "orders", "billing", "search", "auth", "inventory", "gateway"];

type Ranked = { route_id: string; ranked: { skill: string }[] };

/** Writes the skills into the engine's skills folder and waits until routing ranks them. */
export async function writeSkills(): Promise<void> {
  for (const [name, { description }] of Object.entries(SKILLS)) {
    const folder = join(e2e.dataDir, "skills", name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n`);
  }
  await eventually("routing ranks the skills written", async () => {
    const { ranked } = await api<Ranked>("POST", "/v1/route", { query: "deploy to staging" });
    return ranked.length === Object.keys(SKILLS).length;
  });
}

/**
 * Logs `count` routes and their outcomes with a pattern to learn: the skill a request is about
 * succeeds, the others fail (the agent is handed each rank in turn).
 */
export async function routeAndReport(count: number): Promise<void> {
  const names = Object.keys(SKILLS);
  for (let i = 0; i < count; i++) {
    const right = names[i % names.length] as string;
    const templates = (SKILLS[right] as { requests: string[] }).requests;
    const query = (templates[Math.floor(i / 3) % templates.length] as string).replace(
      "{}",
      SERVICES[Math.floor(i / 9) % SERVICES.length] as string,
    );
    const answer = await api<Ranked>("POST", "/v1/route", { query });
    const chosen = answer.ranked[Math.floor(i / 2) % answer.ranked.length]?.skill;
    if (!chosen) throw new Error(`routing ranked nothing for "${query}"`);
    await api("POST", "/v1/outcomes", {
      route_id: answer.route_id,
      skill: chosen,
      outcome: chosen === right ? "success" : "failure",
    });
  }
}
