package quota_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shoal-ml/shoal/domain/catalog"
	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/identity"
	"github.com/shoal-ml/shoal/domain/money"
	"github.com/shoal-ml/shoal/internal/teststore"
	"github.com/shoal-ml/shoal/server/config"
	"github.com/shoal-ml/shoal/service/quota"
	"github.com/shoal-ml/shoal/store"
)

// The default catalog's location "local" allows 100 vCPUs of
// standardDSv2Family; Standard_DS3_v2 is of that family, with 4 vCPUs.
const family = "standardDSv2Family"

// allow lets every principal do everything but what deny names
// (workspace/action).
type allow struct{ deny map[string]bool }

func (a allow) Authorize(_ context.Context, _ *identity.Principal, ws, action string) error {
	if a.deny[ws+"/"+action] {
		return core.Errorf(core.EUNAUTHORIZED, "%s in %s refused", action, ws)
	}
	return nil
}

// setup opens a store with workspace "ws" and the quota requests over
// it; notified counts the notifications.
func setup(t *testing.T, auth identity.Authorizer) (store.Store, *quota.Quotas, *int) {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := cfg.Catalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := teststore.Open(t)
	notified := 0
	q := quota.New(quota.Config{Store: db, Catalog: cat, Auth: auth, Notify: func() { notified++ }, Subscription: "sub"})
	return db, q, &notified
}

func update(t *testing.T, db store.Store, f func(tx store.Tx) error) {
	t.Helper()
	if err := db.Update(t.Context(), f); err != nil {
		t.Fatal(err)
	}
}

// instance is a stopped DS3_v2 instance of "ws" that keeps its quota
// unless release.
func instance(tx store.Tx, name string, release bool) *compute.Compute {
	return &compute.Compute{
		ComputeSpec: compute.ComputeSpec{Name: name, Type: compute.ComputeTypeInstance, Size: "Standard_DS3_v2", Location: "local", ReleaseQuotaOnStop: &release},
		Workspace:   "ws", Version: 1, ProvisioningState: compute.ProvisioningSucceeded,
		ProvisioningErrors: []compute.ProvisioningError{}, CreatedOn: tx.Now(), ModifiedOn: tx.Now(),
		Instance: &compute.InstanceStatus{},
	}
}

