//! Numbered schema migrations, embedded in the binary.
//!
//! Add a migration by appending a file `migrations/NNNN_name.sql` and a line to [`MIGRATIONS`];
//! never edit one that has shipped. The schema version is SQLite's `user_version`.

use std::path::Path;

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

use super::StoreError;

/// Every migration, in order. Index + 1 is the schema version it leads to.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_foundation.sql"),
    include_str!("../../migrations/0002_reviews.sql"),
    include_str!("../../migrations/0003_routing.sql"),
    include_str!("../../migrations/0004_review_progress.sql"),
    include_str!("../../migrations/0005_review_retries.sql"),
    include_str!("../../migrations/0006_routing_head_identity.sql"),
    include_str!("../../migrations/0007_skill_learning.sql"),
    include_str!("../../migrations/0008_jobs.sql"),
    include_str!("../../migrations/0009_routing_head_source.sql"),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(super) fn apply(connection: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let found: u32 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    let migrations = Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect());
    migrations
        .to_latest(connection)
        .map_err(|err| StoreError::Migration {
            path: path.to_path_buf(),
            message: err.to_string(),
        })
}
