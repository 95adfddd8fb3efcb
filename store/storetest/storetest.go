// Package storetest is a conformance suite for implementations of
// shoal.Store. A store's tests call Run with a function that opens a fresh,
// empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, clock shoal.Clock) shoal.Store {
//			db, err := sqlite.Open(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "shoal.db"), Clock: clock})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// Stores must keep times in UTC at microsecond precision, compare workspace,
// compute, user, identity and role names case-insensitively (job names, IDs,
// principal IDs, client IDs and sign-in accounts exactly), and
// return ENOTFOUND and ECONFLICT as shoal.Tx documents. Nodes, jobs and
// attempts must read back deeply equal to what was written, including their
// json:"-" fields; values of `any` fields (JobSpec.Environment,
// JobInput.Value) are written as JSON decodes them, so a store may keep those
// entities as JSON documents.
package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/compute"
	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/domain/job"
	"github.com/shoal-ml/shoal/domain/node"
	"github.com/shoal-ml/shoal/store"
)

// Start is the time the suite's clocks start at. It has nanoseconds and a
// non-UTC zone, so that stores are seen to truncate to microseconds and
// convert to UTC.
var Start = time.Date(2025, time.March, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// Run runs the conformance suite. open must return a new, empty store that
// takes its time from clock; it should close the store in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T, clock core.Clock) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, clock *Clock)
	}{
		{"Now", testNow},
		{"Workspaces", testWorkspaces},
		{"ComputeRoundTrip", testComputeRoundTrip},
		{"ComputeMinimal", testComputeMinimal},
		{"ComputeInstanceState", testComputeInstanceState},
		{"ComputeCaseInsensitive", testComputeCaseInsensitive},
		{"ComputeUpdate", testComputeUpdate},
		{"ComputeDelete", testComputeDelete},
		{"ComputeList", testComputeList},
		{"RepeatedReads", testRepeatedReads},
		{"Events", testEvents},
		{"Tokens", testTokens},
		{"TokenUpdate", testTokenUpdate},
		{"Users", testUsers},
		{"Identities", testIdentities},
		{"ServicePrincipals", testServicePrincipals},
		{"NodeSamples", testNodeSamples},
		{"NodeUsage", testNodeUsage},
		{"Roles", testRoles},
		{"RoleAssignments", testRoleAssignments},
		{"Audit", testAudit},
		{"SigningKeys", testSigningKeys},
		{"Settings", testSettings},
		{"InstanceLive", testInstanceLive},
		{"WaitReasons", testWaitReasons},
		{"Budgets", testBudgets},
		{"WorkspaceQuotas", testWorkspaceQuotas},
		{"WorkspaceLimits", testWorkspaceLimits},
		{"Environments", testEnvironments},
		{"Components", testComponents},
		{"DataAssets", testDataAssets},
		{"Models", testModels},
		{"Registries", testRegistries},
		{"Datastores", testDatastores},
		{"BatchEndpoints", testBatchEndpoints},
		{"Webhooks", testWebhooks},
		{"Deliveries", testDeliveries},
		{"NotifyCursors", testNotifyCursors},
		{"TrimDeliveries", testTrimDeliveries},
		{"JobSchedules", testJobSchedules},
		{"Blobs", testBlobs},
		{"StaleBlobBlocks", testStaleBlobBlocks},
		{"Codes", testCodes},
		{"RunTracking", testRunTracking},
		{"MetricTotals", testMetricTotals},
		{"Experiments", testExperiments},
		{"ParallelLedger", testParallelLedger},
		{"NodeRoundTrip", testNodeRoundTrip},
		{"NodeUpdate", testNodeUpdate},
		{"NodeLeaseRenewal", testNodeLeaseRenewal},
		{"NodeDelete", testNodeDelete},
		{"NodeList", testNodeList},
		{"NodeCountLive", testNodeCountLive},
		{"NodeListDue", testNodeListDue},
		{"NodeCountByState", testNodeCountByState},
		{"NodeFind", testNodeFind},
		{"ViewGeneration", testViewGeneration},
		{"ConcurrentGenerations", testConcurrentGenerations},
		{"JobRoundTrip", testJobRoundTrip},
		{"JobNames", testJobNames},
		{"JobUpdate", testJobUpdate},
		{"JobList", testJobList},
		{"JobQueue", testJobQueue},
		{"NextSeq", testNextSeq},
		{"AttemptRoundTrip", testAttemptRoundTrip},
		{"AttemptUpdate", testAttemptUpdate},
		{"AttemptList", testAttemptList},
		{"AttemptWithJob", testAttemptWithJob},
		{"Times", testTimes},
		{"Rollback", testRollback},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"ConcurrentUpdates", testConcurrentUpdates},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewClock(Start)
			s := open(t, clock)
			tc.fn(t, s, clock)
		})
	}
}

// now is what Tx.Now must return when the clock reads c.
func now(c time.Time) time.Time { return c.UTC().Truncate(time.Microsecond) }

// update runs fn in an Update and fails the test on error.
func update(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a View and fails the test on error.
func view(t *testing.T, s store.Store, fn func(tx store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := core.ErrorCode(err); got != code {
		t.Errorf("%s: error code %q (err %v), want %q", what, got, err, code)
	}
}

// equal fails the test unless got and want are deeply equal, showing both.
func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got: %s\nwant: %s", what, show(got), show(want))
	}
}

// show renders v for a failure message, including the fields JSON leaves
// out.
func show(v any) string {
	var extra string
	switch c := v.(type) {
	case *compute.Compute:
		if c != nil {
			extra = fmt.Sprintf(" (workspace %q, version %d)", c.Workspace, c.Version)
		}
	case []*compute.Compute:
		for _, c := range c {
			extra += fmt.Sprintf(" (%q: workspace %q, version %d)", c.Name, c.Workspace, c.Version)
		}
	case *node.Node:
		extra = showNode(c)
	case []*node.Node:
		for _, n := range c {
			extra += showNode(n)
		}
	case *job.Job:
		extra = showJob(c)
	case []*job.Job:
		for _, j := range c {
			extra += showJob(j)
		}
	case *job.Attempt:
		if c != nil {
			extra = fmt.Sprintf(" (workspace %q)", c.Workspace)
		}
	case []*job.Attempt:
		for _, a := range c {
			extra += fmt.Sprintf(" (%q: workspace %q)", a.ID, a.Workspace)
		}
	}
	b, err := json.MarshalIndent(v, "      ", "  ")
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b) + extra
}

func ptr[T any](v T) *T { return &v }

func showNode(n *node.Node) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf(" (%q: workspace %q, provider ref %q, join token hash %q expiring %v, credential hash %q, version %d)",
		n.ID, n.Workspace, n.ProviderRef, n.JoinTokenHash, n.JoinTokenExpires, n.CredentialHash, n.Version)
}

func showJob(j *job.Job) string {
	if j == nil {
		return ""
	}
	return fmt.Sprintf(" (%q: workspace %q, seq %d, spec hash %q, version %d)", j.Name, j.Workspace, j.Seq, j.SpecHash, j.Version)
}
