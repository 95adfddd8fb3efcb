-- Why each queued job waits, as the leader's latest scheduler pass said
-- (see shoal.WaitReason): only the leader schedules, every replica shows
-- jobs. The leader writes what changed since its last pass. Job names
-- compare exactly, workspaces case-insensitively, as in jobs.
CREATE TABLE wait_reasons (
    workspace_key TEXT COLLATE "C" NOT NULL,
    workspace     TEXT COLLATE "C" NOT NULL,
    job           TEXT COLLATE "C" NOT NULL,
    code          TEXT COLLATE "C" NOT NULL,
    message       TEXT NOT NULL,
    PRIMARY KEY (workspace_key, job)
);
