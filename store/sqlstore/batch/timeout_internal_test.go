package batch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoal-ml/shoal/domain/core"
)

// pastDeadline is a context whose deadline has passed but whose own timer
// has not fired yet: what the batch's context is for a moment when a
// statement's context, with the same deadline, ended its statement first.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// An Update whose statement ended on the batch's deadline says the
// database did not answer in time even when the batch's own context has
// not reported it yet: a clean-clone run saw "timeout: context deadline
// exceeded" come back uncoded so.
func TestTimedOutOnTheDeadlineBeforeItsTimer(t *testing.T) {
	b := &Batcher{Timeout: time.Second}
	c := &batchCall{err: fmt.Errorf("store: put setting: %w", context.DeadlineExceeded)}
	b.timedOut(pastDeadline{context.Background()}, []*batchCall{c})
	if !errors.Is(c.err, errWriteTimedOut) || core.ErrorCode(c.err) != core.EUNAVAILABLE {
		t.Errorf("a statement ended on the batch's deadline: %v; want the database's silence (unavailable)", c.err)
	}
	// Before the deadline, an error is left as it is.
	early := &batchCall{err: errors.New("store: something else")}
	b.timedOut(context.Background(), []*batchCall{early})
	if errors.Is(early.err, errWriteTimedOut) {
		t.Errorf("an error before any deadline was taken for a timeout: %v", early.err)
	}
}
