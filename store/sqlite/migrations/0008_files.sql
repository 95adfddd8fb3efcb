-- The PostgreSQL store keeps files in the database (file_chunks); the
-- SQLite store keeps them on disk beside the database. The table keeps
-- the two schemas at the same version and stays empty here.
CREATE TABLE file_chunks (
    key  TEXT NOT NULL,
    off  BIGINT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (key, off)
);
