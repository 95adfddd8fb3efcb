package placement_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// BenchmarkWholeQueuePass runs the pass over the whole queue (Plan and
// Apply) over 20,000 queued jobs spread over 1 or 4 computes with no free
// node, and reports, beside the bytes allocated, the most live heap seen
// during the pass above the heap before it, per queued job (collections
// forced every 2 ms while it runs): what the pass holds at once.
//
//	go test ./control/placement -run '^$' -bench WholeQueuePass -benchtime 5x
func BenchmarkWholeQueuePass(b *testing.B) {
	const jobs = 20_000
	for _, computes := range []int{1, 4} {
		b.Run(fmt.Sprintf("computes=%d", computes), func(b *testing.B) {
			ctx := context.Background()
			db, clock := teststore.Open(b)
			err := db.Update(ctx, func(tx store.Tx) error {
				for c := range computes {
					cl := teststore.Cluster(tx, fmt.Sprintf("c%d", c))
					ten := 10
					cl.MaxInstances = &ten
					if err := tx.InsertCompute(cl); err != nil {
						return err
					}
				}
				for i := range jobs {
					if err := tx.InsertJob(teststore.QueuedJob(tx, fmt.Sprintf("job-%06d", i), fmt.Sprintf("c%d", i%computes), int64(i+1))); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			svc := newServices(b, db)
			pass := placement.New(svc, noBlocks{}, scheduling.NewView())
			// The first pass writes every reason; the measured ones find
			// them written, as a server's passes do.
			if _, err := pass.RunOnce(ctx, clock.Now(), true); err != nil {
				b.Fatal(err)
			}
			var peak uint64
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.HeapAlloc
				stop, done := make(chan struct{}), sync.WaitGroup{}
				done.Add(1)
				go func() {
					defer done.Done()
					t := time.NewTicker(2 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							return
						case <-t.C:
						}
						var ms runtime.MemStats
						runtime.GC()
						runtime.ReadMemStats(&ms)
						if ms.HeapAlloc > before {
							peak = max(peak, ms.HeapAlloc-before)
						}
					}
				}()
				if _, err := pass.RunOnce(ctx, clock.Now(), true); err != nil {
					b.Fatal(err)
				}
				close(stop)
				done.Wait()
			}
			b.ReportMetric(float64(peak)/jobs, "peak-live-B/job")
		})
	}
}
