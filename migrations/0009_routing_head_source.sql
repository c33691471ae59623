-- Where a saved head came from, so the status can say so after a restart: `online` (learned
-- from outcomes since it started fresh) or `job:<id>` (a training job's head, promoted; it goes
-- on learning online, and keeps its source). Heads saved before are online ones.
ALTER TABLE routing_heads ADD COLUMN source TEXT NOT NULL DEFAULT 'online';
