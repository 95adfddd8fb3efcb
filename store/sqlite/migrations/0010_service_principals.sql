-- Service principals: applications that sign in with a client ID and a
-- secret (OAuth 2.0 client credentials). Only the secret's SHA-256 is
-- kept. Times are unix microseconds.
CREATE TABLE service_principals (
    name_key          TEXT PRIMARY KEY,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    client_id         TEXT NOT NULL,
    secret_hash       TEXT NOT NULL,
    secret_created_on BIGINT NOT NULL,
    created_on        BIGINT NOT NULL,
    created_by        TEXT NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX service_principals_client_id ON service_principals (client_id);
