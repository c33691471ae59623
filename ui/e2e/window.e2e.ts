// Every click a person makes in the window, in the real app (WebKit through WebDriver), each
// checked in the engine afterwards: through its local API, on disk, or in the tray menu. Each
// view is shot (docs/screenshots with `make screenshots`) and checked by axe-core on the way.
//
// One window and one engine for the file. beforeAll makes the data (skills, 300 routes and
// outcomes, three drafts the real engine writes from two reviews on the stand-in's scripted
// replies); each test then acts on its own part of it, so `-t NAME` runs one test alone. The
// last test closes the window.

import { existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Draft } from "../src/lib/drafts";
import type { Job } from "../src/lib/jobs";
import type { Review } from "../src/lib/reviews";
import type { Settings } from "../src/lib/settings";
import type { Status } from "../src/lib/status";
import { alive, api, engineAnswering, eventually, folderDigest, personTyping } from "./support/engine";
import { e2e } from "./support/env";
import { axeFindings, look, shoot } from "./support/look";
import { notes, type Note } from "./support/notes";
import { BISECT_AND_SSH, CHANGELOG, conversation, routeAndReport, writeSkills } from "./support/story";
import {
  closeLikeAPerson,
  lullWindows,
  openWindow,
  showView,
  trayMenu,
  trayLookIs,
  trayMenuLabel,
  type Browser,
} from "./support/window";

const SKILLS_DIR = join(e2e.dataDir, "skills");
/** Every shot the tests below take, each one checked by axe-core when it is taken. */
const VIEWS_LOOKED_AT = [
  "reviews",
  "overview",
  "drafts",
  "drafts-evaluation",
  "drafts-approved",
  "drafts-blocked",
  "jobs-running",
  "jobs",
  "jobs-receipts",
  "jobs-promoted",
  "routing",
  "settings",
];

let browser: Browser;
let enginePid: number;
/** Until the last test closes it: a failed test after that has no window to shoot. */
let windowOpen = false;

async function status(): Promise<Status> {
  return api<Status>("GET", "/v1/status");
}

async function drafts(): Promise<Draft[]> {
  return (await api<{ drafts: Draft[] }>("GET", "/v1/drafts")).drafts;
}

async function draftOf(skill: string): Promise<Draft> {
  const found = (await drafts()).find((draft) => draft.skill === skill);
  if (!found) throw new Error(`no draft of ${skill}`);
  return api<Draft>("GET", `/v1/drafts/${found.id}`);
}

async function reviews(): Promise<Review[]> {
  return (await api<{ reviews: Review[] }>("GET", "/v1/reviews")).reviews;
}

async function job(id: string): Promise<Job> {
  return api<Job>("GET", `/v1/jobs/${id}`);
}

/** The draft's button in the Drafts list, by its skill's name. */
async function openDraft(skill: string): Promise<void> {
  await browser.$('ul[aria-label="Drafts"]').$(`button*=${skill}`).click();
  const title = browser.$("#draft-title");
  await browser.waitUntil(async () => (await title.getText()) === skill, { timeoutMsg: `${skill} did not open` });
}

/** A button of the open draft (or run), by its text. */
function button(text: string) {
  return browser.$("article").$(`button=${text}`);
}

/** The status labels beside the open draft's (or run's) title. */
function titleLabel(text: string) {
  return browser.$("article h3").parentElement().$(`span=${text}`);
}

/** Holds a live turn (the agent is answering) until the returned function ends it. */
async function liveTurn(sessionKey: string): Promise<() => Promise<void>> {
  const { lease_id } = await api<{ lease_id: string }>("POST", "/v1/turns/start", { session_key: sessionKey });
  return async () => {
    await api("POST", "/v1/turns/finish", { lease_id });
  };
}

