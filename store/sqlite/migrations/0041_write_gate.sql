-- PostgreSQL's migration 0041 makes the write gate, a table its write
-- transactions lock (see there). SQLite has one writer and no gate. The
-- version is kept so that both stores number their migrations alike.
SELECT 1;
