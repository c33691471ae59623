-- Conversation reviews: the durable queue of DESIGN §2.1.
CREATE TABLE reviews (
    id                TEXT PRIMARY KEY,
    session_key       TEXT NOT NULL,
    status            TEXT NOT NULL,   -- queued | running | done | failed | dropped | superseded
    messages          TEXT NOT NULL,   -- JSON array of {role, content}
    focus             TEXT,
    snapshot_at       INTEGER NOT NULL, -- unix ms; newer snapshots of a session replace older ones
    runtime           TEXT,            -- JSON {base_url, api_key, model} or NULL
    enqueued_at       INTEGER NOT NULL, -- unix ms; kept across coalescing and requeues
    updated_at        INTEGER NOT NULL,
    attempts          INTEGER NOT NULL DEFAULT 0, -- runs started, preempted ones included
    failures          INTEGER NOT NULL DEFAULT 0, -- runs that ended in an error
    last_error        TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    duration_ms       INTEGER,
    finished_at       INTEGER
);
-- One queue slot per session.
CREATE UNIQUE INDEX reviews_one_queued_per_session ON reviews (session_key) WHERE status = 'queued';
CREATE INDEX reviews_by_status ON reviews (status, enqueued_at);

-- What a review proposes to learn.
CREATE TABLE candidates (
    id          TEXT PRIMARY KEY,
    review_id   TEXT NOT NULL REFERENCES reviews (id),
    skill       TEXT NOT NULL,
    kind        TEXT NOT NULL,        -- create | update
    rationale   TEXT NOT NULL,
    evidence    TEXT NOT NULL,        -- JSON array of message indexes
    priority    REAL NOT NULL,
    confidence  REAL NOT NULL,
    related     TEXT NOT NULL,        -- JSON array of skill names
    status      TEXT NOT NULL DEFAULT 'open',
    attempts    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    UNIQUE (review_id, skill, kind)   -- a replayed review cannot create twins
);
