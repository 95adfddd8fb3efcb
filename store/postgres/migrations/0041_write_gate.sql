-- The write gate (issue 40): every write transaction's first statement
-- locks this table in ROW SHARE mode, which write transactions do not
-- conflict on; a write that PostgreSQL failed with a serialization
-- failure runs again locking it in EXCLUSIVE mode, which waits for the
-- writes in progress and holds up new ones until it commits, so that the
-- run again cannot conflict again. A table lock, not an advisory lock:
-- LOCK TABLE takes no snapshot, so a SERIALIZABLE transaction that waited
-- for the gate reads what was committed while it waited. The table holds
-- no rows.
CREATE TABLE write_gate (id INTEGER PRIMARY KEY CHECK (id = 1));
