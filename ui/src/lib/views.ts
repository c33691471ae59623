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
  { id: "routing", title: "Routing", blurb: "The routing head: status, update count, recent rewards." },
  { id: "settings", title: "Settings", blurb: "Deferral, pause, reviews, notifications, start at login." },
] as const satisfies readonly View[];

export type ViewId = (typeof VIEWS)[number]["id"];

/** The view with this id; the Overview for an unknown one. */
export function findView(id: string): View {
  return VIEWS.find((view) => view.id === id) ?? VIEWS[0];
}
