// An automated accessibility check (axe-core) of every view, with realistic data, in the states a
// person meets: lists, a chosen item, each open form, loading, empty and failing. Any serious or
// critical violation fails; what jsdom cannot check (contrast) is said in test/axe.ts.
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import App from "./App.svelte";
import type { CommandError } from "./lib/errors";
import { VIEWS } from "./lib/views";
import { axeViolations, seriousViolations } from "./test/axe";
import {
  busyStatus,
  draftList,
  fakeBackend,
  jobList,
  learnedRouting,
  NOW,
  reviewList,
  SETTINGS,
  withDetail,
} from "./test/fixtures";
import Drafts from "./views/Drafts.svelte";
import Jobs from "./views/Jobs.svelte";
import Overview from "./views/Overview.svelte";
import Reviews from "./views/Reviews.svelte";
import Routing from "./views/Routing.svelte";
import Settings from "./views/Settings.svelte";

const STARTING: CommandError = { code: "engine_starting", message: "The engine is still opening its database." };
const FAILED: CommandError = { code: "engine_unavailable", message: "the data folder is locked by another Lull (pid 4242)" };

async function expectNoSerious(container: Element) {
  expect(await seriousViolations(container)).toEqual([]);
}

function renderDrafts() {
  const drafts = draftList();
  return render(Drafts, {
    drafts,
    now: NOW,
    onopen: vi.fn(async (id: string) => drafts.find((one) => one.id === id) ?? drafts[0]!),
    onapprove: vi.fn(async () => new Promise<never>(() => {})),
    onreject: vi.fn(async () => new Promise<never>(() => {})),
    onedit: vi.fn(async () => new Promise<never>(() => {})),
    ondismiss: vi.fn(async () => new Promise<never>(() => {})),
  });
}

function renderJobs() {
  const jobs = jobList();
  const never = vi.fn(async () => new Promise<never>(() => {}));
  return render(Jobs, {
    jobs,
    now: NOW,
    onopen: vi.fn(async (id: string) => withDetail(jobs.find((one) => one.id === id) ?? jobs[0]!)),
    oncancel: never,
    onresume: never,
    onpromote: never,
    onstart: never,
  });
}

describe("accessibility: Overview", () => {
  it("with a busy managed server", async () => {
    const { container } = render(Overview, { status: busyStatus() });
    await expectNoSerious(container);
  });

  it("while the engine starts, and when it failed", async () => {
    const starting = render(Overview, { status: null, error: STARTING });
    await expectNoSerious(starting.container);
    starting.unmount();
    const failed = render(Overview, { status: null, error: FAILED });
    await expectNoSerious(failed.container);
  });

  it("with an unreachable server and no models", async () => {
    const status = busyStatus({
      server: { state: "unreachable", base_url: "http://127.0.0.1:8080/v1", models: [], idle: true, reason: "connection refused" },
    });
    const { container } = render(Overview, { status });
    await expectNoSerious(container);
  });
});

describe("accessibility: Reviews", () => {
  it("with queued, failed and done reviews, and a drop being confirmed", async () => {
    const { container } = render(Reviews, { reviews: reviewList(), now: NOW, onrunnow: vi.fn(), ondrop: vi.fn() });
    await expectNoSerious(container);
    await fireEvent.click(screen.getByRole("button", { name: "Drop review of agent-7" }));
    await expectNoSerious(container);
  });

  it("with none yet, and while loading", async () => {
    const empty = render(Reviews, { reviews: [], now: NOW, onrunnow: vi.fn(), ondrop: vi.fn() });
    await expectNoSerious(empty.container);
    empty.unmount();
    const loading = render(Reviews, { reviews: null, now: NOW, onrunnow: vi.fn(), ondrop: vi.fn() });
    await expectNoSerious(loading.container);
  });
});

