package sqlite_test

import (
	"fmt"
	"testing"

	"github.com/shoal-ml/shoal/domain/mlflowrun"
	"github.com/shoal-ml/shoal/store"
)

// BenchmarkAppendMetrics is one log-batch of 1000 points over 100 keys,
// the store's part: the limits' read of the run's summary and the append.
func BenchmarkAppendMetrics(b *testing.B) {
	db := openBench(b)
	i := 0
	for b.Loop() {
		batch := make([]mlflowrun.MetricPoint, 1000)
		for k := range batch {
			batch[k] = mlflowrun.MetricPoint{Key: fmt.Sprintf("m%03d", k%100), Value: float64(i), Timestamp: int64(i), Step: int64(i)}
			i++
		}
		if err := db.Update(b.Context(), func(tx store.Tx) error {
			if _, err := tx.SummarizeMetrics("ws", fmt.Sprint("run", i/100000)); err != nil {
				return err
			}
			return tx.AppendMetrics("ws", fmt.Sprint("run", i/100000), batch)
		}); err != nil {
			b.Fatal(err)
		}
	}
}
