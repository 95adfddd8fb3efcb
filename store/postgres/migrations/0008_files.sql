-- Artifacts, logs and output archives, so that every server sharing the
-- database serves every file. A file is its chunks: rows of at most 1 MiB
-- at their byte offsets (a log's rows are its uploads, written at their
-- offsets as the agent sends them). Keys are the paths the disk store uses.
CREATE TABLE file_chunks (
    key  TEXT COLLATE "C" NOT NULL,
    off  BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (key, off)
);
