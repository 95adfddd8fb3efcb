-- Every node's life, kept after the node is gone: what the cost report
-- prices (node-seconds by compute, node, size and tier; jobs' share comes
-- from their attempts). A row is written with the node and closed when
-- the node is deleted. Times are unix microseconds; released_on is NULL
-- while the node lives.
CREATE TABLE node_usage (
    node_id      TEXT COLLATE "C" NOT NULL,
    created_on   BIGINT NOT NULL,
    released_on  BIGINT,
    workspace    TEXT COLLATE "C" NOT NULL,
    compute      TEXT COLLATE "C" NOT NULL,
    size         TEXT COLLATE "C" NOT NULL,
    low_priority INTEGER NOT NULL,
    PRIMARY KEY (node_id, created_on)
);

CREATE INDEX node_usage_workspace ON node_usage (workspace, released_on);
