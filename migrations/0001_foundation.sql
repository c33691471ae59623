-- Settings the person changes at run time (defer mode, pause, reviews on/off).
-- The config file gives the defaults; a row here wins over it.
CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,      -- JSON
    updated_at INTEGER NOT NULL    -- unix ms
);

-- One row per engine start. Jobs claimed by an older generation were interrupted.
CREATE TABLE engine_starts (
    generation INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at INTEGER NOT NULL,   -- unix ms
    pid        INTEGER NOT NULL,
    version    TEXT NOT NULL
);
