// Drafts as the engine sends them (`list_drafts`, `get_draft`; docs: SKILL_LEARNING "Draft JSON")
// and how the Drafts view words them. Pure: no I/O, no Svelte.

import type { DraftKind, DraftStatus, DraftView, Evaluation, FindingView, Risk, Verdict } from "./generated/engine";
import { formatAge } from "./reviews";
import { count } from "./status";

export type { Evaluation } from "./generated/engine";

/** One draft SKILL.md waiting for, or past, a person's decision: the engine's `DraftView`. */
export type Draft = DraftView;

/** One thing the safety check found in the draft's text, with its dismissal, if any. */
export type Finding = FindingView;

/** The statuses that wait for the person, in the order the list shows them. */
const RANK: Record<DraftStatus, number> = {
  review_pending: 0,
  blocked: 0,
  evaluating: 1,
  approved: 2,
  rejected: 2,
};

/** Whether the draft waits for the person's decision (only these can be approved, edited, rejected). */
export function isWaiting(draft: Draft): boolean {
  return draft.status === "review_pending" || draft.status === "blocked";
}

/** Whether the person has decided the draft. */
export function isDecided(draft: Draft): boolean {
  return draft.status === "approved" || draft.status === "rejected";
}

/** Waiting drafts first, then those being evaluated, then decided ones; newest first within each. */
export function orderDrafts(drafts: readonly Draft[]): Draft[] {
  return [...drafts].sort(
    (a, b) => RANK[a.status] - RANK[b.status] || b.created_at - a.created_at || a.id.localeCompare(b.id),
  );
}

/** The list with `next` in place of the draft with its id (or added, if it was not there). */
export function replaceDraft(drafts: readonly Draft[] | null, next: Draft): Draft[] {
  const list = drafts ?? [];
  return list.some((draft) => draft.id === next.id)
    ? list.map((draft) => (draft.id === next.id ? next : draft))
    : [...list, next];
}

/** Whether an engine event (by its `type`) may change what the Drafts view shows. */
export function isDraftEvent(type: string): boolean {
  // `lagged`: the app missed events, so anything may have changed.
  return type.startsWith("draft_") || type.startsWith("candidate_") || type === "lagged";
}

/** A person's word for a status. */
export function statusLabel(status: DraftStatus): string {
  switch (status) {
    case "evaluating":
      return "Being evaluated";
    case "blocked":
      return "Blocked";
    case "review_pending":
      return "Waiting for you";
    case "approved":
      return "Approved";
    case "rejected":
      return "Rejected";
  }
}

export function kindLabel(kind: DraftKind): string {
  return kind === "create" ? "New skill" : "Update";
}

export function riskLabel(risk: Risk): string {
  switch (risk) {
    case "none":
      return "No risk found";
    case "low":
      return "Low";
    case "medium":
      return "Medium";
    case "high":
      return "High";
    case "critical":
      return "Critical";
  }
}

export function verdictLabel(verdict: Verdict): string {
  switch (verdict) {
    case "helps":
      return "Helps";
    case "neutral":
      return "No clear effect";
    case "hurts":
      return "Hurts";
  }
}

/** A risk that keeps Approve refused while its finding stands undismissed. */
export function isBlockingRisk(risk: Risk): boolean {
  return risk === "high" || risk === "critical";
}

/** The findings nobody dismissed. */
export function openFindings(draft: Draft): Finding[] {
  return draft.safety.findings.filter((finding) => finding.dismissed === null);
}

/** How many findings stand undismissed, and how many of those block Approve. */
export function countOpenFindings(draft: Draft): { open: number; blocking: number } {
  const open = openFindings(draft);
  return { open: open.length, blocking: open.filter((finding) => isBlockingRisk(finding.risk)).length };
}

/** "no findings", "1 open finding", "3 open findings, 2 high or critical", "all 2 findings dismissed". */
export function findingsPhrase(draft: Draft): string {
  const total = draft.safety.findings.length;
  if (total === 0) return "no findings";
  const { open, blocking } = countOpenFindings(draft);
  if (open === 0) return total === 1 ? "its finding dismissed" : `all ${total} findings dismissed`;
  const phrase = count(open, "open finding");
  return blocking > 0 ? `${phrase}, ${blocking} high or critical` : phrase;
}

/** The evaluation in a few words, for the list. */
export function evaluationPhrase(evaluation: Evaluation): string {
  switch (evaluation.status) {
    case "pending":
      return "not evaluated yet";
    case "failed":
      return "evaluation failed";
    case "skipped":
      return "not evaluated";
    case "done":
      return evaluation.verdict ? verdictLabel(evaluation.verdict).toLowerCase() : "evaluated";
  }
}

