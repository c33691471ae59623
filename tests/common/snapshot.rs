//! What a refused request must leave as it was: every table's rows, every file of the data
//! folder with its mode (the SQLite files and the logs aside: a checkpoint moves bytes, not
//! rows) and the engine's live turns. The hostile-input matrices of the API and of the window's
//! commands take one before and after each case. [`tree`] lists the paths under a folder, for
//! tests that check what a refused write left in it.

#![allow(dead_code)] // each test crate uses its own part of it

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lull::store::Store;
use lull::Engine;

/// What a hostile request must leave as it was.
#[derive(Debug, PartialEq)]
pub struct Snapshot {
    /// Every table's rows, each row its columns' values, sorted.
    pub rows: BTreeMap<String, Vec<String>>,
    /// Every file and folder under the data folder but the SQLite files and the logs: its mode
    /// and its bytes (a folder's are empty, a link's are its target).
    pub files: BTreeMap<PathBuf, (u32, Vec<u8>)>,
    /// Live turns the engine holds.
    pub live_turns: usize,
}

/// The engine's state now: `store` must be the engine's own database.
pub async fn snapshot(engine: &Engine, store: &Store) -> Snapshot {
    let rows = store
        .call(|c| {
            let tables: Vec<String> = c
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")?
                .query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            let mut rows = BTreeMap::new();
            for table in tables {
                let mut statement = c.prepare(&format!("SELECT * FROM \"{table}\""))?;
                let columns = statement.column_count();
                let mut listed: Vec<String> = statement
                    .query_map([], |row| {
                        (0..columns)
                            .map(|i| row.get::<_, rusqlite::types::Value>(i))
                            .map(|value| value.map(|value| format!("{value:?}")))
                            .collect::<Result<Vec<_>, _>>()
                            .map(|values| values.join(" | "))
                    })?
                    .collect::<Result<_, _>>()?;
                listed.sort();
                rows.insert(table, listed);
            }
            Ok(rows)
        })
        .await
        .unwrap();
    let data_dir = &engine.paths().data_dir;
    let mut files = BTreeMap::new();
    walk(data_dir, data_dir, &mut files);
    Snapshot {
        rows,
        files,
        live_turns: engine.status().await.unwrap().live_turns,
    }
}

/// A snapshot once background work from the seeding (the skills watcher, the job's end)
/// has settled: two in a row, a moment apart, are equal.
pub async fn settled_snapshot(engine: &Engine, store: &Store) -> Snapshot {
    let mut last = snapshot(engine, store).await;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let next = snapshot(engine, store).await;
        if next == last {
            return next;
        }
        last = next;
    }
    panic!(
        "the seeded engine never stopped changing: {:?}",
        last.rows.keys()
    );
}

fn walk(root: &Path, folder: &Path, files: &mut BTreeMap<PathBuf, (u32, Vec<u8>)>) {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let relative = path.strip_prefix(root).unwrap().to_path_buf();
        let name = relative.to_string_lossy();
        if name == "logs" || name.starts_with("lull.db") {
            continue;
        }
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        let mode = metadata.permissions().mode();
        let bytes = if metadata.is_symlink() {
            std::fs::read_link(&path)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else if metadata.is_dir() {
            walk(root, &path, files);
            Vec::new()
        } else {
            std::fs::read(&path).unwrap()
        };
        files.insert(relative, (mode, bytes));
    }
}

/// What differs between two snapshots, one line per table, file or count.
pub fn differences(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut found = Vec::new();
    let tables: std::collections::BTreeSet<_> =
        before.rows.keys().chain(after.rows.keys()).collect();
    for table in tables {
        let (old, new) = (before.rows.get(table), after.rows.get(table));
        if old != new {
            let changed = new
                .into_iter()
                .flatten()
                .find(|row| !old.is_some_and(|old| old.contains(row)));
            let changed: Option<String> = changed.map(|row| row.chars().take(300).collect());
            found.push(format!(
                "table {table}: {} rows, now {} (e.g. {changed:?})",
                old.map_or(0, Vec::len),
                new.map_or(0, Vec::len)
            ));
        }
    }
    let paths: std::collections::BTreeSet<_> =
        before.files.keys().chain(after.files.keys()).collect();
    for path in paths {
        let (old, new) = (before.files.get(path), after.files.get(path));
        if old != new {
            let mode = |entry: Option<&(u32, Vec<u8>)>| entry.map(|(mode, _)| format!("{mode:o}"));
            found.push(format!(
                "file {}: mode {:?} → {:?}, contents {}",
                path.display(),
                mode(old),
                mode(new),
                if old.map(|e| &e.1) == new.map(|e| &e.1) {
                    "the same"
                } else {
                    "changed"
                }
            ));
        }
    }
    if before.live_turns != after.live_turns {
        found.push(format!(
            "live turns: {} → {}",
            before.live_turns, after.live_turns
        ));
    }
    found
}

/// Every path under `root`, relative to it and sorted, links listed but not followed.
pub fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                walk(root, &path, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(root, root, &mut found);
    found.sort();
    found
}
