-- A node's state has a column of its own (issue 40 follow-up): the node
-- loop looks for the nodes it may have to act on (preparing, leaving,
-- preempted, unusable, or silent past their lease) on every pass, and
-- reading every node's document for it took a sixth of a loaded server's
-- CPU at 2,000 nodes. No index: the loop's query also asks for the nodes
-- whose last_heartbeat is old, and an index on that column would move on
-- every heartbeat; the scan reads two small columns and decodes no
-- document. '' (a row no write has reached) counts as "may need acting
-- on".
--
-- draining and pulling (0 or 1: Node.Draining, and whether it pulls its
-- cluster's prepull images) beside state are what a compute's status
-- counts: the compute list counted its nodes by decoding every node's
-- document, 0.5 s at the median and 12-16 s at p99 with 10,000 nodes; it
-- now groups these three columns.
ALTER TABLE nodes ADD COLUMN state TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN draining INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN pulling INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET state = COALESCE(doc::jsonb ->> 'node_state', ''),
    draining = CASE WHEN COALESCE((doc::jsonb ->> 'draining')::boolean, false) THEN 1 ELSE 0 END,
    -- jsonb_array_length fails on a scalar (a JSON null): look first.
    pulling = CASE WHEN jsonb_typeof(doc::jsonb -> 'pulling_images') = 'array'
        THEN CASE WHEN jsonb_array_length(doc::jsonb -> 'pulling_images') > 0 THEN 1 ELSE 0 END
        ELSE 0 END;
