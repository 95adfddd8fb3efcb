package workspacetest

import (
	"fmt"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	jobkind "github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// testWaitReasons covers the queued jobs' wait reasons: a put adds or
// replaces (code and message together), more reasons than one statement
// batches round-trip, a list is per workspace (case-insensitive) or of
// all, ordered, job names compare exactly, a delete of a reason never
// stored is no error, and many are deleted at once.
func testWaitReasons(t *testing.T, s store.Store, _ *stcheck.Clock) {
	list := func(ws string) []*jobkind.WaitReason {
		t.Helper()
		var out []*jobkind.WaitReason
		if err := s.View(t.Context(), func(tx store.Tx) (err error) {
			out, err = tx.ListWaitReasons(ws)
			return err
		}); err != nil {
			t.Fatalf("ListWaitReasons(%q): %v", ws, err)
		}
		return out
	}
	get := func(ws, job string) (*jobkind.WaitReason, error) {
		var r *jobkind.WaitReason
		err := s.View(t.Context(), func(tx store.Tx) (err error) {
			r, err = tx.GetWaitReason(ws, job)
			return err
		})
		return r, err
	}
	put := func(rs ...*jobkind.WaitReason) {
		t.Helper()
		stcheck.Update(t, s, func(tx store.Tx) error { return tx.PutWaitReasons(rs) })
	}
	_, err := get("default", "j1")
	stcheck.WantCode(t, "GetWaitReason of a job without one", err, core.ENOTFOUND)
	if got := list(""); len(got) != 0 {
		t.Errorf("ListWaitReasons of an empty store: %s", stcheck.Show(got))
	}

	a := &jobkind.WaitReason{Workspace: "Default", Job: "j1", Code: "at_max_instances", Message: "cluster is at max_instances (1 of 1 nodes busy)"}
	b := &jobkind.WaitReason{Workspace: "default", Job: "J1", Code: "waiting_behind", Message: "waiting behind 1 higher-priority or earlier job (next: j1)"}
	c := &jobkind.WaitReason{Workspace: "other", Job: "j0", Code: "no_nodes", Message: "waiting for the autoscaler to add nodes (0 of 1 ready)"}
	put(a, b, c)
	r, err := get("DEFAULT", "j1")
	if err != nil {
		t.Fatalf("GetWaitReason: %v", err)
	}
	stcheck.Equal(t, "the reason of default/j1", r, a)
	stcheck.Equal(t, "the reasons of workspace DEFAULT", list("DEFAULT"), []*jobkind.WaitReason{b, a})
	stcheck.Equal(t, "every reason", list(""), []*jobkind.WaitReason{b, a, c})

	// A put replaces the code and the message.
	a2 := &jobkind.WaitReason{Workspace: "default", Job: "j1", Code: "provisioning", Message: "waiting for nodes to be provisioned (0 of 1 ready)"}
	put(a2)
	if r, _ := get("default", "j1"); r == nil || *r != *a2 {
		t.Errorf("after a second put: %s, want %s", stcheck.Show(r), stcheck.Show(a2))
	}

	// Deletes: the job's only; of none stored, no error.
	stcheck.Update(t, s, func(tx store.Tx) error {
		return tx.DeleteWaitReasons([]*jobkind.WaitReason{{Workspace: "DEFAULT", Job: "j1"}, {Workspace: "default", Job: "never"}})
	})
	_, err = get("default", "j1")
	stcheck.WantCode(t, "GetWaitReason after its delete", err, core.ENOTFOUND)
	stcheck.Equal(t, "the reasons left", list(""), []*jobkind.WaitReason{b, c})

	// Many at once: more than a statement batches, and an odd remainder.
	var many []*jobkind.WaitReason
	for i := range 150 {
		many = append(many, &jobkind.WaitReason{Workspace: "bulk", Job: fmt.Sprintf("job-%03d", i), Code: "waiting_behind", Message: fmt.Sprintf("waiting behind %d jobs", i)})
	}
	put(many...)
	stcheck.Equal(t, "150 reasons put at once", list("bulk"), many)

	// Deleted at once: 101 of them (64, 32, 4, 1 to a statement), every
	// other one, named in another case, with one never stored and one of
	// another workspace left alone.
	var del, kept []*jobkind.WaitReason
	for i, r := range many {
		if i%3 == 0 && len(del) < 101 {
			kept = append(kept, r)
			continue
		}
		if len(del) < 101 {
			del = append(del, &jobkind.WaitReason{Workspace: "BULK", Job: r.Job})
		} else {
			kept = append(kept, r)
		}
	}
	del = append(del, &jobkind.WaitReason{Workspace: "bulk", Job: "never"}, &jobkind.WaitReason{Workspace: "bulk", Job: c.Job})
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteWaitReasons(del) })
	stcheck.Equal(t, "the reasons left after 101 deleted at once", list("bulk"), kept)
	stcheck.Equal(t, "another workspace's reason of the same job name", list("other"), []*jobkind.WaitReason{c})

	err = s.View(t.Context(), func(tx store.Tx) error { return tx.PutWaitReasons([]*jobkind.WaitReason{a}) })
	if err == nil {
		t.Error("PutWaitReasons in a View succeeded")
	}
}
