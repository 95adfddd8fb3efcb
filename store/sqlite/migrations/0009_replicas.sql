-- The servers sharing the store, as each last reported itself (every
-- third of the controllers' lease): shoal admin status lists them. Times
-- are the database's clock, unix microseconds. (Unused with SQLite: one
-- server; kept so that both schemas stay at the same version.)
CREATE TABLE replicas (
    holder TEXT PRIMARY KEY,
    seen   BIGINT NOT NULL
);
