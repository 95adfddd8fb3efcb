-- A workspace's budgets, per-family vCPU quotas and storage limits move
-- from JSON documents in settings (budgets/<ws>, workspace_quotas/<ws>,
-- workspace_limits/<ws>) into tables of their own, so that the store's
-- conformance suite covers them. OFFSET 0 keeps the key filter ahead of
-- the JSON casts: other settings are not JSON. An empty list was stored
-- as null. workspace_key is the lower-cased workspace name, as the
-- settings' keys had it. created_on is the
-- budget's creation time as RFC 3339 text, as the documents held it.
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

INSERT INTO workspace_budgets (workspace_key, scope, period, amount, action, created_on, created_by)
SELECT substr(s.key, 9), b->>'scope', b->>'period',
       COALESCE((b->>'limit')::double precision, 0), COALESCE(b->>'action', ''),
       COALESCE(b->>'created_on', '0001-01-01T00:00:00Z'), COALESCE(b->>'created_by', '')
FROM (SELECT key, value FROM settings WHERE key LIKE 'budgets/%' OFFSET 0) s,
     jsonb_array_elements(CASE WHEN jsonb_typeof(s.value::jsonb) = 'array' THEN s.value::jsonb ELSE '[]'::jsonb END) b
ON CONFLICT DO NOTHING;

INSERT INTO workspace_quotas (workspace_key, family, vcpus)
SELECT substr(s.key, 18), q.key, q.value::bigint
FROM (SELECT key, value FROM settings WHERE key LIKE 'workspace\_quotas/%' OFFSET 0) s,
     jsonb_each_text(CASE WHEN jsonb_typeof(s.value::jsonb) = 'object' THEN s.value::jsonb ELSE '{}'::jsonb END) q
ON CONFLICT DO NOTHING;

INSERT INTO workspace_limits (workspace_key, max_log_bytes, storage_quota_bytes)
SELECT substr(s.key, 18), COALESCE((s.value::jsonb->>'max_log_bytes')::bigint, 0), COALESCE((s.value::jsonb->>'storage_quota_bytes')::bigint, 0)
FROM (SELECT key, value FROM settings WHERE key LIKE 'workspace\_limits/%' OFFSET 0) s
WHERE jsonb_typeof(s.value::jsonb) = 'object'
ON CONFLICT DO NOTHING;

DELETE FROM settings WHERE key LIKE 'budgets/%'
    OR key LIKE 'workspace\_quotas/%'
    OR key LIKE 'workspace\_limits/%';
