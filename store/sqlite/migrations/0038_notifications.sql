-- Notifications (issue 39): webhooks a workspace Owner registers, the
-- deliveries the notifier inserts and the sender tries, and the
-- notifier's place in the event log.
--
-- webhooks: per workspace, keyed by the lower-cased workspace and
-- webhook names; workspace is the name as written; sealed_secret is the
-- signing secret sealed by the server's secrets key (internal/sealing),
-- never in clear; doc is the rest of the webhook as JSON.
CREATE TABLE webhooks (
    workspace_key TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    workspace     TEXT NOT NULL,
    sealed_secret TEXT NOT NULL,
    doc           TEXT NOT NULL,
    PRIMARY KEY (workspace_key, name_key)
);

-- notify_deliveries: one notification to one receiver. webhook_key is
-- the lower-cased webhook name ('' for a job's notification mail);
-- target the URL or the addresses; event_key the event's own key, so
-- that UNIQUE (workspace_key, webhook_key, target, event_key) lets an
-- event reach a receiver at most once. next_attempt and updated_on are Unix
-- microseconds; doc is the delivery as JSON.
CREATE TABLE notify_deliveries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_key TEXT NOT NULL,
    webhook_key   TEXT NOT NULL,
    target        TEXT NOT NULL,
    event_key     TEXT NOT NULL,
    status        TEXT NOT NULL,
    next_attempt  BIGINT NOT NULL,
    updated_on    BIGINT NOT NULL,
    doc           TEXT NOT NULL,
    UNIQUE (workspace_key, webhook_key, target, event_key)
);
-- The sender's query: pending ones due, oldest first.
CREATE INDEX notify_deliveries_due ON notify_deliveries (status, next_attempt, id);
-- A receiver's pending count, and its deliveries newest first.
CREATE INDEX notify_deliveries_pending ON notify_deliveries (workspace_key, webhook_key, status);
CREATE INDEX notify_deliveries_webhook ON notify_deliveries (workspace_key, webhook_key, id);

-- notify_cursors: named positions in the event log (the notifier's).
CREATE TABLE notify_cursors (
    name  TEXT NOT NULL PRIMARY KEY,
    value BIGINT NOT NULL
);
