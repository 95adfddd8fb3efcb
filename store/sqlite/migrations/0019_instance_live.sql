-- What each compute instance's agent reported last and when the
-- application proxy last carried a request to it (see shoal.InstanceLive):
-- agents sync with any server replica, the leader decides from it. The
-- report is JSON ('' when forgotten); times are unix microseconds, 0 for
-- none.
CREATE TABLE instance_live (
    workspace_key TEXT NOT NULL,
    compute_key   TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    compute       TEXT NOT NULL,
    node          TEXT NOT NULL,
    report        TEXT NOT NULL,
    reported_at   BIGINT NOT NULL,
    proxy_last    BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, compute_key)
);
