// Package txobserve tells the server's store-latency metric of every
// transaction the SQL stores run (sqlstore.Run, a batch.Batcher's
// Updates), apart from the transactions themselves.
package txobserve

import (
	"sync/atomic"
	"time"
)

// observer, when set, is told every transaction's kind, duration and
// outcome (the server's store-latency metric).
var observer atomic.Pointer[func(readOnly bool, d time.Duration, err error)]

// Set installs the transaction observer (nil removes it). The server sets
// it once at start-up; tests leave it unset.
func Set(f func(readOnly bool, d time.Duration, err error)) {
	if f == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&f)
}

// Transaction tells the observer, when one is set, of a transaction's
// kind, duration and outcome.
func Transaction(readOnly bool, d time.Duration, err error) {
	if o := observer.Load(); o != nil {
		(*o)(readOnly, d, err)
	}
}
