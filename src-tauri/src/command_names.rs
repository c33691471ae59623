// The names of every Tauri command the app registers, shared by `build.rs` (which declares one
// `allow-<name>` / `deny-<name>` permission per command) and by the test in `lib.rs` that checks
// each command registered in `generate_handler!` is listed here and granted by a capability.
//
// This file is `include!`d, so it holds a single item and no `//!` docs.

/// Every command in `generate_handler!`, by function name.
pub const COMMAND_NAMES: &[&str] = &[
    "app_version",
    "engine_status",
    "list_reviews",
    "run_review_now",
    "drop_review",
    "get_settings",
    "update_settings",
];
