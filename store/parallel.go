package store

import (
	"time"

	"github.com/shoal-ml/shoal/domain/parallel"
)

// ParallelLedger keeps parallel jobs' ledgers (domain/parallel): what
// service/parallel reads and writes. Jobs are named by workspace
// (case-insensitive) and name, as in GetJob.
type ParallelLedger interface {
	// GetParallelPlan returns a job's plan without its Describe (which
	// may be large: GetParallelDescription reads one entry). Returns
	// ENOTFOUND.
	GetParallelPlan(workspace, job string) (*parallel.Plan, error)
	// GetParallelDescription returns the plan's description of one
	// mini-batch ("" when it has none). Returns ENOTFOUND without a plan.
	GetParallelDescription(workspace, job string, index int) (string, error)
	// InsertParallelPlan records a job's plan; a zero CreatedAt takes the
	// transaction time. Returns ECONFLICT when the job has one.
	InsertParallelPlan(p *parallel.Plan) error
	// UpdateParallelPlan writes a plan's NextFresh and Aborted. Returns
	// ENOTFOUND.
	UpdateParallelPlan(p *parallel.Plan) error
	// PutParallelBatch writes a mini-batch's record, replacing the one
	// of the same index.
	PutParallelBatch(b *parallel.Batch) error
	// GetParallelBatch returns one mini-batch's record. Returns
	// ENOTFOUND when it was never leased.
	GetParallelBatch(workspace, job string, index int) (*parallel.Batch, error)
	// ListParallelBatches returns a job's records in state (any when
	// ""), by index from index from on, at most limit (all when 0).
	ListParallelBatches(workspace, job, state string, from, limit int) ([]*parallel.Batch, error)
	// CountParallelBatches sums a job's records (fresh mini-batches are
	// not counted: the caller adds them from the plan); DoneSince counts
	// those finished done at or after since.
	CountParallelBatches(workspace, job string, since time.Time) (parallel.Counts, error)
	// InsertParallelFiles records a posted file set and sets its Seq.
	InsertParallelFiles(f *parallel.FilePost) error
	// ListParallelFiles returns a job's posted file sets by Seq.
	ListParallelFiles(workspace, job string) ([]*parallel.FilePost, error)
	// DeleteParallelLedger removes a job's ledger (plan, mini-batches,
	// file records; the artifacts are the caller's); none is no error.
	DeleteParallelLedger(workspace, job string) error
}
