-- blob_blocks.staged_on: when a block was staged (Unix microseconds), so
-- that blocks never committed are discarded after Azure's 7 days
-- (control/blobblocks). Blocks staged before this migration count as
-- staged now: an upload in progress across the upgrade keeps its week.
ALTER TABLE blob_blocks ADD COLUMN staged_on BIGINT NOT NULL DEFAULT 0;
UPDATE blob_blocks SET staged_on = CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER);
CREATE INDEX blob_blocks_staged ON blob_blocks (staged_on);
