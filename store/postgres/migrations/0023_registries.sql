-- Private container registries' logins (`shoal registry add`, issue 23),
-- per workspace. workspace_key and server_key are the lower-cased
-- workspace name and registry host[:port]; workspace is the name as
-- written. sealed_password is the password sealed by the server's
-- secrets key (internal/sealing), never in clear; doc is the rest of the
-- registry as JSON (server, username, insecure, created_on, created_by).
CREATE TABLE registries (
    workspace_key   TEXT NOT NULL,
    server_key      TEXT NOT NULL,
    workspace       TEXT NOT NULL,
    sealed_password TEXT NOT NULL,
    doc             TEXT NOT NULL,
    PRIMARY KEY (workspace_key, server_key)
);
