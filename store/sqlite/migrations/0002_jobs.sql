-- Nodes, jobs, attempts and named counters. Each entity is kept as a JSON
-- document (doc, TEXT) of its JSON fields; the fields JSON leaves out
-- (json:"-") and the fields queries filter or sort on have their own
-- columns. Times are unix microseconds (BIGINT), *_key columns lower-cased
-- names.

CREATE TABLE nodes (
    id                 TEXT PRIMARY KEY,
    workspace          TEXT NOT NULL,
    workspace_key      TEXT NOT NULL,
    -- lower(workspace) || '/' || lower(compute)
    compute_key        TEXT NOT NULL,
    location           TEXT NOT NULL,
    provider_ref       TEXT NOT NULL,
    join_token_hash    TEXT NOT NULL,
    join_token_expires BIGINT NOT NULL,
    credential_hash    TEXT NOT NULL,
    version            BIGINT NOT NULL,
    doc                TEXT NOT NULL
);

CREATE INDEX nodes_workspace ON nodes (workspace_key, id);
CREATE INDEX nodes_compute ON nodes (compute_key, id);
CREATE INDEX nodes_location ON nodes (location, id);
CREATE INDEX nodes_credential_hash ON nodes (credential_hash, id);
CREATE INDEX nodes_join_token_hash ON nodes (join_token_hash, id);

CREATE TABLE jobs (
    workspace_key TEXT NOT NULL,
    name          TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    status        TEXT NOT NULL,
    compute_key   TEXT NOT NULL,
    priority      INTEGER NOT NULL,
    seq           BIGINT NOT NULL,
    created_on    BIGINT NOT NULL,
    spec_hash     TEXT NOT NULL,
    version       BIGINT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name)
);

-- ListQueuedJobs: status = 'Queued' ORDER BY priority DESC, seq, in index order.
CREATE INDEX jobs_queue ON jobs (status, priority DESC, seq);
-- ListJobs: newest first within a workspace, by status or compute.
CREATE INDEX jobs_workspace_seq ON jobs (workspace_key, seq, name);
CREATE INDEX jobs_workspace_status_seq ON jobs (workspace_key, status, seq, name);
CREATE INDEX jobs_workspace_compute_seq ON jobs (workspace_key, compute_key, seq, name);

CREATE TABLE attempts (
    id            TEXT PRIMARY KEY,
    workspace     TEXT NOT NULL,
    workspace_key TEXT NOT NULL,
    job_name      TEXT NOT NULL,
    number        INTEGER NOT NULL,
    status        TEXT NOT NULL,
    doc           TEXT NOT NULL
);

CREATE INDEX attempts_job ON attempts (workspace_key, job_name, number, id);

CREATE TABLE sequences (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
