-- A node's state has a column of its own (issue 40 follow-up): the node
-- loop looks for the nodes it may have to act on (preparing, leaving,
-- preempted, unusable, or silent past their lease) on every pass, and
-- reading every node's document for it took a sixth of a loaded server's
-- CPU at 2,000 nodes. No index: the loop's query also asks for the nodes
-- whose last_heartbeat is old, and an index on that column would move on
-- every heartbeat; the scan reads two small columns and decodes no
-- document. '' (a row no write has reached) counts as "may need acting
-- on".
ALTER TABLE nodes ADD COLUMN state TEXT NOT NULL DEFAULT '';
UPDATE nodes SET state = COALESCE(doc::jsonb ->> 'node_state', '');
