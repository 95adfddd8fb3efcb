-- The scheduler reads the queue on every pass; keeping each job's node
-- count in a column lets it do so without decoding job documents.
ALTER TABLE jobs ADD COLUMN instance_count INTEGER NOT NULL DEFAULT 1;
