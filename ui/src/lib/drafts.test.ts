import { describe, expect, it } from "vitest";
import { draft, draftList, finding, NOW, riskyDraft } from "../test/fixtures";
import {
  agoPhrase,
  countOpenFindings,
  diffLines,
  diffStat,
  evaluationPhrase,
  evaluationSentence,
  findingsPhrase,
  formatFraction,
  formatScore,
  isDraftEvent,
  isWaiting,
  kindLabel,
  orderDrafts,
  originNote,
  replaceDraft,
  riskLabel,
  splitFrontMatter,
  statusLabel,
  summaryLine,
  verdictLabel,
  visibleText,
  type Evaluation,
} from "./drafts";

const DISMISSED = { reason: "the URL is our own", at: NOW };

function evaluation(patch: Partial<Evaluation>): Evaluation {
  return { ...draft().evaluation, ...patch };
}

describe("orderDrafts", () => {
  it("puts waiting drafts first, then those being evaluated, then decided ones; newest first within", () => {
    expect(orderDrafts(draftList()).map((one) => one.id)).toEqual([
      "d-clean", // review_pending, 10 min old
      "d-risky", // review_pending, 1 h old
      "d-evaluating",
      "d-rejected", // 2 h old
      "d-approved", // 3 h old
    ]);
  });

  it("counts blocked drafts as waiting", () => {
    const blocked = draft({ id: "d-blocked", status: "blocked", created_at: NOW - 86_400_000 });
    const evaluating = draft({ id: "d-evaluating", status: "evaluating", created_at: NOW });
    expect(orderDrafts([evaluating, blocked]).map((one) => one.id)).toEqual(["d-blocked", "d-evaluating"]);
    expect(isWaiting(blocked)).toBe(true);
    expect(isWaiting(evaluating)).toBe(false);
  });

  it("leaves its input alone", () => {
    const list = draftList();
    const ids = list.map((one) => one.id);
    orderDrafts(list);
    expect(list.map((one) => one.id)).toEqual(ids);
  });
});

describe("replaceDraft", () => {
  it("swaps the draft with the same id, or adds it", () => {
    const approved = draft({ status: "approved" });
    const list = replaceDraft(draftList(), approved);
    expect(list).toHaveLength(5);
    expect(list.find((one) => one.id === "d-clean")?.status).toBe("approved");
    expect(replaceDraft(null, approved)).toEqual([approved]);
  });
});

describe("isDraftEvent", () => {
  it.each([
    ["draft_ready", true],
    ["draft_approved", true],
    ["candidate_superseded", true],
    ["lagged", true],
    ["review_started", false],
    ["settings_changed", false],
  ])("%s → %s", (type, expected) => {
    expect(isDraftEvent(type)).toBe(expected);
  });
});

describe("labels", () => {
  it("words statuses, kinds, risks and verdicts", () => {
    expect(statusLabel("review_pending")).toBe("Waiting for you");
    expect(statusLabel("evaluating")).toBe("Being evaluated");
    expect(statusLabel("blocked")).toBe("Blocked");
    expect(kindLabel("create")).toBe("New skill");
    expect(kindLabel("update")).toBe("Update");
    expect(riskLabel("none")).toBe("No risk found");
    expect(riskLabel("critical")).toBe("Critical");
    expect(verdictLabel("neutral")).toBe("No clear effect");
  });
});

describe("findings", () => {
  it("counts the findings nobody dismissed, and those that block Approve", () => {
    const mixed = riskyDraft({
      safety: {
        max_risk: "critical",
        sha256: "x",
        rules_version: "1",
        findings: [
          finding({ index: 0, risk: "critical" }),
          finding({ index: 1, risk: "high", dismissed: DISMISSED }),
          finding({ index: 2, risk: "low" }),
        ],
      },
    });
    expect(countOpenFindings(mixed)).toEqual({ open: 2, blocking: 1 });
    expect(findingsPhrase(mixed)).toBe("2 open findings, 1 high or critical");
  });

  it("says when there are none, or all were dismissed", () => {
    expect(findingsPhrase(draft())).toBe("no findings");
    const dismissed = riskyDraft({ safety: { ...riskyDraft().safety, findings: [finding({ dismissed: DISMISSED })] } });
    expect(countOpenFindings(dismissed)).toEqual({ open: 0, blocking: 0 });
    expect(findingsPhrase(dismissed)).toBe("its finding dismissed");
    expect(findingsPhrase(draft({ safety: { ...draft().safety, findings: [finding({ risk: "low" })] } }))).toBe("1 open finding");
  });
});

