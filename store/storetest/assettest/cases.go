// Package assettest is the store conformance suite's part for a
// workspace's versioned assets and what jobs record: environments,
// components, data assets, models, registries, datastores, blobs and
// codes, run tracking and metric totals, parallel ledgers and batch
// endpoints (storetest.Run runs it with the rest).
package assettest

import "github.com/shoal-ml/shoal/store/storetest/stcheck"

// Cases are this part's tests, for storetest.Run.
func Cases() []stcheck.Case {
	return []stcheck.Case{
		{Name: "Environments", Fn: testEnvironments},
		{Name: "Components", Fn: testComponents},
		{Name: "DataAssets", Fn: testDataAssets},
		{Name: "Models", Fn: testModels},
		{Name: "Registries", Fn: testRegistries},
		{Name: "Datastores", Fn: testDatastores},
		{Name: "BatchEndpoints", Fn: testBatchEndpoints},
		{Name: "Blobs", Fn: testBlobs},
		{Name: "StaleBlobBlocks", Fn: testStaleBlobBlocks},
		{Name: "Codes", Fn: testCodes},
		{Name: "RunTracking", Fn: testRunTracking},
		{Name: "MetricTotals", Fn: testMetricTotals},
		{Name: "Experiments", Fn: testExperiments},
		{Name: "ParallelLedger", Fn: testParallelLedger},
	}
}
