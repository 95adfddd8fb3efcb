-- Shoal's initial schema. Times are unix microseconds (BIGINT), booleans
-- INTEGER 0/1, JSON documents TEXT. *_key columns hold lower-cased names so
-- that names compare case-insensitively while being shown as written.

CREATE TABLE workspaces (
    name_key       TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    location       TEXT NOT NULL,
    description    TEXT NOT NULL,
    resource_group TEXT NOT NULL,
    created_on     BIGINT NOT NULL
);

CREATE TABLE computes (
    workspace_key       TEXT NOT NULL,
    name_key            TEXT NOT NULL,
    workspace           TEXT NOT NULL,
    name                TEXT NOT NULL,
    type                TEXT NOT NULL,
    version             BIGINT NOT NULL,
    provisioning_state  TEXT NOT NULL,
    provisioning_errors TEXT NOT NULL,
    spec                TEXT NOT NULL,
    created_on          BIGINT NOT NULL,
    modified_on         BIGINT NOT NULL,
    created_by          TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);

CREATE TABLE events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    time          BIGINT NOT NULL,
    workspace     TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_name TEXT NOT NULL,
    kind          TEXT NOT NULL,
    actor         TEXT NOT NULL,
    reason        TEXT NOT NULL
);

CREATE INDEX events_resource ON events (lower(workspace), resource_type, lower(resource_name), id);

CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    hash         TEXT NOT NULL,
    created_on   BIGINT NOT NULL,
    expires_on   BIGINT,
    revoked      INTEGER NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX api_tokens_hash ON api_tokens (hash);
CREATE INDEX api_tokens_principal ON api_tokens (principal_id, created_on, id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
