package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service"
	storekind "github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/sqlite"
)

// brokenAuditStore is a store whose audit log cannot be written.
type brokenAuditStore struct{ storekind.Store }

func (b brokenAuditStore) Update(ctx context.Context, fn func(tx storekind.Tx) error) error {
	return b.Store.Update(ctx, func(tx storekind.Tx) error { return fn(brokenAuditTx{tx}) })
}

type brokenAuditTx struct{ storekind.Tx }

func (brokenAuditTx) AppendAudit(*identity.AuditRecord) error {
	return errors.New("audit log unavailable")
}

// A change whose audit record cannot be written is not made.
func TestChangeFailsWhenItsAuditRecordCannotBeWritten(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "s.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cat, _ := (&config.Config{}).Catalog(nil)
	svc := service.New(service.Config{Store: brokenAuditStore{store}, Catalog: cat})
	admin := identity.WithPrincipal(ctx, &identity.Principal{ID: "admin", Name: "admin", Kind: identity.PrincipalAdmin, Admin: true})
	request := identity.WithRequestInfo(admin, &identity.RequestInfo{Action: identity.ActUsersWrite, Target: "users", Source: "127.0.0.1:1"})
	if _, err := svc.CreateUser(request, &identity.User{Name: "alice"}); err == nil {
		t.Fatal("the user was created although its audit record could not be written")
	}
	err = store.View(ctx, func(tx storekind.Tx) error {
		_, err := tx.GetUser("alice")
		return err
	})
	if core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("alice exists after the failed change: %v", err)
	}
	// Without a request (a controller's own change) nothing is audited and
	// the change goes through.
	if _, err := svc.CreateUser(admin, &identity.User{Name: "bob"}); err != nil {
		t.Fatalf("a change outside a request failed: %v", err)
	}
}

// A job submitted to the collection (POST .../jobs, no name in the path)
// is audited under its own name, so every change can be found by target.
func TestSubmittedJobIsAuditedUnderItsName(t *testing.T) {
	h := newHarness(t, "")
	minN, maxN := 0, 1
	spec := &compute.ComputeSpec{Name: "cpu", Type: "amlcompute", Size: "Standard_DS3_v2", MinInstances: &minN, MaxInstances: &maxN}
	if _, _, err := h.svc.CreateOrApplyCompute(h.ctx, ws, spec, ""); err != nil {
		t.Fatal(err)
	}
	admin := h.adminCtx()
	req := identity.WithRequestInfo(admin, &identity.RequestInfo{Action: "jobs/write", Target: "workspaces/" + ws + "/jobs", Workspace: ws, Source: "127.0.0.1:1"})
	j, _, err := h.svc.SubmitJob(req, ws, &job.JobSpec{Command: "true", Compute: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := h.svc.ListAudit(admin, identity.AuditFilter{Target: "workspaces/" + ws + "/jobs/" + j.Name})
	if err != nil || len(recs) != 1 || recs[0].Outcome != identity.AuditSucceeded {
		t.Fatalf("audit records for job %s: %v (%v)", j.Name, recs, err)
	}
	// A job named "jobs", PUT by name, keeps its target as it is; a refused
	// one posted to the collection keeps the collection's.
	ri := &identity.RequestInfo{Action: "jobs/write", Target: "workspaces/" + ws + "/jobs/jobs", Workspace: ws}
	if _, _, err := h.svc.SubmitJob(identity.WithRequestInfo(admin, ri), ws, &job.JobSpec{Name: "jobs", Command: "true", Compute: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if ri.Target != "workspaces/"+ws+"/jobs/jobs" {
		t.Errorf("a job named jobs is audited under %s", ri.Target)
	}
	ri = &identity.RequestInfo{Action: "jobs/write", Target: "workspaces/" + ws + "/jobs", Workspace: ws}
	if _, _, err := h.svc.SubmitJob(identity.WithRequestInfo(admin, ri), ws, &job.JobSpec{Compute: "cpu"}); err == nil {
		t.Fatal("a job without a command was accepted")
	}
	if ri.Target != "workspaces/"+ws+"/jobs" {
		t.Errorf("a refused job is audited under %s", ri.Target)
	}
}
