package core

import "time"

// Clock tells the time. Decision logic (scheduling, scaling, lifecycle) takes
// a Clock or an explicit now instead of calling time.Now, so that tests and the
// simulator can drive it with a fake clock.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns the current time in UTC.
func (SystemClock) Now() time.Time { return time.Now().UTC() }
