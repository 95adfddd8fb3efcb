-- A compute's node counts by state over time (see shoal.NodeSample): the
-- studio's chart and its cost so far. Times are unix microseconds.
CREATE TABLE node_samples (
    workspace_key TEXT COLLATE "C" NOT NULL,
    compute_key   TEXT COLLATE "C" NOT NULL,
    time          BIGINT NOT NULL,
    workspace     TEXT COLLATE "C" NOT NULL,
    compute       TEXT COLLATE "C" NOT NULL,
    size          TEXT COLLATE "C" NOT NULL,
    tier          TEXT COLLATE "C" NOT NULL,
    preparing     INTEGER NOT NULL,
    idle          INTEGER NOT NULL,
    running       INTEGER NOT NULL,
    leaving       INTEGER NOT NULL,
    unusable      INTEGER NOT NULL,
    preempted     INTEGER NOT NULL,
    PRIMARY KEY (workspace_key, compute_key, time)
);
