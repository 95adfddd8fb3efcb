-- Each workspace's storage use (its artifacts, jobs' outputs and logs,
-- instances' setup logs), kept by the database as file_chunks change, so
-- that the quota check before every upload step and every log write
-- reads one row instead of summing the workspace's chunks, and every
-- server sharing the database reads the same number at once. A chunk
-- counts for the workspace its key names ("<kind>/<workspace>/..."):
-- uploads in flight ("tmp/...") and artifacts from before artifacts were
-- kept per workspace ("artifacts/<hex>.tar.gz") count for none.
CREATE TABLE file_usage (
    workspace TEXT COLLATE "C" PRIMARY KEY,
    bytes     BIGINT NOT NULL
);

CREATE FUNCTION file_usage_workspace(k TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN split_part(k, '/', 1) IN ('artifacts', 'outputs', 'logs', 'instances')
                 AND split_part(k, '/', 3) <> ''
            THEN split_part(k, '/', 2) END
$$;

CREATE FUNCTION file_usage_count() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    ws TEXT;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        ws := file_usage_workspace(OLD.key);
        IF ws IS NOT NULL THEN
            UPDATE file_usage SET bytes = bytes - length(OLD.data) WHERE workspace = ws;
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        ws := file_usage_workspace(NEW.key);
        IF ws IS NOT NULL THEN
            INSERT INTO file_usage (workspace, bytes) VALUES (ws, length(NEW.data))
            ON CONFLICT (workspace) DO UPDATE SET bytes = file_usage.bytes + excluded.bytes;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER file_chunks_usage AFTER INSERT OR UPDATE OR DELETE ON file_chunks
    FOR EACH ROW EXECUTE FUNCTION file_usage_count();

INSERT INTO file_usage (workspace, bytes)
    SELECT file_usage_workspace(key), SUM(length(data)) FROM file_chunks
    WHERE file_usage_workspace(key) IS NOT NULL GROUP BY 1;
