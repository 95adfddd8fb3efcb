-- A compute's node counts by state over time (see shoal.NodeSample): the
-- studio's chart and its cost so far. Times are unix microseconds.
CREATE TABLE node_samples (
    workspace_key TEXT NOT NULL,
    compute_key   TEXT NOT NULL,
    time          BIGINT NOT NULL,
    workspace     TEXT NOT NULL,
    compute       TEXT NOT NULL,
    size          TEXT NOT NULL,
    tier          TEXT NOT NULL,
    preparing     INTEGER NOT NULL,
    idle          INTEGER NOT NULL,
    running       INTEGER NOT NULL,
    leaving       INTEGER NOT NULL,
    unusable      INTEGER NOT NULL,
    preempted     INTEGER NOT NULL,
    PRIMARY KEY (workspace_key, compute_key, time)
);
