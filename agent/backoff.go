package agent

import "time"

// Retry pacing of an agent whose server does not answer. Retries start
// fast, so a server restart costs a node well under a second, and slow
// down to MaxRetryInterval, so a server that stays away costs nothing.
const (
	// MinRetryInterval is the first retry's nominal delay.
	MinRetryInterval = 250 * time.Millisecond
	// MaxRetryInterval caps the delay between two retries: a returning
	// server hears from every node within it (within half a lease for
	// a node's sync: syncRetryCap).
	MaxRetryInterval = 30 * time.Second
)

// syncRetryCap caps a node's sync retries at half its lease: a server
// that comes back gives every node one fresh lease (plus grace) to
// report (ResetLeases), and a node still waiting out a longer retry
// would be declared lost for the server's own absence. A lease of 0
// (an older server's answer) keeps MaxRetryInterval.
func syncRetryCap(lease time.Duration) time.Duration {
	if lease <= 0 {
		return MaxRetryInterval
	}
	return min(MaxRetryInterval, max(MinRetryInterval, lease/2))
}

// backoff paces retries: exponential from min to max, each delay drawn
// with "equal jitter" (between half and all of the nominal delay) so that
// the nodes of a cluster whose server went away do not retry in lockstep
// and stampede it when it returns. Reset after a success. Not safe for
// concurrent use; each retry loop has its own.
type backoff struct {
	min, max time.Duration
	// rand returns a float in [0, 1); injected so tests are exact.
	rand func() float64
	n    int
}

// newBackoff returns a backoff between min and max drawing jitter from
// rand.
func newBackoff(min, max time.Duration, rand func() float64) *backoff {
	return &backoff{min: min, max: max, rand: rand}
}

// next returns the delay before the next retry and counts the failure.
func (b *backoff) next() time.Duration {
	d := b.min
	for i := 0; i < b.n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	b.n++
	half := d / 2
	return half + time.Duration(b.rand()*float64(d-half))
}

// reset starts the next run of failures from min again.
func (b *backoff) reset() { b.n = 0 }
