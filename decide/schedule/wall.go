package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Days are counted as civil day numbers, days since 1970-01-01, so that
// walking the calendar and counting intervals is integer arithmetic that
// no time zone or DST can skew.
const secondsPerDay = 86400

// dayOf is the civil day number of t's date on its own clock.
func dayOf(t time.Time) int64 {
	y, m, d := t.Date()
	return dayNumber(y, m, d)
}

func dayNumber(y int, m time.Month, d int) int64 {
	return floorDiv(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix(), secondsPerDay)
}

func civilDate(z int64) (int, time.Month, int) {
	return time.Unix(z*secondsPerDay, 0).UTC().Date()
}

// weekdayOf is the day of the week of day z (1970-01-01 was a Thursday).
func weekdayOf(z int64) time.Weekday { return time.Weekday(floorMod(z+4, 7)) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// wallClock is the instant at which the clocks of loc show h:m:s on day z.
// It is where the DST rule lives:
//
//   - a wall time that occurs twice, when clocks go back, is its first
//     occurrence (01:30 on the US fall-back day is 01:30 PDT, never also
//     01:30 PST), so it fires once;
//   - a wall time that does not occur, when clocks go forward, is the
//     first instant after the gap (02:30 on the US spring-forward day is
//     03:00 PDT), so it still fires that day, once.
//
// time.Date leaves both cases unspecified, hence the explicit rule.
func wallClock(z int64, h, m, s int, loc *time.Location) time.Time {
	w := z*secondsPerDay + int64(h*3600+m*60+s)
	// The offsets a day before and a day after are those either side of
	// any transition near w (zones do not change offset twice in 48h).
	_, before := time.Unix(w-secondsPerDay, 0).In(loc).Zone()
	_, after := time.Unix(w+secondsPerDay, 0).In(loc).Zone()
	var best int64
	found := false
	for _, off := range [2]int{before, after} {
		u := w - int64(off)
		if _, o := time.Unix(u, 0).In(loc).Zone(); o == off && (!found || u < best) {
			best, found = u, true
		}
	}
	if found {
		return time.Unix(best, 0).In(loc)
	}
	// In a gap: w read with the earlier (smaller) offset lies after the
	// transition, and the zone then in effect started at the transition.
	if start, _ := time.Unix(w-int64(min(before, after)), 0).In(loc).ZoneBounds(); !start.IsZero() {
		return start.In(loc)
	}
	y, mo, d := civilDate(z)
	return time.Date(y, mo, d, h, m, s, 0, loc)
}

// timeLayouts are the local forms of start_time and end_time: Azure's
// "2021-03-10T21:21:07", with a space, without seconds, or a date alone
// (midnight). Fractional seconds are accepted after the seconds.
var timeLayouts = []string{
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTime reads a start or end time. A time without offset is a wall
// time in loc (resolved by wallClock, so one inside a DST gap is the end of
// the gap); one with Z or an offset ("2021-03-10T21:21:07-08:00") is that
// instant. "" is the zero time.
func parseTime(v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02 15:04:05Z07:00"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			c := wallClock(dayOf(t), t.Hour(), t.Minute(), t.Second(), loc)
			return c.Add(time.Duration(t.Nanosecond())), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time such as 2021-03-10T21:21:07 (local to time_zone), 2021-03-10T21:21:07Z or 2021-03-10", v)
}
