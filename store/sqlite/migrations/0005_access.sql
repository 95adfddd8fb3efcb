-- Access control: users, managed identities, custom roles and their
-- assignments, the audit log, and the keys workload tokens are signed with.
-- Times are unix microseconds (BIGINT), booleans INTEGER 0/1, JSON
-- documents TEXT, *_key columns lower-cased names.

CREATE TABLE users (
    name_key     TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    disabled     INTEGER NOT NULL DEFAULT 0,
    admin        INTEGER NOT NULL DEFAULT 0,
    created_on   BIGINT NOT NULL,
    oidc_issuer  TEXT NOT NULL DEFAULT '',
    oidc_subject TEXT NOT NULL DEFAULT ''
);

-- One user per sign-in account; users without one are not linked.
CREATE UNIQUE INDEX users_oidc ON users (oidc_issuer, oidc_subject)
    WHERE oidc_issuer <> '' AND oidc_subject <> '';

CREATE TABLE identities (
    name_key   TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    client_id  TEXT NOT NULL,
    system     INTEGER NOT NULL DEFAULT 0,
    created_on BIGINT NOT NULL
);

CREATE UNIQUE INDEX identities_client_id ON identities (client_id);

-- Custom roles only: the built-in ones are code. actions and not_actions
-- are JSON arrays of strings.
CREATE TABLE roles (
    name_key    TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    actions     TEXT NOT NULL,
    not_actions TEXT NOT NULL,
    created_on  BIGINT NOT NULL
);

CREATE TABLE role_assignments (
    id            TEXT PRIMARY KEY,
    principal_id  TEXT NOT NULL,
    role          TEXT NOT NULL,
    role_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    workspace_key TEXT NOT NULL,
    created_on    BIGINT NOT NULL,
    created_by    TEXT NOT NULL
);

-- A principal holds a role in a workspace once.
CREATE UNIQUE INDEX role_assignments_grant ON role_assignments (principal_id, role_key, workspace_key);
CREATE INDEX role_assignments_principal ON role_assignments (principal_id, created_on, id);
CREATE INDEX role_assignments_workspace ON role_assignments (workspace_key, created_on, id);

CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    time         BIGINT NOT NULL,
    principal_id TEXT NOT NULL,
    action       TEXT NOT NULL,
    target       TEXT NOT NULL,
    workspace    TEXT NOT NULL,
    source       TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    detail       TEXT NOT NULL
);

-- ListAudit lists by time, then ID: oldest first, or newest first under a
-- limit.
CREATE INDEX audit_log_time ON audit_log (time, id);
CREATE INDEX audit_log_principal ON audit_log (principal_id, time, id);

CREATE TABLE signing_keys (
    kid         TEXT PRIMARY KEY,
    private_pem TEXT NOT NULL,
    created_on  BIGINT NOT NULL,
    retired_on  BIGINT
);

CREATE INDEX signing_keys_created ON signing_keys (created_on, kid);
