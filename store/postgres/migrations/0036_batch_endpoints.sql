-- Batch endpoints and their deployments (`shoal batch-endpoint`,
-- `shoal batch-deployment`, issue 38), per workspace, keyed by the
-- lower-cased workspace, endpoint and deployment names. workspace is the
-- name as written; doc is the endpoint or deployment as JSON (its YAML's
-- keys; never a secret). A deployment's row goes with its endpoint's.
CREATE TABLE batch_endpoints (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);

CREATE TABLE batch_deployments (
    workspace_key TEXT NOT NULL,
    endpoint_key  TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, endpoint_key, name_key)
);

-- An API token's scope: '' for a token with its principal's rights;
-- workspaces/<ws>/batchEndpoints/<name> for a token that may only
-- invoke that batch endpoint (`shoal batch-endpoint create-token`).
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT '';
