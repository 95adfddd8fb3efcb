-- Each compute's queue in two numbers, kept by a trigger as jobs enter and
-- leave the Queued state: every placement pass needs the node demand of
-- every queue (the autoscaler plans from it), and summing it from the
-- jobs index cost a scan of the whole queue per pass (100,000 queued jobs
-- took most of a pass). Rows whose queue emptied stay with jobs = 0.
CREATE TABLE queue_demand (
    workspace_key TEXT COLLATE "C" NOT NULL,
    compute_key   TEXT COLLATE "C" NOT NULL,
    jobs          BIGINT NOT NULL,
    nodes         BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, compute_key)
);

INSERT INTO queue_demand (workspace_key, compute_key, jobs, nodes)
    SELECT workspace_key, compute_key, COUNT(*), SUM(instance_count) FROM jobs
    WHERE status = 'Queued' GROUP BY workspace_key, compute_key;

CREATE FUNCTION jobs_queue_demand() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'Queued' THEN
        UPDATE queue_demand SET jobs = jobs - 1, nodes = nodes - OLD.instance_count
            WHERE workspace_key = OLD.workspace_key AND compute_key = OLD.compute_key;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'Queued' THEN
        INSERT INTO queue_demand (workspace_key, compute_key, jobs, nodes)
            VALUES (NEW.workspace_key, NEW.compute_key, 1, NEW.instance_count)
            ON CONFLICT (workspace_key, compute_key)
            DO UPDATE SET jobs = queue_demand.jobs + 1, nodes = queue_demand.nodes + EXCLUDED.nodes;
    END IF;
    RETURN NULL;
END
$$;

-- Only a change that can move a job in or out of a queue runs it.
CREATE TRIGGER jobs_queue_demand_insert AFTER INSERT ON jobs
    FOR EACH ROW WHEN (NEW.status = 'Queued') EXECUTE FUNCTION jobs_queue_demand();
CREATE TRIGGER jobs_queue_demand_update AFTER UPDATE OF status, workspace_key, compute_key, instance_count ON jobs
    FOR EACH ROW WHEN (OLD.status = 'Queued' OR NEW.status = 'Queued') EXECUTE FUNCTION jobs_queue_demand();
CREATE TRIGGER jobs_queue_demand_delete AFTER DELETE ON jobs
    FOR EACH ROW WHEN (OLD.status = 'Queued') EXECUTE FUNCTION jobs_queue_demand();
