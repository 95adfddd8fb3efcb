-- Job schedules (`shoal schedule`, issue 39), per workspace, keyed by the
-- lower-cased workspace and schedule names. workspace is the name as
-- written; doc is the schedule as JSON (its YAML's keys, the resolved job
-- document and the status of its firings; never a secret).
CREATE TABLE job_schedules (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);
