package sqlstore

import (
	"database/sql"
	"time"

	"github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store/sqlstore/ledger"
)

// Parallel jobs' ledgers (migration 0035): the queries are package
// ledger's; these methods hand it the transaction.

// ledgerDB gives package ledger this transaction's statements.
type ledgerDB struct{ t *tx }

func (d ledgerDB) Exec(q string, args ...any) (sql.Result, error) { return d.t.exec(q, args...) }
func (d ledgerDB) Query(q string, args ...any) (*sql.Rows, error) { return d.t.query(q, args...) }
func (d ledgerDB) QueryRow(q string, args ...any) *sql.Row        { return d.t.queryRow(q, args...) }

func (t *tx) GetParallelPlan(workspace, job string) (*parallel.Plan, error) {
	return ledger.GetPlan(ledgerDB{t}, workspace, job)
}

func (t *tx) GetParallelDescription(workspace, job string, index int) (string, error) {
	return ledger.Description(ledgerDB{t}, workspace, job, index)
}

func (t *tx) InsertParallelPlan(p *parallel.Plan) error {
	if err := t.writable("insert parallel plan"); err != nil {
		return err
	}
	return ledger.InsertPlan(ledgerDB{t}, p, t.now)
}

func (t *tx) UpdateParallelPlan(p *parallel.Plan) error {
	if err := t.writable("update parallel plan"); err != nil {
		return err
	}
	return ledger.UpdatePlan(ledgerDB{t}, p)
}

func (t *tx) PutParallelBatch(b *parallel.Batch) error {
	if err := t.writable("put parallel mini-batch"); err != nil {
		return err
	}
	return ledger.PutBatch(ledgerDB{t}, b)
}

func (t *tx) GetParallelBatch(workspace, job string, index int) (*parallel.Batch, error) {
	return ledger.GetBatch(ledgerDB{t}, workspace, job, index)
}

func (t *tx) ListParallelBatches(workspace, job, state string, from, limit int) ([]*parallel.Batch, error) {
	return ledger.ListBatches(ledgerDB{t}, workspace, job, state, from, limit)
}

func (t *tx) CountParallelBatches(workspace, job string, since time.Time) (parallel.Counts, error) {
	return ledger.CountBatches(ledgerDB{t}, workspace, job, since)
}

func (t *tx) InsertParallelFiles(f *parallel.FilePost) error {
	if err := t.writable("insert parallel files"); err != nil {
		return err
	}
	if f.PostedAt.IsZero() {
		f.PostedAt = t.now
	}
	return ledger.InsertFiles(ledgerDB{t}, f)
}

func (t *tx) ListParallelFiles(workspace, job string) ([]*parallel.FilePost, error) {
	return ledger.ListFiles(ledgerDB{t}, workspace, job)
}

func (t *tx) DeleteParallelLedger(workspace, job string) error {
	if err := t.writable("delete parallel ledger"); err != nil {
		return err
	}
	return ledger.DeleteLedger(ledgerDB{t}, workspace, job)
}
