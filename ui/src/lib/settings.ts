// The run-time settings (`GET/PATCH /v1/settings`): the engine's types, generated from its Rust
// types.

export type { Settings, SettingsPatch } from "./generated/engine";
