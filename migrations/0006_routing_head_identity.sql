-- A saved head's identity, so a save can tell "my own row" from "another head's" (a corrupt
-- head replaced by a fresh one, a promoted head). Existing heads keep the identity they had:
-- the instant they were first saved.
ALTER TABLE routing_heads ADD COLUMN head_id INTEGER NOT NULL DEFAULT 0;
UPDATE routing_heads SET head_id = created_at;
