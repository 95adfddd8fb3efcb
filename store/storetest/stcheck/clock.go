package stcheck

import (
	"time"

	"github.com/shoal-ml/shoal/domain/core/coretest"
)

// Clock is the tests' settable clock (coretest.Clock), named here for the
// store's tests that use it beside this package's other helpers.
type Clock = coretest.Clock

// NewClock returns a Clock set to t.
func NewClock(t time.Time) *Clock { return coretest.NewClock(t) }
