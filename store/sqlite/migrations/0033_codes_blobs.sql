-- Code assets and the blobs of workspaceblobstore (issue 37).
--
-- codes: registered code versions (Azure's codes/{name}/versions, what
-- azure-ai-ml registers for a job's local code), with the columns of the
-- other versioned kinds (0021, 0025, 0032) so that the one set of
-- versioned-asset statements serves them.
CREATE TABLE codes (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    version       TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    archived      INTEGER NOT NULL DEFAULT 0,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key, version)
);

CREATE INDEX codes_seq ON codes (workspace_key, name_key, seq);

-- blobs: committed blobs uploaded through Shoal's Blob endpoint, per
-- workspace (workspace_key lower-cased) and container. Names are exact;
-- name_hex is the name's bytes in hexadecimal, the key that lists
-- order and page by: hex digits sort the same under every collation, so
-- both databases list in Azure's byte order. doc is the blob's JSON
-- (content artifact, size, headers, metadata, etag, times).
CREATE TABLE blobs (
    workspace_key TEXT NOT NULL,
    container     TEXT NOT NULL,
    name_hex      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    name          TEXT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, container, name_hex)
);

-- blob_blocks: blocks staged by Put Block until Put Block List commits
-- their blob (and removes them).
CREATE TABLE blob_blocks (
    workspace_key TEXT NOT NULL,
    container     TEXT NOT NULL,
    name_hex      TEXT NOT NULL,
    block_id      TEXT NOT NULL,
    artifact      TEXT NOT NULL,
    size          BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, container, name_hex, block_id)
);
