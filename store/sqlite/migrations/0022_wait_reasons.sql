-- Why each queued job waits, as the leader's latest scheduler pass said
-- (see shoal.WaitReason): only the leader schedules, every replica shows
-- jobs. The leader writes what changed since its last pass. Job names
-- compare exactly, workspaces case-insensitively, as in jobs.
CREATE TABLE wait_reasons (
    workspace_key TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    job           TEXT NOT NULL,
    code          TEXT NOT NULL,
    message       TEXT NOT NULL,
    PRIMARY KEY (workspace_key, job)
);
