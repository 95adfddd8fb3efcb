package parallel

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/shoal-ml/shoal/domain/core"
	pproto "github.com/shoal-ml/shoal/domain/parallel"
	"github.com/shoal-ml/shoal/store"
)

// oneLine keeps an item or an error on its line of a tab-separated file;
// oneRow keeps a row on its line (its tabs are its own).
var (
	oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")
	oneRow  = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")
)

// WriteRows writes the rows of every finished mini-batch, in mini-batch
// order, one per line: what the append_row_to output holds.
func (s *Service) WriteRows(ctx context.Context, c *Caller, w io.Writer) error {
	bw := bufio.NewWriter(w)
	var werr error
	err := s.store.View(ctx, func(tx store.Tx) error {
		return eachBatch(tx, c.Workspace, c.Job, pproto.BatchDone, func(b *pproto.Batch) bool {
			for _, r := range b.Rows {
				if _, werr = fmt.Fprintln(bw, oneRow.Replace(r)); werr != nil {
					return false
				}
			}
			return true
		})
	})
	return firstErr(err, werr, bw.Flush())
}

// WriteErrors writes one line per failed item:
// "<mini-batch index>\t<item>\t<error>".
func (s *Service) WriteErrors(ctx context.Context, c *Caller, w io.Writer) error {
	bw := bufio.NewWriter(w)
	var werr error
	err := s.store.View(ctx, func(tx store.Tx) error {
		return eachFailed(tx, c.Workspace, c.Job, func(index int, it pproto.FailedItem) bool {
			_, werr = fmt.Fprintf(bw, "%d\t%s\t%s\n", index, oneLine.Replace(it.Item), oneLine.Replace(it.Error))
			return werr == nil
		})
	})
	return firstErr(err, werr, bw.Flush())
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// checkPlanned returns the caller's job's plan: ECONFLICT when it has none
// yet.
func checkPlanned(tx store.Tx, c *Caller) (*pproto.Plan, error) {
	p, err := tx.GetParallelPlan(c.Workspace, c.Job)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.Errorf(core.ECONFLICT, "job %s has no plan yet", c.Job)
	}
	return p, err
}
