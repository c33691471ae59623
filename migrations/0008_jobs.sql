-- Continual-learning jobs (DESIGN §2.4): durable, budgeted training runs of a routing head from
-- the logged route outcomes, with a checkpoint per round, an append-only receipt log, and the
-- heads a promotion replaced.

CREATE TABLE jobs (
    id               TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,    -- routing-head
    status           TEXT NOT NULL,    -- queued | running | completed | failed | cancelled | interrupted | budget_exhausted
    -- Identity, fixed at admission.
    stopping         TEXT NOT NULL,    -- JSON {max_rounds, target?, min_improvement?, wall_clock_s}
    config_digest    TEXT NOT NULL,    -- sha256 of the head configuration and the split rule
    dataset_digest   TEXT NOT NULL,    -- sha256 of the examples, in order
    dataset_cutoff   INTEGER NOT NULL, -- the last routing_outcomes rowid in the dataset
    dim              INTEGER NOT NULL, -- embedding dimension of the examples
    examples         INTEGER NOT NULL,
    heldout          INTEGER NOT NULL, -- examples in the held-out split
    -- Lifecycle.
    generation       INTEGER,          -- the engine start that last ran it
    rounds_completed INTEGER NOT NULL DEFAULT 0,
    stop_reason      TEXT,             -- why it stopped, for the report
    error            TEXT,
    artifact_digest  TEXT,
    promoted_at      INTEGER,
    deadline_at      INTEGER,          -- unix ms: the wall-clock budget's end for this run
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    updated_at       INTEGER NOT NULL,
    finished_at      INTEGER
);
CREATE INDEX jobs_by_status ON jobs (status);

-- One per committed round, written before the round counts.
CREATE TABLE job_checkpoints (
    job_id        TEXT NOT NULL REFERENCES jobs (id),
    round         INTEGER NOT NULL,    -- 1, 2, …
    state         BLOB NOT NULL,       -- HeadSnapshot::to_bytes of the trained head
    sha256        TEXT NOT NULL,       -- of `state`
    parent_sha256 TEXT,                -- the previous round's sha256; NULL for round 1
    metrics       TEXT NOT NULL,       -- JSON RoundMetrics
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (job_id, round)
);

-- Append-only, densely numbered per job.
CREATE TABLE job_receipts (
    job_id     TEXT NOT NULL REFERENCES jobs (id),
    seq        INTEGER NOT NULL,       -- 1, 2, … with no gap
    kind       TEXT NOT NULL,          -- admission | training | evaluation | artifact | cancel | resume | refusal | promote
    payload    TEXT NOT NULL,          -- JSON
    digest     TEXT NOT NULL,          -- sha256 of kind and payload
    created_at INTEGER NOT NULL,
    PRIMARY KEY (job_id, seq)
);

-- Heads a promotion replaced, so there is a way back.
CREATE TABLE routing_head_versions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    dim          INTEGER NOT NULL,
    snapshot     BLOB NOT NULL,        -- HeadSnapshot::to_bytes
    update_count INTEGER NOT NULL,
    head_id      INTEGER NOT NULL,     -- its routing_heads identity while it was live
    source       TEXT NOT NULL,        -- online | job:<id>
    replaced_by  TEXT NOT NULL,        -- job:<id> | restore
    replaced_at  INTEGER NOT NULL
);
