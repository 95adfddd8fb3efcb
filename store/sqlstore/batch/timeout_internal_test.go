package batch

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shoal-ml/shoal/domain/core"
)

// An Update whose statement ended on the batch's deadline says the
// database did not answer in time even when the batch's own context has
// not reported it yet (each Update's context has the same deadline on a
// timer of its own, which may fire first): a clean-clone run saw
// "timeout: context deadline exceeded" come back uncoded so. A caller
// whose own deadline passed before its turn keeps its own error.
func TestTimedOutOnTheDeadlineBeforeItsTimer(t *testing.T) {
	b := &Batcher{}
	ran := &batchCall{ran: true, err: fmt.Errorf("store: put setting: %w", context.DeadlineExceeded)}
	gone := &batchCall{err: context.DeadlineExceeded}
	other := &batchCall{ran: true, err: errors.New("store: something else")}
	b.timedOut(context.Background(), []*batchCall{ran, gone, other})
	if !errors.Is(ran.err, errWriteTimedOut) || core.ErrorCode(ran.err) != core.EUNAVAILABLE {
		t.Errorf("a statement ended on the batch's deadline: %v; want the database's silence (unavailable)", ran.err)
	}
	if errors.Is(gone.err, errWriteTimedOut) {
		t.Errorf("a caller gone before its turn was told the database did not answer: %v", gone.err)
	}
	if errors.Is(other.err, errWriteTimedOut) {
		t.Errorf("an error before any deadline was taken for a timeout: %v", other.err)
	}
}
