-- Each compute's queue in two numbers, kept by triggers as jobs enter and
-- leave the Queued state: every placement pass needs the node demand of
-- every queue (the autoscaler plans from it), and summing it from the
-- jobs index cost a scan of the whole queue per pass (100,000 queued jobs
-- took most of a pass). Rows whose queue emptied stay with jobs = 0.
CREATE TABLE queue_demand (
    workspace_key TEXT NOT NULL,
    compute_key   TEXT NOT NULL,
    jobs          INTEGER NOT NULL,
    nodes         INTEGER NOT NULL,
    PRIMARY KEY (workspace_key, compute_key)
);

INSERT INTO queue_demand (workspace_key, compute_key, jobs, nodes)
    SELECT workspace_key, compute_key, COUNT(*), SUM(instance_count) FROM jobs
    WHERE status = 'Queued' GROUP BY workspace_key, compute_key;

CREATE TRIGGER jobs_queue_enter_insert AFTER INSERT ON jobs WHEN NEW.status = 'Queued'
BEGIN
    INSERT INTO queue_demand (workspace_key, compute_key, jobs, nodes)
        VALUES (NEW.workspace_key, NEW.compute_key, 1, NEW.instance_count)
        ON CONFLICT (workspace_key, compute_key) DO UPDATE SET jobs = jobs + 1, nodes = nodes + excluded.nodes;
END;

CREATE TRIGGER jobs_queue_leave_update AFTER UPDATE OF status, workspace_key, compute_key, instance_count ON jobs
    WHEN OLD.status = 'Queued'
BEGIN
    UPDATE queue_demand SET jobs = jobs - 1, nodes = nodes - OLD.instance_count
        WHERE workspace_key = OLD.workspace_key AND compute_key = OLD.compute_key;
END;

CREATE TRIGGER jobs_queue_enter_update AFTER UPDATE OF status, workspace_key, compute_key, instance_count ON jobs
    WHEN NEW.status = 'Queued'
BEGIN
    INSERT INTO queue_demand (workspace_key, compute_key, jobs, nodes)
        VALUES (NEW.workspace_key, NEW.compute_key, 1, NEW.instance_count)
        ON CONFLICT (workspace_key, compute_key) DO UPDATE SET jobs = jobs + 1, nodes = nodes + excluded.nodes;
END;

CREATE TRIGGER jobs_queue_leave_delete AFTER DELETE ON jobs WHEN OLD.status = 'Queued'
BEGIN
    UPDATE queue_demand SET jobs = jobs - 1, nodes = nodes - OLD.instance_count
        WHERE workspace_key = OLD.workspace_key AND compute_key = OLD.compute_key;
END;
