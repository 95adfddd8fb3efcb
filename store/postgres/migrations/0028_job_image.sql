-- The image a job's environment resolved to at submit (issue 28): on a
-- kubernetes location a node is a pod of one image, and scheduling reads
-- it with the queue (QueuedJobRef.Image) without decoding documents.
-- Empty for a job that names no image or builds one. Jobs queued before
-- this column take theirs from their documents.
ALTER TABLE jobs ADD COLUMN image TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE jobs SET image = COALESCE(doc::jsonb #>> '{resolved_environment,image}', '')
    WHERE status = 'Queued' AND doc::jsonb #> '{resolved_environment,build}' IS NULL;
