import { render, screen, within } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import type { RoutingStatus } from "../lib/routing";
import { busyStatus } from "../test/fixtures";
import Routing from "./Routing.svelte";

const learned: RoutingStatus = {
  embedder: { name: "hashed-ngrams-v1", kind: "hashed", dim: 256, fallback_reason: "the managed server serves no embeddings" },
  dim: 256,
  skills: 4,
  skills_dir: "/home/me/.local/share/lull/skills",
  skipped_skills: [{ folder: "Bad Name", reason: "the folder name is not lowercase-hyphen" }],
  updates: 64,
  warmed_up: true,
  warmup_updates: 50,
  persisted_updates: 60,
  save_problem: null,
  head_origin: "saved head loaded (60 updates, last saved with hashed-ngrams-v1)",
  head_source: "online",
  baseline: 0.25,
  recent_rewards: [1, 1, -1, 1],
  recent_success_rate: 0.75,
  saved_heads: [],
  cached_routes: 2,
};

describe("Routing", () => {
  it("shows the head's state, update count, reward curve and what it ranks", () => {
    render(Routing, { status: busyStatus({ routing: learned }) });
    expect(screen.getByRole("status")).toHaveTextContent("the head has learned from 64 outcomes");
    expect(screen.getByRole("status")).toHaveTextContent("75 % of the last 4 routed skills succeeded.");
    expect(screen.getByText("Updates").nextElementSibling).toHaveTextContent("64");
    expect(screen.getByRole("img", { name: "Success share over the last 4 outcomes" })).toBeInTheDocument();
    const details = screen.getByRole("region", { name: "Details" });
    expect(within(details).getByText(/the managed server serves no embeddings/)).toBeInTheDocument();
    expect(within(details).getByText(/the folder name is not lowercase-hyphen/)).toBeInTheDocument();
  });

  it("says when the head's last save was refused", () => {
    const refused = {
      ...learned,
      save_problem: "not saved: the stored 256-dimensional head is another one (90 updates, saved with hashed-ngrams-v1)",
    };
    render(Routing, { status: busyStatus({ routing: refused }) });
    expect(screen.getByRole("alert")).toHaveTextContent("The last save: not saved: the stored 256-dimensional head is another one");
  });

  it("shows no save problem while saves work", () => {
    render(Routing, { status: busyStatus({ routing: learned }) });
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("explains the warm-up and how outcomes arrive before there are any", () => {
    const fresh = { ...learned, updates: 0, warmed_up: false, recent_rewards: [], recent_success_rate: null, skipped_skills: [] };
    render(Routing, { status: busyStatus({ routing: fresh }) });
    expect(screen.getByRole("status")).toHaveTextContent("Warming up: 0 of 50 outcomes so far.");
    expect(screen.getByText(/appears once your agent has reported two outcomes/)).toBeInTheDocument();
    expect(screen.queryByRole("img")).toBeNull();
  });
});
