-- The view generation (issue 27): a controller keeps computes and nodes in
-- memory between passes instead of reading every node on each one. Every
-- transaction that writes a node, a compute, a workspace or its quotas
-- raises gen once and stamps the nodes it wrote with it; a deleted node
-- leaves its ID in node_deletions. A view at generation g then reads only
-- the nodes with gen > g and the deletions after g, and a write by another
-- server (or a replica that takes the lead with an old view) is seen the
-- same way. computes_gen is the gen of the last write of a compute,
-- workspace or quota (those few rows are read again whole); deletions up
-- to floor were pruned, and a view older than floor reads every node.
CREATE TABLE view_gen (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    gen          BIGINT NOT NULL,
    computes_gen BIGINT NOT NULL,
    floor        BIGINT NOT NULL
);
INSERT INTO view_gen (id, gen, computes_gen, floor) VALUES (1, 1, 1, 0);

-- 0: written before this migration, older than any view.
ALTER TABLE nodes ADD COLUMN gen BIGINT NOT NULL DEFAULT 0;
CREATE INDEX nodes_gen ON nodes (gen);

CREATE TABLE node_deletions (
    gen BIGINT NOT NULL,
    id  TEXT NOT NULL
);
CREATE INDEX node_deletions_gen ON node_deletions (gen);
