package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// cronParser reads exactly the five standard fields. Without the
// Descriptor option robfig/cron refuses @daily and @every; seconds are not
// a field.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

var cronFieldNames = [5]string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// cronFieldValues says what each field takes, for error messages
// (robfig/cron's own bounds know nothing of Sunday as 7).
var cronFieldValues = [5]string{"0-59", "0-23", "1-31", "1-12 or JAN-DEC", "0-7, Sunday being 0 or 7, or SUN-SAT"}

const cronShape = "five fields: minute hour day-of-month month day-of-week, such as \"0 18 * * 1-5\""

// starBit is robfig/cron's mark of a field written * or ?, which decides
// how day-of-month and day-of-week combine.
const starBit = 1 << 63

// compileCron parses a five-field cron expression into the days and wall
// times it names. robfig/cron parses; the days are walked by calendar, so
// that DST follows wallClock's rule. Errors are messages for
// trigger.expression.
func compileCron(expr string, loc *time.Location) (*calendar, error) {
	e := strings.TrimSpace(expr)
	switch {
	case e == "":
		return nil, fmt.Errorf("is required for a cron trigger: %s", cronShape)
	case strings.HasPrefix(e, "@"):
		return nil, fmt.Errorf("%q: descriptors such as @daily or @every are not accepted; write %s", expr, cronShape)
	case strings.Contains(e, "TZ="):
		// robfig/cron would read (and, without a space, panic on) a
		// TZ= prefix; the zone is trigger.time_zone.
		return nil, fmt.Errorf("%q: a time zone in the expression is not accepted; set trigger.time_zone", expr)
	}
	fields := strings.Fields(e)
	switch n := len(fields); {
	case n == 6 || n == 7:
		return nil, fmt.Errorf("%q has %d fields: seconds (and years) are not accepted; write %s", expr, n, cronShape)
	case n != 5:
		return nil, fmt.Errorf("%q has %d fields; write %s", expr, n, cronShape)
	}
	dow, err := sundaySeven(fields[4])
	if err != nil {
		return nil, fmt.Errorf("%q: day-of-week field %q (%s): %v", expr, fields[4], cronFieldValues[4], err)
	}
	fields[4] = dow
	// Parse each field alone first so the error names the field.
	for i, f := range fields {
		one := []string{"*", "*", "*", "*", "*"}
		one[i] = f
		if _, err := parseSpec(strings.Join(one, " ")); err != nil {
			return nil, fmt.Errorf("%q: %s field %q (%s): %v", expr, cronFieldNames[i], f, cronFieldValues[i], err)
		}
	}
	spec, err := parseSpec(strings.Join(fields, " "))
	if err != nil {
		return nil, fmt.Errorf("%q: %v; write %s", expr, err, cronShape)
	}
	for i, bits := range []uint64{spec.Minute, spec.Hour, spec.Dom, spec.Month, spec.Dow} {
		if bits&^starBit == 0 {
			return nil, fmt.Errorf("%q: %s field %q names no value", expr, cronFieldNames[i], fields[i])
		}
	}
	if !cronHasDay(spec) {
		return nil, fmt.Errorf("%q never fires: no month has that day of the month", expr)
	}
	c := &calendar{loc: loc, hours: bitsIn(spec.Hour, 0, 23), minutes: bitsIn(spec.Minute, 0, 59)}
	c.day = func(z int64) bool {
		_, m, d := civilDate(z)
		if spec.Month&(1<<uint(m)) == 0 {
			return false
		}
		dom := spec.Dom&(1<<uint(d)) != 0
		dow := spec.Dow&(1<<uint(weekdayOf(z))) != 0
		// Cron's day rule: when both day fields are restricted, a day
		// matching either fires.
		if spec.Dom&starBit != 0 || spec.Dow&starBit != 0 {
			return dom && dow
		}
		return dom || dow
	}
	return c, nil
}

// parseSpec runs robfig/cron's parser, turning a panic of the third-party
// parser on some input into an error: validation must never crash the
// server.
func parseSpec(e string) (spec *cron.SpecSchedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			spec, err = nil, fmt.Errorf("not a cron expression")
		}
	}()
	s, err := cronParser.Parse(e)
	if err != nil {
		return nil, err
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("not a five-field cron expression")
	}
	return spec, nil
}

// cronHasDay reports whether some date matches. Day-of-week values occur in
// every month, so only a day-of-month restriction with day-of-week * can
// name no date ("0 0 30 2 *").
func cronHasDay(spec *cron.SpecSchedule) bool {
	if spec.Dom&starBit != 0 || spec.Dow&starBit == 0 {
		return true
	}
	for m := time.January; m <= time.December; m++ {
		if spec.Month&(1<<uint(m)) == 0 {
			continue
		}
		for d := 1; d <= maxMonthDays(m); d++ {
			if spec.Dom&(1<<uint(d)) != 0 {
				return true
			}
		}
	}
	return false
}

// maxMonthDays is the most days month m has (29 for February).
func maxMonthDays(m time.Month) int {
	switch m {
	case time.February:
		return 29
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

func bitsIn(bits uint64, lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		if bits&(1<<uint(i)) != 0 {
			out = append(out, i)
		}
	}
	return out
}

var dowNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// sundaySeven rewrites 7 in a day-of-week field, Sunday in Vixie cron and
// most crontabs, as 0, the only Sunday robfig/cron knows: "5-7" becomes
// "5,6,0". Parts without a 7 are left for robfig/cron to read.
func sundaySeven(field string) (string, error) {
	parts := strings.Split(field, ",")
	for i, part := range parts {
		rng, stepStr, hasStep := strings.Cut(part, "/")
		if rng == "*" || rng == "?" || strings.Count(part, "/") > 1 {
			continue
		}
		loStr, hiStr, isRange := strings.Cut(rng, "-")
		lo, ok1 := dowValue(loStr)
		hi, ok2 := lo, true
		if isRange {
			hi, ok2 = dowValue(hiStr)
		}
		if !ok1 || !ok2 || (lo != 7 && hi != 7) {
			continue
		}
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n < 1 {
				return "", fmt.Errorf("step %q must be a positive number", stepStr)
			}
			step = n
			if !isRange {
				hi = 7 // "N/step" means N to the end
			}
		}
		if lo > hi {
			return "", fmt.Errorf("range %q runs backwards", rng)
		}
		var vals []string
		for v := lo; v <= hi; v += step {
			vals = append(vals, strconv.Itoa(v%7))
		}
		parts[i] = strings.Join(vals, ",")
	}
	return strings.Join(parts, ","), nil
}

func dowValue(s string) (int, bool) {
	if v, ok := dowNames[strings.ToLower(s)]; ok {
		return v, true
	}
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 0 && v <= 7
}
