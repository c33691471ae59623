-- How much of each session's conversation a finished review has read, so the next review of a
-- longer snapshot reads only what is new (plus a little context).
CREATE TABLE review_progress (
    session_key       TEXT PRIMARY KEY,
    reviewed_messages INTEGER NOT NULL, -- messages [0, n) are reviewed
    digest            TEXT NOT NULL,    -- sha256 of those messages: a rewritten history reads as new
    snapshot_at       INTEGER NOT NULL, -- of the snapshot reviewed; an older one never replaces it
    updated_at        INTEGER NOT NULL
);