beforeAll(async () => {
  browser = await openWindow();
  windowOpen = true;
  enginePid = (await engineAnswering()).pid;
  // Found now, before notifications add connections that never answer a menu request.
  await eventually("the tray menu is exported", () => trayMenu(enginePid).length > 0);

  // Routing's skills and outcomes first: their embeddings go to the stand-in, and nothing should
  // look like another client while the drafts below stream their scripted replies.
  await writeSkills();
  await routeAndReport(300);

  // Both reviews name a focus, so they run at once; the drafting and evaluating that follow wait
  // for a lull (a second after the engine's start, here).
  await api("POST", "/v1/reviews", {
    session_key: "agent-2",
    focus: "how I find a breaking commit and set up CI runners",
    messages: BISECT_AND_SSH,
  });
  await eventually(
    "git-bisect waits for review and ssh-key-setup is blocked",
    async () => {
      const { drafts: counts } = await status();
      return counts.review_pending === 1 && counts.blocked === 1;
    },
    90_000,
  );
  await api("POST", "/v1/reviews", { session_key: "agent-6", focus: "how I write the changelog", messages: CHANGELOG });
  await eventually(
    "changelog-entry waits for review too",
    async () => (await status()).drafts.review_pending === 2,
    90_000,
  );
  // Nothing runs and drafts wait for a person.
  await eventually("the tray icon says drafts wait", () => trayLookIs(enginePid, "attention"));
});

afterEach(async (context) => {
  // A failed test leaves a picture of what the window showed.
  if (context.task.result?.state === "fail" && windowOpen) {
    await shoot(browser, `failed-${context.task.name.replace(/[^a-z0-9]+/gi, "-")}`).catch(() => undefined);
  }
});

afterAll(async () => {
  await browser?.deleteSession().catch(() => undefined);
});

describe("Reviews", () => {
  it("shows a review submitted through the API, and Run now and Drop work", async () => {
    // The person is typing: a live turn and a busy slot, so reviews wait for a lull.
    personTyping(true);
    const endTurn = await liveTurn("agent-9");
    try {
      await showView(browser, "Reviews");
      for (const [session, request] of [
        ["agent-4", "deploy the api to staging"],
        ["agent-7", "migrate the orders table"],
        ["agent-12", "rotate the TLS certificates"],
      ] as const) {
        await api("POST", "/v1/reviews", { session_key: session, messages: conversation(request) });
        // An engine event, not a reload, brings it into the open view.
        await browser.$(`td.session*=${session}`).waitForExist({ timeout: 10_000 });
      }
      expect((await reviews()).filter((review) => review.status === "queued")).toHaveLength(3);
      await eventually("the tray counts the deferred reviews", () =>
        trayMenuLabel(enginePid, "Queue:") === "Queue: 3 deferred reviews" ? true : undefined,
      );
      await look(browser, "reviews");

      await showView(browser, "Overview");
      await browser.$("span*=1 busy slot").waitForExist({ timeout: 15_000 });
      await look(browser, "overview");

      await showView(browser, "Reviews");
      await browser.$('button[aria-label="Run now: review of agent-7"]').click();
      const ran = await eventually("Run now runs agent-7's review at once", async () =>
        (await reviews()).find((review) => review.session_key === "agent-7" && review.status === "done"),
      );
      expect(ran.attempts).toBe(1);

      await browser.$('button[aria-label="Drop review of agent-4"]').click();
      await browser.$("button=Confirm drop").click();
      await eventually("Drop drops agent-4's review", async () => {
        const agent4 = (await reviews()).find((review) => review.session_key === "agent-4");
        return agent4 === undefined || agent4.status === "dropped";
      });
      expect((await reviews()).find((review) => review.session_key === "agent-12")?.status).toBe("queued");
    } finally {
      // What is left must not take the stand-in's next replies once the person stops typing.
      for (const review of await reviews()) {
        if (review.status === "queued") await api("DELETE", `/v1/reviews/${review.id}`);
      }
      await endTurn();
      personTyping(false);
    }
  });
});

