-- What jobs log through the MLflow tracking API (issue 25): metrics,
-- parameters and tags of a job's run (the run is the job: job is its
-- name, workspace_key the lower-cased workspace), and the experiments
-- asked for by name. id orders points logged at the same step and
-- timestamp as they came. Times of points are the job's own
-- milliseconds; created_on is unix microseconds, as elsewhere.
CREATE TABLE run_metrics (
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    key           TEXT NOT NULL,
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    value         DOUBLE PRECISION NOT NULL,
    timestamp     BIGINT NOT NULL,
    step          BIGINT NOT NULL
);
CREATE INDEX run_metrics_key ON run_metrics (workspace_key, job, key, step, timestamp, id);

CREATE TABLE run_params (
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    PRIMARY KEY (workspace_key, job, key)
);

CREATE TABLE run_tags (
    workspace_key TEXT NOT NULL,
    job           TEXT NOT NULL,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    PRIMARY KEY (workspace_key, job, key)
);

CREATE TABLE experiments (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    name          TEXT NOT NULL,
    created_on    BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);