describe("summaryLine", () => {
  it("gives kind, findings and evaluation in one line", () => {
    expect(summaryLine(draft())).toBe("New skill · no findings · helps");
    expect(summaryLine(riskyDraft())).toBe("Update · 1 open finding, 1 high or critical · helps");
    expect(summaryLine(draft({ evaluation: evaluation({ status: "pending", verdict: null }) }))).toBe(
      "New skill · no findings · not evaluated yet",
    );
  });
});

describe("evaluation", () => {
  it("words each state", () => {
    expect(evaluationPhrase(evaluation({ status: "failed" }))).toBe("evaluation failed");
    expect(evaluationPhrase(evaluation({ status: "skipped", verdict: null }))).toBe("not evaluated");
    expect(evaluationPhrase(evaluation({ verdict: "hurts" }))).toBe("hurts");
    expect(evaluationSentence(evaluation({ status: "failed", verdict: null, error: "the judge's answer is not JSON." }))).toBe(
      "The evaluation failed: the judge's answer is not JSON. There is no verdict, so judge the draft by reading it.",
    );
    expect(evaluationSentence(evaluation({ status: "skipped", verdict: null }))).toMatch(/^Not evaluated: a critical safety finding/);
    expect(evaluationSentence(evaluation({ status: "done", verdict: "helps", stale: true }))).toMatch(
      /^Before your last edit, the judge found that this draft would have helped; the edited text was not judged again\.$/,
    );
    expect(evaluationSentence(evaluation({ status: "pending", verdict: null }))).toMatch(/^Not evaluated yet/);
    expect(evaluationSentence(evaluation({ verdict: "helps" }))).toMatch(/would have helped/);
  });

  it("formats scores", () => {
    expect(formatScore(8)).toBe("8 / 10");
    expect(formatScore(4.25)).toBe("4.3 / 10");
    expect(formatScore(null)).toBe("—");
    expect(formatFraction(0.6)).toBe("0.6");
    expect(formatFraction(0.125)).toBe("0.13");
  });
});

describe("agoPhrase and originNote", () => {
  it("says how long ago", () => {
    expect(agoPhrase(NOW, NOW)).toBe("just now");
    expect(agoPhrase(NOW - 3 * 60_000, NOW)).toBe("3 min ago");
  });

  it("warns when Approve replaces a file Lull did not write", () => {
    expect(originNote(draft())).toBeNull();
    expect(originNote(riskyDraft())).toBeNull();
    expect(originNote(riskyDraft({ origin: "foreign" }))).toMatch(/was not written by Lull/);
    expect(originNote(riskyDraft({ origin: "new" }))).toMatch(/Approve creates it/);
  });
});

describe("diffLines", () => {
  it("marks added, removed, context, hunk and file lines", () => {
    const lines = diffLines(riskyDraft().diff);
    expect(lines.map((line) => line.kind)).toEqual(["file", "file", "hunk", "context", "remove", "add"]);
    expect(lines[4]?.text).toBe("-old step");
    expect(diffStat(lines)).toEqual({ added: 1, removed: 1 });
  });

  it("reads an empty diff as no lines", () => {
    expect(diffLines("")).toEqual([]);
    expect(diffLines("\n")).toEqual([]);
  });
});

describe("splitFrontMatter", () => {
  it("splits the YAML front matter from the body", () => {
    expect(splitFrontMatter("---\nname: a\ndescription: b\n---\n# A\n")).toEqual({
      frontMatter: "name: a\ndescription: b",
      body: "# A\n",
    });
  });

  it("leaves a text without front matter whole", () => {
    expect(splitFrontMatter("# A\n---\n")).toEqual({ frontMatter: null, body: "# A\n---\n" });
  });
});

describe("visibleText", () => {
  it("shows characters a reader cannot see", () => {
    expect(visibleText("rm\u200B -rf")).toBe("rm⟨U+200B⟩ -rf");
    expect(visibleText("abc\u202Edef")).toBe("abc⟨U+202E⟩def");
    expect(visibleText("a\u0007b")).toBe("a⟨U+0007⟩b");
  });

  it("leaves tabs, line breaks and spaces alone", () => {
    expect(visibleText("a\tb\nc d\r\n")).toBe("a\tb\nc d\r\n");
  });
});
