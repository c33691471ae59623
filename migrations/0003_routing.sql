-- The skill routing head (DESIGN §2.3).

-- One saved head per embedding dimension: a change of embedder dimension starts (or resumes)
-- the head of the new dimension and leaves the others here untouched.
CREATE TABLE routing_heads (
    dim          INTEGER PRIMARY KEY,
    embedder     TEXT NOT NULL,     -- the embedder in use when it was last saved
    snapshot     BLOB NOT NULL,     -- HeadSnapshot::to_bytes: weights, baseline, count, sha256
    update_count INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,  -- unix ms
    updated_at   INTEGER NOT NULL   -- unix ms
);

-- Every ranking, with what a training job needs to replay it.
CREATE TABLE routing_routes (
    id              TEXT PRIMARY KEY,
    created_at      INTEGER NOT NULL, -- unix ms
    query           TEXT NOT NULL,    -- the request text, to re-embed for another dimension
    embedder        TEXT NOT NULL,
    dim             INTEGER NOT NULL,
    query_embedding BLOB NOT NULL,    -- dim little-endian f32, L2-normalised
    head_updates    INTEGER NOT NULL, -- the head's update count when it ranked
    warmed_up       INTEGER NOT NULL, -- 1 when the learned score was blended in
    top_k           INTEGER NOT NULL,
    candidates      TEXT NOT NULL     -- JSON, best first: [{skill, score, cosine, rl, success_rate, log_uses}]
);
CREATE INDEX routing_routes_by_time ON routing_routes (created_at);

-- At most one outcome per route: the reward for the skill the agent chose.
CREATE TABLE routing_outcomes (
    route_id        TEXT PRIMARY KEY REFERENCES routing_routes (id),
    skill           TEXT NOT NULL,
    outcome         TEXT NOT NULL,    -- success | failure
    reward          REAL NOT NULL,    -- +1 | -1
    rank            INTEGER NOT NULL, -- 0-based position of the skill in the route's ranking
    skill_embedding BLOB NOT NULL,    -- dim little-endian f32, L2-normalised, at ranking time
    cosine          REAL NOT NULL,    -- the chosen skill's features at ranking time
    success_rate    REAL NOT NULL,
    log_uses        REAL NOT NULL,
    rl              REAL NOT NULL,    -- the head's score for it at ranking time
    created_at      INTEGER NOT NULL  -- unix ms
);
CREATE INDEX routing_outcomes_by_skill ON routing_outcomes (skill);
