package delivery

import "time"

// retryDelays are the waits after each failed try: 10 s, 30 s, 2 m,
// 10 m, 30 m, 1 h, then hourly.
var retryDelays = []time.Duration{10 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Give-up bounds: a delivery fails for good after MaxAttempts tries or
// once MaxAge has passed since it was created.
const (
	MaxAttempts = 12
	MaxAge      = 24 * time.Hour
)

// NextAttempt says when a delivery created at created, after its
// attempts-th failed try at now, is tried again, or ok false when it has
// failed for good.
func NextAttempt(created time.Time, attempts int, now time.Time) (next time.Time, ok bool) {
	if attempts >= MaxAttempts {
		return time.Time{}, false
	}
	i := min(max(attempts-1, 0), len(retryDelays)-1)
	next = now.Add(retryDelays[i])
	if next.Sub(created) > MaxAge {
		return time.Time{}, false
	}
	return next, true
}