describe("Drafts", () => {
  it("approves a draft, and its SKILL.md appears on disk", async () => {
    await showView(browser, "Drafts");
    await openDraft("git-bisect");
    await look(browser, "drafts");
    await browser.$("#evaluation-title").scrollIntoView();
    await look(browser, "drafts-evaluation");
    await browser.$("#draft-title").scrollIntoView();

    const draft = await draftOf("git-bisect");
    expect(existsSync(join(SKILLS_DIR, "git-bisect"))).toBe(false);
    await button("Approve").click();
    await eventually("the draft is approved", async () => (await draftOf("git-bisect")).status === "approved");
    expect(readFileSync(join(SKILLS_DIR, "git-bisect", "SKILL.md"), "utf8")).toBe(draft.skill_md);
    await browser.$("p*=the skill is live").waitForExist();
    await look(browser, "drafts-approved");
  });

  it("dismisses a finding with a reason", async () => {
    await showView(browser, "Drafts");
    await openDraft("ssh-key-setup");
    await browser.$("#findings-title").scrollIntoView();
    await look(browser, "drafts-blocked");

    const before = await draftOf("ssh-key-setup");
    const finding = before.safety.findings.find((candidate) => candidate.dismissed === null);
    if (!finding) throw new Error("ssh-key-setup has no standing finding");
    await browser.$(`button[aria-label="Dismiss finding ${finding.rule} on line ${finding.line}…"]`).click();
    const reason = "the key store is ours; uploading there is the team's practice";
    await browser.$(`#dismiss-reason-${finding.index}`).setValue(reason);
    await browser.$("button=Dismiss finding").click();

    const after = await eventually("the finding is dismissed", async () => {
      const dismissed = (await draftOf("ssh-key-setup")).safety.findings.find((f) => f.index === finding.index)?.dismissed;
      return dismissed ?? undefined;
    });
    expect(after.reason).toBe(reason);
    await browser.$(`p*=${reason}`).waitForExist();
  });

  it("rejects a draft and leaves the skills folder untouched", async () => {
    await showView(browser, "Drafts");
    await openDraft("ssh-key-setup");
    const digest = folderDigest(SKILLS_DIR);
    await button("Reject…").click();
    const reason = "a private key must never leave the runner";
    await browser.$("#reject-reason").setValue(reason);
    await browser.$("button=Reject draft").click();

    const rejected = await eventually("the draft is rejected", async () => {
      const draft = await draftOf("ssh-key-setup");
      return draft.status === "rejected" ? draft : undefined;
    });
    expect(rejected.reject_reason).toBe(reason);
    expect(folderDigest(SKILLS_DIR)).toBe(digest);
    expect(existsSync(join(SKILLS_DIR, "ssh-key-setup"))).toBe(false);
  });

  it("edits a draft, then approves it, and the file holds the edit", async () => {
    await showView(browser, "Drafts");
    await openDraft("changelog-entry");
    const edit = "\n- Link each line to its pull request, so a reader can find the change.\n";
    await button("Edit").click();
    // Typing goes to the end of the text, under the last pitfall.
    await browser.$("#skill-md").addValue(edit);
    await button("Save").click();
    const edited = await eventually("the edit is saved", async () => {
      const draft = await draftOf("changelog-entry");
      return draft.edited_at !== null ? draft : undefined;
    });
    expect(edited.skill_md).toContain("- Link each line to its pull request");

    await button("Approve").waitForEnabled();
    await button("Approve").click();
    await eventually("the edited draft is approved", async () => (await draftOf("changelog-entry")).status === "approved");
    expect(readFileSync(join(SKILLS_DIR, "changelog-entry", "SKILL.md"), "utf8")).toBe(edited.skill_md);
  });
});

