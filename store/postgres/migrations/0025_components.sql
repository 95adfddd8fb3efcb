-- Registered command components (`shoal component create`, issue 25):
-- one row per version, as environments (0021). workspace_key and
-- name_key are the lower-cased workspace and component names (names
-- compare case-insensitively); the version is exact. seq is the creation
-- order, which @latest follows. workspace is the name as written;
-- archived is 0 or 1; doc is the version as JSON, its archived flag the
-- column's.
CREATE TABLE components (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    version       TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    archived      INTEGER NOT NULL DEFAULT 0,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key, version)
);

CREATE INDEX components_seq ON components (workspace_key, name_key, seq);
