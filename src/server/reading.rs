//! The plain data a probe produces: [`ServerReading`] and its parts.

use std::fmt;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::url_match::is_managed_url;

/// What Lull knows about the managed server, one word (DESIGN §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// No state file: no managed server, or it stopped.
    Absent,
    /// A state file that does not parse, or lacks a usable `base_url`.
    Invalid,
    /// A state file whose `pid` is not alive (the server died without cleaning up).
    Stale,
    /// The process is alive but `/health` does not answer 200 yet (loading its model).
    Starting,
    /// `/health` is 200 and the models and slots were read.
    Ready,
    /// The server did not answer in time, answered an error or garbage, or refused the key.
    Unreachable,
}

impl ServerState {
    /// The wire spelling, e.g. `"ready"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Absent => "absent",
            ServerState::Invalid => "invalid",
            ServerState::Stale => "stale",
            ServerState::Starting => "starting",
            ServerState::Ready => "ready",
            ServerState::Unreachable => "unreachable",
        }
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model's status as llama-server reports it; in single-model mode the one model is
/// [`ModelStatus::Loaded`] once the server is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ModelStatus {
    /// In memory: learning work may run on it.
    Loaded,
    /// Being loaded: learning waits.
    Loading,
    /// Not in memory: learning waits, because loading it could evict the person's model.
    Unloaded,
    /// Unloaded for idleness: learning waits, for the same reason.
    Sleeping,
    /// Being downloaded: learning waits.
    Downloading,
    /// A status this version of Lull does not know; treated as not loaded.
    Unknown,
}

impl ModelStatus {
    /// Reads `data[].status.value`; anything unrecognised is [`ModelStatus::Unknown`].
    pub fn from_wire(value: &str) -> ModelStatus {
        match value {
            "loaded" => ModelStatus::Loaded,
            "loading" => ModelStatus::Loading,
            "unloaded" => ModelStatus::Unloaded,
            "sleeping" => ModelStatus::Sleeping,
            "downloading" => ModelStatus::Downloading,
            _ => ModelStatus::Unknown,
        }
    }
}

/// One model of the managed server, as the `/v1/status` contract shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ModelReading {
    /// The id requests name it by.
    pub id: String,
    /// Its status.
    pub status: ModelStatus,
    /// How many of its slots report `is_processing` (0 for a model that is not loaded).
    pub busy_slots: usize,
}

/// Which shape of llama-server answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerMode {
    /// One model (`-m model.gguf`).
    Single,
    /// Router mode: many models with a status each.
    Router,
}

/// The managed server's API key. Its `Debug` hides the value so readings can be logged.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for an `Authorization: Bearer` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(…)")
    }
}

/// One reading of the managed server: the `server` object of `/v1/status` (DESIGN §4) plus a
/// `reason` saying why it is not ready or not idle, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ServerReading {
    /// The one-word state.
    pub state: ServerState,
    /// The state file's `base_url` (ends in `/v1`), when there is a readable one.
    pub base_url: Option<String>,
    /// The models, in the server's order (empty unless ready).
    pub models: Vec<ModelReading>,
    /// The idle predicate: ready, and no processing slot on any loaded model.
    pub idle: bool,
    /// Why the server is not ready or not idle; `None` when ready and idle.
    pub reason: Option<String>,
    /// Which shape of server answered (known once ready); not part of the status contract.
    #[serde(skip)]
    pub mode: Option<ServerMode>,
    /// The key from the state file, for whoever runs work on the server; never serialised.
    #[serde(skip)]
    pub api_key: Option<ApiKey>,
}

impl ServerReading {
    /// A reading with no server to talk to (`absent`, `invalid`, `stale`, or a failed probe).
    pub fn not_ready(
        state: ServerState,
        base_url: Option<String>,
        reason: impl Into<String>,
    ) -> ServerReading {
        ServerReading {
            state,
            base_url,
            models: Vec::new(),
            idle: false,
            reason: Some(reason.into()),
            mode: None,
            api_key: None,
        }
    }

    /// Whether the server answered and its models and slots were read.
    pub fn is_ready(&self) -> bool {
        self.state == ServerState::Ready
    }

    /// The models whose status is `loaded`: the only ones learning work may run on.
    pub fn loaded_models(&self) -> impl Iterator<Item = &ModelReading> {
        self.models
            .iter()
            .filter(|model| model.status == ModelStatus::Loaded)
    }

    /// The model a review runs on when nothing names one (DESIGN §2.1: the first loaded model).
    pub fn first_loaded_model(&self) -> Option<&ModelReading> {
        self.loaded_models().next()
    }

    /// A model by id.
    pub fn model(&self, id: &str) -> Option<&ModelReading> {
        self.models.iter().find(|model| model.id == id)
    }

    /// Total processing slots over the loaded models.
    pub fn n_busy_slots(&self) -> usize {
        self.loaded_models().map(|model| model.busy_slots).sum()
    }

    /// Whether work sent to `runtime_url` would land on this managed server (exact `host:port`
    /// match; any doubt, including no known `base_url`, reads "not managed").
    pub fn is_managed_url(&self, runtime_url: &str) -> bool {
        self.base_url
            .as_deref()
            .is_some_and(|base_url| is_managed_url(runtime_url, base_url))
    }
}
