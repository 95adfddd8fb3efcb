package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testQueueWatch: the queue in figures per compute, and the queued jobs
// of a window of submission times, oldest first, cut at a limit without
// splitting one time; jobs not queued are in neither.
func testQueueWatch(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	sec := func(n int) time.Time { return at.Add(time.Duration(n) * time.Second) }
	var jobs []*jobkind.Job
	add := func(ws, name, compute string, seq int64, created time.Time, count int) *jobkind.Job {
		j := queuedJob(ws, name, compute, seq, "", created)
		j.Resources = &jobkind.JobResources{InstanceCount: count}
		jobs = append(jobs, j)
		return j
	}
	add("ws-b", "b1", "GPU", 1, sec(1), 2)
	add("ws-a", "a2", "gpu", 2, sec(2), 1)
	add("ws-a", "z3", "cpu", 3, sec(3), 1)
	add("ws-a", "y3", "cpu", 4, sec(3), 4) // submitted with z3
	add("ws-b", "b4", "gpu", 5, sec(3), 1) // and with them
	add("ws-a", "a5", "gpu", 6, sec(5), 3)
	add("ws-a", "r6", "gpu", 7, sec(0), 1).Status = jobkind.JobRunning
	add("ws-a", "c7", "cpu", 8, sec(0), 1).Status = jobkind.JobCanceled
	insertJobs(t, s, jobs...)

	var sums []store.QueueSummary
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		sums, err = tx.QueueSummaries()
		return err
	})
	var got []string
	for _, q := range sums {
		got = append(got, fmt.Sprintf("%s %d jobs %d nodes since %s", q.Key, q.Jobs, q.Nodes, q.Oldest.Sub(at)))
	}
	want := "ws-a/cpu 2 jobs 5 nodes since 3s; ws-a/gpu 2 jobs 4 nodes since 2s; ws-b/gpu 2 jobs 3 nodes since 1s"
	if strings.Join(got, "; ") != want {
		t.Errorf("QueueSummaries = %q, want %q", strings.Join(got, "; "), want)
	}

	created := func(after, upTo time.Time, limit int, want string) {
		t.Helper()
		var refs []store.QueuedJobRef
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			refs, err = tx.ListQueuedJobsCreated(after, upTo, limit)
			return err
		})
		var got []string
		for _, r := range refs {
			got = append(got, r.Workspace+"/"+r.Name)
			for _, j := range jobs {
				if j.Name == r.Name && (!r.CreatedOn.Equal(j.CreatedOn) || r.Seq != j.Seq || r.ComputeKey != strings.ToLower(j.Compute)) {
					t.Errorf("ListQueuedJobsCreated: ref %+v does not match its job", r)
				}
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("ListQueuedJobsCreated(%s, %s, %d) = %q, want %q", after.Sub(at), upTo.Sub(at), limit, strings.Join(got, " "), want)
		}
	}
	created(sec(-10), sec(10), 100, "ws-b/b1 ws-a/a2 ws-a/y3 ws-a/z3 ws-b/b4 ws-a/a5")
	// (after, upTo]: after is out, upTo in.
	created(sec(1), sec(3), 100, "ws-a/a2 ws-a/y3 ws-a/z3 ws-b/b4")
	// A limit that cuts the jobs of one time takes all of them.
	created(sec(1), sec(10), 2, "ws-a/a2 ws-a/y3 ws-a/z3 ws-b/b4")
	created(sec(1), sec(10), 1, "ws-a/a2")
	created(sec(2), sec(10), 1, "ws-a/y3 ws-a/z3 ws-b/b4")
	created(sec(5), sec(10), 100, "")
	created(sec(3), sec(3), 100, "")
}
