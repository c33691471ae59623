//! Lull's learning engine.
//!
//! Lull reviews finished agent conversations, drafts reusable skills, learns which skill to route
//! a request to, and runs training jobs — all in the lulls, when the managed `llama-server` is not
//! serving the person. This crate is the engine; `src/main.rs` is the `lull` CLI and headless
//! daemon, and `src-tauri/` the desktop shell. Neither holds logic of its own.
//!
//! - [`Engine`] owns the store, settings and events and offers every operation.
//! - [`config`] reads DESIGN §5's configuration; [`store`] is the SQLite database.
//! - [`api`] is the loopback HTTP adapter; [`events`] the in-process event bus.
//! - [`server`] knows the managed `llama-server`; [`routing`] ranks skills.
//! - [`hermes`] sets Hermes Agent up to learn through Lull (`lull hermes setup`).
//! - [`sim`] replays a day of activity against the production scheduler (`lull simulate`).
//!
//! See `docs/ARCHITECTURE.md` for the map and its invariants.

pub mod api;
pub mod client;
pub mod config;
pub mod data_dir;
pub mod drafts;
pub mod engine;
pub mod error_code;
pub mod events;
pub mod fswatch;
pub mod gate;
pub mod hermes;
pub mod jobs;
pub mod learning;
pub mod llm;
pub mod logging;
pub mod power;
pub mod reviews;
pub mod routing;
pub mod safety;
pub mod server;
pub mod settings;
pub mod sim;
pub mod skills;
pub mod store;

pub use config::{Config, Paths};
pub use engine::{Engine, EngineError, Status};
pub use error_code::ErrorCode;
