-- Datastores (`shoal datastore create`, issue 36), per workspace, keyed
-- by the lower-cased workspace and datastore names. workspace is the
-- name as written. sealed_credentials is the datastore's credentials
-- sealed by the server's secrets key (internal/sealing), '' for none,
-- never in clear; doc is the rest of the datastore as JSON (type,
-- account, container, endpoint, bucket, path, credentials_type, ...),
-- which never holds a secret. The built-ins (workspaceblobstore,
-- workspaceartifactstore) have no row: every workspace has them.
CREATE TABLE datastores (
    workspace_key      TEXT NOT NULL,
    name_key           TEXT NOT NULL,
    workspace          TEXT NOT NULL,
    sealed_credentials TEXT NOT NULL,
    doc                TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);
