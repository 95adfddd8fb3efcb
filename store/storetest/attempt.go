package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
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
			{Rank: 0, NodeID: "node-a", Status: jobkind.AttemptCompleted, ExitCode: ptr(0), StartTime: ptr(at), EndTime: ptr(at.Add(time.Minute))},
			{Rank: 1, NodeID: "node-b", Status: jobkind.AttemptFailed, ExitCode: ptr(137), StartTime: ptr(at), EndTime: ptr(at.Add(2 * time.Minute)), Reason: "OOM killed ✗"},
		},
		MasterAddr: "10.0.0.4",
		MasterPort: 29500,
		CreatedOn:  at,
		StartTime:  ptr(at),
		EndTime:    ptr(at.Add(2 * time.Minute)),
		ExitCode:   ptr(137),
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
	view(t, s, func(tx store.Tx) (err error) {
		a, err = tx.GetAttempt(id)
		return err
	})
	return a
}

func insertAttempts(t *testing.T, s store.Store, attempts ...*jobkind.Attempt) {
	t.Helper()
	update(t, s, func(tx store.Tx) error {
		for _, a := range attempts {
			if err := tx.InsertAttempt(a); err != nil {
				return err
			}
		}
		return nil
	})
}

func testAttemptRoundTrip(t *testing.T, s store.Store, clock *Clock) {
	at := now(clock.Now())
	full := fullAttempt("Prod", "train", "att-1", 1, at)
	fresh := newAttempt("prod", "train", "att-2", 2, at)
	noRanks := &jobkind.Attempt{ID: "att-3", Workspace: "prod", JobName: "train", Number: 3, Ranks: []*jobkind.RankStatus{}, CreatedOn: at}
	nilRanks := &jobkind.Attempt{ID: "att-4", Workspace: "prod", JobName: "train", Number: 4, CreatedOn: at}
	insertAttempts(t, s, full, fresh, noRanks, nilRanks)
	equal(t, "GetAttempt of a full attempt", getAttempt(t, s, "att-1"), full)
	equal(t, "GetAttempt of a new attempt", getAttempt(t, s, "att-2"), fresh)
	equal(t, "GetAttempt of an attempt with no ranks", getAttempt(t, s, "att-3"), noRanks)
	equal(t, "GetAttempt of an attempt with nil ranks", getAttempt(t, s, "att-4"), nilRanks)

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertAttempt(newAttempt("staging", "other", "att-1", 1, at))
	})
	wantCode(t, "InsertAttempt of an existing ID", err, core.ECONFLICT)
	equal(t, "attempt after a failed insert", getAttempt(t, s, "att-1"), full)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetAttempt("att-404")
		return err
	})
	wantCode(t, "GetAttempt of a missing attempt", err, core.ENOTFOUND)
}

func testAttemptUpdate(t *testing.T, s store.Store, clock *Clock) {
	at := now(clock.Now())
	insertAttempts(t, s, newAttempt("prod", "train", "att-1", 1, at))
	later := now(clock.Advance(time.Minute))
	var running *jobkind.Attempt
	update(t, s, func(tx store.Tx) error {
		a, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		a.Status, a.StartTime = jobkind.AttemptRunning, ptr(tx.Now())
		a.Ranks[0].Status, a.Ranks[0].StartTime = jobkind.AttemptRunning, ptr(tx.Now())
		a.Ranks = append(a.Ranks, &jobkind.RankStatus{Rank: 1, NodeID: "node-b", Status: jobkind.AttemptRunning, ExitCode: ptr(0)})
		a.MasterAddr, a.MasterPort = "10.0.0.4", 29500
		if err := tx.UpdateAttempt(a); err != nil {
			return err
		}
		got, err := tx.GetAttempt("att-1")
		if err != nil {
			return err
		}
		equal(t, "GetAttempt in the updating transaction", got, a)
		running = a
		return nil
	})
	got := getAttempt(t, s, "att-1")
	equal(t, "GetAttempt after update", got, running)
	if got.StartTime == nil || !got.StartTime.Equal(later) {
		t.Errorf("StartTime after update = %v, want %v", got.StartTime, later)
	}

	// Every field can change, and the lists follow.
	full := fullAttempt("Staging", "train-2", "att-1", 2, later)
	update(t, s, func(tx store.Tx) error { return tx.UpdateAttempt(full) })
	equal(t, "GetAttempt after replacing every field", getAttempt(t, s, "att-1"), full)
	view(t, s, func(tx store.Tx) error {
		if old, err := tx.ListAttempts("prod", "train"); err != nil || len(old) != 0 {
			t.Errorf("ListAttempts of the attempt's old job: %d attempts, %v; want none", len(old), err)
		}
		list, err := tx.ListAttempts("staging", "train-2")
		if err != nil {
			return err
		}
		equal(t, "ListAttempts of the attempt's new job", list, []*jobkind.Attempt{full})
		return nil
	})

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateAttempt(newAttempt("prod", "train", "att-404", 2, later))
	})
	wantCode(t, "UpdateAttempt of a missing attempt", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetAttempt("att-404")
		return err
	})
	wantCode(t, "GetAttempt after a failed update", err, core.ENOTFOUND)
}

