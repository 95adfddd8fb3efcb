-- Each compute's queue in order, covering the columns a placement pass
-- reads: the heads of one compute's queue are an index range, and the
-- demand per compute a scan of the index alone.
CREATE INDEX jobs_queue_by_compute ON jobs (status, workspace_key, compute_key, priority DESC, seq, instance_count);