describe("accessibility: Drafts", () => {
  it("with the first draft open, rendered and raw", async () => {
    const { container } = renderDrafts();
    await expectNoSerious(container);
    await fireEvent.click(screen.getByRole("button", { name: "Raw" }));
    await expectNoSerious(container);
  });

  it("with a risky draft, its dismiss form, the reject form and the editor open in turn", async () => {
    const { container } = renderDrafts();
    await fireEvent.click(screen.getByRole("button", { name: /^deploy-preview/ }));
    await fireEvent.click(screen.getByRole("button", { name: /^Dismiss finding/ }));
    await expectNoSerious(container);
    await fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await fireEvent.click(screen.getByRole("button", { name: "Reject…" }));
    await expectNoSerious(container);
    await fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await fireEvent.click(screen.getByRole("button", { name: "Edit" }));
    await expectNoSerious(container);
  });

  it("with a decided draft open", async () => {
    const { container } = renderDrafts();
    await fireEvent.click(screen.getByRole("button", { name: /^old-rejected/ }));
    await expectNoSerious(container);
  });

  it("keeps the rendered SKILL.md's headings below the section's", async () => {
    const { container } = renderDrafts();
    const rendered = screen.getByTestId("rendered-skill");
    expect(within(rendered).getByRole("heading", { name: "Rebase safely" }).tagName).toBe("H5");
    expect((await axeViolations(container)).map((violation) => violation.rule)).not.toContain("heading-order");
  });
});

describe("accessibility: Jobs", () => {
  it("with every kind of run, the running one open with its receipts and checkpoints", async () => {
    const { container } = renderJobs();
    await fireEvent.click(screen.getByRole("button", { name: /^Run of .*Running/ }));
    await waitFor(() => expect(screen.getByRole("region", { name: "Receipts, a table" })).toBeInTheDocument());
    await expectNoSerious(container);
  });

  it("with a cancel being confirmed", async () => {
    const { container } = renderJobs();
    await fireEvent.click(screen.getByRole("button", { name: /^Run of .*Running/ }));
    await fireEvent.click(screen.getByRole("button", { name: "Cancel…" }));
    await expectNoSerious(container);
  });

  it("with the new-run form showing its errors", async () => {
    const { container } = renderJobs();
    await fireEvent.click(screen.getByRole("button", { name: "New training run…" }));
    await fireEvent.input(screen.getByLabelText("Time budget"), { target: { value: "" } });
    await fireEvent.click(screen.getByRole("button", { name: "Start training" }));
    expect(screen.getByLabelText("Time budget")).toHaveAttribute("aria-invalid", "true");
    await expectNoSerious(container);
  });
});

describe("accessibility: Routing", () => {
  it("with a learned head, its curve, a skipped folder and a failed save", async () => {
    const { container } = render(Routing, { status: busyStatus({ routing: learnedRouting() }) });
    await expectNoSerious(container);
  });

  it("while warming up with no curve yet", async () => {
    const routing = learnedRouting({ warmed_up: false, updates: 3, recent_rewards: [1], skipped_skills: [], save_problem: null });
    const { container } = render(Routing, { status: busyStatus({ routing }) });
    await expectNoSerious(container);
  });
});

describe("accessibility: Settings", () => {
  it("with the settings in force, and after a refused change", async () => {
    const onchange = vi.fn(() => Promise.reject({ code: "shutting_down", message: "Lull is quitting" }));
    const { container } = render(Settings, { settings: SETTINGS, onchange });
    await expectNoSerious(container);
    await fireEvent.click(screen.getByRole("checkbox", { name: /Pause learning/ }));
    await screen.findByText("Not saved: Lull is quitting");
    await expectNoSerious(container);
  });

  it("while the engine starts", async () => {
    const { container } = render(Settings, { settings: null, error: STARTING, onchange: vi.fn() });
    await expectNoSerious(container);
  });
});

describe("accessibility: the whole window", () => {
  for (const view of VIEWS) {
    it(`on ${view.title}: landmarks, one h1, heading order`, async () => {
      const { backend } = fakeBackend({ engineStatus: vi.fn(async () => busyStatus({ routing: learnedRouting() })) });
      render(App, { backend });
      await waitFor(() => expect(screen.getByRole("button", { name: /^Drafts/ })).toHaveAccessibleName("Drafts, 2 waiting"));
      await fireEvent.click(screen.getByRole("button", { name: new RegExp(`^${view.title}`) }));
      await waitFor(() => expect(screen.getByRole("heading", { level: 2 })).toHaveTextContent(view.title));
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The whole page: what only a page has (landmarks, the h1) is checked too.
      expect(await seriousViolations(document.body)).toEqual([]);
      const moderate = (await axeViolations(document.body)).map((violation) => violation.rule);
      expect(moderate.filter((rule) => ["region", "heading-order", "landmark-one-main", "page-has-heading-one"].includes(rule))).toEqual([]);
    });
  }
});
