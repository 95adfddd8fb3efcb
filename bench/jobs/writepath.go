package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// writePath is the server's write-path counters at a moment
// (shoal_store_write_*: transactions, the Updates they carried, the time
// they held the store's writer); ok is false when the server has none (a
// baseline older than them).
type writePath struct {
	at                  time.Time
	txs, updates, busyS float64
	ok                  bool
}

// sampleWritePath reads the write-path counters from the server's
// /metrics with the admin's token.
func sampleWritePath(ctx context.Context, s *server) writePath {
	w := writePath{at: time.Now()}
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/metrics", nil)
	if err != nil {
		return w
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return w
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return w
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		var dest *float64
		switch name {
		case "shoal_store_write_transactions_total":
			dest = &w.txs
		case "shoal_store_write_updates_total":
			dest = &w.updates
		case "shoal_store_write_busy_seconds_total":
			dest = &w.busyS
		default:
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			*dest = v
			found++
		}
	}
	w.ok = found == 3
	return w
}

// writePathSince says how busy the write path was between two samples
// and how many Updates a write transaction carried: a write path busy
// all the time bounds the job path (the writes run one after another),
// one that is not leaves the bound to the CPU.
func writePathSince(a, b writePath, jobs int) string {
	if !a.ok || !b.ok {
		return "write path: not measured (no shoal_store_write_* metrics)"
	}
	wall := b.at.Sub(a.at).Seconds()
	txs := b.txs - a.txs
	return fmt.Sprintf("write path busy %.0f%% of the run (%.0f write transactions, %.1f Updates each, %.2f ms each, %.1f per job)",
		100*(b.busyS-a.busyS)/wall, txs, (b.updates-a.updates)/max(1, txs), 1000*(b.busyS-a.busyS)/max(1, txs), txs/float64(max(1, jobs)))
}
