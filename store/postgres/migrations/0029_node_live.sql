-- Whether a node holds a place in its cluster's max_instances (issue 27):
-- preparing, idle or running, and not draining (shoal.Node.Live). Adding a
-- machine by hand counts its cluster's places; from the documents that
-- read every node of the cluster, and adding 10,000 took quadratic time.
ALTER TABLE nodes ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET live = 1
    WHERE (doc::jsonb ->> 'node_state') IN ('preparing', 'idle', 'running')
      AND NOT COALESCE((doc::jsonb ->> 'draining')::boolean, false);
CREATE INDEX nodes_live ON nodes (compute_key, live);
