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
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
	"github.com/shoal-ml/shoal/store"
	"github.com/shoal-ml/shoal/store/storetest/accesstest"
	"github.com/shoal-ml/shoal/store/storetest/assettest"
	"github.com/shoal-ml/shoal/store/storetest/stcheck"
	"github.com/shoal-ml/shoal/store/storetest/workspacetest"
)

// Start is the time the suite's clocks start at (stcheck.Start).
var Start = stcheck.Start

// Run runs the conformance suite. open must return a new, empty store that
// takes its time from clock; it should close the store in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T, clock core.Clock) store.Store) {
	tests := []stcheck.Case{
		{Name: "Now", Fn: testNow},
		{Name: "ComputeRoundTrip", Fn: testComputeRoundTrip},
		{Name: "ComputeMinimal", Fn: testComputeMinimal},
		{Name: "ComputeInstanceState", Fn: testComputeInstanceState},
		{Name: "ComputeCaseInsensitive", Fn: testComputeCaseInsensitive},
		{Name: "ComputeUpdate", Fn: testComputeUpdate},
		{Name: "ComputeDelete", Fn: testComputeDelete},
		{Name: "ComputeList", Fn: testComputeList},
		{Name: "RepeatedReads", Fn: testRepeatedReads},
		{Name: "NodeSamples", Fn: testNodeSamples},
		{Name: "NodeUsage", Fn: testNodeUsage},
		{Name: "NodeRoundTrip", Fn: testNodeRoundTrip},
		{Name: "NodeUpdate", Fn: testNodeUpdate},
		{Name: "NodeLeaseRenewal", Fn: testNodeLeaseRenewal},
		{Name: "NodeLeasesRenewal", Fn: testNodeLeasesRenewal},
		{Name: "NodeDelete", Fn: testNodeDelete},
		{Name: "NodeList", Fn: testNodeList},
		{Name: "NodeCountLive", Fn: testNodeCountLive},
		{Name: "NodeListDue", Fn: testNodeListDue},
		{Name: "NodeCountByState", Fn: testNodeCountByState},
		{Name: "NodeFind", Fn: testNodeFind},
		{Name: "ViewGeneration", Fn: testViewGeneration},
		{Name: "ConcurrentGenerations", Fn: testConcurrentGenerations},
		{Name: "JobRoundTrip", Fn: testJobRoundTrip},
		{Name: "JobNames", Fn: testJobNames},
		{Name: "JobUpdate", Fn: testJobUpdate},
		{Name: "JobList", Fn: testJobList},
		{Name: "JobQueue", Fn: testJobQueue},
		{Name: "QueueWatch", Fn: testQueueWatch},
		{Name: "NextSeq", Fn: testNextSeq},
		{Name: "AttemptRoundTrip", Fn: testAttemptRoundTrip},
		{Name: "AttemptUpdate", Fn: testAttemptUpdate},
		{Name: "AttemptList", Fn: testAttemptList},
		{Name: "AttemptWithJob", Fn: testAttemptWithJob},
		{Name: "Times", Fn: testTimes},
		{Name: "Rollback", Fn: testRollback},
		{Name: "RollbackOnPanic", Fn: testRollbackOnPanic},
		{Name: "ViewIsReadOnly", Fn: testViewIsReadOnly},
		{Name: "ConcurrentUpdates", Fn: testConcurrentUpdates},
	}
	tests = append(tests, accesstest.Cases()...)
	tests = append(tests, assettest.Cases()...)
	tests = append(tests, workspacetest.Cases()...)
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			clock := NewClock(Start)
			s := open(t, clock)
			tc.Fn(t, s, clock)
		})
	}
}

// Clock is a core.Clock that tells the time it is set to (stcheck.Clock).
type Clock = stcheck.Clock

// NewClock returns a Clock set to t.
var NewClock = stcheck.NewClock