func testAttemptList(t *testing.T, s store.Store, clock *Clock) {
	at := now(clock.Now())
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
		view(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListAttempts(workspace, job)
			return err
		})
		if len(got) == 0 && len(want) == 0 {
			return
		}
		equal(t, "ListAttempts("+workspace+", "+job+")", got, want)
	}
	list("prod", "train", a1, a2, a3)
	list("PROD", "train", a1, a2, a3)
	list("prod", "Train", otherCase)
	list("Staging", "train", otherWS)
	list("prod", "train-2", otherJob)
	list("prod", "TRAIN")
	list("nope", "train")

	// The list follows updates.
	update(t, s, func(tx store.Tx) error {
		a1.Status = jobkind.AttemptLost
		return tx.UpdateAttempt(a1)
	})
	list("prod", "train", a1, a2, a3)
}

func testAttemptWithJob(t *testing.T, s store.Store, clock *Clock) {
	at := now(clock.Now())
	insertJobs(t, s, fullJob("Prod", "train", "gpu", 3, at))
	// Workspace names differ in case between the attempt and its job.
	insertAttempts(t, s, fullAttempt("prod", "train", "att-1", 1, at), newAttempt("prod", "gone", "att-2", 1, at))
	var a *jobkind.Attempt
	var j *jobkind.Job
	view(t, s, func(tx store.Tx) (err error) {
		a, j, err = tx.GetAttemptWithJob("att-1")
		return err
	})
	equal(t, "GetAttemptWithJob's attempt", a, getAttempt(t, s, "att-1"))
	equal(t, "GetAttemptWithJob's job", j, getJob(t, s, "prod", "train"))

	// A node with the work it reports on, in one read: the three as read
	// one by one; any of them missing, none.
	insertNodes(t, s, fullNode("Prod", "gpu", "node-1", at))
	var n *node.Node
	view(t, s, func(tx store.Tx) (err error) {
		n, a, j, err = tx.GetNodeWork("node-1", "att-1")
		return err
	})
	equal(t, "GetNodeWork's node", n, getNode(t, s, "node-1"))
	equal(t, "GetNodeWork's attempt", a, getAttempt(t, s, "att-1"))
	equal(t, "GetNodeWork's job", j, getJob(t, s, "prod", "train"))
	view(t, s, func(tx store.Tx) error {
		for _, c := range [][2]string{{"node-none", "att-1"}, {"node-1", "att-none"}, {"node-1", "att-2"}} {
			n, a, j, err := tx.GetNodeWork(c[0], c[1])
			wantCode(t, "GetNodeWork"+show(c), err, core.ENOTFOUND)
			if n != nil || a != nil || j != nil {
				t.Errorf("GetNodeWork%s = %v, %v, %v, want none", show(c), n, a, j)
			}
		}
		return nil
	})
	view(t, s, func(tx store.Tx) error {
		_, _, err := tx.GetAttemptWithJob("att-2")
		wantCode(t, "GetAttemptWithJob of an attempt whose job is gone", err, core.ENOTFOUND)
		if err != nil && !strings.Contains(err.Error(), `job "gone"`) {
			t.Errorf("GetAttemptWithJob of an attempt whose job is gone: %v, want it to name the job", err)
		}
		_, _, err = tx.GetAttemptWithJob("att-none")
		wantCode(t, "GetAttemptWithJob of a missing attempt", err, core.ENOTFOUND)
		if err != nil && !strings.Contains(err.Error(), `attempt "att-none"`) {
			t.Errorf("GetAttemptWithJob of a missing attempt: %v, want it to name the attempt", err)
		}
		return nil
	})
}
