//! Run-time settings the person changes from the app or an agent changes through the API.
//!
//! The config file gives their defaults; once changed, the value is stored in the database and
//! wins over the file, so a toggle in the tray survives a restart.

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::config::{Config, DeferMode};
use crate::store::{now_ms, StoreError};

/// The settings in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// `auto`: learning for the managed server waits for a lull; `never`: it runs at once.
    pub defer_mode: DeferMode,
    /// Holds all learning work.
    pub paused: bool,
    /// When false, queued reviews are dropped at dispatch time.
    pub reviews_enabled: bool,
    /// A desktop notification when the managed server appears or goes away (off by default:
    /// most people start and stop it on purpose).
    pub notify_server_changes: bool,
}

/// A partial update; absent fields keep their value. Unknown fields are refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(optional_fields)]
pub struct SettingsPatch {
    /// New defer mode.
    pub defer_mode: Option<DeferMode>,
    /// New pause state.
    pub paused: Option<bool>,
    /// New reviews switch.
    pub reviews_enabled: Option<bool>,
    /// New server-notification switch.
    pub notify_server_changes: Option<bool>,
}

impl SettingsPatch {
    /// True when the patch changes nothing at all (an empty object).
    pub fn is_empty(&self) -> bool {
        self == &SettingsPatch::default()
    }
}

impl Settings {
    /// The defaults the config file gives.
    pub fn defaults(config: &Config) -> Settings {
        Settings {
            defer_mode: config.scheduler.defer,
            paused: false,
            reviews_enabled: config.reviews.enabled,
            notify_server_changes: false,
        }
    }

    /// The defaults overlaid with whatever is stored.
    pub fn load(connection: &Connection, defaults: Settings) -> Result<Settings, StoreError> {
        let mut settings = defaults;
        if let Some(value) = load_value(connection, "defer_mode")? {
            settings.defer_mode = value;
        }
        if let Some(value) = load_value(connection, "paused")? {
            settings.paused = value;
        }
        if let Some(value) = load_value(connection, "reviews_enabled")? {
            settings.reviews_enabled = value;
        }
        if let Some(value) = load_value(connection, "notify_server_changes")? {
            settings.notify_server_changes = value;
        }
        Ok(settings)
    }

    /// Applies `patch` and stores the changed keys in one transaction.
    pub fn apply(
        &self,
        connection: &mut Connection,
        patch: &SettingsPatch,
    ) -> Result<Settings, StoreError> {
        let mut next = self.clone();
        let transaction = connection.transaction()?;
        if let Some(defer_mode) = patch.defer_mode {
            next.defer_mode = defer_mode;
            store_value(&transaction, "defer_mode", &defer_mode)?;
        }
        if let Some(paused) = patch.paused {
            next.paused = paused;
            store_value(&transaction, "paused", &paused)?;
        }
        if let Some(reviews_enabled) = patch.reviews_enabled {
            next.reviews_enabled = reviews_enabled;
            store_value(&transaction, "reviews_enabled", &reviews_enabled)?;
        }
        if let Some(notify) = patch.notify_server_changes {
            next.notify_server_changes = notify;
            store_value(&transaction, "notify_server_changes", &notify)?;
        }
        transaction.commit()?;
        Ok(next)
    }
}

fn load_value<T: serde::de::DeserializeOwned>(
    connection: &Connection,
    key: &str,
) -> Result<Option<T>, StoreError> {
    let text: Option<String> = connection
        .query_row("SELECT value FROM settings WHERE key = ?1", [key], |row| {
            row.get(0)
        })
        .optional()?;
    text.map(|text| {
        serde_json::from_str(&text).map_err(|err| StoreError::Corrupt {
            what: format!("setting {key}"),
            message: err.to_string(),
        })
    })
    .transpose()
}

fn store_value<T: Serialize>(
    connection: &Connection,
    key: &str,
    value: &T,
) -> Result<(), StoreError> {
    let text = serde_json::to_string(value).expect("settings serialise");
    connection.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, text, now_ms()],
    )?;
    Ok(())
}
