package placement_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/control/placement"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/service/scheduling"
	"github.com/shoal-ml/shoal/store"
)

// BenchmarkWholeQueuePass runs the pass over the whole queue (Plan and
// Apply) over 20,000 queued jobs spread over 1 or 4 computes with no free
// node, and reports, beside the bytes allocated, the most live heap seen
// during the pass above the heap before it, per queued job (collections
// forced every 2 ms while it runs): what the pass holds at once. With
// moving, the head of each queue leaves it before every pass, so that
// every waiting job's sentence ("waiting behind N jobs") changes and is
// held back, as at full size, where the queue moves between passes.
//
//	go test ./control/placement -run '^$' -bench WholeQueuePass -benchtime 5x
func BenchmarkWholeQueuePass(b *testing.B) {
	const jobs = 20_000
	for _, bc := range []struct {
		computes int
		moving   bool
	}{{1, false}, {4, false}, {1, true}} {
		computes := bc.computes
		name := fmt.Sprintf("computes=%d", computes)
		if bc.moving {
			name += "/moving"
		}
		b.Run(name, func(b *testing.B) {
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
			next := 0 // the head of the queue
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if bc.moving {
					b.StopTimer()
					err := db.Update(ctx, func(tx store.Tx) error {
						j, err := tx.GetJob("ws", fmt.Sprintf("job-%06d", next))
						if err != nil {
							return err
						}
						j.Status = job.JobCanceled
						return tx.UpdateJob(j)
					})
					if err != nil {
						b.Fatal(err)
					}
					next++
					b.StartTimer()
				}
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
