-- Registered data assets and models (`shoal data create`, `shoal model
-- create`, issue 36): one row per version in a table per kind, with the
-- columns of environments (0021) and components (0025), so that the one
-- set of versioned-asset statements serves them. workspace_key and
-- name_key are the lower-cased workspace and asset names (names compare
-- case-insensitively); the version is exact. seq is the creation order,
-- which @latest follows. workspace is the name as written; archived is 0
-- or 1; doc is the version as JSON, its archived flag the column's.
CREATE TABLE data_assets (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    version       TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    archived      INTEGER NOT NULL DEFAULT 0,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key, version)
);

CREATE INDEX data_assets_seq ON data_assets (workspace_key, name_key, seq);

CREATE TABLE models (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    version       TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    archived      INTEGER NOT NULL DEFAULT 0,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key, version)
);

CREATE INDEX models_seq ON models (workspace_key, name_key, seq);
