// The window's views (DESIGN §1), in navigation order.

export interface View {
  id: string;
  title: string;
  /** What the view is for, in one line. */
  blurb: string;
}

export const VIEWS = [
  { id: "overview", title: "Overview", blurb: "The managed server, its models, and what the engine is doing now." },
  { id: "reviews", title: "Reviews", blurb: "Conversations queued, running and reviewed: age, attempts, run now, drop." },
  { id: "drafts", title: "Drafts", blurb: "Proposed skills, their diffs, safety findings and evaluations: approve or reject." },
  { id: "jobs", title: "Jobs", blurb: "Training runs: progress, rounds, metrics; cancel, resume, promote." },
  { id: "routing", title: "Routing", blurb: "How Lull ranks skills for your agent, and what it learned from the outcomes." },
  { id: "settings", title: "Settings", blurb: "When learning runs: deferral, pause, reviews." },
] as const satisfies readonly View[];

export type ViewId = (typeof VIEWS)[number]["id"];

/** Whether `id` names a view (for ids from the URL or the tray). */
export function isViewId(id: string): id is ViewId {
  return VIEWS.some((view) => view.id === id);
}

/** The view a new window opens on: `index.html#drafts` → "drafts"; anything else → Overview. */
export function viewFromHash(hash: string): ViewId {
  const id = hash.replace(/^#/, "");
  return isViewId(id) ? id : "overview";
}
