import { beforeEach, describe, expect, it, vi } from "vitest";

const invoke = vi.fn();
const listen = vi.fn();
vi.mock("@tauri-apps/api/core", () => ({ invoke: (...args: unknown[]) => invoke(...args), isTauri: () => true }));
vi.mock("@tauri-apps/api/event", () => ({ listen: (...args: unknown[]) => listen(...args) }));

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

describe("tauriBackend, jobs", () => {
  beforeEach(() => {
    invoke.mockReset();
    invoke.mockResolvedValue({});
  });

  it("calls the commands of the spec, the stopping policy's fields as the engine names them", async () => {
    const stopping = { max_rounds: 10, target: 0.85, min_improvement: null, wall_clock_s: 1800 };
    await tauriBackend.startJob(stopping);
    await tauriBackend.listJobs();
    await tauriBackend.getJob("j1");
    await tauriBackend.cancelJob("j1");
    await tauriBackend.resumeJob("j1");
    await tauriBackend.promoteJob("j1");
    expect(invoke.mock.calls).toEqual([
      ["start_job", { stopping: { max_rounds: 10, target: 0.85, min_improvement: null, wall_clock_s: 1800 } }],
      ["list_jobs", undefined],
      ["get_job", { id: "j1" }],
      ["cancel_job", { id: "j1" }],
      ["resume_job", { id: "j1" }],
      ["promote_job", { id: "j1" }],
    ]);
  });

  it("rejects a refused resume with the engine's {code, message}", async () => {
    invoke.mockRejectedValue({ code: "checkpoint_chain_broken", message: "round 2's checkpoint does not match its digest" });
    await expect(tauriBackend.resumeJob("j1")).rejects.toEqual({
      code: "checkpoint_chain_broken",
      message: "round 2's checkpoint does not match its digest",
    });
  });
});

describe("tauriBackend, the window's own", () => {
  beforeEach(() => {
    invoke.mockReset();
    listen.mockReset();
  });

  it("reads and writes the login item", async () => {
    invoke.mockResolvedValue(true);
    expect(await tauriBackend.getAutostart()).toBe(true);
    await tauriBackend.setAutostart(false);
    expect(invoke.mock.calls).toEqual([
      ["get_autostart", undefined],
      ["set_autostart", { enabled: false }],
    ]);
  });

  it("asks for the host state once it listens, so a state sent before is not missed", async () => {
    const order: string[] = [];
    listen.mockImplementation(async (name: string) => {
      order.push(`listen ${name}`);
      return () => order.push(`unlisten ${name}`);
    });
    invoke.mockImplementation(async (command: string) => {
      order.push(command);
      return { state: "failed", message: "the port is taken" };
    });
    const onHostChange = vi.fn();
    const stop = await tauriBackend.subscribe({ onEngineEvent: vi.fn(), onHostChange, onNavigate: vi.fn() });
    expect(order).toEqual(["listen engine-event", "listen engine-host", "listen navigate", "host_state"]);
    expect(onHostChange).toHaveBeenCalledWith({ state: "failed", message: "the port is taken" });
    stop();
    expect(order.filter((step) => step.startsWith("unlisten"))).toHaveLength(3);
  });

  it("still listens when the host state cannot be read", async () => {
    listen.mockResolvedValue(() => {});
    invoke.mockRejectedValue({ code: "internal", message: "no such command" });
    const onHostChange = vi.fn();
    await tauriBackend.subscribe({ onEngineEvent: vi.fn(), onHostChange, onNavigate: vi.fn() });
    expect(listen).toHaveBeenCalledTimes(3);
    expect(onHostChange).not.toHaveBeenCalled();
  });
});