describe("Jobs", () => {
  it("starts a training run whose progress bar moves, pauses it for a live turn and cancels it", async () => {
    await showView(browser, "Jobs");
    await browser.$("button=New training run…").click();
    // Enough rounds that it cannot finish before the clicks below cancel it.
    await browser.$("#new-run-maxRounds").setValue("200");
    await browser.$("#new-run-wallClockMinutes").setValue("10");
    await browser.$("button=Start training").click();

    const started = await eventually("the run is admitted and running", async () =>
      (await api<{ jobs: Job[] }>("GET", "/v1/jobs")).jobs.find((candidate) => candidate.status === "running"),
    );
    await eventually("the tray icon says learning", () => trayLookIs(enginePid, "learning"));
    const bar = browser.$('article [role="progressbar"][aria-label="Progress"]');
    await bar.waitForExist();
    const first = Number(await bar.getAttribute("aria-valuenow"));
    await eventually(
      "the progress bar moves",
      async () => Number(await bar.getAttribute("aria-valuenow")) > first,
      60_000,
    );

    // A live turn pauses it between mini-batches; the person cancels it while it waits. (While
    // it trains, its progress text reflows the view several times a second, and a button can
    // move between WebDriver's finding it and its click, which then lands beside it.)
    const endTurn = await liveTurn("agent-5");
    try {
      await browser.$("p*=your agent is busy").waitForExist({ timeout: 20_000 });
      expect((await job(started.id)).paused).toBe(true);
      await look(browser, "jobs-running");
      await button("Cancel…").click();
      await browser.$("button=Stop the run").click();
      await eventually("the engine says cancelled", async () => (await job(started.id)).status === "cancelled");
      await titleLabel("Cancelled").waitForExist();
    } finally {
      await endTurn();
      // Left running, it would reflow the view under the next test's clicks.
      if ((await job(started.id)).status === "running") await api("POST", `/v1/jobs/${started.id}/cancel`);
    }
  });

  it("promotes a finished run, and its head goes live", async () => {
    const finished = await api<Job>("POST", "/v1/jobs", {
      kind: "routing-head",
      stopping: { max_rounds: 4, wall_clock_s: 600 },
    });
    await eventually("the run completes", async () => (await job(finished.id)).status === "completed", 90_000);

    await showView(browser, "Jobs");
    await browser.$('ul[aria-label="Training runs"]').$("button*=Completed").click();
    await browser.$("#curve-title").scrollIntoView();
    await look(browser, "jobs");
    await browser.$("#receipts-title").scrollIntoView();
    await look(browser, "jobs-receipts");

    await browser.$("#job-title").scrollIntoView();
    await button("Promote").click();
    await eventually("the run is promoted", async () => (await job(finished.id)).promoted_at !== null);
    expect((await status()).routing?.head_source).toBe(`job:${finished.id}`);
    await titleLabel("Live").waitForExist();
    await look(browser, "jobs-promoted");
  });
});

describe("Routing", () => {
  it("shows the head's update count the engine reports", async () => {
    await showView(browser, "Routing");
    const updates = (await status()).routing?.updates;
    expect(updates).toBeGreaterThanOrEqual(300);
    const tile = browser.$("dt=Updates").parentElement().$("dd");
    expect(await tile.getText()).toBe(String(updates));
    await look(browser, "routing");
  });
});

describe("Settings", () => {
  it("switches deferral, and the engine and the tray menu see it", async () => {
    await showView(browser, "Settings");
    const deferCheck = () => trayMenu(enginePid).find((item) => item.label === "Defer learning until idle")?.check;
    expect(deferCheck()).toBe("1");

    await browser.$("label*=At once").click();
    await eventually("the engine runs learning at once", async () => {
      return (await api<Settings>("GET", "/v1/settings")).defer_mode === "never";
    });
    await eventually("the tray's Defer check clears", () => deferCheck() === "0");

    await browser.$("label*=In the lulls").click();
    await eventually("the engine defers again", async () => {
      return (await api<Settings>("GET", "/v1/settings")).defer_mode === "auto";
    });
    await eventually("the tray's Defer check is back", () => deferCheck() === "1");
    await look(browser, "settings");
  });
});

