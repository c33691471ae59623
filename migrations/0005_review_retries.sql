-- Reviews a person or agent asked to run now, and the back-off after an endpoint's error.
ALTER TABLE reviews ADD COLUMN urgent INTEGER NOT NULL DEFAULT 0;      -- 1: `focus` or *run now*: skips the lull
ALTER TABLE reviews ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;  -- unix ms; retried no earlier
UPDATE reviews SET urgent = 1 WHERE focus IS NOT NULL;

-- A finished review no longer needs the agent's key for its endpoint.
UPDATE reviews SET runtime = json_remove(runtime, '$.api_key')
WHERE runtime IS NOT NULL AND status IN ('done', 'failed', 'dropped', 'superseded');
