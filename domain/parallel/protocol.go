// Package parallel holds the protocol between a parallel job's driver
// (the Python program the agent gives each rank) and the server's ledger
// of the job's mini-batches: the driver lists the input and proposes the
// plan, leases mini-batches, reports each one's rows or error, and rank
// 0 writes the job's outputs from what the ledger kept once every
// mini-batch is finished. The ledger lives with the job, not the
// attempt: a mini-batch finished is never run again, whatever node,
// attempt or server replica the job goes on with.
//
// Every request goes to PathPrefix + <attempt ID> + one of the Path*
// suffixes, with "Authorization: Bearer <token>": the attempt's parallel
// token (service/parallel), handed to the rank in its task. A token of an
// attempt that ended or was replaced is refused (401).
package parallel

import "github.com/shoal-ml/shoal/domain/job"

// PathPrefix starts every ledger route: PathPrefix + attemptID + Path*.
const PathPrefix = "/api/v1/parallel/"

// The ledger's routes, after PathPrefix + attemptID.
const (
	// PathPlan: POST PlanRequest → PlanResponse.
	PathPlan = "/plan"
	// PathLease: POST LeaseRequest → LeaseResponse.
	PathLease = "/lease"
	// PathComplete: POST CompleteRequest → CompleteResponse.
	PathComplete = "/complete"
	// PathFiles: POST a tar (gzip'd or not) of files the rank's workers
	// wrote in the job's output folders since its last post, paths
	// relative to the outputs folder (<output name>/<file>), header
	// RankHeader → 204; GET → one tar of every posted file, the newest
	// post of a path winning, for rank 0 to unpack into its outputs.
	PathFiles = "/files"
	// PathRows: GET → text/plain, the rows of every finished
	// mini-batch in mini-batch order, one per line, as run returned
	// them (what append_row_to holds).
	PathRows = "/rows"
	// PathErrors: GET → text/plain, one line per failed item or
	// mini-batch: "<mini-batch index>\t<item>\t<error>".
	PathErrors = "/errors"
	// PathProgress: GET → job.ParallelProgress.
	PathProgress = "/progress"
)

// RankHeader names the rank posting files.
const RankHeader = "X-Shoal-Rank"

// Plan kinds: what the input was split by.
const (
	KindFiles      = "files"      // a folder's files, sorted by path
	KindRows       = "rows"       // a table's rows, by size
	KindPartitions = "partitions" // a table's rows, one mini-batch per partition_keys value
)

// PlanRequest proposes how the job's input splits. Every rank lists the
// same read-only input the same way, so every rank proposes the same
// plan; the first one the ledger takes is the job's for good (a later
// attempt's included), and a rank whose listing differs (the input
// changed under the job) is refused with 409.
type PlanRequest struct {
	Rank int    `json:"rank"`
	Kind string `json:"kind"`
	// Items is how many files or rows the input holds; MiniBatches how
	// many mini-batches they make (0: the input is empty, and the job
	// fails saying so; past job.MaxMiniBatches, 400 naming
	// mini_batch_size).
	Items       int `json:"items"`
	MiniBatches int `json:"mini_batches"`
	// Fingerprint is a hash of the listing (paths and sizes, or the
	// table's files and the split), hex.
	Fingerprint string `json:"fingerprint"`
	// Describe is, for each mini-batch by index, a short description
	// (its first item and how many) kept for errors; optional, at most
	// job.MaxMiniBatches entries of 200 bytes.
	Describe []string `json:"describe,omitempty"`
}

// PlanResponse is the job's plan, the one proposed or the one already
// taken.
type PlanResponse struct {
	Kind        string `json:"kind"`
	Items       int    `json:"items"`
	MiniBatches int    `json:"mini_batches"`
	Fingerprint string `json:"fingerprint"`
}

// Lease states: what a rank does next.
const (
	// StateWork: run the leases given.
	StateWork = "work"
	// StateWait: nothing to lease now, but mini-batches are in flight
	// elsewhere (they may come back): ask again after WaitSeconds.
	StateWait = "wait"
	// StateDone: every mini-batch is finished: rank 0 writes the outputs,
	// the other ranks end.
	StateDone = "done"
	// StateAbort: an error threshold passed (Message names the items):
	// every rank ends with a non-zero exit, rank 0 after writing the
	// errors it has.
	StateAbort = "abort"
)

// LeaseRequest asks for up to Max mini-batches for rank Rank (its free
// workers).
type LeaseRequest struct {
	Rank int `json:"rank"`
	Max  int `json:"max"`
}

// Lease is one mini-batch given to a rank: its index in the plan, and the
// try (1 for the first) that fences its report: a report of a try the
// ledger gave to someone else since (the rank was lost, the lease
// expired) is refused.
type Lease struct {
	Index int `json:"index"`
	Try   int `json:"try"`
}

// LeaseResponse gives leases, or says why none.
type LeaseResponse struct {
	State       string  `json:"state"`
	Leases      []Lease `json:"leases,omitempty"`
	WaitSeconds float64 `json:"wait_seconds,omitempty"`
	Message     string  `json:"message,omitempty"`
}

// Outcomes of one try of a mini-batch.
const (
	OutcomeDone    = "done"    // run returned: Rows kept
	OutcomeFailed  = "failed"  // run raised: Error says what
	OutcomeTimeout = "timeout" // run outlived retry_settings.timeout
)

// FailedItem is an item of a mini-batch that failed, and why.
type FailedItem struct {
	Item  string `json:"item"`
	Error string `json:"error"`
}

// CompleteRequest reports one try of a mini-batch.
type CompleteRequest struct {
	Rank    int    `json:"rank"`
	Index   int    `json:"index"`
	Try     int    `json:"try"`
	Outcome string `json:"outcome"`
	// Items is how many items the mini-batch held.
	Items int `json:"items"`
	// Rows are what run returned, one text line each (done).
	Rows []string `json:"rows,omitempty"`
	// Error is why the try failed (failed, timeout): the exception and
	// the end of its traceback.
	Error string `json:"error,omitempty"`
	// FailedItems are the items a done try did not score (run returned
	// fewer rows than items: the items past the rows it returned, as
	// Azure counts them), or every item of a failed try.
	FailedItems []FailedItem `json:"failed_items,omitempty"`
}

// Completion answers a report.
const (
	// CompletedDone: kept; never run again.
	CompletedDone = "done"
	// CompletedRetry: the try failed and the mini-batch is tried again.
	CompletedRetry = "retry"
	// CompletedFailed: failed on its last try.
	CompletedFailed = "failed"
	// CompletedStale: the lease was given to another try meanwhile;
	// nothing kept.
	CompletedStale = "stale"
)

// CompleteResponse says what the ledger made of a report; Abort, when set,
// says the job stops (an error threshold passed).
type CompleteResponse struct {
	State string `json:"state"`
	Abort string `json:"abort,omitempty"`
}

// Progress is where a parallel job stands (job.ParallelProgress).
type Progress = job.ParallelProgress
