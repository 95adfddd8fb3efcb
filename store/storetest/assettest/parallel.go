package assettest

import (
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testParallelLedger covers parallel jobs' ledgers: a plan is taken once
// (ECONFLICT after) and reads back with its description; NextFresh and
// Aborted update; a description reads one mini-batch's ("" past the
// list or before it); a mini-batch's record is replaced whole, lists by state
// and index with a limit, and counts by state with the tries, failed
// items and those done since a time; file posts read back in the order
// they came; ledgers are apart per job and per workspace (compared
// case-insensitively); DeleteParallelLedger removes one job's ledger only.
func testParallelLedger(t *testing.T, s store.Store, clock *stcheck.Clock) {
	stcheck.View(t, s, func(tx store.Tx) error {
		if _, err := tx.GetParallelPlan("ws", "j1"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("GetParallelPlan of a job without one: %v, want ENOTFOUND", err)
		}
		if _, err := tx.GetParallelBatch("ws", "j1", 0); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("GetParallelBatch never leased: %v, want ENOTFOUND", err)
		}
		return nil
	})
	plan := &parallel.Plan{Workspace: "WS", Job: "j1", Kind: parallel.KindFiles, Items: 25, MiniBatches: 3,
		Fingerprint: "abc", Describe: []string{"a.txt (10)", "k.txt (10)", "u.txt (5)"}}
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertParallelPlan(plan) })
	stcheck.Update(t, s, func(tx store.Tx) error {
		err := tx.InsertParallelPlan(&parallel.Plan{Workspace: "ws", Job: "j1", Kind: parallel.KindRows, Fingerprint: "other"})
		if core.ErrorCode(err) != core.ECONFLICT {
			t.Errorf("second plan: %v, want ECONFLICT", err)
		}
		return tx.InsertParallelPlan(&parallel.Plan{Workspace: "other", Job: "j1", Kind: parallel.KindRows, MiniBatches: 1})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		got, err := tx.GetParallelPlan("ws", "j1")
		if err != nil {
			return err
		}
		want := *plan
		want.Workspace, want.CreatedAt, want.Describe = "ws", stcheck.Now(stcheck.Start), nil
		stcheck.Equal(t, "plan (without its descriptions)", got, &want)
		for i, d := range map[int]string{0: "a.txt (10)", 1: "k.txt (10)", 2: "u.txt (5)", 3: "", -1: ""} {
			got, err := tx.GetParallelDescription("WS", "j1", i)
			if err != nil || got != d {
				t.Errorf("description %d: %q %v, want %q", i, got, err, d)
			}
		}
		if _, err := tx.GetParallelDescription("ws", "nope", 0); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("description without a plan: %v", err)
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error {
		p, err := tx.GetParallelPlan("ws", "j1")
		if err != nil {
			return err
		}
		p.NextFresh, p.Aborted = 2, "too many failed"
		if err := tx.UpdateParallelPlan(p); err != nil {
			return err
		}
		if err := tx.UpdateParallelPlan(&parallel.Plan{Workspace: "ws", Job: "nope"}); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("UpdateParallelPlan of no plan: %v, want ENOTFOUND", err)
		}
		return nil
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		p, err := tx.GetParallelPlan("Ws", "j1")
		if err == nil && (p.NextFresh != 2 || p.Aborted != "too many failed") {
			t.Errorf("plan after update: %+v", p)
		}
		return err
	})

	deadline := stcheck.Start.Add(time.Minute)
	b0 := &parallel.Batch{Workspace: "ws", Job: "j1", Index: 0, State: parallel.BatchLeased, Try: 1, Rank: 1, AttemptID: "a1", Deadline: deadline}
	b1 := &parallel.Batch{Workspace: "ws", Job: "j1", Index: 1, State: parallel.BatchLeased, Try: 2, Rank: 0, AttemptID: "a1", Deadline: deadline, FailedTries: 1, Error: "boom"}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutParallelBatch(b0); err != nil {
			return err
		}
		return tx.PutParallelBatch(b1)
	})
	clock.Advance(time.Minute)
	done := &parallel.Batch{Workspace: "ws", Job: "j1", Index: 0, State: parallel.BatchDone, Try: 1, Items: 10,
		Rows: []string{"a 1", "b 2"}, FailedItems: []parallel.FailedItem{{Item: "c", Error: "no row"}}, FinishedAt: stcheck.Start.Add(time.Minute)}
	failed := &parallel.Batch{Workspace: "ws", Job: "j1", Index: 1, State: parallel.BatchFailed, Try: 2, FailedTries: 2, Items: 10,
		Error: "boom", FailedItems: []parallel.FailedItem{{Item: "k.txt", Error: "boom"}, {Item: "l.txt", Error: "boom"}}, FinishedAt: stcheck.Start.Add(time.Minute)}
	stcheck.Update(t, s, func(tx store.Tx) error {
		if err := tx.PutParallelBatch(done); err != nil {
			return err
		}
		if err := tx.PutParallelBatch(failed); err != nil {
			return err
		}
		return tx.PutParallelBatch(&parallel.Batch{Workspace: "ws", Job: "j2", Index: 0, State: parallel.BatchDone, FinishedAt: stcheck.Start})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		got, err := tx.GetParallelBatch("WS", "j1", 0)
		if err != nil {
			return err
		}
		want := *done
		want.FinishedAt = stcheck.Now(want.FinishedAt)
		stcheck.Equal(t, "mini-batch 0", got, &want)
		all, err := tx.ListParallelBatches("ws", "j1", "", 0, 0)
		if err != nil {
			return err
		}
		stcheck.Equal(t, "indexes of j1", indexes(all), []int{0, 1})
		some, err := tx.ListParallelBatches("ws", "j1", parallel.BatchFailed, 0, 0)
		if err != nil {
			return err
		}
		stcheck.Equal(t, "failed of j1", indexes(some), []int{1})
		some, err = tx.ListParallelBatches("ws", "j1", "", 1, 1)
		if err != nil {
			return err
		}
		stcheck.Equal(t, "from 1, limit 1", indexes(some), []int{1})
		some, err = tx.ListParallelBatches("ws", "j1", parallel.BatchPending, 0, 0)
		if err != nil {
			return err
		}
		stcheck.Equal(t, "pending of j1", len(some), 0)
		c, err := tx.CountParallelBatches("ws", "j1", stcheck.Start.Add(time.Minute))
		if err != nil {
			return err
		}
		stcheck.Equal(t, "counts", c, parallel.Counts{Done: 1, Failed: 1, Retried: 1, FailedItems: 3, DoneSince: 1})
		c, err = tx.CountParallelBatches("ws", "j1", stcheck.Start.Add(2*time.Minute))
		if err != nil {
			return err
		}
		stcheck.Equal(t, "done since later", c.DoneSince, 0)
		return nil
	})

	stcheck.Update(t, s, func(tx store.Tx) error {
		for i, r := range []int{1, 0} {
			f := &parallel.FilePost{Workspace: "ws", Job: "j1", Rank: r, AttemptID: "a1", Artifact: []string{"art1", "art2"}[i]}
			if err := tx.InsertParallelFiles(f); err != nil {
				return err
			}
		}
		return tx.InsertParallelFiles(&parallel.FilePost{Workspace: "ws", Job: "j2", Artifact: "art3"})
	})
	stcheck.View(t, s, func(tx store.Tx) error {
		fs, err := tx.ListParallelFiles("ws", "j1")
		if err != nil {
			return err
		}
		if len(fs) != 2 || fs[0].Artifact != "art1" || fs[1].Artifact != "art2" || fs[0].Seq >= fs[1].Seq ||
			fs[0].Rank != 1 || !fs[0].PostedAt.Equal(stcheck.Now(stcheck.Start.Add(time.Minute))) {
			t.Errorf("files of j1: %s", stcheck.Show(fs))
		}
		return nil
	})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteParallelLedger("WS", "j1") })
	stcheck.View(t, s, func(tx store.Tx) error {
		if _, err := tx.GetParallelPlan("ws", "j1"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("plan after delete: %v", err)
		}
		all, _ := tx.ListParallelBatches("ws", "j1", "", 0, 0)
		fs, _ := tx.ListParallelFiles("ws", "j1")
		if len(all) != 0 || len(fs) != 0 {
			t.Errorf("after delete: %d mini-batches, %d file sets", len(all), len(fs))
		}
		if _, err := tx.GetParallelPlan("other", "j1"); err != nil {
			t.Errorf("another workspace's plan after delete: %v", err)
		}
		if fs, _ := tx.ListParallelFiles("ws", "j2"); len(fs) != 1 {
			t.Errorf("another job's files after delete: %s", stcheck.Show(fs))
		}
		return nil
	})
}

func indexes(bs []*parallel.Batch) []int {
	out := []int{}
	for _, b := range bs {
		out = append(out, b.Index)
	}
	return out
}
