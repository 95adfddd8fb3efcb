package txobserve

import "sync/atomic"

// retries, when set, is told each time a write transaction is run again
// because the database would not commit it beside another's (PostgreSQL's
// serialization failures and deadlocks between servers).
var retries atomic.Pointer[func()]

// SetRetries installs the retry observer (nil removes it). The server
// sets it once at start-up; tests leave it unset.
func SetRetries(f func()) {
	if f == nil {
		retries.Store(nil)
		return
	}
	retries.Store(&f)
}

// Retried tells the retry observer, when one is set, that a write
// transaction is run again.
func Retried() {
	if o := retries.Load(); o != nil {
		(*o)()
	}
}
