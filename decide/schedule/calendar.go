package schedule

import (
	"math"
	"time"
)

// firings is what a trigger compiles to: its firing instants, searched
// either way from an instant. Start and end times are applied by Schedule.
type firings interface {
	// next is the first firing strictly after t, or zero.
	next(t time.Time) time.Time
	// prev is the last firing at or before t, or zero.
	prev(t time.Time) time.Time
}

// horizonDays bounds the calendar walk: 9 years is longer than the longest
// wait a valid trigger has (Feb 29 across a century year that is not a
// leap year, 8 years) and than any recurrence period (500 days, 71 weeks,
// 16 months). A trigger with no firing within it has no firing at all.
const horizonDays = 9*366 + 2

// calendar fires at wall-clock times (each hour × each minute) on the days
// it matches, in loc: cron triggers and day, week and month recurrences.
type calendar struct {
	loc            *time.Location
	hours, minutes []int // ascending, non-empty
	day            func(z int64) bool
	// firstDay and lastDay bound the walk (start and end times, a day
	// of slack either side for DST): nothing fires outside.
	firstDay, lastDay int64
}

// The walk starts a day before t's date (next) or after it (prev): wall
// times resolved across a DST change may land on the neighbouring date.
// wallClock is monotonic in the wall time, so walking forward the first
// instant after t is the next firing, and walking back the first at or
// before t is the previous one.

func (c *calendar) next(t time.Time) time.Time {
	lastH, lastM := c.hours[len(c.hours)-1], c.minutes[len(c.minutes)-1]
	z0 := max(dayOf(t.In(c.loc))-1, c.firstDay)
	for z := z0; z <= z0+horizonDays && z <= c.lastDay; z++ {
		if !c.day(z) || !wallClock(z, lastH, lastM, 0, c.loc).After(t) {
			continue
		}
		for _, h := range c.hours {
			if !wallClock(z, h, lastM, 0, c.loc).After(t) {
				continue
			}
			for _, m := range c.minutes {
				if f := wallClock(z, h, m, 0, c.loc); f.After(t) {
					return f
				}
			}
		}
	}
	return time.Time{}
}

func (c *calendar) prev(t time.Time) time.Time {
	firstH, firstM := c.hours[0], c.minutes[0]
	z0 := min(dayOf(t.In(c.loc))+1, c.lastDay)
	for z := z0; z >= z0-horizonDays && z >= c.firstDay; z-- {
		if !c.day(z) || wallClock(z, firstH, firstM, 0, c.loc).After(t) {
			continue
		}
		for i := len(c.hours) - 1; i >= 0; i-- {
			h := c.hours[i]
			if wallClock(z, h, firstM, 0, c.loc).After(t) {
				continue
			}
			for j := len(c.minutes) - 1; j >= 0; j-- {
				if f := wallClock(z, h, c.minutes[j], 0, c.loc); !f.After(t) {
					return f
				}
			}
		}
	}
	return time.Time{}
}

// unbounded is the walk's bounds when there is no start or end time.
const (
	noFirstDay = math.MinInt64 / 4
	noLastDay  = math.MaxInt64 / 4
)

// elapsed fires at anchor + k·period + offset for every integer k and each
// offset: minute and hour recurrences, which count elapsed time (an hour
// is an hour whatever DST does to the clocks). Times are Unix seconds.
type elapsed struct {
	loc     *time.Location
	anchor  int64
	period  int64
	offsets []int64 // ascending, each below period
}

func (e *elapsed) next(t time.Time) time.Time {
	k := floorDiv(t.Unix()-e.anchor, e.period)
	for ; ; k++ {
		for _, o := range e.offsets {
			// Firings are whole seconds: u > t ⇔ u > floor(t) when t has
			// a fraction, and u > t exactly otherwise.
			if u := e.anchor + k*e.period + o; u > t.Unix() {
				return time.Unix(u, 0).In(e.loc)
			}
		}
	}
}

func (e *elapsed) prev(t time.Time) time.Time {
	k := floorDiv(t.Unix()-e.anchor, e.period)
	for ; ; k-- {
		for i := len(e.offsets) - 1; i >= 0; i-- {
			if u := e.anchor + k*e.period + e.offsets[i]; u <= t.Unix() {
				return time.Unix(u, 0).In(e.loc)
			}
		}
	}
}
