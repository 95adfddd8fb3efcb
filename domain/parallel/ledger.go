package parallel

import "time"

// What the server's ledger keeps of a parallel job, by the job (workspace
// and name), across its attempts: the plan, each mini-batch touched so
// far, and the file sets the ranks posted. Mini-batches at or past
// Plan.NextFresh were never leased and have no record: a plan of 200,000
// mini-batches costs one row until its nodes reach them.

// Mini-batch states in the ledger.
const (
	BatchPending = "pending" // given back: leased again before fresh ones
	BatchLeased  = "leased"  // a rank runs it until Deadline
	BatchDone    = "done"    // its rows are kept; never run again
	BatchFailed  = "failed"  // failed on every try
)

// Plan is a job's plan as the ledger keeps it.
type Plan struct {
	Workspace   string
	Job         string
	Kind        string
	Items       int
	MiniBatches int
	Fingerprint string
	Describe    []string
	// NextFresh is the lowest index never leased.
	NextFresh int
	// Aborted says why the job stopped taking mini-batches ("" while
	// it goes on).
	Aborted   string
	CreatedAt time.Time
}

// Batch is one mini-batch the ledger has given out at least once.
type Batch struct {
	Workspace string
	Job       string
	Index     int
	State     string
	// Try is the last try given (1 for the first); a report of another
	// try is stale.
	Try int
	// Rank and AttemptID hold the lease while State is BatchLeased, until
	// Deadline.
	Rank      int
	AttemptID string
	Deadline  time.Time
	// FailedTries counts the tries that failed or timed out.
	FailedTries int
	// Items is how many items the mini-batch held (reported by a try).
	Items int
	// Rows are what run returned (done).
	Rows []string
	// Error is the last failed try's error.
	Error string
	// FailedItems are the items that failed, and why.
	FailedItems []FailedItem
	// FinishedAt is when it was done or failed.
	FinishedAt time.Time
}

// FilePost is one tar of files a rank posted, kept as an artifact of the
// job's workspace.
type FilePost struct {
	Workspace string
	Job       string
	// Seq orders posts: a later post of a path wins.
	Seq       int64
	Rank      int
	AttemptID string
	Artifact  string
	PostedAt  time.Time
}

// Counts sums a job's ledger: mini-batches by state (fresh ones count as
// pending), the tries that failed and were given again, the failed
// items, and the mini-batches finished since a time (for a rate).
type Counts struct {
	Pending, Leased, Done, Failed int
	Retried                       int
	FailedItems                   int
	DoneSince                     int
}
