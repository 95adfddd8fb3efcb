package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
)

// fullCompute returns a compute with every stored field set, including the
// admin password and pointers to zero values.
func fullCompute(workspace, name string, at time.Time) *compute.Compute {
	return &compute.Compute{
		ComputeSpec: compute.ComputeSpec{
			Name:                    name,
			Type:                    compute.ComputeTypeCluster,
			Description:             "GPU training pool ✓",
			Tags:                    map[string]string{"team": "vision", "cost-center": "42", "empty": ""},
			Size:                    "Standard_NC6s_v3",
			Location:                "westeurope",
			Tier:                    compute.TierLowPriority,
			MinInstances:            stcheck.Ptr(0),
			MaxInstances:            stcheck.Ptr(4),
			IdleTimeBeforeScaleDown: stcheck.Ptr(300),
			SSHPublicAccessEnabled:  stcheck.Ptr(true),
			SSHSettings: &compute.SSHSettings{
				AdminUsername: "azureuser",
				AdminPassword: `p@ss"word'\`,
				SSHKeyValue:   "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample alice@example",
			},
			NetworkSettings:    &compute.NetworkSettings{VnetName: "vnet-1", Subnet: "default"},
			EnableNodePublicIP: stcheck.Ptr(false),
			Identity: &compute.IdentitySpec{
				Type: compute.IdentitySystemAndUserAssigned,
				UserAssignedIdentities: []compute.UserAssignedIdentity{
					{ResourceID: "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-1", PrincipalID: "p-1", ClientID: "c-1"},
					{ResourceID: "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-2"},
				},
				PrincipalID: "sp-1",
				TenantID:    "tenant-1",
			},
		},
		Workspace:          workspace,
		Version:            1,
		ProvisioningState:  compute.ProvisioningCreating,
		ProvisioningErrors: []compute.ProvisioningError{},
		CreatedOn:          at,
		ModifiedOn:         at,
		CreatedBy:          "alice",
	}
}

// minimalCompute returns a compute with only the required fields set.
func minimalCompute(workspace, name, typ string, at time.Time) *compute.Compute {
	return &compute.Compute{
		ComputeSpec:       compute.ComputeSpec{Name: name, Type: typ},
		Workspace:         workspace,
		Version:           1,
		ProvisioningState: compute.ProvisioningSucceeded,
		CreatedOn:         at,
		ModifiedOn:        at,
	}
}

// asStored returns what reading c back must give: c without the fields the
// store does not keep (ID, ResourceID, status), with its ETag.
func asStored(c *compute.Compute) *compute.Compute {
	out := *c
	out.ID, out.ResourceID = "", ""
	out.AllocationState = ""
	out.AllocationStateTransitionTime = nil
	out.CurrentNodeCount, out.TargetNodeCount = 0, 0
	out.NodeStateCounts = compute.NodeStateCounts{}
	out.ETag = etag(c.Version)
	if out.ProvisioningErrors == nil {
		out.ProvisioningErrors = []compute.ProvisioningError{}
	}
	return &out
}

// etag is the ETag of a compute version.
func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

func insertCompute(t *testing.T, s store.Store, c *compute.Compute) {
	t.Helper()
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.InsertCompute(c) })
}

func getCompute(t *testing.T, s store.Store, workspace, name string) *compute.Compute {
	t.Helper()
	var c *compute.Compute
	stcheck.View(t, s, func(tx store.Tx) (err error) {
		c, err = tx.GetCompute(workspace, name)
		return err
	})
	return c
}

func testComputeRoundTrip(t *testing.T, s store.Store, clock *stcheck.Clock) {
	var c *compute.Compute
	stcheck.Update(t, s, func(tx store.Tx) error {
		c = fullCompute("prod", "GPU-Cluster", tx.Now())
		// Set by the service layer or computed on read: not stored.
		c.ID = "/subscriptions/x/resourceGroups/y/providers/Microsoft.MachineLearningServices/workspaces/prod/computes/GPU-Cluster"
		c.ResourceID = c.ID
		c.AllocationState = compute.AllocationResizing
		c.AllocationStateTransitionTime = stcheck.Ptr(tx.Now())
		c.CurrentNodeCount, c.TargetNodeCount = 2, 3
		c.NodeStateCounts = compute.NodeStateCounts{IdleNodeCount: 1, RunningNodeCount: 1}
		return tx.InsertCompute(c)
	})
	if c.ETag != `"1"` {
		t.Errorf("ETag after insert = %s, want \"1\"", c.ETag)
	}
	if c.ID == "" || c.ResourceID == "" || c.CurrentNodeCount != 2 {
		t.Errorf("InsertCompute changed fields it does not store: %s", stcheck.Show(c))
	}
	want := asStored(c)
	stcheck.Equal(t, "GetCompute after insert", getCompute(t, s, "prod", "GPU-Cluster"), want)

	// A compute with provisioning errors.
	var failed *compute.Compute
	stcheck.Update(t, s, func(tx store.Tx) error {
		failed = fullCompute("prod", "broken", tx.Now())
		failed.ProvisioningState = compute.ProvisioningFailed
		failed.ProvisioningErrors = []compute.ProvisioningError{
			{Code: "QuotaExceeded", Message: "not enough low priority cores in westeurope"},
			{Code: "Other", Message: "second"},
		}
		return tx.InsertCompute(failed)
	})
	stcheck.Equal(t, "GetCompute of a failed compute", getCompute(t, s, "prod", "broken"), asStored(failed))
}

func testComputeMinimal(t *testing.T, s store.Store, clock *stcheck.Clock) {
	c := minimalCompute("prod", "ci-1", compute.ComputeTypeInstance, stcheck.Now(clock.Now()))
	insertCompute(t, s, c)
	if c.ProvisioningErrors == nil {
		// Tolerated on the argument, but what is read back must not be nil.
		c.ProvisioningErrors = []compute.ProvisioningError{}
	}
	got := getCompute(t, s, "prod", "ci-1")
	stcheck.Equal(t, "GetCompute of a minimal compute", got, asStored(c))
	if got != nil && got.ProvisioningErrors == nil {
		t.Errorf("ProvisioningErrors is nil, want an empty slice")
	}
}

// An instance's stored state (its state machine, owner and the facts its
// agent reports, including the notebook secret) reads back as written and
// changes with UpdateCompute.
func testComputeInstanceState(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	c := minimalCompute("prod", "ci-1", compute.ComputeTypeInstance, at)
	since := at.Add(-time.Hour)
	c.Instance = &compute.InstanceStatus{
		State: compute.InstanceRunning, AssignedUser: "alice", SSOEnabled: true, NotebookToken: "secret",
		LastOperation: &compute.LastOperation{OperationName: compute.OperationStart, OperationTime: at, OperationStatus: compute.OperationSucceeded, OperationTrigger: compute.TriggerUser},
		IdleSince:     &since, SSHPort: 2222, Apps: []compute.InstanceAppReport{{Name: "jupyter", Addr: "127.0.0.1:8888", Running: true}},
	}
	insertCompute(t, s, c)
	stcheck.Equal(t, "GetCompute of an instance", getCompute(t, s, "prod", "ci-1"), asStored(c))
	c.Instance.State, c.Instance.LastOperation.OperationTrigger = compute.InstanceStopped, compute.TriggerIdleShutdown
	stcheck.Update(t, s, func(tx store.Tx) error { return tx.UpdateCompute(c) })
	stcheck.Equal(t, "GetCompute after updating the instance state", getCompute(t, s, "prod", "ci-1"), asStored(c))
	// A cluster has none.
	cl := minimalCompute("prod", "cl-1", compute.ComputeTypeCluster, at)
	insertCompute(t, s, cl)
	if got := getCompute(t, s, "prod", "cl-1"); got.Instance != nil {
		t.Errorf("a cluster read back with instance state %+v", got.Instance)
	}
}

func testComputeCaseInsensitive(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	c := fullCompute("Prod", "GPU-Cluster", at)
	insertCompute(t, s, c)

	for _, name := range []string{"GPU-Cluster", "gpu-cluster", "GPU-CLUSTER"} {
		for _, ws := range []string{"Prod", "prod", "PROD"} {
			got := getCompute(t, s, ws, name)
			if got.Name != "GPU-Cluster" || got.Workspace != "Prod" {
				t.Errorf("GetCompute(%q, %q) = %q in %q, want the name and workspace as written", ws, name, got.Name, got.Workspace)
			}
		}
	}

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertCompute(fullCompute("prod", "gpu-CLUSTER", at))
	})
	stcheck.WantCode(t, "InsertCompute of a name taken in another case", err, core.ECONFLICT)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.InsertCompute(fullCompute("Prod", "GPU-Cluster", at))
	})
	stcheck.WantCode(t, "InsertCompute of a taken name", err, core.ECONFLICT)
	stcheck.Equal(t, "compute after failed inserts", getCompute(t, s, "prod", "gpu-cluster"), asStored(c))

	// The same name in another workspace is another compute.
	other := fullCompute("staging", "gpu-cluster", at)
	insertCompute(t, s, other)
	stcheck.Equal(t, "compute of another workspace", getCompute(t, s, "staging", "GPU-CLUSTER"), asStored(other))

	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetCompute("prod", "nope")
		return err
	})
	stcheck.WantCode(t, "GetCompute of a missing compute", err, core.ENOTFOUND)
	err = s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetCompute("nope", "gpu-cluster")
		return err
	})
	stcheck.WantCode(t, "GetCompute in a missing workspace", err, core.ENOTFOUND)
}

func testComputeUpdate(t *testing.T, s store.Store, clock *stcheck.Clock) {
	created := stcheck.Now(clock.Now())
	insertCompute(t, s, fullCompute("prod", "GPU-Cluster", created))

	later := stcheck.Now(clock.Advance(90 * time.Second))
	var next *compute.Compute
	stcheck.Update(t, s, func(tx store.Tx) error {
		c, err := tx.GetCompute("prod", "gpu-cluster")
		if err != nil {
			return err
		}
		if !tx.Now().Equal(later) {
			t.Errorf("Tx.Now() = %v, want %v", tx.Now(), later)
		}
		c.Description = "changed"
		c.Tags = map[string]string{"team": "nlp"}
		c.MaxInstances = stcheck.Ptr(10)
		c.MinInstances = stcheck.Ptr(1)
		c.Identity = nil
		c.SSHSettings.AdminPassword = "new password"
		c.ProvisioningState = compute.ProvisioningFailed
		c.ProvisioningErrors = []compute.ProvisioningError{{Code: "E", Message: "m"}}
		c.Version++
		c.ModifiedOn = tx.Now()
		if err := tx.UpdateCompute(c); err != nil {
			return err
		}
		if c.ETag != `"2"` {
			t.Errorf("ETag after update = %s, want \"2\"", c.ETag)
		}
		// The update is visible in its own transaction.
		got, err := tx.GetCompute("prod", "GPU-Cluster")
		if err != nil {
			return err
		}
		stcheck.Equal(t, "GetCompute in the updating transaction", got, asStored(c))
		next = c
		return nil
	})
	got := getCompute(t, s, "PROD", "gpu-cluster")
	stcheck.Equal(t, "GetCompute after update", got, asStored(next))
	if got.Version != 2 || !got.CreatedOn.Equal(created) || !got.ModifiedOn.Equal(later) {
		t.Errorf("after update: version %d, created %v, modified %v; want 2, %v, %v", got.Version, got.CreatedOn, got.ModifiedOn, created, later)
	}

	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateCompute(fullCompute("prod", "missing", later))
	})
	stcheck.WantCode(t, "UpdateCompute of a missing compute", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.UpdateCompute(fullCompute("staging", "GPU-Cluster", later))
	})
	stcheck.WantCode(t, "UpdateCompute in another workspace", err, core.ENOTFOUND)
}

func testComputeDelete(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	insertCompute(t, s, fullCompute("prod", "A-One", at))
	keep := fullCompute("prod", "a-two", at)
	insertCompute(t, s, keep)

	stcheck.Update(t, s, func(tx store.Tx) error { return tx.DeleteCompute("PROD", "a-ONE") })
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetCompute("prod", "A-One")
		return err
	})
	stcheck.WantCode(t, "GetCompute after delete", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteCompute("prod", "A-One") })
	stcheck.WantCode(t, "DeleteCompute twice", err, core.ENOTFOUND)
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteCompute("staging", "a-two") })
	stcheck.WantCode(t, "DeleteCompute in another workspace", err, core.ENOTFOUND)
	stcheck.Equal(t, "the other compute", getCompute(t, s, "prod", "a-two"), asStored(keep))

	// The name is free again.
	insertCompute(t, s, fullCompute("prod", "a-one", at))
}

func testComputeList(t *testing.T, s store.Store, clock *stcheck.Clock) {
	at := stcheck.Now(clock.Now())
	byName := map[string]*compute.Compute{}
	for _, c := range []*compute.Compute{
		fullCompute("prod", "zeta", at),
		minimalCompute("prod", "ci-1", compute.ComputeTypeInstance, at),
		fullCompute("prod", "Alpha", at),
		fullCompute("prod", "mid", at),
		minimalCompute("prod", "B-instance", compute.ComputeTypeInstance, at),
		fullCompute("staging", "aaa", at),
	} {
		insertCompute(t, s, c)
		byName[c.Workspace+"/"+c.Name] = c
	}
	list := func(filter compute.ComputeFilter, names ...string) {
		t.Helper()
		var got []*compute.Compute
		stcheck.View(t, s, func(tx store.Tx) (err error) {
			got, err = tx.ListComputes(filter)
			return err
		})
		want := []*compute.Compute{}
		for _, n := range names {
			want = append(want, asStored(byName[n]))
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		stcheck.Equal(t, "ListComputes("+stcheck.Show(filter)+")", got, want)
	}
	list(compute.ComputeFilter{Workspace: "prod"}, "prod/Alpha", "prod/B-instance", "prod/ci-1", "prod/mid", "prod/zeta")
	list(compute.ComputeFilter{Workspace: "PROD"}, "prod/Alpha", "prod/B-instance", "prod/ci-1", "prod/mid", "prod/zeta")
	list(compute.ComputeFilter{Workspace: "prod", Type: compute.ComputeTypeCluster}, "prod/Alpha", "prod/mid", "prod/zeta")
	list(compute.ComputeFilter{Workspace: "prod", Type: compute.ComputeTypeInstance}, "prod/B-instance", "prod/ci-1")
	list(compute.ComputeFilter{Workspace: "staging"}, "staging/aaa")
	list(compute.ComputeFilter{Workspace: "staging", Type: compute.ComputeTypeInstance})
	list(compute.ComputeFilter{Workspace: "empty"})
	list(compute.ComputeFilter{AllWorkspaces: true}, "prod/Alpha", "prod/B-instance", "prod/ci-1", "prod/mid", "prod/zeta", "staging/aaa")
	list(compute.ComputeFilter{AllWorkspaces: true, Workspace: "staging", Type: compute.ComputeTypeInstance}, "prod/B-instance", "prod/ci-1")
}
