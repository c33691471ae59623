//! The stand-in llama-server as the managed server, and an engine beside it, for tests that
//! run over real HTTP.

#![allow(dead_code)] // each test crate uses its own part of it

use std::path::{Path, PathBuf};
use std::time::Duration;

use lull::config::Config;
use lull::events::EngineEvent;
use lull::{Engine, Paths};
use lull_stand_in::{StandIn, StandInConfig};

/// Starts the stand-in and writes a supervisor state file for it (with this process's pid, so
/// it is alive) at `<dir>/server.json`.
pub async fn managed_stand_in(dir: &Path, config: StandInConfig) -> (StandIn, PathBuf) {
    let server = StandIn::start(config).await.unwrap();
    let state_file = dir.join("server.json");
    server
        .write_state_file(&state_file, std::process::id())
        .unwrap();
    (server, state_file)
}

/// An engine data directory inside `dir`, with no config file.
pub fn paths_in(dir: &Path) -> Paths {
    Paths {
        data_dir: dir.join("data"),
        config_file: dir.join("none.toml"),
    }
}

/// The stand-in as the managed server and an engine on `dir` beside it, configured by
/// `config` (given the supervisor's state file), with a subscription to the engine's events.
pub async fn engine_beside(
    dir: &Path,
    stand_in: StandInConfig,
    config: impl FnOnce(&Path) -> Config,
) -> (
    StandIn,
    Engine,
    tokio::sync::broadcast::Receiver<EngineEvent>,
) {
    let (server, state_file) = managed_stand_in(dir, stand_in).await;
    let engine = Engine::open(config(&state_file), paths_in(dir))
        .await
        .unwrap();
    let events = engine.events().subscribe();
    (server, engine, events)
}

/// Waits for the first event matching `wanted`, at most `limit`.
pub async fn next_event(
    events: &mut tokio::sync::broadcast::Receiver<EngineEvent>,
    limit: Duration,
    wanted: impl Fn(&EngineEvent) -> bool,
) -> EngineEvent {
    tokio::time::timeout(limit, async {
        loop {
            let event = events.recv().await.expect("event stream open");
            if wanted(&event) {
                return event;
            }
        }
    })
    .await
    .expect("the expected event arrived in time")
}
