// The names of every Tauri command the app registers, shared by `build.rs` (which declares one
// `allow-<name>` / `deny-<name>` permission per command) and by the tests in `lib.rs` that check
// each command registered in `generate_handler!` is listed here and granted by a capability, and
// that the UI (ui/src/lib/backend.ts) invokes exactly these names.
//
// This file is `include!`d, so it holds a single item and no `//!` docs.

/// Every command in `generate_handler!`, by function name.
pub const COMMAND_NAMES: &[&str] = &[
    "app_version",
    "engine_status",
    "host_state",
    "list_reviews",
    "run_review_now",
    "drop_review",
    "list_drafts",
    "get_draft",
    "approve_draft",
    "reject_draft",
    "edit_draft",
    "dismiss_finding",
    "start_job",
    "list_jobs",
    "get_job",
    "cancel_job",
    "resume_job",
    "promote_job",
    "get_settings",
    "update_settings",
    "get_autostart",
    "set_autostart",
];
