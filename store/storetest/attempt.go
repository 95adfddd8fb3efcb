package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// fullAttempt returns an attempt with every field set, with two ranks.
func fullAttempt(workspace, job, id string, number int, at time.Time) *jobkind.Attempt {
	return &jobkind.Attempt{
		ID:        id,
		Workspace: workspace,
		JobName:   job,
		Number:    number,
		Status:    jobkind.AttemptFailed,
		Ranks: []*jobkind.RankStatus{
			{Rank: 0, NodeID: "node-a", Status: jobkind.AttemptCompleted, ExitCode: stcheck.Ptr(0), StartTime: stcheck.Ptr(at), EndTime: stcheck.Ptr(at.Add(time.Minute))},
			{Rank: 1, NodeID: "node-b", Status: jobkind.AttemptFailed, ExitCode: stcheck.Ptr(137), StartTime: stcheck.Ptr(at), EndTime: stcheck.Ptr(at.Add(2 * time.Minute)), Reason: "OOM killed ✗"},
		},
		MasterAddr: "10.0.0.4",
		MasterPort: 29500,
		CreatedOn:  at,
		StartTime:  stcheck.Ptr(at),
		EndTime:    stcheck.Ptr(at.Add(2 * time.Minute)),
		ExitCode:   stcheck.Ptr(137),
		Reason:     "rank 1 exited with code 137",
	}
}

// newAttempt returns an attempt as first created: ranks preparing.
func newAttempt(workspace, job, id string, number int, at time.Time) *jobkind.Attempt {
	return &jobkind.Attempt{
		ID: id, Workspace: workspace, JobName: job, Number: number, Status: jobkind.AttemptPreparing,
		Ranks:     []*jobkind.RankStatus{{Rank: 0, NodeID: "node-a", Status: jobkind.AttemptPreparing}},
		CreatedOn: at,
	}
}

func getAttempt(t *testing.T, s store.Store, id string) *jobkind.Attempt {
	t.Helper()
	var a *jobkind.Attempt
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		a, err = tx.GetAttempt(id)
		return err
	})
	return a
}

func insertAttempts(t *testing.T, s store.Store, attempts ...*jobkind.Attempt) {
	t.Helper()
	stcheck.Update(t, s, func(tx store.Tx) error {
		for _, a := range attempts {
			if err := tx.InsertAttempt(a); err != nil {
				return err
			}
		}
		return nil
	})
}

func testAttemptRoundTrip(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	full := fullAttempt("Prod", "train", "att-1", 1, at)
	fresh := newAttempt("prod", "train", "att-2", 2, at)
	noRanks := &jobkind.Attempt{ID: "att-3", Workspace: "prod", JobName: "train", Number: 3, Ranks: []*jobkind.RankStatus{}, CreatedOn: at}
	nilRanks := &jobkind.Attempt{ID: "att-4", Workspace: "prod", JobName: "train", Number: 4, CreatedOn: at}
	insertAttempts(t, s, full, fresh, noRanks, nilRanks)
	stcheck.Equal(t, "GetAttempt of a full attempt", getAttempt(t, s, "att-1"), full)
	stcheck.Equal(t, "GetAttempt of a new attempt", getAttempt(t, s, "att-2"), fresh)
	stcheck.Equal(t, "GetAttempt of an attempt with no ranks", getAttempt(t, s, "att-3"), noRanks)
	stcheck.Equal(t, "GetAttempt of an attempt with nil ranks", getAttempt(t, s, "att-4"), nilRanks)

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertAttempt(newAttempt("staging", "other", "att-1", 1, at))
	})
	stcheck.WantCode(t, "InsertAttempt of an existing ID", err, core.ECONFLICT)
	stcheck.Equal(t, "attempt after a failed insert", getAttempt(t, s, "att-1"), full)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetAttempt("att-404")
		return err
	})
	stcheck.WantCode(t, "GetAttempt of a missing attempt", err, core.ENOTFOUND)
}

func testAttemptUpdate(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	insertAttempts(t, s, newAttempt("prod", "train", "att-1", 1, at))
	later := stcheck.Now(clock.Advance(time.Minute))
	var running *jobkind.Attempt
	stcheck.Update(t, s, func(tx store.Tx) error {
		a, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		a.Status, a.StartTime = jobkind.AttemptRunning, stcheck.Ptr(tx.Now())
		a.Ranks[0].Status, a.Ranks[0].StartTime = jobkind.AttemptRunning, stcheck.Ptr(tx.Now())
		a.Ranks = append(a.Ranks, &jobkind.RankStatus{Rank: 1, NodeID: "node-b", Status: jobkind.AttemptRunning, ExitCode: stcheck.Ptr(0)})
		a.MasterAddr, a.MasterPort = "10.0.0.4", 29500
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		got, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "GetAttempt in the updating transaction", got, a)
		running = a
		return nil
	})
	got := getAttempt(t, s, "att-1")
	stcheck.Equal(t, "GetAttempt after update", got, running)
	if got.StartTime == nil || !got.StartTime.Equal(later) {
		t.Errorf("StartTime after update = %v, want %v", got.StartTime, later)
	}

	// Every field can change, and the lists follow.
	full := fullAttempt("Staging", "train-2", "att-1", 2, later)
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateAttempt(full) })
	stcheck.Equal(t, "GetAttempt after replacing every field", getAttempt(t, s, "att-1"), full)
	stcheck.View(t, s, func(tx store.Tx) error {
		if old, err := tx.ListAttempts("prod", "train"); err != nil || len(old) != 0 {
			t.Errorf("ListAttempts of the attempt's old job: %d attempts, %v; want none", len(old), err)
		}
		list, err := tx.ListAttempts("staging", "train-2")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "ListAttempts of the attempt's new job", list, []*jobkind.Attempt{full})
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateAttempt(newAttempt("prod", "train", "att-404", 2, later))
	})
	stcheck.WantCode(t, "UpdateAttempt of a missing attempt", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetAttempt("att-404")
		return err
	})
	stcheck.WantCode(t, "GetAttempt after a failed update", err, core.ENOTFOUND)
}

