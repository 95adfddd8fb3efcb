package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
	modernc "modernc.org/sqlite"
)

// pagesFetched returns how many pages the writer's connection (the one
// every Update runs on) has fetched, from its cache or the file, since
// the last call: what a transaction read, whatever its plan.
func pagesFetched(t *testing.T, db *DB) int {
	t.Helper()
	conn, err := db.rw.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := 0
	if err := conn.Raw(func(dc any) error {
		for _, op := range []modernc.DBStatusOp{modernc.DBStatusCacheHit, modernc.DBStatusCacheMiss} {
			cur, _, err := dc.(modernc.DBStatus).Status(op, true)
			if err != nil {
				return err
			}
			n += cur
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMetricWriteCostsNoMoreInABigRun: what a log-batch does in the
// writer's transaction — read its run's summary to check the limits,
// append its points — reads about as many pages in a run of 60,000
// points as in a run of 10: the limits come from running totals, not
// from summing every point (at 183,000 points one write held the single
// writer for 0.5 s and everyone else's writes waited). Pages are counted,
// not time: the count does not depend on the machine's load.
func TestMetricWriteCostsNoMoreInABigRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shoal.db")
	db, err := Open(t.Context(), Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	fill := func(job string, n int) {
		for done := 0; done < n; done += 1000 {
			var batch []mlflowrun.MetricPoint
			for i := done; i < min(n, done+1000); i++ {
				batch = append(batch, mlflowrun.MetricPoint{Key: fmt.Sprintf("m%02d", i%20), Value: float64(i), Timestamp: int64(i), Step: int64(i / 20)})
			}
			if err := db.Update(t.Context(), func(tx store.Tx) error { return tx.AppendMetrics("ws", job, batch) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill("small", 10)
	fill("big", 60000)
	logBatch := func(job string) int {
		pagesFetched(t, db)
		if err := db.Update(t.Context(), func(tx store.Tx) error {
			sums, err := tx.SummarizeMetrics("ws", job)
			if err != nil || len(sums) == 0 {
				return fmt.Errorf("summary of %s: %v, %v", job, sums, err)
			}
			return tx.AppendMetrics("ws", job, []mlflowrun.MetricPoint{{Key: "m01", Value: 1, Timestamp: 1 << 40, Step: 1 << 20}})
		}); err != nil {
			t.Fatal(err)
		}
		return pagesFetched(t, db)
	}
	logBatch("small") // the statements are prepared
	small, big := logBatch("small"), logBatch("big")
	// The big run's b-trees are a level or two deeper: a few pages more.
	if big > small+20 {
		t.Errorf("a log-batch into a run of 60,000 points fetched %d pages, into a run of 10 %d: the write reads the run's points", big, small)
	}
	t.Logf("pages fetched by a log-batch: %d into a run of 10 points, %d into one of 60,000", small, big)

	// The totals are the store's: a restarted server reads them back.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(t.Context(), Config{Path: path}); err != nil {
		t.Fatal(err)
	}
	var sums []mlflowrun.MetricSummary
	if err := db.View(t.Context(), func(tx store.Tx) (err error) {
		sums, err = tx.SummarizeMetrics("ws", "big")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range sums {
		total += m.Points
	}
	if len(sums) != 20 || total != 60001 || sums[1].Key != "m01" || sums[1].Last != 1 || sums[1].Step != 1<<20 || sums[0].Min != 0 || sums[19].Max != 59999 {
		t.Errorf("totals of the big run after a restart: %d keys, %d points, %+v", len(sums), total, sums)
	}
}
