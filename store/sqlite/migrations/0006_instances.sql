-- A compute instance's state beyond its spec (state machine, owner, what
-- its agent reports), as a JSON document; empty for clusters.
ALTER TABLE computes ADD COLUMN instance TEXT NOT NULL DEFAULT '';
