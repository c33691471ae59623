import { beforeEach, describe, expect, it, vi } from "vitest";

const invoke = vi.fn();
vi.mock("@tauri-apps/api/core", () => ({ invoke: (...args: unknown[]) => invoke(...args), isTauri: () => true }));

const { tauriBackend } = await import("./backend");

describe("tauriBackend, drafts", () => {
  beforeEach(() => {
    invoke.mockReset();
    invoke.mockResolvedValue({});
  });

  it("calls the commands of the spec with Tauri's camelCase arguments", async () => {
    await tauriBackend.listDrafts();
    await tauriBackend.listDrafts("review_pending");
    await tauriBackend.getDraft("d1");
    await tauriBackend.approveDraft("d1");
    await tauriBackend.rejectDraft("d1", "too vague");
    await tauriBackend.editDraft("d1", "# new text");
    await tauriBackend.dismissFinding("d1", 2, "our own host");
    expect(invoke.mock.calls).toEqual([
      ["list_drafts", { status: null }],
      ["list_drafts", { status: "review_pending" }],
      ["get_draft", { id: "d1" }],
      ["approve_draft", { id: "d1" }],
      ["reject_draft", { id: "d1", reason: "too vague" }],
      ["edit_draft", { id: "d1", skillMd: "# new text" }],
      ["dismiss_finding", { id: "d1", index: 2, reason: "our own host" }],
    ]);
  });

  it("rejects with the engine's {code, message}", async () => {
    invoke.mockRejectedValue({ code: "approval_refused", message: "the skill's file changed on disk" });
    await expect(tauriBackend.approveDraft("d1")).rejects.toEqual({
      code: "approval_refused",
      message: "the skill's file changed on disk",
    });
  });
});