/** The list's line under a draft's name: "New skill · 1 open finding · helps". */
export function summaryLine(draft: Draft): string {
  return [kindLabel(draft.kind), findingsPhrase(draft), evaluationPhrase(draft.evaluation)].join(" · ");
}

/** The evaluation in sentences, for the draft's page: what happened, and what it means. */
export function evaluationSentence(evaluation: Evaluation): string {
  switch (evaluation.status) {
    case "pending":
      return "Not evaluated yet: Lull will replay the source conversation with and without this draft in the next lull, and ask a judge whether it helps.";
    case "failed":
      return `The evaluation failed${evaluation.error ? `: ${evaluation.error.replace(/\.+$/, "")}` : ""}. There is no verdict, so judge the draft by reading it.`;
    case "skipped":
      return "Not evaluated: a critical safety finding blocked this draft, so it was never replayed on a model. Read the findings above.";
    case "done":
      if (!evaluation.verdict) return "Evaluated, without a verdict.";
      if (evaluation.stale) {
        return `Before your last edit, the judge found that this draft would ${
          { helps: "have helped", neutral: "make no clear difference", hurts: "have made the conversation worse" }[evaluation.verdict]
        }; the edited text was not judged again.`;
      }
      switch (evaluation.verdict) {
        case "helps":
          return "The judge found that this draft would have helped in the conversation it came from.";
        case "neutral":
          return "The judge found no clear difference with or without this draft.";
        case "hurts":
          return "The judge found that this draft would have made the conversation worse.";
      }
  }
}

/** A 0..10 score: "7.5 / 10"; "—" when there is none. */
export function formatScore(score: number | null): string {
  if (score === null || !Number.isFinite(score)) return "—";
  return `${Number.isInteger(score) ? score : score.toFixed(1)} / 10`;
}

/** A 0..1 score, as the CLI shows it: "0.8". */
export function formatFraction(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 100) / 100) : "—";
}

/** "just now", "3 min ago". */
export function agoPhrase(then: number, now: number): string {
  const age = formatAge(then, now);
  return age === "just now" ? age : `${age} ago`;
}

/** What is on disk under the draft's name, in words; null when nothing needs saying. */
export function originNote(draft: Draft): string | null {
  switch (draft.origin) {
    case "new":
      return draft.kind === "update" ? `There is no skill named ${draft.skill} on disk any more: Approve creates it.` : null;
    case "lull":
      return draft.kind === "create" ? `A skill named ${draft.skill}, written by Lull, is on disk now: Approve replaces it.` : null;
    case "foreign":
      return `The skill ${draft.skill} on disk was not written by Lull: Approve replaces it (Lull keeps the old text for rollback).`;
  }
}

/** One line of a unified diff and how to colour it. */
export interface DiffLine {
  kind: "add" | "remove" | "context" | "hunk" | "file";
  text: string;
}

/** A unified diff's lines, each with its kind. */
export function diffLines(diff: string): DiffLine[] {
  if (diff.trim() === "") return [];
  const lines = diff.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
  return lines.map((text): DiffLine => {
    if (text.startsWith("+++ ") || text.startsWith("--- ") || text.startsWith("diff ") || text.startsWith("index ")) {
      return { kind: "file", text };
    }
    if (text.startsWith("@@")) return { kind: "hunk", text };
    if (text.startsWith("+")) return { kind: "add", text };
    if (text.startsWith("-")) return { kind: "remove", text };
    return { kind: "context", text };
  });
}

/** How many lines a diff adds and removes. */
export function diffStat(lines: readonly DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((line) => line.kind === "add").length,
    removed: lines.filter((line) => line.kind === "remove").length,
  };
}

/** A SKILL.md split into its YAML front matter (without the `---` fences) and its body. */
export function splitFrontMatter(text: string): { frontMatter: string | null; body: string } {
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!match) return { frontMatter: null, body: text };
  return { frontMatter: match[1] ?? "", body: text.slice(match[0].length) };
}

/**
 * The text with characters a reader cannot see (controls, zero-width and bidi marks) written
 * as "⟨U+202E⟩": an untrusted excerpt or diff must not hide what it contains. Tabs and line
 * breaks stay as they are.
 */
export function visibleText(text: string): string {
  return text.replace(/[^\S\t\n ]|[\p{Cc}\p{Cf}]/gu, (char) => {
    if (char === "\t" || char === "\n" || char === "\r") return char;
    const code = char.codePointAt(0) ?? 0;
    return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
  });
}
