import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { NOW, reviewList } from "../test/fixtures";
import { tabTo } from "../test/keyboard";
import Reviews from "./Reviews.svelte";

function setup(overrides: { onrunnow?: (id: string) => Promise<void>; ondrop?: (id: string) => Promise<void> } = {}) {
  const onrunnow = overrides.onrunnow ?? vi.fn(async () => {});
  const ondrop = overrides.ondrop ?? vi.fn(async () => {});
  render(Reviews, { reviews: reviewList(), now: NOW, onrunnow, ondrop });
  return { onrunnow, ondrop };
}

describe("Reviews", () => {
  it("lists reviews with status, age, attempts and last error", () => {
    setup();
    const rows = screen.getAllByRole("row").slice(1);
    const cells = rows.map((row) => within(row).getAllByRole("cell").slice(0, 5).map((cell) => cell.textContent?.trim()));
    expect(cells).toEqual([
      ["agent-7", "Queued", "4 min", "1", "preempted: a live turn started"],
      ["agent-3", "Failed", "2 h", "33 failed", "the model's answer is not the expected JSON"],
      ["agent-1", "Done", "30 s", "1", "—"],
    ]);
    expect(screen.getAllByRole("button", { name: /^Run now/ })).toHaveLength(1);
  });

  it("runs a queued review now", async () => {
    const { onrunnow } = setup();
    await fireEvent.click(screen.getByRole("button", { name: "Run now: review of agent-7" }));
    expect(onrunnow).toHaveBeenCalledWith("r-queued");
  });

  it("asks once more before dropping", async () => {
    const { ondrop } = setup();
    await fireEvent.click(screen.getByRole("button", { name: "Drop review of agent-7" }));
    expect(ondrop).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByRole("button", { name: "Confirm drop" }));
    expect(ondrop).toHaveBeenCalledWith("r-queued");
  });

  it("shows the engine's refusal", async () => {
    setup({ onrunnow: () => Promise.reject({ code: "conflict", message: "review r-queued is running, not queued" }) });
    await fireEvent.click(screen.getByRole("button", { name: "Run now: review of agent-7" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("review r-queued is running, not queued");
  });

  it("filters by status", async () => {
    setup();
    await fireEvent.click(screen.getByRole("button", { name: /^Failed/ }));
    expect(screen.getAllByRole("row")).toHaveLength(2);
    await fireEvent.click(screen.getByRole("button", { name: /^Dropped/ }));
    expect(screen.getByRole("status")).toHaveTextContent("No dropped reviews.");
  });
});

describe("Reviews, by keyboard only", () => {
  it("filters, runs now, and drops after asking: Escape keeps the review and puts the focus back", async () => {
    const user = userEvent.setup();
    const { onrunnow, ondrop } = setup();
    await tabTo(user, screen.getByRole("button", { name: /^Failed/ }));
    await user.keyboard("{Enter}");
    expect(screen.getAllByRole("row")).toHaveLength(2);
    await tabTo(user, screen.getByRole("button", { name: /^All/ }), { backwards: true });
    await user.keyboard("{Enter}");

    await tabTo(user, screen.getByRole("button", { name: "Run now: review of agent-7" }));
    await user.keyboard("{Enter}");
    expect(onrunnow).toHaveBeenCalledWith("r-queued");

    const drop = screen.getByRole("button", { name: "Drop review of agent-7" });
    await tabTo(user, drop);
    await user.keyboard("{Enter}");
    expect(screen.getByRole("button", { name: "Confirm drop" })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(ondrop).not.toHaveBeenCalled();
    expect(screen.getByRole("button", { name: "Drop review of agent-7" })).toHaveFocus();

    await user.keyboard("{Enter}");
    await user.keyboard("{Enter}");
    expect(ondrop).toHaveBeenCalledWith("r-queued");
  });

  it("keeps the focus in the view once Confirm drop is gone", async () => {
    const user = userEvent.setup();
    setup();
    await tabTo(user, screen.getByRole("button", { name: "Drop review of agent-7" }));
    await user.keyboard("{Enter}{Enter}");
    await waitFor(() => expect(screen.getByRole("heading", { level: 2, name: "Reviews" })).toHaveFocus());
    await user.tab();
    expect(screen.getByRole("button", { name: /^All/ })).toHaveFocus();
  });
});
