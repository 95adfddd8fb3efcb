// Package teststore opens the store tests of the services and the control
// loops run over: SQLite in a temp dir, on a test clock, with the
// workspace "ws" (location "local") in it, and makes the clusters they
// need. For tests only.
package teststore

import (
	"context"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/service/versioned"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/filestore"
	"github.com/shoal-ml/shoal/store/sqlite"
	"github.com/shoal-ml/shoal/store/sqlite/sqlitetest"
	"github.com/shoal-ml/shoal/store/storetest"
)

// Open opens the store, closed when the test ends.
func Open(t testing.TB) (*sqlite.DB, *storetest.Clock) {
	t.Helper()
	ctx := context.Background()
	clock := storetest.NewClock(storetest.Start)
	db, err := sqlite.Open(ctx, sqlite.Config{Path: sqlitetest.Path(t, t.TempDir(), "s.db"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(ctx, func(tx store.Tx) error {
		return tx.InsertWorkspace(&core.Workspace{Name: "ws", Location: "local", CreatedOn: tx.Now()})
	}); err != nil {
		t.Fatal(err)
	}
	return db, clock
}

// Files opens a file store in a temp dir, closed when the test ends: the
// artifacts (code, build contexts) the request services check.
func Files(t testing.TB) *filestore.Store {
	t.Helper()
	files, err := filestore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	return files
}

// Assets opens what a versioned asset's service is built over (a store
// and a file store, closed when the test ends) and a context whose caller
// is alice, who creates the versions.
func Assets(t testing.TB) (versioned.Stores, *filestore.Store, context.Context) {
	t.Helper()
	db, _ := Open(t)
	files := Files(t)
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "user:alice", Name: "alice"})
	return versioned.Stores{Store: db, Artifacts: files}, files, ctx
}

// Cluster is a provisioned cluster named name in "ws", for tx.InsertCompute.
func Cluster(tx store.Tx, name string) *compute.Compute {
	return &compute.Compute{
		ComputeSpec: compute.ComputeSpec{Name: name, Type: compute.ComputeTypeCluster, Size: "Standard_DS3_v2"},
		Workspace:   "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded,
		ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
	}
}

// QueuedJob is a queued `true` command job named name in "ws" on the
// compute named compute, seq-th in the queue, for tx.InsertJob.
func QueuedJob(tx store.Tx, name, compute string, seq int64) *job.Job {
	return &job.Job{JobSpec: job.JobSpec{Name: name, Type: "command", Command: "true", Compute: compute},
		Workspace: "ws", Status: job.JobQueued, Seq: seq, Version: 1, CreatedOn: tx.Now()}
}
