-- PostgreSQL's 0018 keeps each workspace's storage use as file_chunks
-- change. A SQLite server keeps its files on disk (filestore), which
-- counts them itself, so there is nothing to change here; the number
-- keeps both schemas at the same version (migrate-store compares them).
SELECT 1;
