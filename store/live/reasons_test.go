package live_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/decide/scheduler"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/live"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// Two replicas on one store: the leader's passes write the reasons that
// changed, the follower reads them; a sentence alone changed is written at
// most every MessageEvery (the leader shows it at once), a new code at
// once; a job no longer waiting loses its reason; a replica that takes
// over reads what is stored and does not count it as changed.
func TestReasonsAcrossReplicas(t *testing.T) {
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := live.ReasonsConfig{Store: db, MessageEvery: 10 * time.Second}
	leader, follower := live.NewReasons(cfg), live.NewReasons(cfg)
	get := func(r live.WaitReasons, job string) scheduler.Reason {
		t.Helper()
		var out scheduler.Reason
		if err := db.View(t.Context(), func(tx store.Tx) (err error) {
			out, _, err = r.Get(tx, "default", job)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	pass := func(r live.WaitReasons, now time.Time, reasons map[string]scheduler.Reason) *live.ReasonChanges {
		t.Helper()
		c, err := r.Plan(t.Context(), now, reasons)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(t.Context(), c.Write); err != nil {
			t.Fatal(err)
		}
		r.Committed(c)
		return c
	}
	atMax := scheduler.NewReason(scheduler.ReasonAtMax, "cluster is at max_instances (1 of 1 nodes busy)")
	// As the scheduler keeps them: a count behind a head. The store keeps
	// sentences, which the follower reads back.
	behind := func(n int) scheduler.Reason { return scheduler.WaitingBehind(n, "a") }
	t0 := time.Unix(1_700_000_000, 0)
	c := pass(leader, t0, map[string]scheduler.Reason{"default/a": atMax, "default/b": behind(1)})
	if want := []string{"default/a", "default/b"}; !slices.Equal(c.Changed, want) {
		t.Errorf("first pass changed %v, want %v", c.Changed, want)
	}
	if got := get(follower, "b"); !got.Same(behind(1)) {
		t.Errorf("the follower shows %+v after the first pass, want %+v", got, behind(1))
	}

	// The sentence alone moves: the leader shows it, the store waits.
	c = pass(leader, t0.Add(time.Second), map[string]scheduler.Reason{"default/a": atMax, "default/b": behind(2)})
	if len(c.Changed) != 0 || !c.Empty() {
		t.Errorf("a sentence alone changed: changed %v, empty %v; want nothing written", c.Changed, c.Empty())
	}
	if got := get(leader, "b"); !got.Same(behind(2)) {
		t.Errorf("the leader shows %+v, want its latest pass's %+v", got, behind(2))
	}
	if got := get(follower, "b"); !got.Same(behind(1)) {
		t.Errorf("the follower shows %+v before MessageEvery, want the stored %+v", got, behind(1))
	}
	pass(leader, t0.Add(11*time.Second), map[string]scheduler.Reason{"default/a": atMax, "default/b": behind(3)})
	if got := get(follower, "b"); !got.Same(behind(3)) {
		t.Errorf("the follower shows %+v after MessageEvery, want %+v", got, behind(3))
	}

	// A new code is written at once; a job no longer waiting goes.
	c = pass(leader, t0.Add(12*time.Second), map[string]scheduler.Reason{"default/b": atMax})
	if !slices.Equal(c.Changed, []string{"default/b"}) {
		t.Errorf("a new code: changed %v, want [default/b]", c.Changed)
	}
	if got := get(follower, "b"); !got.Same(atMax) {
		t.Errorf("the follower shows %+v after a new code, want %+v", got, atMax)
	}
	if got := get(follower, "a"); !got.IsZero() {
		t.Errorf("the follower shows %+v for a job no longer waiting", got)
	}

	// The leader steps down, the follower takes over: it reads what is
	// stored, and the same reasons are no change.
	leader.Forget()
	c = pass(follower, t0.Add(13*time.Second), map[string]scheduler.Reason{"default/b": atMax})
	if len(c.Changed) != 0 || !c.Empty() {
		t.Errorf("the new leader's first pass, same reasons: changed %v, empty %v", c.Changed, c.Empty())
	}
	pass(follower, t0.Add(14*time.Second), map[string]scheduler.Reason{"default/b": behind(1)})
	if got := get(leader, "b"); !got.Same(behind(1)) {
		t.Errorf("the former leader shows %+v, want the new leader's %+v", got, behind(1))
	}
	var list map[string]scheduler.Reason
	db.View(t.Context(), func(tx store.Tx) (err error) {
		list, err = leader.List(tx, "DEFAULT")
		return err
	})
	if len(list) != 1 || !list["default/b"].Same(behind(1)) {
		t.Errorf("List on the former leader: %v", list)
	}
}

// A sentence held back (the store keeps the older one) is still written
// when MessageEvery has passed even if the leader's latest pass already
// showed it: the leader keeps what the store holds as the difference from
// its latest pass, and compares against the store's, not the latest.
func TestReasonsHeldBackSentenceIsWritten(t *testing.T) {
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cfg := live.ReasonsConfig{Store: db, MessageEvery: 10 * time.Second}
	leader, follower := live.NewReasons(cfg), live.NewReasons(cfg)
	behind := func(n string) scheduler.Reason {
		return scheduler.NewReason(scheduler.ReasonBehind, "waiting behind "+n+" jobs")
	}
	pass := func(now time.Time, reasons map[string]scheduler.Reason) *live.ReasonChanges {
		t.Helper()
		c, err := leader.Plan(t.Context(), now, reasons)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(t.Context(), c.Write); err != nil {
			t.Fatal(err)
		}
		leader.Committed(c)
		return c
	}
	stored := func(job string) scheduler.Reason {
		t.Helper()
		var out scheduler.Reason
		if err := db.View(t.Context(), func(tx store.Tx) (err error) {
			out, _, err = follower.Get(tx, "default", job)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t0 := time.Unix(1_700_000_000, 0)
	pass(t0, map[string]scheduler.Reason{"default/a": behind("1"), "default/b": behind("1")})
	// Both sentences move; the store keeps the first ones.
	if c := pass(t0.Add(time.Second), map[string]scheduler.Reason{"default/a": behind("2"), "default/b": behind("2")}); !c.Empty() {
		t.Fatal("a sentence alone changed before MessageEvery was written")
	}
	// a's moves back to what is stored: nothing to write for it, ever.
	if c := pass(t0.Add(2*time.Second), map[string]scheduler.Reason{"default/a": behind("1"), "default/b": behind("2")}); !c.Empty() {
		t.Fatal("a sentence alone changed before MessageEvery was written")
	}
	// MessageEvery later, b's sentence is the latest pass's but not the
	// store's: it is written.
	pass(t0.Add(11*time.Second), map[string]scheduler.Reason{"default/a": behind("1"), "default/b": behind("2")})
	if got := stored("b"); !got.Same(behind("2")) {
		t.Errorf("the store holds %+v for b, want the held-back %+v", got, behind("2"))
	}
	if got := stored("a"); !got.Same(behind("1")) {
		t.Errorf("the store holds %+v for a, want %+v", got, behind("1"))
	}
}

// Two passes planned, then committed one after the other: the second
// planned against what the store held before the first wrote, so its
// changes over that do not say what the store holds; the leader reads the
// store again, and the next pass deletes what the first wrote for a job
// that no longer waits.
func TestReasonsPassesCommittedOutOfOrder(t *testing.T) {
	db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	leader := live.NewReasons(live.ReasonsConfig{Store: db, MessageEvery: 10 * time.Second})
	atMax := scheduler.NewReason(scheduler.ReasonAtMax, "cluster is at max_instances (1 of 1 nodes busy)")
	plan := func(now time.Time, reasons map[string]scheduler.Reason) *live.ReasonChanges {
		t.Helper()
		c, err := leader.Plan(t.Context(), now, reasons)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	commit := func(c *live.ReasonChanges) {
		t.Helper()
		if err := db.Update(t.Context(), c.Write); err != nil {
			t.Fatal(err)
		}
		leader.Committed(c)
	}
	t0 := time.Unix(1_700_000_000, 0)
	commit(plan(t0, map[string]scheduler.Reason{}))
	// A finds k waiting; B, planned before A committed, finds it gone.
	a := plan(t0.Add(time.Second), map[string]scheduler.Reason{"default/k": atMax})
	b := plan(t0.Add(time.Second), map[string]scheduler.Reason{})
	commit(a)
	commit(b)
	commit(plan(t0.Add(2*time.Second), map[string]scheduler.Reason{}))
	var rows []*job.WaitReason
	if err := db.View(t.Context(), func(tx store.Tx) (err error) {
		rows, err = tx.ListWaitReasons("")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("the store keeps %d reasons of jobs that no longer wait (first %s/%s)", len(rows), rows[0].Workspace, rows[0].Job)
	}
}