func testAttemptList(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	a2 := fullAttempt("Prod", "train", "att-x", 2, at)
	a1 := newAttempt("prod", "train", "att-z", 1, at)
	a3 := newAttempt("prod", "train", "att-a", 3, at)
	otherCase := newAttempt("prod", "Train", "att-b", 1, at)
	otherWS := newAttempt("staging", "train", "att-c", 1, at)
	otherJob := newAttempt("prod", "train-2", "att-d", 1, at)
	insertAttempts(t, s, a2, otherWS, a3, otherCase, a1, otherJob)
	list := func(workspace, job string, want ...*jobkind.Attempt) {
		t.Helper()
		var got []*jobkind.Attempt
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListAttempts(workspace, job)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListAttempts("+workspace+", "+job+")", got, want)
	}
	list("prod", "train", a1, a2, a3)
	list("PROD", "train", a1, a2, a3)
	list("prod", "Train", otherCase)
	list("Staging", "train", otherWS)
	list("prod", "train-2", otherJob)
	list("prod", "TRAIN")
	list("nope", "train")

	// The list follows updates.
	stcheck.Update(t, s, func(tx store.Tx) error {
		a1.Status = jobkind.AttemptLost
		return tx.UpdateAttempt(a1)
	})
	list("prod", "train", a1, a2, a3)
}

func testAttemptWithJob(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	insertJobs(t, s, fullJob("Prod", "train", "gpu", 3, at))
	// Workspace names differ in case between the attempt and its job.
	insertAttempts(t, s, fullAttempt("prod", "train", "att-1", 1, at), newAttempt("prod", "gone", "att-2", 1, at))
	var a *jobkind.Attempt
	var j *jobkind.Job
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		a, j, err = tx.GetAttemptWithJob("att-1")
		return err
	})
	stcheck.Equal(t, "GetAttemptWithJob's attempt", a, getAttempt(t, s, "att-1"))
	stcheck.Equal(t, "GetAttemptWithJob's job", j, getJob(t, s, "prod", "train"))

	// A node with the work it reports on, in one read: the three as read
	// one by one; any of them missing, none.
	insertNodes(t, s, fullNode("Prod", "gpu", "node-1", at))
	var n *node.Node
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		n, a, j, err = tx.GetNodeWork("node-1", "att-1")
		return err
	})
	stcheck.Equal(t, "GetNodeWork's node", n, getNode(t, s, "node-1"))
	stcheck.Equal(t, "GetNodeWork's attempt", a, getAttempt(t, s, "att-1"))
	stcheck.Equal(t, "GetNodeWork's job", j, getJob(t, s, "prod", "train"))
	stcheck.View(t, s, func(tx store.Tx) error {
		for _, c := range [][2]string{{"node-none", "att-1"}, {"node-1", "att-none"}, {"node-1", "att-2"}} {
			n, a, j, err := tx.GetNodeWork(c[0], c[1])
			stcheck.WantCode(t, "GetNodeWork"+stcheck.Show(c), err, core.ENOTFOUND)
			if n != nil || a != nil || j != nil {
				t.Errorf("GetNodeWork%s = %v, %v, %v, want none", stcheck.Show(c), n, a, j)
			}
		}
		return nil
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		_, _, err := tx.GetAttemptWithJob("att-2")
		stcheck.WantCode(t, "GetAttemptWithJob of an attempt whose job is gone", err, core.ENOTFOUND)
		if err != nil && !strings.Contains(err.Error(), `job "gone"`) {
			t.Errorf("GetAttemptWithJob of an attempt whose job is gone: %v, want it to name the job", err)
		}
		_, _, err = tx.GetAttemptWithJob("att-none")
		stcheck.WantCode(t, "GetAttemptWithJob of a missing attempt", err, core.ENOTFOUND)
		if err != nil && !strings.Contains(err.Error(), `attempt "att-none"`) {
			t.Errorf("GetAttemptWithJob of a missing attempt: %v, want it to name the attempt", err)
		}
		return nil
	})
}
