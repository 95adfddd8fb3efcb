-- Nodes, jobs, attempts and named counters. Each entity is kept as a JSON
-- document (doc, TEXT) of its JSON fields; the fields JSON leaves out
-- (json:"-") and the fields queries filter or sort on have their own
-- columns. Times are unix microseconds (BIGINT), *_key columns lower-cased
-- names.

CREATE TABLE nodes (
    id                 TEXT COLLATE "C" PRIMARY KEY,
    workspace          TEXT COLLATE "C" NOT NULL,
    workspace_key      TEXT COLLATE "C" NOT NULL,
    -- lower(workspace) || '/' || lower(compute)
    compute_key        TEXT COLLATE "C" NOT NULL,
    location           TEXT COLLATE "C" NOT NULL,
    provider_ref       TEXT COLLATE "C" NOT NULL,
    join_token_hash    TEXT COLLATE "C" NOT NULL,
    join_token_expires BIGINT NOT NULL,
    credential_hash    TEXT COLLATE "C" NOT NULL,
    version            BIGINT NOT NULL,
    doc                TEXT COLLATE "C" NOT NULL
);

CREATE INDEX nodes_workspace ON nodes (workspace_key, id);
CREATE INDEX nodes_compute ON nodes (compute_key, id);
CREATE INDEX nodes_location ON nodes (location, id);
CREATE INDEX nodes_credential_hash ON nodes (credential_hash, id);
CREATE INDEX nodes_join_token_hash ON nodes (join_token_hash, id);

CREATE TABLE jobs (
    workspace_key TEXT COLLATE "C" NOT NULL,
    name          TEXT COLLATE "C" NOT NULL,
    workspace     TEXT COLLATE "C" NOT NULL,
    status        TEXT COLLATE "C" NOT NULL,
    compute_key   TEXT COLLATE "C" NOT NULL,
    priority      INTEGER NOT NULL,
    seq           BIGINT NOT NULL,
    created_on    BIGINT NOT NULL,
    spec_hash     TEXT COLLATE "C" NOT NULL,
    version       BIGINT NOT NULL,
    doc           TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (workspace_key, name)
);

-- ListQueuedJobs: status = 'Queued' ORDER BY priority DESC, seq, in index order.
CREATE INDEX jobs_queue ON jobs (status, priority DESC, seq);
-- ListJobs: newest first within a workspace, by status or compute.
CREATE INDEX jobs_workspace_seq ON jobs (workspace_key, seq, name);
CREATE INDEX jobs_workspace_status_seq ON jobs (workspace_key, status, seq, name);
CREATE INDEX jobs_workspace_compute_seq ON jobs (workspace_key, compute_key, seq, name);

CREATE TABLE attempts (
    id            TEXT COLLATE "C" PRIMARY KEY,
    workspace     TEXT COLLATE "C" NOT NULL,
    workspace_key TEXT COLLATE "C" NOT NULL,
    job_name      TEXT COLLATE "C" NOT NULL,
    number        INTEGER NOT NULL,
    status        TEXT COLLATE "C" NOT NULL,
    doc           TEXT COLLATE "C" NOT NULL
);

CREATE INDEX attempts_job ON attempts (workspace_key, job_name, number, id);

CREATE TABLE sequences (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BIGINT NOT NULL
);
