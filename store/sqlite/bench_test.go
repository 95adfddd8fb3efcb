package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// benchJob returns a job as the service submits it.
func benchJob(name string, seq int64, priority string) *job.Job {
	return &job.Job{
		JobSpec: job.JobSpec{
			Name:        name,
			Type:        "command",
			DisplayName: "train resnet",
			Command:     "python train.py --lr ${{inputs.lr}} --data ${{inputs.data}}",
			Code:        "sha256:" + strings.Repeat("ab", 32),
			Environment: "azureml:pytorch-2.3:1",
			Compute:     "gpu-cluster",
			Inputs: map[string]*job.JobInput{
				"lr":   {Value: 0.01},
				"data": {Type: "uri_folder", Path: "sha256:" + strings.Repeat("cd", 32)},
			},
			Outputs:       map[string]*job.JobOutput{"model": {Type: "uri_folder"}},
			Resources:     &job.JobResources{InstanceCount: 2},
			Distribution:  &job.Distribution{Type: job.DistributionPyTorch, ProcessCountPerInstance: 1},
			QueueSettings: &job.QueueSettings{Priority: priority},
		},
		Workspace:    "prod",
		Status:       job.JobQueued,
		StatusReason: "queued: waiting for the scheduler",
		CreatedBy:    "user:alice",
		Seq:          seq,
		SpecHash:     strings.Repeat("ef", 32),
		Version:      1,
	}
}

func openBench(b *testing.B) *sqlite.DB {
	b.Helper()
	db, err := sqlite.Open(b.Context(), sqlite.Config{Path: filepath.Join(b.TempDir(), "shoal.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkJobLifecycle is the store's cost of one job: a transaction that
// takes a Seq and inserts the job, then four that each read the job and
// write it back with a new status, as the service and scheduler do.
func BenchmarkJobLifecycle(b *testing.B) {
	db := openBench(b)
	ctx := b.Context()
	statuses := []string{job.JobPreparing, job.JobRunning, job.JobFinalizing, job.JobCompleted}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		name := fmt.Sprintf("job-%d", i)
		err := db.Update(ctx, func(tx store.Tx) error {
			seq, err := tx.NextSeq("job")
			if err != nil {
				return err
			}
			j := benchJob(name, seq, job.PriorityMedium)
			j.CreatedOn = tx.Now()
			return tx.InsertJob(j)
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, status := range statuses {
			err := db.Update(ctx, func(tx store.Tx) error {
				j, err := tx.GetJob("prod", name)
				if err != nil {
					return err
				}
				j.Status = status
				j.Version++
				now := tx.Now()
				switch status {
				case job.JobRunning:
					j.StartTime, j.AttemptCount, j.CurrentAttemptID = &now, 1, name+"-1"
				case job.JobCompleted:
					j.EndTime, j.ExitCode = &now, new(int)
				}
				return tx.UpdateJob(j)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(1+len(statuses))), "ns/tx")
}

// BenchmarkListQueuedJobs is the scheduler's read of the queue, with n
// queued jobs among 4n jobs.
func BenchmarkListQueuedJobs(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db := openBench(b)
			ctx := b.Context()
			err := db.Update(ctx, func(tx store.Tx) error {
				for i := range 4 * n {
					j := benchJob(fmt.Sprintf("job-%d", i), int64(i+1), []string{job.PriorityLow, job.PriorityMedium, job.PriorityHigh}[i%3])
					if i%4 != 0 {
						j.Status = job.JobCompleted
					}
					if err := tx.InsertJob(j); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				err := db.View(ctx, func(tx store.Tx) error {
					jobs, err := tx.ListQueuedJobs()
					if err == nil && len(jobs) != n {
						err = fmt.Errorf("%d queued jobs, want %d", len(jobs), n)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
