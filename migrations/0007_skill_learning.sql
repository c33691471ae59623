-- Skill learning (DESIGN §2.2): the draft worker's bookkeeping on candidates, the queue of
-- learning work other than reviews, drafts with their safety report and evaluation, the
-- person's dismissals of findings, and the provenance of every skill Lull wrote.

ALTER TABLE candidates ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;  -- synthesis runs that failed
ALTER TABLE candidates ADD COLUMN last_error TEXT;
ALTER TABLE candidates ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0; -- unix ms
ALTER TABLE candidates ADD COLUMN draft_id TEXT;   -- drafted: its draft; superseded: the draft covering its skill
CREATE INDEX candidates_by_status ON candidates (status);

-- Learning work of kinds other than a review (a review's queue row is its `reviews` row).
-- The dispatcher reads both as one queue.
CREATE TABLE learning_work (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,    -- synthesize | evaluate
    subject_id  TEXT NOT NULL,    -- synthesize: a candidate; evaluate: a draft
    status      TEXT NOT NULL,    -- queued | running | done | failed | cancelled
    urgent      INTEGER NOT NULL DEFAULT 0,
    enqueued_at INTEGER NOT NULL, -- unix ms; kept across requeues
    not_before  INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0, -- runs started, preempted ones included
    failures    INTEGER NOT NULL DEFAULT 0, -- runs that ended in an error
    last_error  TEXT,
    updated_at  INTEGER NOT NULL,
    finished_at INTEGER
);
-- One open piece of work per kind and subject.
CREATE UNIQUE INDEX learning_work_one_open ON learning_work (kind, subject_id)
    WHERE status IN ('queued', 'running');
CREATE INDEX learning_work_by_status ON learning_work (status, enqueued_at);

CREATE TABLE drafts (
    id                TEXT PRIMARY KEY,
    candidate_id      TEXT NOT NULL REFERENCES candidates (id),
    skill             TEXT NOT NULL,
    kind              TEXT NOT NULL,    -- create | update
    status            TEXT NOT NULL,    -- evaluating | blocked | review_pending | approved | rejected
    skill_md          TEXT NOT NULL,    -- the text a person approves (after any edit)
    synthesized_md    TEXT NOT NULL,    -- as the model wrote it
    base_sha256       TEXT,             -- the skill file's sha256 when the draft was made; NULL: none
    base_md           TEXT,             -- its text then
    safety            TEXT NOT NULL,    -- JSON SafetyReport of skill_md
    evaluation        TEXT NOT NULL,    -- JSON Evaluation
    edited_at         INTEGER,          -- unix ms of the last edit
    reject_reason     TEXT,
    prompt_tokens     INTEGER,          -- synthesis usage
    completion_tokens INTEGER,
    duration_ms       INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    decided_at        INTEGER
);
-- A skill has at most one draft that is not yet decided.
CREATE UNIQUE INDEX drafts_one_active_per_skill ON drafts (skill)
    WHERE status IN ('evaluating', 'blocked', 'review_pending');

-- A finding a person dismissed, with why. Keyed by rule and excerpt, so a dismissal survives an
-- edit that leaves that finding as it was, and no other.
CREATE TABLE draft_dismissals (
    draft_id     TEXT NOT NULL REFERENCES drafts (id),
    rule         TEXT NOT NULL,
    excerpt      TEXT NOT NULL,
    reason       TEXT NOT NULL,
    dismissed_at INTEGER NOT NULL,
    PRIMARY KEY (draft_id, rule, excerpt)
);

-- Every SKILL.md Lull wrote or restored.
CREATE TABLE skill_versions (
    skill           TEXT NOT NULL,
    version         INTEGER NOT NULL,  -- 1, 2, … per skill
    action          TEXT NOT NULL,     -- approve | rollback
    draft_id        TEXT REFERENCES drafts (id),
    sha256          TEXT,              -- of the file written; NULL: the file was removed
    previous_md     TEXT,              -- the file's text before; NULL: there was none
    previous_sha256 TEXT,
    written_at      INTEGER NOT NULL,
    PRIMARY KEY (skill, version)
);
