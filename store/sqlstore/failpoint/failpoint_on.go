//go:build failpoint

package failpoint

import (
	"errors"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"
)

// With the failpoint build tag (the chaos suite's binary), a transaction
// fails with a store error, at random one time in five, while the file
// named by SHOAL_FAILPOINT_FILE exists: the chaos suite creates it for a
// few seconds at random moments. Never in a release build.

var (
	failpointFile = os.Getenv("SHOAL_FAILPOINT_FILE")
	failpointOn   atomic.Bool
	failpointSeen atomic.Int64
)

// errFailpoint is the injected store error.
var errFailpoint = errors.New("store: failpoint: injected error")

// Check returns the injected store error when the failpoint fires.
func Check() error {
	if failpointFile == "" {
		return nil
	}
	now := time.Now().UnixNano()
	if last := failpointSeen.Load(); now-last > int64(100*time.Millisecond) && failpointSeen.CompareAndSwap(last, now) {
		_, err := os.Stat(failpointFile)
		failpointOn.Store(err == nil)
	}
	if failpointOn.Load() && rand.IntN(5) == 0 {
		return errFailpoint
	}
	return nil
}

// runAgain is SHOAL_FAILPOINT_RUN_AGAIN=1: every write runs twice.
var runAgain = os.Getenv("SHOAL_FAILPOINT_RUN_AGAIN") == "1"

// RunAgain says whether every write transaction is to be run again once
// before it commits, as PostgreSQL has a write run again when another
// server's conflicts with it (batch.Batcher's Retry): the tests run with
// it to find an Update whose fn is not safe to run twice.
func RunAgain() bool { return runAgain }