// Each update of an updateQuotas call is applied or refused on its own:
// past the location's limit, an unknown family, a negative limit and a
// limit below what the workspace's clusters' min_instances hold are
// refused with their status; the rest is stored under the catalog's
// spelling of the family, and the controller is told once.
func TestUpdateWorkspaceQuotasEachOnItsOwn(t *testing.T) {
	db, q, notified := setup(t, allow{})
	update(t, db, func(tx store.Tx) error {
		c := teststore.Cluster(tx, "cpu")
		one := 1
		c.MinInstances = &one // holds 4 vCPUs of the family
		return tx.InsertCompute(c)
	})
	res, err := q.UpdateWorkspaceQuotas(t.Context(), "local", []money.QuotaUpdate{
		{Workspace: "ws", Family: family, Limit: 101},
		{Workspace: "ws", Family: "noSuchFamily", Limit: 8},
		{Workspace: "ws", Family: family, Limit: -1},
		{Workspace: "ws", Family: family, Limit: 3},
		{Workspace: "WS", Family: "StandardDSV2Family", Limit: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{money.QuotaExceedsSubscriptionLimit, money.QuotaInvalidFamily, money.QuotaFailure, money.QuotaBelowClusterMinimum, money.QuotaSuccess}
	for i, r := range res {
		if r.Status != want[i] {
			t.Errorf("update %d: %s (%s); want %s", i, r.Status, r.Message, want[i])
		}
	}
	if r := res[4]; r.Workspace != "ws" || r.Family != family {
		t.Errorf("applied update names %s %s; want the stored spelling ws %s", r.Workspace, r.Family, family)
	}
	var stored map[string]int
	update(t, db, func(tx store.Tx) (err error) { stored, err = tx.GetWorkspaceQuotas("ws"); return err })
	if len(stored) != 1 || stored[strings.ToLower(family)] != 8 {
		t.Errorf("stored quotas %v; want %s=8 only", stored, family)
	}
	if *notified != 1 {
		t.Errorf("notified %d times; want once", *notified)
	}
	if _, err := q.UpdateWorkspaceQuotas(t.Context(), "local", []money.QuotaUpdate{{Workspace: "nows", Family: family, Limit: 8}}); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("update of an unknown workspace: %v; want ENOTFOUND", err)
	}
}

// A caller without quotas/write in one workspace named gets nothing
// written, and quotas/read decides which workspaces a list shows.
func TestWorkspaceQuotasAuthorized(t *testing.T) {
	db, q, notified := setup(t, allow{deny: map[string]bool{"ws/" + identity.ActQuotasWrite: true, "ws/" + identity.ActQuotasRead: true}})
	if _, err := q.UpdateWorkspaceQuotas(t.Context(), "local", []money.QuotaUpdate{{Workspace: "ws", Family: family, Limit: 8}}); core.ErrorCode(err) != core.EUNAUTHORIZED {
		t.Errorf("update without quotas/write: %v; want EUNAUTHORIZED", err)
	}
	var stored map[string]int
	update(t, db, func(tx store.Tx) (err error) { stored, err = tx.GetWorkspaceQuotas("ws"); return err })
	if len(stored) != 0 || *notified != 0 {
		t.Errorf("a refused update stored %v and notified %d times", stored, *notified)
	}
	if list, err := q.ListWorkspaceQuotas(t.Context(), "local"); err != nil || len(list) != 0 {
		t.Errorf("list without quotas/read = %v, %v; want nothing", list, err)
	}
}

// A stopped instance keeps its quota unless release_quota_on_stop: it
// counts in the location's usages and in its workspace's use of the
// family, and a start that would pass the workspace's own limit is
// refused with EQUOTA.
func TestStoppedInstanceHoldsQuota(t *testing.T) {
	db, q, _ := setup(t, allow{})
	update(t, db, func(tx store.Tx) error {
		if err := tx.InsertCompute(instance(tx, "keeps", false)); err != nil {
			return err
		}
		return tx.InsertCompute(instance(tx, "releases", true))
	})
	usages, err := q.ListUsages(t.Context(), "local")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]catalog.Usage{}
	for _, u := range usages {
		got[u.Name.Value] = u
	}
	if u := got["DedicatedCores"]; u.CurrentValue != 4 {
		t.Errorf("DedicatedCores %d; want the 4 vCPUs the instance that keeps its quota holds", u.CurrentValue)
	}
	if u := got[family]; u.CurrentValue != 4 || u.Limit != 100 || u.Name.LocalizedValue != "Standard DSv2 Family vCPUs" || !strings.HasPrefix(u.ID, "/subscriptions/sub/") {
		t.Errorf("family usage %+v; want 4/100 vCPUs named Standard DSv2 Family vCPUs under /subscriptions/sub/", u)
	}
	list, err := q.ListWorkspaceQuotas(t.Context(), "local")
	if err != nil {
		t.Fatal(err)
	}
	for _, wq := range list {
		if wq.Family == family && (wq.Used != 4 || wq.Own) {
			t.Errorf("workspace quota %+v; want 4 used, the location's limit", wq)
		}
	}
	if _, err := q.UpdateWorkspaceQuotas(t.Context(), "local", []money.QuotaUpdate{{Workspace: "ws", Family: family, Limit: 6}}); err != nil {
		t.Fatal(err)
	}
	err = db.View(t.Context(), func(tx store.Tx) error {
		c, err := tx.GetCompute("ws", "releases")
		if err != nil {
			return err
		}
		return q.CheckInstanceQuota(tx, c)
	})
	if core.ErrorCode(err) != core.EQUOTA || !strings.Contains(err.Error(), "8/6") {
		t.Errorf("starting a second instance past the workspace's 6 vCPUs: %v; want EQUOTA at 8/6", err)
	}
}

// A workspace's limits are an administrator's to change; 0 restores the
// default, and the view reports the file store's use.
func TestWorkspaceLimits(t *testing.T) {
	cfg, _ := config.Parse(strings.NewReader(""))
	cat, _ := cfg.Catalog(nil)
	db, _ := teststore.Open(t)
	q := quota.New(quota.Config{Store: db, Catalog: cat, Auth: allow{}, StorageUsage: func(ws string) (int64, error) { return 42, nil }})
	admin := identity.WithPrincipal(t.Context(), &identity.Principal{ID: "user:root", Admin: true})
	olga := identity.WithPrincipal(t.Context(), &identity.Principal{ID: "user:olga"})
	big := int64(1 << 40)
	if _, err := q.UpdateWorkspaceLimits(olga, "ws", nil, &big); core.ErrorCode(err) != core.EFORBIDDEN {
		t.Errorf("a non-administrator's update: %v; want EFORBIDDEN", err)
	}
	v, err := q.UpdateWorkspaceLimits(admin, "ws", nil, &big)
	if err != nil || v.StorageQuotaBytes != big || v.MaxLogBytes != money.DefaultMaxLogBytes || v.StorageUsedBytes != 42 {
		t.Fatalf("update = %+v, %v; want the quota set, the default log cap and 42 bytes used", v, err)
	}
	zero := int64(0)
	if v, err := q.UpdateWorkspaceLimits(admin, "ws", nil, &zero); err != nil || v.StorageQuotaBytes != (money.WorkspaceLimits{}).StorageQuota() {
		t.Errorf("restoring the default = %+v, %v", v, err)
	}
}
