-- What each compute instance's agent reported last and when the
-- application proxy last carried a request to it (see shoal.InstanceLive):
-- agents sync with any server replica, the leader decides from it. The
-- report is JSON ('' when forgotten); times are unix microseconds, 0 for
-- none.
CREATE TABLE instance_live (
    workspace_key TEXT COLLATE "C" NOT NULL,
    compute_key   TEXT COLLATE "C" NOT NULL,
    workspace     TEXT COLLATE "C" NOT NULL,
    compute       TEXT COLLATE "C" NOT NULL,
    node          TEXT COLLATE "C" NOT NULL,
    report        TEXT NOT NULL,
    reported_at   BIGINT NOT NULL,
    proxy_last    BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, compute_key)
);
