package main

import (
	"fmt"
	"time"
)

// writeTotals are the server's write-path counters, read from its
// /metrics: write transactions, the Updates they carried and the seconds
// they held the store's writer.
type writeTotals struct {
	txs, updates, busy float64
	at                 time.Time
}

// readWrites scrapes the server's write-path totals.
func (s *server) readWrites() writeTotals {
	st, b := s.get("/metrics")
	if st != 200 {
		fatalf("metrics: %d %s", st, b)
	}
	w := parseWrites(b)
	// Wall time: a rate over the bench's own window, as every figure
	// bench/scale prints; no decision of the server reads it.
	w.at = time.Now()
	return w
}

// parseWrites reads the three unlabelled counters from the Prometheus
// text format.
func parseWrites(b []byte) writeTotals {
	var w writeTotals
	eachMetric(b, func(name, labels string, v float64) {
		switch name {
		case "shoal_store_write_transactions_total":
			w.txs = v
		case "shoal_store_write_updates_total":
			w.updates = v
		case "shoal_store_write_busy_seconds_total":
			w.busy = v
		}
	})
	return w
}

// writeLine says how the write path was used between before and after:
// what every Update (a submission's among them) queued behind.
func writeLine(before, after writeTotals) string {
	secs := after.at.Sub(before.at).Seconds()
	txs := after.txs - before.txs
	if secs <= 0 || txs <= 0 {
		return "write path: no write transactions observed"
	}
	return fmt.Sprintf("write path: %.0f transactions/s, %.1f Updates each, busy %.0f %% of the time",
		txs/secs, (after.updates-before.updates)/txs, 100*(after.busy-before.busy)/secs)
}
