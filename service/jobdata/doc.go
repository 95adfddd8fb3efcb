// Package jobdata says where a job's data comes from and goes: at
// submission it resolves the data assets and models its inputs name
// (recording the version each got) and checks the datastores their paths
// name (ResolveInputAssets); when a rank's task is handed over it fills
// the task's data sources and output targets with the owning datastore's
// credentials (Task). It holds no state: each call reads what it needs in
// the caller's transaction.
package jobdata
