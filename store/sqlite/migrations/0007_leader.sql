-- Leases of the roles one server of several holds at a time. A SQLite
-- store has one server, which holds them all: the table keeps the two
-- stores' schemas at the same version (so that either can be copied into
-- the other) and stays empty.
CREATE TABLE leader_lease (
    name    TEXT PRIMARY KEY,
    holder  TEXT NOT NULL,
    token   BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    renewed BIGINT NOT NULL
);
