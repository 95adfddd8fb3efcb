-- The node loop's search for the nodes it may have to act on
-- (ListNodesDue: preparing, leaving, preempted, unusable, or silent past
-- their lease) reads this index instead of the table. 0039 expected a
-- scan of its two columns to be cheap, but a row's columns are read
-- through its document: at 10,000 nodes each search read the whole
-- table, 8-10 ms, on every pass of the loop (a pass every 200 ms; 7-12 %
-- of a steady server's CPU in bench/scale's profiles). The index
-- moves with every lease renewal, a small write beside the row's own
-- (PostgreSQL keeps no such index: its 0040 says why).
CREATE INDEX nodes_due ON nodes (state, last_heartbeat, id);