describe("Notifications on the session bus, and the tray icon", () => {
  /** The notes whose title is `summary`. */
  const titled = (summary: string) => notes().filter((note) => note.summary === summary);

  it("gave one notification per burst of the story's drafts", () => {
    // Whether changelog-entry joins the first burst depends on how soon it follows git-bisect
    // (the burst's 2 s quiet window): either way each draft is told once, and each note's title
    // counts the skills its body names.
    const ready = notes().filter((note) => note.summary.includes("ready for review"));
    const named = ready.map((note: Note) => {
      expect(note.app_name).toBe("Lull");
      // Alone: "…the skill X. Nothing goes live…", or blocked "…the skill X, and a critical safety
      // finding stopped it…"; several: "…X, Y and Z. Nothing goes live…".
      const skills =
        /^Lull drafted (?:the skill )?(.+?)(?:\. Nothing goes live|, and a critical safety finding stopped it)/
          .exec(note.body)?.[1]
          ?.split(/, | and /) ?? [];
      expect(note.summary).toBe(skills.length === 1 ? "A draft is ready for review" : `${skills.length} drafts are ready for review`);
      return skills;
    });
    expect(named.flat()).toEqual(["ssh-key-setup", "git-bisect", "changelog-entry"]);
    // ssh-key-setup, blocked, is the one draft a safety finding stopped, alone or in its burst.
    expect(ready.filter((note) => /safety finding stopped (it|1 of them)\./.test(note.body))).toHaveLength(1);
  });

  it("gives one notification for a burst of five drafts", async () => {
    const before = notes().length;
    const blockedBefore = (await status()).drafts.blocked;
    // replies.py: agent-3's review proposes three skills, agent-8's two; all five are blocked.
    await api("POST", "/v1/reviews", { session_key: "agent-3", focus: "how I set up CI runners", messages: conversation("set up the new CI runner") });
    await eventually("agent-3's three drafts are blocked", async () => (await status()).drafts.blocked === blockedBefore + 3, 30_000);
    await api("POST", "/v1/reviews", { session_key: "agent-8", focus: "how I set up CI runners", messages: conversation("finish the CI runner") });
    await eventually("all five drafts are blocked", async () => (await status()).drafts.blocked === blockedBefore + 5, 30_000);
    await eventually("the burst's notification arrives", () => notes().length > before, 15_000);
    // Another note, if the burst had split, would follow within the 2 s quiet window.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(notes().slice(before).map((note) => note.summary)).toEqual(["5 drafts are ready for review"]);
    expect(notes().at(-1)?.body).toMatch(/^Lull drafted runner-\S+, runner-\S+, runner-\S+ and 2 more\. .* A critical safety finding stopped 5 of them\.$/);
    for (const draft of await drafts()) {
      if (draft.status === "blocked") await api("POST", `/v1/drafts/${draft.id}/reject`, { reason: "a private key must never leave the runner" });
    }
  });

  it("gave one notification for the finished run and none for the cancelled one", () => {
    expect(titled("A training run finished")).toHaveLength(1);
    expect(notes().filter((note) => note.summary.startsWith("A training run"))).toHaveLength(1);
  });

  it("says nothing of the managed server coming and going unless the person asked", async () => {
    const moveServer = async (away: boolean) => {
      const hidden = `${e2e.serverStateFile}.away`;
      if (away) renameSync(e2e.serverStateFile, hidden);
      else renameSync(hidden, e2e.serverStateFile);
      await eventually(`the engine sees the server ${away ? "gone" : "back"}`, async () =>
        ((await status()).server.state === "ready") !== away, 30_000);
    };
    const before = notes().length;
    await moveServer(true);
    await moveServer(false);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(notes().slice(before)).toEqual([]);

    await api("PATCH", "/v1/settings", { notify_server_changes: true });
    try {
      await moveServer(true);
      await eventually("the server's going away is told", () => titled("Your managed server went away").length === 1);
      await moveServer(false);
      await eventually("its return is told", () => titled("Your managed server is ready").length === 1);
      expect(notes().slice(before).map((note) => note.summary)).toEqual([
        "Your managed server went away",
        "Your managed server is ready",
      ]);
    } finally {
      await api("PATCH", "/v1/settings", { notify_server_changes: false });
    }
  });

  it("shows paused while learning is paused, and idle with nothing to do", async () => {
    await eventually("the tray icon says idle", () => trayLookIs(enginePid, "idle"));
    await api("PATCH", "/v1/settings", { paused: true });
    try {
      await eventually("the tray icon says paused", () => trayLookIs(enginePid, "paused"));
    } finally {
      await api("PATCH", "/v1/settings", { paused: false });
    }
    await eventually("the tray icon says idle again", () => trayLookIs(enginePid, "idle"));
  });
});

describe("Closing the window", () => {
  it("leaves the process that hosts the engine running and its API answering", async () => {
    expect(lullWindows()).toHaveLength(1);
    closeLikeAPerson();
    windowOpen = false;
    await eventually("the window is gone", () => lullWindows().length === 0);
    expect(alive(enginePid)).toBe(true);
    expect((await status()).server.state).toBe("ready");
  });
});

describe("Accessibility: axe-core in the real WebKit, colour contrast included", () => {
  it.for(VIEWS_LOOKED_AT)("finds nothing serious or critical on %s", (name, context) => {
    const found = axeFindings.get(name);
    // A test filtered out with -t did not look at its view.
    if (found === undefined) context.skip();
    expect(found).toEqual([]);
  });
});
