package service_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
)

// A rank's stored log stops at the workspace's cap, with one marker line
// there, whatever the agent sends (an old or hostile agent, chunks past
// the cap, retries); the agent learns the cap in its task.
func TestRankLogIsCutAtTheWorkspaceCap(t *testing.T) {
	h := newHarness(t, "")
	limit := int64(100)
	h.setLimits(&limit, nil)
	h.compute("cpu", 0, 1, 600)
	h.submit("j", "cpu", 1, "")
	h.step(0)
	h.joinAll()
	h.step(0)
	n := h.nodeIDs("cpu")[0]
	tasks := h.syncStart(n)
	if len(tasks) != 1 || tasks[0].MaxLogBytes != limit {
		t.Fatalf("tasks %+v; want one with max_log_bytes %d", tasks, limit)
	}
	task := tasks[0]
	write := func(off int64, data string) {
		t.Helper()
		if err := h.svc.WriteRankLog(h.ctx, n, task.AttemptID, 0, off, []byte(data)); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	write(0, strings.Repeat("a", 60))
	write(60, strings.Repeat("b", 60)) // crosses the cap
	write(120, strings.Repeat("c", 1000))
	write(60, strings.Repeat("b", 60)) // retried
	write(1<<40, "far past the cap")
	want := strings.Repeat("a", 60) + strings.Repeat("b", 40) + money.LogCutMarker(limit)
	if got := h.readLog("j", 1, 0); got != want {
		t.Errorf("stored log %q, want %q", got, want)
	}
	// The agent's own marker, at the cap, leaves it the same.
	write(limit, money.LogCutMarker(limit))
	if got := h.readLog("j", 1, 0); got != want {
		t.Errorf("after the agent's marker: %q", got)
	}
}

// Artifacts and outputs count against the workspace's storage quota; past
// it an upload is refused with EQUOTA on field storage_quota.
func TestStorageQuota(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	quota := int64(1000)
	h.setLimits(nil, &quota)
	if _, err := h.svc.PutArtifact(admin, ws, bytes.NewReader(bytes.Repeat([]byte("x"), 600)), 1<<20); err != nil {
		t.Fatalf("600 of 1000: %v", err)
	}
	_, err := h.svc.PutArtifact(admin, ws, bytes.NewReader(bytes.Repeat([]byte("y"), 600)), 1<<20)
	var e *core.Error
	if core.ErrorCode(err) != core.EQUOTA || !errors.As(err, &e) || e.Field != "storage_quota" || !strings.Contains(err.Error(), "storage quota") {
		t.Fatalf("600 more: %v; want EQUOTA on storage_quota", err)
	}
	if _, err := h.svc.PutArtifact(admin, ws, bytes.NewReader(bytes.Repeat([]byte("z"), 300)), 1<<20); err != nil {
		t.Fatalf("300 more: %v", err)
	}
	if v, err := h.svc.FindWorkspaceLimits(admin, ws); err != nil || v.StorageUsedBytes != 900 || v.StorageQuotaBytes != 1000 || v.MaxLogBytes != money.DefaultMaxLogBytes {
		t.Fatalf("limits %+v %v", v, err)
	}

	// A rank's outputs count too.
	n, task := h.placeOne("j")
	err = h.svc.PutRankOutputs(h.ctx, n, task.AttemptID, 0, bytes.NewReader(bytes.Repeat([]byte("o"), 200)))
	if core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "storage_quota") {
		t.Fatalf("outputs past the quota: %v", err)
	}
	if err := h.svc.PutRankOutputs(h.ctx, n, task.AttemptID, 0, bytes.NewReader(bytes.Repeat([]byte("o"), 50))); err != nil {
		t.Fatalf("outputs within it: %v", err)
	}
}

// Only administrators set a workspace's limits: an Owner cannot raise
// the quota that protects the server's shared disk. Bad values are
// refused naming the field.
func TestWorkspaceLimitsAreSetByAdministrators(t *testing.T) {
	h := newHarness(t, "")
	admin := h.adminCtx()
	if _, err := h.svc.CreateUser(admin, &identity.User{Name: "olga"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.AssignRole(admin, "user:olga", identity.RoleOwner, ws); err != nil {
		t.Fatal(err)
	}
	olga := identity.WithPrincipal(h.ctx, &identity.Principal{ID: "user:olga", Name: "olga", Kind: identity.PrincipalUser})
	big := int64(1 << 40)
	if _, err := h.svc.UpdateWorkspaceLimits(olga, ws, nil, &big); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("an Owner raising the quota: %v", err)
	}
	neg := int64(-1)
	if _, err := h.svc.UpdateWorkspaceLimits(admin, ws, &neg, nil); core.ErrorCode(err) != core.EINVALID || !strings.Contains(err.Error(), "max_log_bytes") {
		t.Errorf("a negative cap: %v", err)
	}
}
