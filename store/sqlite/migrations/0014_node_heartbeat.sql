-- A node's lease has a column of its own, so that a heartbeat writes one
-- integer instead of re-encoding the node's document, and the document
-- stays the same from one heartbeat to the next (decoded documents are
-- cached by their text). 0 means "in the document" (rows written before
-- this migration keep their lease there until their next write).
ALTER TABLE nodes ADD COLUMN last_heartbeat BIGINT NOT NULL DEFAULT 0;
