-- Parallel jobs' ledgers (issue 38), kept by the job (workspace_key the
-- lower-cased workspace, job its name) across its attempts, so that a
-- mini-batch finished is never run again. parallel_plans holds the plan
-- a rank proposed first (describe: JSON list of strings) and next_fresh,
-- the lowest index never leased: only mini-batches leased at least once
-- have a parallel_batches row (rows, failed_items: JSON). parallel_files
-- records each tar of files a rank posted, kept as an artifact. Times
-- are unix microseconds.
CREATE TABLE parallel_plans (
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    kind          TEXT NOT NULL,
    items         BIGINT NOT NULL,
    mini_batches  BIGINT NOT NULL,
    fingerprint   TEXT NOT NULL,
    describe      TEXT NOT NULL,
    next_fresh    BIGINT NOT NULL,
    aborted       TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, job)
);

CREATE TABLE parallel_batches (
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    idx           BIGINT NOT NULL,
    state         TEXT NOT NULL,
    try           BIGINT NOT NULL,
    rank          BIGINT NOT NULL,
    attempt_id    TEXT NOT NULL,
    deadline      BIGINT NOT NULL,
    failed_tries  BIGINT NOT NULL,
    items         BIGINT NOT NULL,
    rows_json     TEXT NOT NULL,
    error         TEXT NOT NULL,
    failed_items  TEXT NOT NULL,
    n_failed      BIGINT NOT NULL,
    finished_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, job, idx)
);
CREATE INDEX parallel_batches_state ON parallel_batches (workspace_key, job, state, idx);

CREATE TABLE parallel_files (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    rank          BIGINT NOT NULL,
    attempt_id    TEXT NOT NULL,
    artifact      TEXT NOT NULL,
    posted_at     BIGINT NOT NULL
);
CREATE INDEX parallel_files_job ON parallel_files (workspace_key, job, id);
