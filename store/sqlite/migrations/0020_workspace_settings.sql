-- A workspace's budgets, per-family vCPU quotas and storage limits move
-- from JSON documents in settings (budgets/<ws>, workspace_quotas/<ws>,
-- workspace_limits/<ws>) into tables of their own, so that the store's
-- conformance suite covers them. workspace_key is the lower-cased
-- workspace name, as the settings' keys had it. created_on is the
-- budget's creation time as RFC 3339 text, as the documents held it.
-- An empty list was stored as null; a document that is not JSON stays
-- where it was.
CREATE TABLE workspace_budgets (
    workspace_key TEXT NOT NULL,
    scope         TEXT NOT NULL,
    period        TEXT NOT NULL,
    amount        DOUBLE PRECISION NOT NULL,
    action        TEXT NOT NULL,
    created_on    TEXT NOT NULL,
    created_by    TEXT NOT NULL,
    PRIMARY KEY (workspace_key, scope, period)
);

CREATE TABLE workspace_quotas (
    workspace_key TEXT NOT NULL,
    family        TEXT NOT NULL,
    vcpus         BIGINT NOT NULL,
    PRIMARY KEY (workspace_key, family)
);

CREATE TABLE workspace_limits (
    workspace_key       TEXT PRIMARY KEY,
    max_log_bytes       BIGINT NOT NULL,
    storage_quota_bytes BIGINT NOT NULL
);

INSERT OR REPLACE INTO workspace_budgets (workspace_key, scope, period, amount, action, created_on, created_by)
SELECT substr(s.key, 9), json_extract(b.value, '$.scope'), json_extract(b.value, '$.period'),
       COALESCE(json_extract(b.value, '$.limit'), 0), COALESCE(json_extract(b.value, '$.action'), ''),
       COALESCE(json_extract(b.value, '$.created_on'), '0001-01-01T00:00:00Z'), COALESCE(json_extract(b.value, '$.created_by'), '')
FROM settings s, json_each(CASE WHEN json_valid(s.value) AND json_type(s.value) = 'array' THEN s.value ELSE '[]' END) b
WHERE s.key LIKE 'budgets/%';

INSERT OR REPLACE INTO workspace_quotas (workspace_key, family, vcpus)
SELECT substr(s.key, 18), q.key, q.value
FROM settings s, json_each(CASE WHEN json_valid(s.value) AND json_type(s.value) = 'object' THEN s.value ELSE '{}' END) q
WHERE s.key LIKE 'workspace\_quotas/%' ESCAPE '\';

INSERT OR REPLACE INTO workspace_limits (workspace_key, max_log_bytes, storage_quota_bytes)
SELECT substr(s.key, 18), COALESCE(json_extract(s.value, '$.max_log_bytes'), 0), COALESCE(json_extract(s.value, '$.storage_quota_bytes'), 0)
FROM settings s
WHERE s.key LIKE 'workspace\_limits/%' ESCAPE '\' AND CASE WHEN json_valid(s.value) THEN json_type(s.value) = 'object' ELSE 0 END;

DELETE FROM settings WHERE json_valid(value) AND (key LIKE 'budgets/%'
    OR key LIKE 'workspace\_quotas/%' ESCAPE '\'
    OR key LIKE 'workspace\_limits/%' ESCAPE '\');
